"""The report follows the suite's protocol: a LoCoMo- and a LongMemEval-shaped import, run on the offline model.

The LoCoMo file is generated in the published shape (tests/importers/importer_fixtures.py);
history_only must now see the last session, the verdict must decide
continuity on categories 1-4, the adversarial category must be shown apart,
and the answerable probes without a relevant item must be counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers import ImporterError
from tests.importers.importer_fixtures import LONGMEMEVAL, imported, write_locomo

ARMS = ["history_only", "recall", "full_history"]


def _run(suite: Path, out: Path, *extra: str) -> dict:
    code = main(["run", "--scenarios", str(suite), "--out", str(out), "--no-progress", "--no-cache", "--arms", *ARMS,
                 *extra])
    assert code in (0, 1)
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("locomo")
    suite, _ = imported("locomo", tmp, write_locomo(tmp / "locomo10.json", samples=1, sessions=3, cite=False))
    run = tmp / "run"
    return run, _run(suite, run)


def test_history_only_sees_the_last_session_on_locomo(locomo_run: tuple[Path, dict]) -> None:
    run, _ = locomo_run
    records = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    history = [r for r in records if r["arm"] == "history_only"]
    assert history and all("[Earlier conversation session_3" in r["messages"][1]["content"] for r in history)
    assert not any("session_1," in json.dumps(r["messages"]) for r in history)


def test_the_locomo_verdict_decides_continuity_on_categories_1_to_4(locomo_run: tuple[Path, dict]) -> None:
    _, summary = locomo_run
    check = next(c for c in summary["verdict"]["per_model"]["offline/reference"]["checks"]
                 if c["name"] == "continuity_improves")
    assert "over the headline (LoCoMo as mem0 reports it: single_hop, multi_hop, temporal, open_domain)" in check["reason"]
    head = next(r for r in summary["paired"] if r["category"] == "headline" and r["metric"] == "continuity_accuracy")
    assert check["value"] == head["diff"] and head["n_scenarios"] == 12  # 3 sessions x 4 answerable; no adversarial


def test_the_locomo_verdict_gives_the_adversarial_group_its_own_line_apart_from_the_headline(
        locomo_run: tuple[Path, dict]) -> None:
    """Unsupported claims are decided over the headline, as continuity; the adversarial category (reported apart)
    has its own line naming it, with its accuracy and unsupported rate, and it does not gate (LoCoMo's protocol)."""
    _, summary = locomo_run
    checks = {c["name"]: c for c in summary["verdict"]["per_model"]["offline/reference"]["checks"]}
    assert checks["unsupported_claims_within_tolerance"]["reason"].startswith("unsupported claims over the headline")
    apart = checks["apart_adversarial"]
    assert apart["gates"] is False and apart["reason"].startswith("adversarial (reported apart; does not gate) ")
    assert "unsupported claims" in apart["reason"] and "its accuracy" in apart["reason"]
    rows = [r for r in summary["paired"] if r["category"] == "apart:adversarial"]
    assert {r["metric"] for r in rows} >= {"continuity_accuracy", "unsupported_claim_rate"}
    assert summary["verdict"]["status"] == summary["verdict"]["checks_status"]


def test_the_locomo_table_is_in_the_papers_order_with_adversarial_apart(locomo_run: tuple[Path, dict]) -> None:
    _, summary = locomo_run
    rows = summary["protocol"]["tables"][0]["rows"]
    assert [(r["category"], r["group"]) for r in rows] == [
        ("headline", "headline"), ("single_hop", "headline"), ("multi_hop", "headline"), ("temporal", "headline"),
        ("open_domain", "headline"), ("adversarial", "apart")]
    assert summary["protocol"]["tables"][0]["arms"] == ARMS
    assert all(r["scenarios"] == 3 for r in rows[1:]) and rows[0]["scenarios"] == 12


def test_probes_without_a_relevant_item_are_counted_not_dropped(locomo_run: tuple[Path, dict]) -> None:
    _, summary = locomo_run
    rows = {r["category"]: r for r in summary["protocol"]["tables"][0]["rows"]}
    assert rows["open_domain"]["no_relevant_item"] == 3  # their evidence turn is cited by no observation
    assert rows["single_hop"]["no_relevant_item"] == 0 and rows["headline"]["no_relevant_item"] == 3
    assert rows["open_domain"]["arms"]["recall"]["recall_n"] == 0 and rows["single_hop"]["arms"]["recall"]["recall_n"] == 3
    note = next(h["text"] for h in summary["headlines"] if h["code"] == "no_relevant_item")
    assert note.startswith("3 answerable scenario(s) have no relevant item (open_domain 3")


def test_the_page_and_the_terminal_show_the_protocol_table(locomo_run: tuple[Path, dict],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run, _ = locomo_run
    assert main(["report", str(run)]) in (0, 1)
    out = capsys.readouterr().out
    assert "by category, as the suite's protocol reports it (LoCoMo as mem0 reports it" in out
    lines = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and line.split()[0] in (
        "headline", "single_hop", "multi_hop", "temporal", "open_domain", "adversarial")]
    assert lines == ["headline", "single_hop", "multi_hop", "temporal", "open_domain", "adversarial"]
    assert "reported apart" in next(line for line in out.splitlines() if line.startswith("  adversarial"))
    page = (run / "index.html").read_text(encoding="utf-8")
    assert "By category, as the suite&#39;s protocol reports it" in page or "By category, as the suite's protocol" in page
    assert "continuity accuracy, the protocol&#39;s headline" in page or "continuity accuracy, the protocol's headline" in page


def test_the_terminal_arm_table_shows_the_headline_continuity_the_verdict_decides_on(locomo_run: tuple[Path, dict]) -> None:
    """With a protocol the per-arm table's continuity is the headline's (LoCoMo's adversarial abstentions left out)."""
    from harness.report.terminal import arm_table

    _, summary = locomo_run
    lines = arm_table(summary)
    head = {r["arm"]: r for r in summary["metrics"] if r["category"] == "headline" and r["metric"] == "continuity_accuracy"}
    every = {r["arm"]: r for r in summary["metrics"] if r["category"] == "all" and r["metric"] == "continuity_accuracy"}
    assert head["history_only"]["value"] != every["history_only"]["value"]  # the adversarial probes make the difference
    row = next(line for line in lines if line.startswith("  history_only"))
    assert row.split()[1] == f"{head['history_only']['value']:.2f}"
    assert any(line.startswith("headline continuity [95% CI]") for line in lines)
    assert all(len(line) <= 80 for line in lines)


def test_an_unjudged_preference_question_counts_in_no_accuracy(tmp_path: Path) -> None:
    suite, _ = imported("longmemeval", tmp_path, LONGMEMEVAL)
    summary = _run(suite, tmp_path / "run", "--filter", "8a2466db/*", "--filter", "e47becba/*",
                   "--filter", "gpt4_2655b836_abs/*")
    scores = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    preference = [s for s in scores if s["category"] == "single_session_preference"]
    continuity = [next(x for x in s["scores"] if x["name"] == "continuity") for s in preference]
    assert preference and all(s["outcome"] == "not_judged" for s in preference)
    assert all(c["value"] is None and c["reason"].startswith("not judged") for c in continuity)
    rows = {r["category"]: r for r in summary["protocol"]["tables"][0]["rows"]}
    assert rows["single_session_preference"]["group"] == "not_judged"
    assert rows["single_session_preference"]["arms"]["recall"]["n"] == 0
    assert rows["headline"]["scenarios"] == 1  # e47becba only: the preference question is not judged, _abs is apart
    assert rows["abstention"]["group"] == "apart" and rows["abstention"]["scenarios"] == 1
    pref = next(r for r in summary["metrics"] if r["category"] == "single_session_preference"
                and r["arm"] == "recall" and r["metric"] == "continuity_accuracy")
    assert pref["n"] == 0 and pref["value"] is None
    assert any(h["code"] == "not_judged" and "single_session_preference (1)" in h["text"] for h in summary["headlines"])
    apart = next(c for c in summary["verdict"]["per_model"]["offline/reference"]["checks"]
                 if c["name"] == "apart_abstention")
    assert apart["gates"] is False and apart["reason"].startswith("abstention (reported apart; does not gate) ")


def test_run_and_report_say_the_suite_is_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_locomo(tmp_path / "locomo10.json", samples=2, sessions=2)
    truncated = tmp_path / "truncated.json"
    truncated.write_text(source.read_text(encoding="utf-8")[:-400], encoding="utf-8")
    with pytest.raises(ImporterError, match="truncated"):
        imported("locomo", tmp_path, truncated)
    suite = tmp_path / "locomo"
    assert json.loads((suite / "_suite.json").read_text(encoding="utf-8"))["complete"] is False
    capsys.readouterr()
    summary = _run(suite, tmp_path / "run", "--filter", "conv-1/q00[12]")
    err = capsys.readouterr().err
    assert "warning: " in err and "_suite.json: complete: incomplete suite" in err
    manifest = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["incomplete_suites"] == [str(suite.resolve() / "_suite.json")]
    lead = summary["headlines"][0]
    assert lead["code"] == "suite_incomplete" and lead["lead"] and "says complete: false" in lead["text"]


def test_the_detectable_effect_note_quotes_the_headline_difference(locomo_run: tuple[Path, dict]) -> None:
    from harness.analysis import RunHealth, VerdictConfig
    from harness.report.headlines import headlines
    from harness.report.inputs import ReportInputs

    _, summary = locomo_run
    head = next(r for r in summary["paired"] if r["category"] == "headline" and r["metric"] == "continuity_accuracy"
                and r["arm_a"] == "history_only")
    wide = {**summary, "min_detectable_effect": [{**m, "mde": 0.99} for m in summary["min_detectable_effect"]]}
    found = headlines(wide, health=RunHealth(planned=1, present=1), inputs=ReportInputs([], 1, 1, "complete"),
                      config=VerdictConfig(), unjudged_rubric=0)
    note = next(h["text"] for h in found if h["code"] == "below_mde")
    assert f"difference {head['diff']:+.2f}" in note
