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
from harness.report.protocol import is_not_judged, protocol_block, run_protocol
from harness.scenarios.models import Scenario
from harness.score import SampleScores
from tests.importers.importer_fixtures import LONGMEMEVAL, imported, write_locomo
from tests.score.scoring_factories import make_scenario

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


# --- run_protocol and protocol_block on hand-built scenarios and scores (no run): each decision on its own ---

_DECLARED = {"single_hop": "one hop", "multi_hop": "two hops", "adversarial": "trap", "rubric": "judge only"}


def _scenario(sid: str, category: str, *, abstain: bool = False, relevant: bool = True,
              protocol: dict | None = None) -> Scenario:
    data = make_scenario(sid, abstain=abstain, category="project_fact").model_dump(by_alias=True, exclude_none=True)
    data["category"], data["categories"] = category, _DECLARED
    if not relevant:
        data["expect"]["relevant_items"] = []
    if protocol is not None:
        data["protocol"] = {"name": "Paper", "recent_history": {"kind": "none"}, **protocol}
    return Scenario.model_validate(data)


def _score(sid: str, category: str, arm: str, correct: bool | None, *, model: str = "m", abstain: bool = False,
           ok: bool = True, recall: float | None = None) -> SampleScores:
    return SampleScores(
        sample_id=f"{sid}/{arm}/{model}/0", scenario_id=sid, category=category, arm=arm, model=model, epoch=0,
        status="ok" if ok else "error", outcome=("correct" if correct else "wrong") if ok else "error",
        should_abstain=abstain, abstained=False if ok else None, continuity_correct=correct if ok else None,
        retrieved_recall=recall)


def test_a_run_without_a_protocol_gets_none_and_unknown_scenarios_are_not_read() -> None:
    plain = {"a": _scenario("a", "single_hop")}
    assert run_protocol([_score("a", "single_hop", "recall", True)], plain, judged=False) is None
    # a scored sample whose scenario is not loaded is skipped, not a KeyError
    with_protocol = {"b": _scenario("b", "single_hop", protocol={"reported_apart": ["adversarial"]})}
    found = run_protocol([_score("gone", "single_hop", "recall", True), _score("b", "single_hop", "recall", True)],
                         with_protocol, judged=False)
    assert found is not None and found.headline_ids == frozenset({"b"})


def test_the_headline_leaves_out_groups_reported_apart_and_keeps_scenarios_without_a_protocol() -> None:
    """A benchmark FAIL must not be made of probes the protocol reports apart: adversarial and abstention are not in
    the headline; a scenario of the run without a protocol counts in it."""
    proto = {"reported_apart": ["adversarial"], "abstention_apart": True, "category_order": ["multi_hop", "single_hop"]}
    scenarios = {"s1": _scenario("s1", "single_hop", protocol=proto), "s2": _scenario("s2", "multi_hop", protocol=proto),
                 "adv": _scenario("adv", "adversarial", protocol=proto),
                 "abs": _scenario("abs", "single_hop", abstain=True, protocol=proto),
                 "free": _scenario("free", "single_hop")}
    scored = [_score(sid, scenarios[sid].category, "recall", True) for sid in scenarios]
    run = run_protocol(scored, scenarios, judged=False)
    assert run is not None
    assert run.headline_ids == frozenset({"s1", "s2", "free"})
    assert run.apart == (("adversarial", frozenset({"adv"})), ("abstention", frozenset({"abs"})))
    assert run.apart_lines == [("adversarial", False), ("abstention", False)]
    assert run.not_judged == () and run.mixed is False
    assert run.description() == "Paper: every category but adversarial; abstention probes apart"


