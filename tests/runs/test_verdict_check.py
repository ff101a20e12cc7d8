"""A summary's verdict decided again from its tables and the run's records: agreement, and each way it can differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.analysis import VerdictConfig
from harness.records import read_manifest, scan_results
from harness.runs.verdict_check import verdict_disagreement
from harness.scenarios import Scenario
from tests.runs.compare_factories import claims_reported_apart, synthetic_run


def _inputs(run: Path) -> tuple[dict[str, Any], Any, Any, list[dict[str, Any]]]:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return summary, read_manifest(run), scan_results(run / "results.jsonl"), scores


#: 200 scenarios: with none differing in unsupported claims, 189 is the fewest that bound their rise within 0.02.
PASSING_IDS = [f"fact-{i:03d}" for i in range(200)]


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> Path:  # recall 180 of 200, history_only 20: pass
    return synthetic_run(tmp_path_factory.mktemp("verdict") / "run", ids=PASSING_IDS, recall_right=180,
                         history_right=20)


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Path:  # recall 2 of 10, history_only 9: a loss, fail
    return synthetic_run(tmp_path_factory.mktemp("verdict") / "run", recall_right=2, history_right=9)


def test_an_untouched_verdict_follows(passing: Path, failing: Path) -> None:
    for run in (passing, failing):
        summary, manifest, scan, scores = _inputs(run)
        assert verdict_disagreement(summary, manifest, scan, [], scores) is None


def test_a_status_edited_to_pass_is_named_with_the_status_decided_again(failing: Path) -> None:
    summary, manifest, scan, scores = _inputs(failing)
    summary["verdict"]["status"] = "pass"
    why = verdict_disagreement(summary, manifest, scan, [], scores)
    assert why is not None and "verdict.status 'pass'" in why and "decide 'fail'" in why


def test_a_models_status_edited_alone_is_named(failing: Path) -> None:
    summary, manifest, scan, scores = _inputs(failing)
    model = next(iter(summary["verdict"]["per_model"]))
    summary["verdict"]["per_model"][model]["status"] = "pass"
    why = verdict_disagreement(summary, manifest, scan, [], scores)
    assert why is not None and f"per_model[{model!r}].status 'pass'" in why and "decide 'fail'" in why


def test_a_model_missing_from_the_verdict_is_named(failing: Path) -> None:
    """A model deleted from ``verdict.per_model`` (or its entry replaced by a non-object) is named, not read as
    agreeing and not a crash."""
    summary, manifest, scan, scores = _inputs(failing)
    model = next(iter(summary["verdict"]["per_model"]))
    summary["verdict"]["per_model"][model] = "fail"
    assert f"per_model[{model!r}].status None" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")
    del summary["verdict"]["per_model"][model]
    assert f"per_model[{model!r}].status None" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_a_paired_row_edited_to_a_gain_is_named_against_the_samples_tables(failing: Path) -> None:
    """The tables are aggregated again from scores.jsonl: a forged gain is named with the value the samples give,
    whether or not the verdict was edited to match it."""
    summary, manifest, scan, scores = _inputs(failing)
    for row in summary["paired"]:
        if row["metric"] == "continuity_accuracy" and row.get("category", "all") == "all":
            row.update(diff=0.7, ci_low=0.5, ci_high=0.9)
    why = verdict_disagreement(summary, manifest, scan, [], scores) or ""
    assert "paired[0].diff (model offline/reference, category all, metric continuity_accuracy) is 0.7" in why
    assert "the samples of scores.jsonl give -0.7" in why  # recall 2 of 10 against 9 of 10
    summary["verdict"]["status"] = "pass"
    assert "is 0.7, but the samples" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_a_sample_missing_from_the_results_makes_a_pass_incomplete(passing: Path, tmp_path: Path) -> None:
    """The run's health comes from the records, not the summary: with one record gone the verdict is incomplete."""
    summary, manifest, scan, scores = _inputs(passing)
    scan.records.pop()
    assert "decide 'incomplete'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_errors_counted_from_the_scores_make_a_pass_inconclusive(passing: Path) -> None:
    """40 of 400 samples errors (above the 5% default), the summary's tables made to match them: inconclusive."""
    from harness.runs.table_check import TABLES, recomputed_tables

    summary, manifest, scan, scores = _inputs(passing)
    for row in scores[:40]:
        row["status"] = "error"  # 40 of 400 errors: above the 5% default
    summary.update(recomputed_tables(scores, VerdictConfig()))
    assert set(TABLES) <= summary.keys()
    assert "decide 'inconclusive'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_scores_in_the_older_format_or_damaged_are_named(passing: Path) -> None:
    """Rows without schema_version 2 hold no whole sample scores; a row whose field has the wrong type is named."""
    summary, manifest, scan, scores = _inputs(passing)
    old = [{k: v for k, v in row.items() if k != "schema_version"} for row in scores]
    assert "row 1 has schema_version None, not 2" in (verdict_disagreement(summary, manifest, scan, [], old) or "")
    scores[3]["prompt_tokens"] = "many"
    assert "scores.jsonl row 4: prompt_tokens:" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_an_unreadable_threshold_block_is_named(passing: Path) -> None:
    summary, manifest, scan, scores = _inputs(passing)
    summary["verdict"]["config"]["alpha"] = 7
    why = verdict_disagreement(summary, manifest, scan, [], scores)
    assert why == "its verdict.config cannot be read (1 validation error for VerdictConfig)"


