"""What compare reads of a run folder and which differences it reports: messages pinned as a maintainer reads them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.analysis import VerdictConfig
from harness.records import MANIFEST_FILE, RESULTS_FILE, read_manifest
from harness.report import build_report
from harness.run.folder import lock_folder
from harness.runs.comparability import (
    CompareError,
    abbreviated,
    differences,
    load_run,
    only_in,
    recorded_budget,
    run_problems,
)
from tests.runs.compare_factories import comparable_pair, edit_json, synthetic_run
from tests.score.scoring_factories import make_record

JUDGED = {"model": "openai/gpt-4o", "prompt": {"name": "strict", "version": "strict-v2"}}


@pytest.fixture()
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two identical, comparable runs (B a copy of A)."""
    return comparable_pair(tmp_path)


def _lines(a: Path, b: Path) -> list[str]:
    return [line for d in differences(load_run(a), load_run(b)) for line in d.lines()]


def _forge_scores(run: Path, raw: bytes) -> Path:
    """scores.jsonl replaced by ``raw``, summary.json's digest forged to match: compare reads it as it is."""
    scores = run / "scores.jsonl"
    scores.write_bytes(raw)
    edit_json(run / "summary.json", lambda s: s["run"].update(scores_sha256=hashlib.sha256(raw).hexdigest()))
    return scores