def test_groups_apart_follow_the_protocols_order_gate_when_it_says_so_and_empty_ones_are_dropped() -> None:
    proto = {"reported_apart": ["single_hop", "adversarial", "multi_hop"], "apart_gates": True,
             "category_order": ["multi_hop", "adversarial", "single_hop"], "abstention_apart": True}
    scenarios = {"s1": _scenario("s1", "single_hop", protocol=proto), "m1": _scenario("m1", "multi_hop", protocol=proto),
                 "m2": _scenario("m2", "multi_hop", protocol=proto), "r": _scenario("r", "rubric", protocol=proto)}
    run = run_protocol([_score(sid, s.category, "recall", True) for sid, s in scenarios.items()], scenarios, judged=True)
    assert run is not None
    assert run.apart == (("multi_hop", frozenset({"m1", "m2"})), ("single_hop", frozenset({"s1"})))
    assert run.apart_lines == [("multi_hop", True), ("single_hop", True)]
    assert run.headline_ids == frozenset({"r"})


def test_judge_only_categories_are_not_judged_without_a_judge_and_judged_with_one() -> None:
    proto = {"judge_only": ["rubric", "multi_hop"], "headline": ["single_hop", "rubric", "multi_hop"],
             "category_order": ["rubric", "single_hop", "multi_hop"]}
    scenarios = {"s": _scenario("s", "single_hop", protocol=proto), "r": _scenario("r", "rubric", protocol=proto),
                 "m": _scenario("m", "multi_hop", protocol=proto)}
    scored = [_score(sid, s.category, "recall", True) for sid, s in scenarios.items()]
    unjudged = run_protocol(scored, scenarios, judged=False)
    assert unjudged is not None and unjudged.not_judged == ("rubric", "multi_hop")
    assert unjudged.headline_ids == frozenset({"s"})
    assert unjudged.description() == "Paper: single_hop, rubric, multi_hop; rubric, multi_hop not judged"
    judged = run_protocol(scored, scenarios, judged=True)
    assert judged is not None and judged.not_judged == () and judged.headline_ids == frozenset({"s", "r", "m"})
    assert judged.description() == "Paper: single_hop, rubric, multi_hop"
    assert is_not_judged(scenarios["r"], judged=False) and not is_not_judged(scenarios["r"], judged=True)
    assert not is_not_judged(scenarios["s"], judged=False) and not is_not_judged(_scenario("x", "rubric"), judged=False)
    # a judge_only category no scored scenario has is not reported as not judged
    only_single = run_protocol(scored[:1], scenarios, judged=False)
    assert only_single is not None and only_single.not_judged == ()


def test_several_protocols_are_flagged_mixed_and_the_first_by_scenario_id_is_used() -> None:
    scenarios = {"b": _scenario("b", "single_hop", protocol={"name": "Second", "reported_apart": ["multi_hop"]}),
                 "a": _scenario("a", "adversarial", protocol={"name": "First", "reported_apart": ["adversarial"]})}
    run = run_protocol([_score("b", "single_hop", "recall", True), _score("a", "adversarial", "recall", True)],
                       scenarios, judged=False)
    assert run is not None and run.mixed is True and run.protocol.name == "First"
    assert run.headline_ids == frozenset({"b"})
    assert run.description() == "First: every category but adversarial"
    same = run_protocol([_score("b", "single_hop", "recall", True)], scenarios, judged=False)
    assert same is not None and same.mixed is False
    bare = _scenario("c", "single_hop", protocol={})
    bare_run = run_protocol([_score("c", "single_hop", "recall", True)], {"c": bare}, judged=False)
    assert bare_run is not None and bare_run.description() == "Paper: every category"