def test_records_outside_run_json_do_not_count_as_planned_samples_present(passing: Path) -> None:
    """Bug this guards: a record outside run.json's plan (scored on request) counted towards the samples present, so
    a run missing one planned sample but holding one foreign record kept its pass."""
    summary, manifest, scan, scores = _inputs(passing)
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None
    why = verdict_disagreement(summary, manifest, scan, [scan.records[-1].sample_id], scores) or ""
    assert "verdict.status 'pass'" in why and "decide 'incomplete'" in why


def _offline_run(suite: Path, out: Path, *arms: str) -> Path:
    from harness.cli import main

    code = main(["run", "--scenarios", str(suite), "--out", str(out), "--no-progress", "--no-cache", "--arms", *arms])
    assert code in (0, 1)
    return out


def test_the_verdicts_of_real_offline_runs_follow_with_a_protocol_and_with_exclusions(
        tmp_path: Path, passing: Path, failing: Path) -> None:
    """Real reports agree with the verdict decided again: a LoCoMo suite (its protocol decides on the headline rows),
    and the smoke suite reported with a scenario excluded (the health counts the scored samples)."""
    from harness.cli import main
    from tests.importers.importer_fixtures import imported, write_locomo
    from tests.integration.conftest import SMOKE

    suite, _ = imported("locomo", tmp_path, write_locomo(tmp_path / "locomo10.json", samples=1, sessions=3, cite=False))
    locomo = _offline_run(suite, tmp_path / "locomo", "history_only", "recall", "full_history")
    assert "protocol" in json.loads((locomo / "summary.json").read_text(encoding="utf-8"))
    smoke = _offline_run(SMOKE, tmp_path / "smoke", "history_only", "recall")
    scenario = json.loads((smoke / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])["scenario_id"]
    assert main(["report", str(smoke), "--exclude", scenario]) in (0, 1)
    for run in (locomo, smoke):
        summary, manifest, scan, scores = _inputs(run)
        assert verdict_disagreement(summary, manifest, scan, [], scores) is None, run
    # Under the protocol the tables have headline rows: scores.jsonl's per-sample headline flags rebuild them (a
    # recomputation without them would miss those rows and disagree above). Rows forged from other real reports
    # (a clear gain in `all`, none in the headline) are named against the samples' tables.
    summary, manifest, scan, scores = _inputs(locomo)
    assert any(row["category"] == "headline" for row in summary["paired"])
    gain = _paired(_inputs(passing)[0])
    for row in summary["paired"]:
        if row["arm_a"] == "history_only" and row["arm_b"] == "recall" and row["category"] == "all":
            if row["metric"] in gain:
                row.update({k: v for k, v in gain[row["metric"]].items() if k not in ("model", "category")})
    assert "but the samples of scores.jsonl give" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def _paired(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The overall history_only -> recall paired rows of a report, by metric."""
    return {r["metric"]: r for r in summary["paired"]
            if r["category"] == "all" and r["arm_a"] == "history_only" and r["arm_b"] == "recall"}


def test_the_error_rate_of_the_scores_alone_makes_a_pass_inconclusive(passing: Path) -> None:
    """Bug this guards: the errors counted from scores.jsonl not given to the verdict's health (21 of 400, 5.25%:
    the tables still pass, only the error rate decides), so an edited summary hiding them kept its pass."""
    from harness.runs.table_check import recomputed_tables

    summary, manifest, scan, scores = _inputs(passing)
    for row in scores[-21:]:
        row["status"] = "error"
    summary.update(recomputed_tables(scores, VerdictConfig()))
    assert "decide 'inconclusive'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")
    summary["verdict"]["config"]["max_error_rate"] = 0.5  # the same errors under a looser bar: the pass follows
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None


def test_a_run_json_not_complete_makes_a_pass_incomplete_though_every_record_is_there(passing: Path) -> None:
    summary, manifest, scan, scores = _inputs(passing)
    interrupted = manifest.model_copy(update={"status": "interrupted"})
    assert "decide 'incomplete'" in (verdict_disagreement(summary, interrupted, scan, [], scores) or "")


def _gain_reported_apart(i: int, scenario: Scenario) -> Scenario:
    """LoCoMo's protocol on the 200 scenarios: the first 180 in its adversarial category (reported apart, out of
    the headline), the last 20 single-hop questions (the headline)."""
    from harness.importers.locomo import CATEGORY_TEXT, PROTOCOL

    return Scenario.model_validate({**scenario.model_dump(mode="json", exclude_defaults=True), "protocol": PROTOCOL,
                                    "categories": CATEGORY_TEXT, "category": "adversarial" if i < 180 else "single_hop"})


@pytest.fixture(scope="module")
def apart_gain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Recall right in 180 of 200, history_only in 20, every right answer adversarial: a gain only outside the
    headline, whose 20 scenarios both arms miss."""
    return synthetic_run(tmp_path_factory.mktemp("verdict") / "run", ids=PASSING_IDS, recall_right=180,
                         history_right=20, scenario_change=_gain_reported_apart)