def _drop_last_score(run: Path) -> None:
    """scores.jsonl no longer the one summary.json was built from: compare rebuilds the report."""
    scores = run / "scores.jsonl"
    scores.write_text("".join(scores.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")


# ---------------------------------------------------------------- reading summary.json and scores.jsonl


@pytest.mark.parametrize(("raw", "said"), [
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
    (b"{not json", "1: not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
    (b"[]", "a JSON list, not an object"),
])
def test_a_corrupt_summary_says_how_to_rebuild_it(pair, raw: bytes, said: str) -> None:
    a, b = pair
    (b / "summary.json").write_bytes(raw)
    with pytest.raises(CompareError) as exc:
        load_run(b)
    where = f"{b / 'summary.json'}:" if said[0].isdigit() else f"{b / 'summary.json'}: "
    assert str(exc.value) == f"{where}{said}; rebuild it with `recall-eval report {b}`"


def test_a_summary_without_metrics_is_refused_even_with_a_verdict(pair) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s.pop("metrics"))
    with pytest.raises(CompareError, match=r"summary.json: no verdict.status or metrics; rebuild it"):
        load_run(b)


@pytest.mark.parametrize("key", ["ci_low", "ci_high"])
def test_an_interval_bound_that_is_not_a_number_is_named(pair, key: str) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s["metrics"][0].update({key: "wide"}))
    with pytest.raises(CompareError) as exc:
        load_run(b)
    assert f"summary.json: metrics[0].{key} is 'wide', not a number or null; rebuild it" in str(exc.value)


def test_a_scores_line_without_its_fields_names_them_and_the_rebuild(pair) -> None:
    a, b = pair
    good = (b / "scores.jsonl").read_bytes().split(b"\n")[0]
    scores = _forge_scores(b, good + b'\n{"model": "m"}\n')
    with pytest.raises(CompareError) as exc:
        load_run(b)
    assert str(exc.value) == f"{scores}:2: no arm, scenario_id, status; rebuild it with `recall-eval report {b}`"


def test_a_blank_line_inside_scores_does_not_end_them(pair) -> None:
    a, b = pair
    rows = (b / "scores.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    _forge_scores(b, rows[0] + b"\n\n" + b"\n".join(rows[1:]) + b"\n")
    assert len(load_run(b).samples) == len(rows) == 20


# ---------------------------------------------------------------- a report compare must rebuild


@pytest.mark.parametrize("missing", ["summary.json", "scores.jsonl"])
def test_a_missing_summary_or_scores_is_rebuilt(pair, missing: str) -> None:
    a, b = pair
    (b / missing).unlink()
    run = load_run(b)
    decided = json.loads((a / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"]  # B is A's copy
    assert (b / missing).is_file() and len(run.samples) == 20 and run.summary["verdict"]["status"] == decided


def test_a_rebuilt_report_keeps_its_excluded_scenarios_and_thresholds(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    build_report(run_dir, exclude=["fact-09"], thresholds=VerdictConfig(min_continuity_gain=0.1, max_error_rate=0.2))
    _drop_last_score(run_dir)
    summary = load_run(run_dir).summary
    assert summary["run"]["excluded_scenarios"] == ["fact-09"]
    assert summary["verdict"]["config"]["min_continuity_gain"] == 0.1
    assert summary["verdict"]["config"]["max_error_rate"] == 0.2


@pytest.mark.parametrize(("damage", "why"), [
    (lambda run: (run / RESULTS_FILE).write_bytes((run / RESULTS_FILE).read_bytes() + b"\n"),
     "results.jsonl changed after summary.json was built"),
    (_drop_last_score, "scores.jsonl changed after summary.json was built"),
    (lambda run: edit_json(run / "summary.json", lambda s: s["run"].pop("scores_sha256")),
     "summary.json records no digest of the results it was built from (an older report)"),
])
def test_a_stale_report_scored_by_a_judge_is_not_rebuilt_without_it(pair, damage, why: str) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s.update(judge=JUDGED))
    damage(b)
    with pytest.raises(CompareError) as exc:
        load_run(b)
    assert str(exc.value) == (f"{b / 'summary.json'}: {why}, and it was scored with the judge openai/gpt-4o, which "
                              f"compare does not call; rebuild it with `recall-eval report {b} --judge-model "
                              "openai/gpt-4o`")


def test_a_judged_report_whose_scores_are_missing_is_not_rebuilt_without_its_judge(pair) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s.update(judge=JUDGED))
    (b / "scores.jsonl").unlink()
    with pytest.raises(CompareError) as exc:
        load_run(b)
    assert str(exc.value) == (f"{b / 'summary.json'}: summary.json or scores.jsonl is missing, and it was scored with "
                              f"the judge openai/gpt-4o, which compare does not call; rebuild it with `recall-eval "
                              f"report {b} --judge-model openai/gpt-4o`")
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["judge"] == JUDGED  # not overwritten


def test_a_report_whose_scores_are_missing_is_rebuilt_with_its_exclusions(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "a")
    build_report(run_dir, exclude=["fact-09"])
    (run_dir / "scores.jsonl").unlink()
    assert load_run(run_dir).summary["run"]["excluded_scenarios"] == ["fact-09"]


@pytest.mark.parametrize(("damage", "why"), [
    (lambda run: (run / "summary.json").unlink(), "summary.json or scores.jsonl is missing"),
    (_drop_last_score, "scores.jsonl changed after summary.json was built"),
])
def test_a_run_still_writing_is_not_rebuilt(pair, damage, why: str) -> None:
    a, b = pair
    damage(b)
    lock = lock_folder(b, "2026-01-02T03:04:05Z")
    try:
        with pytest.raises(CompareError) as exc:
            load_run(b)
    finally:
        lock.release()
    import os
    import socket

    assert str(exc.value) == (f"{b}: its run is in progress (being written by pid {os.getpid()} on "
                              f"{socket.gethostname()} (started 2026-01-02T03:04:05Z)) and its report is not current "
                              f"({why}); compare it once the run has finished")


def test_a_run_without_results_says_to_resume_it(pair) -> None:
    a, b = pair
    (b / RESULTS_FILE).unlink()
    with pytest.raises(CompareError) as exc:
        load_run(b)
    assert str(exc.value) == f"{b / RESULTS_FILE}: missing; the run wrote no results (`recall-eval run --resume {b}`)"


def _add_stray(run: Path, arm: str = "recall") -> None:
    with (run / RESULTS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(make_record("other-01", arm=arm).model_dump_json() + "\n")


def test_records_outside_run_json_are_refused_unless_asked_for(pair) -> None:
    a, b = pair
    _add_stray(b, arm="full_history")
    with pytest.raises(CompareError, match="1 record\\(s\\) of samples its run.json does not plan"):
        load_run(b)
    run = load_run(b, include_foreign=True)
    assert run.foreign == ["other-01|full_history|offline/reference|0: arm 'full_history', scenario 'other-01' "
                           "not in run.json"]
    assert run.summary["run"]["foreign_records"] == 1


# ---------------------------------------------------------------- what is not comparable


def test_a_suite_hash_difference_shows_both_hashes_and_no_edits_when_none(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b", ids=["fact-00", "new-01"])
    ha, hb = read_manifest(a).suite_hash, read_manifest(b).suite_hash
    assert _lines(a, b)[:2] == [f"suite hash: {ha[:12]} -> {hb[:12]} (the suites differ)",
                                "scenario ids: 10 scenarios -> 2 scenarios (1 in both)"]


def test_the_same_exclusions_in_both_runs_are_no_difference(pair) -> None:
    a, b = pair
    for run in pair:
        build_report(run, exclude=["fact-09"])
    assert _lines(a, b) == []
    build_report(a, exclude=["fact-08"])
    assert _lines(a, b) == ["excluded scenarios: fact-08 -> fact-09"]


def test_reports_built_by_other_harness_versions_are_named(pair) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s.update(harness_version="0.2.0"))
    assert _lines(a, b) == ["report harness version: 0.1.0 -> 0.2.0"]


def test_a_verdict_threshold_only_one_report_records_reads_as_none(pair) -> None:
    a, b = pair
    edit_json(a / "summary.json", lambda s: s["verdict"]["config"].pop("max_error_rate"))
    assert _lines(a, b) == ["verdict max error rate: none -> 0.05"]


def test_a_parameter_only_one_run_recorded_is_a_difference(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", parameters={"top_p": 1.0})
    b = synthetic_run(tmp_path / "b")
    assert _lines(a, b) == ["top p: 1.0 -> none"]


@pytest.mark.parametrize(("judge_a", "judge_b", "shown"), [
    (JUDGED, {"model": "openai/gpt-4o", "prompt": {"version": "locomo-v1"}},
     ["judge model: openai/gpt-4o -> openai/gpt-4o (locomo-v1)"]),
    (JUDGED, {"model": "openai/gpt-4o"}, []),  # the strict default, recorded or not, is the same judge
    (None, JUDGED, ["judge model: none -> openai/gpt-4o"]),  # a summary without a judge block: unjudged
    ({"prompt": {"version": "locomo-v1"}}, None, []),  # a prompt without a model is no judge
])
def test_the_judge_is_its_model_and_any_prompt_but_the_strict_default(pair, judge_a, judge_b, shown) -> None:
    a, b = pair
    for run, judge in ((a, judge_a), (b, judge_b)):
        edit_json(run / "summary.json", lambda s, judge=judge: s.update(judge=judge))
    assert _lines(a, b) == shown


def test_an_arm_fingerprinted_by_one_run_only_is_no_difference(tmp_path: Path) -> None:
    from tests.runs.test_compare_budget import FINGERPRINT

    a = synthetic_run(tmp_path / "a")
    b = synthetic_run(tmp_path / "b")
    edit_json(a / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": FINGERPRINT}))
    assert _lines(a, b) == []
    edit_json(b / MANIFEST_FILE, lambda m: m.update(arm_fingerprints={"recall": {**FINGERPRINT,
                                                                                 "config_hash": "0123456789abcdef"}}))
    assert _lines(a, b) == ["arm recall configuration: memory_tools recall-eval 0.1.0 aaaaaaaaaaaa -> "
                            "memory_tools recall-eval 0.1.0 0123456789ab"]


def test_a_budget_recorded_in_another_shape_is_shown_as_recorded(tmp_path: Path) -> None:
    a = synthetic_run(tmp_path / "a", parameters={"retrieval_budget": {"top_k": 10, "chars": 4000, "mode": "mmr"}})
    assert recorded_budget(read_manifest(a)) == "{'top_k': 10, 'chars': 4000, 'mode': 'mmr'}"


# ---------------------------------------------------------------- no basis for a gate, and what only one run has


def test_an_incomplete_run_names_its_folder_status_and_how_to_finish(pair) -> None:
    a, b = pair
    edit_json(b / MANIFEST_FILE, lambda m: m.update(status="interrupted"))
    assert run_problems("B", load_run(b)) == [
        f"B ({b}) is not complete ({b / MANIFEST_FILE} status 'interrupted'); finish it with "
        f"`recall-eval run --resume {b}`"]


@pytest.mark.parametrize(("bad", "more"), [(3, ""), (4, " (+1 more)"), (5, " (+2 more)")])
def test_unreadable_result_lines_show_the_first_three_and_count_the_rest(pair, bad: int, more: str) -> None:
    a, b = pair
    results = b / RESULTS_FILE
    lines = results.read_bytes().split(b"\n")
    for i in range(bad):
        lines[2 * i + 1] = b'"just a string"'
    results.write_bytes(b"\n".join(lines))
    shown = "; ".join(f"{results}:{2 * i + 2}: a JSON str, not a sample record object" for i in range(3))
    problems = run_problems("B", load_run(b))
    assert problems[-1] == f"B ({b}): {bad} unreadable line(s) in results.jsonl: {shown}{more}"


def test_categories_only_one_run_has_are_listed_never_all(pair, tmp_path: Path) -> None:
    a, _ = pair
    b = synthetic_run(tmp_path / "other", category="knowledge_update")
    assert only_in(load_run(a), load_run(b)) == {"categories": (["project_fact"], ["knowledge_update"])}


def test_long_id_lists_are_cut_after_five_and_counted() -> None:
    assert abbreviated(["c", "a", "b"]) == "a, b, c"
    assert abbreviated(["e", "d", "c", "b", "a"]) == "a, b, c, d, e"
    assert abbreviated([f"s{i}" for i in range(7)]) == "s0, s1, s2, s3, s4 and 2 more"


def test_a_run_interrupted_before_its_first_record_has_no_categories_not_even_all(pair) -> None:
    a, b = pair
    (b / RESULTS_FILE).write_bytes(b"")
    edit_json(b / MANIFEST_FILE, lambda m: m.update(status="interrupted"))
    empty = load_run(b)
    assert empty.summary["metrics"] == []
    assert only_in(load_run(a), empty) == {"categories": (["project_fact"], [])}


@pytest.mark.parametrize(("prompt", "options"), [
    ({"name": "locomo", "version": "locomo-v1", "file": None}, "--judge-model openai/gpt-4o --judge-preset locomo"),
    ({"name": "file", "version": "file-1a2b", "file": "prompts/official.txt"},
     "--judge-model openai/gpt-4o --judge-prompt prompts/official.txt"),
])
def test_the_rebuild_hint_for_a_judged_report_names_its_preset_or_prompt_file(pair, prompt, options: str) -> None:
    a, b = pair
    edit_json(b / "summary.json", lambda s: s.update(judge={"model": "openai/gpt-4o", "prompt": prompt}))
    (b / "scores.jsonl").unlink()
    with pytest.raises(CompareError) as exc:
        load_run(b)
    # the command must run as printed: `--judge-model openai/gpt-4o (locomo-v1)` did not
    assert str(exc.value).endswith(f"rebuild it with `recall-eval report {b} {options}`")
    assert f"scored with the judge openai/gpt-4o ({prompt['version']})" in str(exc.value)