def test_the_protocol_block_counts_each_category_and_the_abstention_probes_apart() -> None:
    proto = {"reported_apart": ["adversarial"], "abstention_apart": True,
             "category_order": ["single_hop", "multi_hop", "adversarial"]}
    scenarios = {"s1": _scenario("s1", "single_hop", protocol=proto),
                 "s2": _scenario("s2", "single_hop", relevant=False, protocol=proto),
                 "sa": _scenario("sa", "single_hop", abstain=True, protocol=proto),
                 "m1": _scenario("m1", "multi_hop", protocol=proto),
                 "adv": _scenario("adv", "adversarial", relevant=False, protocol=proto)}
    scored = [
        _score("s1", "single_hop", "recall", True, recall=1.0), _score("s1", "single_hop", "history_only", False),
        _score("s2", "single_hop", "recall", False, recall=None), _score("s2", "single_hop", "history_only", True),
        _score("sa", "single_hop", "recall", True, abstain=True), _score("sa", "single_hop", "history_only", False,
                                                                        abstain=True),
        _score("m1", "multi_hop", "recall", True, recall=0.5), _score("m1", "multi_hop", "recall", None, ok=False),
        _score("adv", "adversarial", "recall", False),
        _score("s1", "single_hop", "recall", False, model="a-first"),
    ]
    run = run_protocol(scored, scenarios, judged=False)
    assert run is not None
    metrics = [
        {"model": "m", "arm": "recall", "category": "headline", "metric": "continuity_accuracy", "value": 0.75,
         "ci_low": 0.3, "ci_high": 0.95, "n": 3},
        {"model": "m", "arm": "recall", "category": "headline", "metric": "retrieved_recall", "value": 0.75, "n": 2},
        {"model": "m", "arm": "history_only", "category": "headline", "metric": "continuity_accuracy", "value": 0.5,
         "ci_low": 0.1, "ci_high": 0.9, "n": 2},
        {"model": "m", "arm": "recall", "category": "all", "metric": "continuity_accuracy", "value": 0.1,
         "ci_low": 0.0, "ci_high": 0.2, "n": 9},
        {"model": "other", "arm": "recall", "category": "headline", "metric": "continuity_accuracy", "value": 0.2,
         "ci_low": 0.0, "ci_high": 0.4, "n": 9},
    ]
    block = protocol_block(run, scored, scenarios, metrics, ["full_history", "history_only", "recall"])
    assert {k: block[k] for k in ("name", "headline", "reported_apart", "abstention_apart", "judge_only",
                                  "not_judged", "recent_history", "category_order", "description", "mixed")} == {
        "name": "Paper", "headline": [], "reported_apart": ["adversarial"], "abstention_apart": True,
        "judge_only": [], "not_judged": [], "recent_history": {"kind": "none"},
        "category_order": ["single_hop", "multi_hop", "adversarial"],
        "description": "Paper: every category but adversarial; abstention probes apart", "mixed": False}
    first, table = block["tables"]
    assert first["model"] == "a-first" and table["model"] == "m"
    assert table["arms"] == ["history_only", "recall"]  # the run's order, arms without samples left out
    rows = {r["category"]: r for r in table["rows"]}
    assert [r["category"] for r in table["rows"]] == ["headline", "single_hop", "multi_hop", "adversarial", "abstention"]
    assert rows["headline"] == {"category": "headline", "group": "headline", "scenarios": 3, "no_relevant_item": 1,
                                "arms": {"recall": {"accuracy": 0.75, "ci_low": 0.3, "ci_high": 0.95, "n": 3,
                                                    "retrieved_recall": 0.75, "recall_n": 2},
                                         "history_only": {"accuracy": 0.5, "ci_low": 0.1, "ci_high": 0.9, "n": 2,
                                                          "retrieved_recall": None, "recall_n": 0}}}
    # the abstention probe sa is counted only in its own row: the category rows add up to the headline
    assert rows["single_hop"] == {"category": "single_hop", "group": "headline", "scenarios": 2, "no_relevant_item": 1,
                                  "arms": {"history_only": {"accuracy": 0.5, "n": 2, "retrieved_recall": None,
                                                            "recall_n": 0},
                                           "recall": {"accuracy": 0.5, "n": 2, "retrieved_recall": 1.0, "recall_n": 1}}}
    # an error sample counts in no accuracy and no recall
    assert rows["multi_hop"]["arms"] == {"recall": {"accuracy": 1.0, "n": 1, "retrieved_recall": 0.5, "recall_n": 1}}
    assert rows["adversarial"]["group"] == "apart" and rows["adversarial"]["no_relevant_item"] == 1
    assert rows["abstention"] == {"category": "abstention", "group": "apart", "scenarios": 1, "no_relevant_item": 0,
                                  "arms": {"history_only": {"accuracy": 0.0, "n": 1, "retrieved_recall": None,
                                                            "recall_n": 0},
                                           "recall": {"accuracy": 1.0, "n": 1, "retrieved_recall": None,
                                                      "recall_n": 0}}}
    assert first["rows"][0]["arms"] == {}  # no headline metric of this model
    assert first["rows"][1]["arms"] == {"recall": {"accuracy": 0.0, "n": 1, "retrieved_recall": None, "recall_n": 0}}
    assert first["arms"] == ["history_only", "recall"]  # the run's arms, one column set for every model