def test_a_protocol_verdict_is_decided_on_the_headline_rows_not_on_every_scenario(apart_gain: Path) -> None:
    """Bug this guards: the summary's protocol not given to the verdict decided again (or its headline dropped), so
    the verdict was read on the ``all`` rows: there the adversarial gain passes, in the headline nothing is gained,
    and the report's honest verdict was called an edit while one edited to ``pass`` was let through."""
    summary, manifest, scan, scores = _inputs(apart_gain)
    rows = {row["category"]: row for row in _paired_rows(summary, "continuity_accuracy")}
    assert rows["all"]["ci_low"] > 0.5 and rows["headline"]["diff"] == 0.0  # the two row sets decide apart
    assert summary["verdict"]["status"] == "inconclusive"  # the report decided on the headline: no gain shown
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None
    summary["verdict"]["status"] = "pass"
    for entry in summary["verdict"]["per_model"].values():
        entry["status"] = "pass"
    why = verdict_disagreement(summary, manifest, scan, [], scores) or ""
    assert "verdict.status 'pass'" in why and "decide 'inconclusive'" in why


def _paired_rows(summary: dict[str, Any], metric: str) -> list[dict[str, Any]]:
    return [row for row in summary["paired"] if row["metric"] == metric and row["arm_a"] == "history_only"
            and row["arm_b"] == "recall"]


@pytest.mark.parametrize("forge", [lambda s: s.pop("protocol"), lambda s: s.update(protocol=None)],
                         ids=["deleted", "null"])
def test_a_protocol_block_removed_with_the_verdict_edited_to_pass_is_still_decided_on_the_headline(
        apart_gain: Path, forge: Any) -> None:
    """Bug this guards: whether to decide on the headline read from the summary's editable ``protocol`` block, so a
    summary stripped of it and edited to ``pass`` was decided on the ``all`` rows (the adversarial gain) and kept its
    pass. The samples' headline flags say a protocol ran; the verdict is decided on the headline they give."""
    summary, manifest, scan, scores = _inputs(apart_gain)
    forge(summary)
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None  # the verdict itself still follows
    summary["verdict"]["status"] = "pass"
    for entry in summary["verdict"]["per_model"].values():
        entry["status"] = "pass"
    assert "decide 'inconclusive'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


@pytest.fixture(scope="module")
def gating(tmp_path_factory: pytest.TempPathFactory) -> Path:  # the adversarial line gates: fail
    return claims_reported_apart(tmp_path_factory.mktemp("verdict") / "run", gates=True)


@pytest.fixture(scope="module")
def not_gating(tmp_path_factory: pytest.TempPathFactory) -> Path:  # the same line shown, not gating: pass
    return claims_reported_apart(tmp_path_factory.mktemp("verdict") / "run", gates=False)


def _claim(summary: dict[str, Any], status: str) -> None:
    summary["verdict"]["status"] = status
    for entry in summary["verdict"]["per_model"].values():
        entry["status"] = status


@pytest.mark.parametrize("forge", [lambda s: s.pop("protocol"), lambda s: s.update(protocol=None), lambda s: None],
                         ids=["block deleted", "block null", "block kept"])
def test_a_verdict_failed_by_a_gating_group_reported_apart_and_edited_to_pass_is_caught(
        gating: Path, not_gating: Path, forge: Any) -> None:
    """Bug this guards: the verdict decided again without the protocol's groups reported apart, so with
    ``apart_gates: true`` a run failed by its adversarial line alone (recall invents an answer to every adversarial
    probe; the headline gains) and edited to ``pass`` kept its pass, and the honest ``fail`` was called an edit.
    ``scores.jsonl`` records ``apart_gates`` beside each sample, so the summary's ``protocol`` block (deleted here,
    or emptied) has no say; the same run with the line not gating passes, and an edit to ``fail`` is named there."""
    summary, manifest, scan, scores = _inputs(gating)
    assert summary["verdict"]["status"] == "fail"
    assert {row["apart_gates"] for row in scores} == {True}
    lines = [c for entry in summary["verdict"]["per_model"].values() for c in entry["checks"]
             if c["name"] == "apart_adversarial"]
    assert [(c["passed"], c["gates"]) for c in lines] == [(False, True)]  # the only failing line
    assert all(c["passed"] for entry in summary["verdict"]["per_model"].values() for c in entry["checks"]
               if c["name"] != "apart_adversarial")
    forge(summary)
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None
    _claim(summary, "pass")
    why = verdict_disagreement(summary, manifest, scan, [], scores) or ""
    assert "verdict.status 'pass'" in why and "decide 'fail'" in why
    summary, manifest, scan, scores = _inputs(not_gating)
    assert summary["verdict"]["status"] == "pass" and {row["apart_gates"] for row in scores} == {False}
    forge(summary)
    assert verdict_disagreement(summary, manifest, scan, [], scores) is None
    _claim(summary, "fail")
    assert "decide 'pass'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def _format_2(scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as a report before ``apart_gates`` wrote them (row format 2)."""
    return [{**{k: v for k, v in row.items() if k != "apart_gates"}, "schema_version": 2} for row in scores]


def test_rows_written_before_apart_gates_are_read_and_named_only_where_the_flag_decides(
        passing: Path, failing: Path, apart_gain: Path, gating: Path, not_gating: Path) -> None:
    """Rows of format 2 still check a verdict wherever gating cannot change it: a run without a protocol, and one
    whose group reported apart decides nothing either way (``apart_gain``: inconclusive on the headline whether or
    not its undecided adversarial line gates). Where it can (the adversarial line alone fails), the message says the
    rows predate the flag, with both verdicts, rather than guessing either."""
    for run in (passing, failing, apart_gain):
        summary, manifest, scan, scores = _inputs(run)
        assert verdict_disagreement(summary, manifest, scan, [], _format_2(scores)) is None, run
    summary, manifest, scan, scores = _inputs(failing)
    _claim(summary, "pass")
    assert "decide 'fail'" in (verdict_disagreement(summary, manifest, scan, [], _format_2(scores)) or "")
    for run in (gating, not_gating):
        summary, manifest, scan, scores = _inputs(run)
        assert verdict_disagreement(summary, manifest, scan, [], _format_2(scores)) == (
            "scores.jsonl predates recording whether its groups reported apart (adversarial) gate the verdict (row "
            "format 2; format 3 records apart_gates), and the verdict depends on it: 'fail' if they gate, 'pass' if "
            "not (written by an older report)")


def test_rows_that_disagree_on_apart_gates_or_hold_no_boolean_are_named(gating: Path) -> None:
    """One run has one protocol: rows in a group reported apart that say different things (some flags edited to
    ``false`` to drop the failing line) or something else than true or false are named, never decided on."""
    summary, manifest, scan, scores = _inputs(gating)
    apart = [number for number, row in enumerate(scores, start=1) if row["apart"]]
    assert len(apart) == 20  # 10 adversarial scenarios x 2 arms
    scores[apart[3] - 1]["apart_gates"] = False
    assert verdict_disagreement(summary, manifest, scan, [], scores) == (
        f"scores.jsonl rows {apart[0]} and {apart[3]} disagree on apart_gates (true, false); a run has one protocol: "
        "the file was edited")
    for row in scores:
        row["apart_gates"] = False
    assert "decide 'pass'" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")  # consistent: read
    scores[apart[1] - 1]["apart_gates"] = "yes"
    assert verdict_disagreement(summary, manifest, scan, [], scores) == (
        f"scores.jsonl row {apart[1]} is in a group reported apart, but its apart_gates is 'yes', not true or false: "
        "the file was edited, or written by another harness version")
    scores[apart[1] - 1]["apart_gates"] = None
    assert "apart_gates is None, not true or false" in (verdict_disagreement(summary, manifest, scan, [], scores) or "")


def test_the_message_of_rows_before_apart_gates_names_every_group_reported_apart(gating: Path) -> None:
    """Rows of format 2 in two groups reported apart (the adversarial probes also counted as abstention probes, the
    summary's tables aggregated again to match): the message names both groups, in the order the rows hold them."""
    from harness.runs.table_check import recomputed_tables

    summary, manifest, scan, scores = _inputs(gating)
    rows = _format_2(scores)
    for row in rows:
        if row["apart"]:
            row["apart"] = [*row["apart"], "abstention"]
    summary.update(recomputed_tables(rows, VerdictConfig(**summary["verdict"]["config"])))
    why = verdict_disagreement(summary, manifest, scan, [], rows) or ""
    assert why.startswith("scores.jsonl predates recording whether its groups reported apart (adversarial, "
                          "abstention) gate the verdict"), why