def test_protocol_table_groups_and_rounding() -> None:
    """A category outside a declared headline is apart, a judge_only one unjudged is not_judged; accuracy is rounded
    to six places (2/3, not 0.67)."""
    proto = {"headline": ["single_hop"], "judge_only": ["rubric"]}
    scenarios = {f"s{i}": _scenario(f"s{i}", "single_hop", protocol=proto) for i in range(3)} | {
        "m": _scenario("m", "multi_hop", protocol=proto), "r": _scenario("r", "rubric", protocol=proto)}
    scored = [_score(sid, s.category, "recall", sid != "s2", recall=1 / 3) for sid, s in scenarios.items()]
    run = run_protocol(scored, scenarios, judged=False)
    assert run is not None
    rows = {r["category"]: r for r in protocol_block(run, scored, scenarios, [])["tables"][0]["rows"]}
    assert {c: r["group"] for c, r in rows.items()} == {"headline": "headline", "single_hop": "headline",
                                                         "multi_hop": "apart", "rubric": "not_judged"}
    assert rows["single_hop"]["arms"]["recall"] == {"accuracy": 0.666667, "n": 3, "retrieved_recall": 0.333333,
                                                    "recall_n": 3}
    assert "abstention" not in rows and rows["headline"]["arms"] == {}


def test_a_cell_with_nothing_graded_has_no_accuracy_and_abstention_counts_only_the_arms_that_probed() -> None:
    """A not-judged category's cell reads None over n 0 (not a crash, not 0%); a category made only of abstention
    probes has no row of its own but the categories after it keep theirs; the abstention row lists only the arms
    whose samples abstention probes are."""
    proto = {"judge_only": ["rubric"], "abstention_apart": True, "category_order": ["multi_hop", "rubric", "single_hop"]}
    scenarios = {"ma": _scenario("ma", "multi_hop", abstain=True, protocol=proto),
                 "r": _scenario("r", "rubric", protocol=proto), "s": _scenario("s", "single_hop", protocol=proto)}
    scored = [_score("ma", "multi_hop", "recall", True, abstain=True), _score("r", "rubric", "recall", None),
              _score("r", "rubric", "history_only", None, ok=False), _score("s", "single_hop", "recall", True),
              _score("s", "single_hop", "history_only", False)]
    run = run_protocol(scored, scenarios, judged=False)
    assert run is not None
    rows = {r["category"]: r for r in protocol_block(run, scored, scenarios, [])["tables"][0]["rows"]}
    assert list(rows) == ["headline", "rubric", "single_hop", "abstention"]
    assert rows["rubric"]["arms"] == {"recall": {"accuracy": None, "n": 0, "retrieved_recall": None, "recall_n": 0},
                                      "history_only": {"accuracy": None, "n": 0, "retrieved_recall": None,
                                                       "recall_n": 0}}
    assert rows["abstention"]["arms"] == {"recall": {"accuracy": 1.0, "n": 1, "retrieved_recall": None, "recall_n": 0}}


def test_the_description_names_every_category_apart_and_every_note() -> None:
    proto = {"reported_apart": ["adversarial", "multi_hop"], "abstention_apart": True, "judge_only": ["rubric"]}
    scenarios = {"r": _scenario("r", "rubric", protocol=proto)}
    run = run_protocol([_score("r", "rubric", "recall", None)], scenarios, judged=False)
    assert run is not None
    assert run.description() == ("Paper: every category but adversarial, multi_hop; abstention probes apart; "
                                 "rubric not judged")
