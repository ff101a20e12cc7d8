"""``recall-eval merge OUT RUN...``: shards checked against one plan, merged without duplicates, reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.cli import main  # noqa: E402
from harness.records import MANIFEST_FILE, RESULTS_FILE, ShardInfo, read_manifest, scan_results, write_manifest  # noqa: E402
from harness.report import build_report  # noqa: E402
from harness.runs import MergeError, merge_runs  # noqa: E402
from tests.runs.run_equality import comparable_summary, scores_by_id, without_clock
from tests.score.scoring_factories import MODEL, make_record, write_run

STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


def _run(folder: Path, *flags: str, filter_: str = "*") -> int:
    return main(["run", "--scenarios", str(STARTER), "--filter", filter_, "--out", str(folder), "--no-cache", "--no-progress",
                 "--seed", "11", *flags])





@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The starter suite over 2 epochs, once whole and once as 3 shards (same seed, no cache), clocks zeroed."""
    root = tmp_path_factory.mktemp("shards")
    assert _run(root / "whole", "--epochs", "2") in (0, 1)
    for index in (1, 2, 3):
        assert _run(root / f"s{index}", "--epochs", "2", "--shard", f"{index}/3") in (0, 1)
    for name in ("whole", "s1", "s2", "s3"):
        without_clock(root / name)
    return root


def test_merged_report_is_identical_sample_for_sample_and_number_for_number_to_the_unsharded_run(shards: Path) -> None:
    merged = shards / "merged"
    assert main(["merge", str(merged), str(shards / "s3"), str(shards / "s1"), str(shards / "s2")]) in (0, 1)
    build_report(shards / "whole")  # rebuilt from the clock-free records, as the merge built its own
    whole_scores, merged_scores = scores_by_id(shards / "whole"), scores_by_id(merged)
    assert len(whole_scores) == 64 * 3 * 2
    assert merged_scores == whole_scores
    assert comparable_summary(merged) == comparable_summary(shards / "whole")
    whole, joined = read_manifest(shards / "whole"), read_manifest(merged)
    assert (joined.suite_hash, joined.scenario_ids, joined.sample_count, joined.status) == (
        whole.suite_hash, whole.scenario_ids, whole.sample_count, "complete")
    assert joined.shard is None and joined.merged_from == ["s1", "s2", "s3"]


def _table_and_checks(text: str) -> list[str]:
    """From the per-arm table's header to the last check line: what run, report and merge all print."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model · arm"))
    end = max(i for i, line in enumerate(lines) if line.startswith(("  ✓ pass", "  ✗ fail", "  ? undecided")))
    return lines[start:end + 1]


def test_merge_prints_the_same_table_and_checks_as_run_and_report(shards: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    merged = tmp_path / "merged"
    capsys.readouterr()
    assert main(["merge", str(merged), str(shards / "s1"), str(shards / "s2"), str(shards / "s3")]) in (0, 1)
    after_merge = _table_and_checks(capsys.readouterr().out)
    assert main(["report", str(merged)]) in (0, 1)
    after_report = _table_and_checks(capsys.readouterr().out)
    assert after_merge == after_report and len(after_merge) > 8
    assert after_merge[1] == "offline/reference"
    marks = {mark for line in after_merge for mark in ("  ✓ pass", "  ? undecided") if line.startswith(mark)}
    assert marks == {"  ✓ pass", "  ? undecided"}  # the offline starter run: inconclusive, each check marked
    assert not any(line.startswith("  - ") for line in after_merge)  # checks marked, not listed as reasons


def test_merge_writes_one_record_per_sample_when_a_shard_holds_duplicates(shards: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    copy = tmp_path / "s1"
    shutil.copytree(shards / "s1", copy)
    lines = (copy / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    with open(copy / RESULTS_FILE, "a", encoding="utf-8") as handle:
        handle.write(lines[0] + "\n" + lines[1] + "\n")  # a resumed attempt appended the same samples again
    assert main(["merge", str(tmp_path / "m"), str(copy), str(shards / "s2"), str(shards / "s3"), "--no-report"]) == 0
    merged = (tmp_path / "m" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["sample_id"] for line in merged]
    assert len(ids) == len(set(ids)) == 384
    assert "2 duplicate record(s) dropped" in capsys.readouterr().err


def test_merge_names_a_missing_shard_and_writes_nothing(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s3")]) == 2
    assert "missing shard(s) 2/3 of 3" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_merge_names_a_shard_given_twice(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s2", tmp_path / "again")
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s2"), str(tmp_path / "again"), str(shards / "s3")]) == 2
    err = capsys.readouterr().err
    assert "shard 2/3 given 2 times" in err and str(tmp_path / "again") in err


def test_merge_names_overlapping_scenarios(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s1", tmp_path / "s1")
    manifest = read_manifest(tmp_path / "s1")
    stolen = read_manifest(shards / "s2").scenario_ids[0]
    write_manifest(tmp_path / "s1", manifest.model_copy(update={"scenario_ids": sorted([*manifest.scenario_ids, stolen])}))
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "s1"), str(shards / "s2"), str(shards / "s3")]) == 2
    assert f"scenario {stolen!r} is in both" in capsys.readouterr().err


def test_merge_refuses_shards_of_different_plans_naming_each_difference(shards: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s2", tmp_path / "s2")
    manifest = read_manifest(tmp_path / "s2")
    params = {**manifest.parameters, "temperature": 0.7}
    write_manifest(tmp_path / "s2", manifest.model_copy(update={"seed": 12, "harness_version": "9.9", "parameters": params}))
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(tmp_path / "s2"), str(shards / "s3")]) == 2
    err = capsys.readouterr().err
    assert "seed 12 differs" in err and "harness version 9.9 differs" in err and "parameter temperature 0.7 differs" in err


def test_merge_refuses_records_a_shard_does_not_plan(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s1", tmp_path / "s1")
    other = (shards / "s2" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()[0]
    with open(tmp_path / "s1" / RESULTS_FILE, "a", encoding="utf-8") as handle:
        handle.write(other + "\n")
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "s1"), str(shards / "s2"), str(shards / "s3")]) == 2
    assert "1 record(s) outside its run.json" in capsys.readouterr().err


def test_merge_of_an_unfinished_shard_is_an_incomplete_run(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s3", tmp_path / "s3")
    lines = (tmp_path / "s3" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    (tmp_path / "s3" / RESULTS_FILE).write_text("\n".join(lines[:-5]) + "\n", encoding="utf-8")
    write_manifest(tmp_path / "s3", read_manifest(tmp_path / "s3").model_copy(update={"status": "interrupted"}))
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s2"), str(tmp_path / "s3")]) == 1
    captured = capsys.readouterr()
    assert "status 'interrupted'" in captured.err and "--resume" in captured.err
    summary = json.loads((tmp_path / "m" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"]["status"] == "incomplete" and summary["run"]["present_samples"] == 379
    assert len(scan_results(tmp_path / "m" / RESULTS_FILE).records) == 379


def test_a_merged_run_takes_the_status_of_its_worst_shard(shards: Path, tmp_path: Path) -> None:
    """failed < interrupted < complete: one failed shard makes the merged run failed, whatever the others say."""
    import shutil

    for name, status in (("s2", "interrupted"), ("s3", "failed")):
        shutil.copytree(shards / name, tmp_path / name)
        write_manifest(tmp_path / name, read_manifest(tmp_path / name).model_copy(update={"status": status}))
    main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(tmp_path / "s2"), str(tmp_path / "s3")])
    assert read_manifest(tmp_path / "m").status == "failed"
    main(["merge", str(tmp_path / "m2"), str(shards / "s1"), str(tmp_path / "s2"), str(shards / "s3")])
    assert read_manifest(tmp_path / "m2").status == "interrupted"


def test_merge_refuses_an_out_folder_that_holds_a_run(shards: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["merge", str(shards / "whole"), str(shards / "s1"), str(shards / "s2"), str(shards / "s3")]) == 2
    assert "already holds a run" in capsys.readouterr().err


def test_merge_refuses_shards_run_with_different_retrieval_budgets(shards: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(shards / "s2", tmp_path / "s2")
    manifest = read_manifest(tmp_path / "s2")
    params = {**manifest.parameters, "retrieval_budget": {"top_k": 3, "chars": 4000}}
    write_manifest(tmp_path / "s2", manifest.model_copy(update={"parameters": params}))
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(tmp_path / "s2"), str(shards / "s3")]) == 2
    assert "parameter retrieval_budget" in capsys.readouterr().err


# ---------------------------------------------------------------- hand-made shards (no model run): each rule on its own

def _hand_shard(path: Path, index: int | None, count: int, ids: list[str], *, whole: int, models: tuple[str, ...] = (MODEL,),
                arms: tuple[str, ...] = ("history_only", "recall"), records: list[Any] | None = None,
                **update: Any) -> Path:
    """A shard folder of ``ids`` (of a whole suite of ``whole`` scenarios) written from hand-made records;
    ``index`` None: a run made without ``--shard``. ``update`` edits its run.json."""
    if records is None:
        records = [make_record(sid, arm=arm, model=model) for sid in ids for model in models for arm in arms]
    write_run(path, records, arms=arms, models=models, scenario_ids=ids)
    manifest = read_manifest(path)
    shard = None if index is None else ShardInfo(index=index, count=count, suite_hash="w" * 64, scenario_count=whole,
                                                 sample_count=whole * len(models) * len(arms))
    write_manifest(path, manifest.model_copy(update={"shard": shard, "suite_hash": "s" * 64 if shard else "w" * 64, **update}))
    return path


def _two_shards(root: Path, first: dict[str, Any] | None = None, second: dict[str, Any] | None = None) -> list[Path]:
    return [_hand_shard(root / "a", 1, 2, ["fact-01", "fact-02"], whole=4, **(first or {})),
            _hand_shard(root / "b", 2, 2, ["fact-03", "fact-04"], whole=4, **(second or {}))]


def _problems(out: Path, runs: list[Path]) -> str:
    with pytest.raises(MergeError) as caught:
        merge_runs(out, runs)
    assert not out.exists()
    return "\n".join([str(caught.value), *caught.value.problems])


def test_a_run_made_without_shard_merges_as_shard_one_of_one_of_its_own_suite(tmp_path: Path) -> None:
    run = _hand_shard(tmp_path / "whole", None, 1, ["fact-01", "fact-02", "fact-03"], whole=3)
    outcome = merge_runs(tmp_path / "m", [run])
    assert outcome.samples == 6 and outcome.warnings == []
    merged = read_manifest(tmp_path / "m")
    assert (merged.merged_from, merged.sample_count, merged.suite_hash, merged.shard) == (["whole"], 6, "w" * 64, None)


def test_an_unsharded_run_and_a_shard_are_not_one_run_and_the_shard_count_is_named(tmp_path: Path) -> None:
    run = _hand_shard(tmp_path / "whole", None, 1, ["fact-01", "fact-02"], whole=2)
    shard = _hand_shard(tmp_path / "b", 2, 2, ["fact-03", "fact-04"], whole=4)
    assert f"{shard}: shard count 2 differs from {run} (1)" in _problems(tmp_path / "m", [run, shard])


def test_shards_of_different_whole_suites_are_refused_naming_the_hashes_first_twelve_characters(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path)
    manifest = read_manifest(b)
    write_manifest(b, manifest.model_copy(update={"shard": manifest.shard.model_copy(update={"suite_hash": "y" * 64})}))
    assert f"{b}: whole-suite hash {'y' * 12} differs from {a} ({'w' * 12})" in _problems(tmp_path / "m", [a, b])


def test_a_foreign_record_is_named_with_every_reason_and_the_fix(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path)
    with open(b / RESULTS_FILE, "a", encoding="utf-8") as handle:
        handle.write(make_record("fact-03", arm="no_such_arm", model="other/model").model_dump_json() + "\n")
    text = _problems(tmp_path / "m", [a, b])
    assert f"{b / RESULTS_FILE}: 1 record(s) outside its run.json, e.g. fact-03|no_such_arm|other/model|0 " \
           "(model 'other/model', arm 'no_such_arm'); remove them from the shard first" in text


def test_the_merged_run_is_named_after_out_spans_the_shards_clocks_and_sums_their_cached_samples(tmp_path: Path) -> None:
    a, b = _hand_shard(tmp_path / "a", 1, 3, ["fact-01"], whole=3, started_at="2026-03-01T10:00:00Z",
                       finished_at="2026-03-01T12:00:00Z", cached_samples=1), \
        _hand_shard(tmp_path / "b", 2, 3, ["fact-02"], whole=3, started_at="2026-03-01T09:00:00Z",
                    finished_at="2026-03-01T11:00:00Z", cached_samples=2)
    c = _hand_shard(tmp_path / "c", 3, 3, ["fact-03"], whole=3, started_at="2026-03-01T11:00:00Z",
                    finished_at="2026-03-01T14:00:00Z", cached_samples=0)
    merge_runs(tmp_path / "merged", [c, a, b])
    merged = read_manifest(tmp_path / "merged")
    assert (merged.run_id, merged.started_at, merged.finished_at, merged.cached_samples, merged.sample_count) == (
        "merged", "2026-03-01T09:00:00Z", "2026-03-01T14:00:00Z", 3, 6)
    assert merged.merged_from == ["a", "b", "c"]


def test_a_merged_run_with_an_unfinished_shard_has_no_finish_time(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path, second={"finished_at": None, "status": "interrupted"})
    outcome = merge_runs(tmp_path / "m", [a, b])
    assert (outcome.manifest.finished_at, outcome.manifest.status) == (None, "interrupted")


def test_merged_records_follow_the_plan_order_of_the_manifests_models_and_arms(tmp_path: Path) -> None:
    """Epoch, scenario, then the models and arms in run.json's order (not their names' order), whatever the
    order the shards wrote them in."""
    models, arms = ("z/model", "a/model"), ("recall", "history_only")
    plan = [make_record(sid, arm=arm, model=model, epoch=epoch)
            for epoch in (0, 1) for sid in ("fact-01", "fact-02") for model in models for arm in arms]
    a = _hand_shard(tmp_path / "a", 1, 2, ["fact-01"], whole=2, models=models, arms=arms,
                    records=[r for r in reversed(plan) if r.scenario_id == "fact-01"])
    b = _hand_shard(tmp_path / "b", 2, 2, ["fact-02"], whole=2, models=models, arms=arms,
                    records=[r for r in reversed(plan) if r.scenario_id == "fact-02"])
    merge_runs(tmp_path / "m", [b, a])
    written = [json.loads(line)["sample_id"] for line in (tmp_path / "m" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()]
    assert written == [r.sample_id for r in plan]


def test_shards_that_differ_only_in_settings_compare_ignores_merge(tmp_path: Path) -> None:
    """How fast a shard ran (workers, concurrency, rate limits, cache folder) does not change its answers."""
    a, b = _two_shards(tmp_path, first={"parameters": {"workers": 1, "cache_dir": "/ci/a"}},
                       second={"parameters": {"workers": 4, "max_concurrency": 2, "rpm": 60, "cache_dir": "/ci/b"}})
    assert merge_runs(tmp_path / "m", [a, b]).samples == 8


def test_a_parameter_only_a_later_shard_records_is_a_difference(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path, second={"parameters": {"new_knob": 1}})
    assert f"{b}: parameter new_knob 1 differs from {a} (None)" in _problems(tmp_path / "m", [a, b])


def test_shards_that_together_hold_fewer_scenarios_than_the_whole_suite_are_refused(tmp_path: Path) -> None:
    """Every shard 1..N given once, no overlap, and still a scenario short (a shard's run.json lost one)."""
    a = _hand_shard(tmp_path / "a", 1, 2, ["fact-01", "fact-02"], whole=5)
    b = _hand_shard(tmp_path / "b", 2, 2, ["fact-03", "fact-04"], whole=5)
    assert "the shards hold 4 scenarios, the whole suite has 5" in _problems(tmp_path / "m", [a, b])


def test_a_shards_unreadable_lines_are_passed_on_as_warnings(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path)
    with open(b / RESULTS_FILE, "a", encoding="utf-8") as handle:
        handle.write('{"sample_id": "torn\n')
    outcome = merge_runs(tmp_path / "m", [a, b])
    assert outcome.samples == 8 and any(f"{b / RESULTS_FILE}:5" in warning for warning in outcome.warnings), outcome.warnings


def test_a_shard_still_marked_running_makes_the_merged_run_running(tmp_path: Path) -> None:
    """A shard whose process was killed outright never wrote its end: the merged run is not complete."""
    a, b = _two_shards(tmp_path, second={"status": "running", "finished_at": None})
    assert merge_runs(tmp_path / "m", [a, b]).manifest.status == "running"


def test_every_unreadable_shard_is_named_with_its_reason_under_one_heading(tmp_path: Path) -> None:
    """Each folder that is no run (gone, no run.json) and each shard that wrote no results.jsonl, all of them,
    not only the first: one merge attempt names every folder to fix."""
    from harness.records import ResultsError

    good = _hand_shard(tmp_path / "a", 1, 3, ["fact-01"], whole=3)
    gone, empty = tmp_path / "gone", tmp_path / "empty"
    empty.mkdir()
    no_results = [_hand_shard(tmp_path / name, index, 3, [f"fact-0{index}"], whole=3) for name, index in (("b", 2), ("c", 3))]
    for shard in no_results:
        (shard / RESULTS_FILE).unlink()
    reasons = []
    for folder in (gone, empty):
        with pytest.raises(ResultsError) as unreadable:
            read_manifest(folder)
        reasons.append(str(unreadable.value))
    with pytest.raises(MergeError) as caught:
        merge_runs(tmp_path / "m", [good, gone, *no_results, empty])
    assert str(caught.value) == "cannot read every shard"
    assert caught.value.problems == [
        reasons[0],
        f"{no_results[0] / RESULTS_FILE}: missing; the shard wrote no results (finish it with `recall-eval run --resume {no_results[0]}`)",
        f"{no_results[1] / RESULTS_FILE}: missing; the shard wrote no results (finish it with `recall-eval run --resume {no_results[1]}`)",
        reasons[1],
    ]
    assert not (tmp_path / "m").exists()


def test_shards_of_different_models_arms_and_epochs_are_refused_naming_each(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path, second={"models": ["other/model"], "arms": ["recall"], "epochs": 2})
    text = _problems(tmp_path / "m", [a, b])
    assert f"{b}: models ['other/model'] differs from {a} (['{MODEL}'])" in text
    assert f"{b}: arms ['recall'] differs from {a} (['history_only', 'recall'])" in text
    assert f"{b}: epochs 2 differs from {a} (1)" in text


def test_shards_of_different_runs_are_refused_under_a_heading_that_counts_the_folders(tmp_path: Path) -> None:
    """The CLI prints the error's own line above its problems: it says what is wrong with the folders as a whole."""
    a, b = _two_shards(tmp_path, second={"epochs": 2})
    assert _problems(tmp_path / "m", [a, b]).splitlines()[0] == "the 2 folder(s) are not the shards of one run"


def test_a_shard_given_twice_is_named_with_both_its_folders(tmp_path: Path) -> None:
    import shutil

    a, b = _two_shards(tmp_path)
    again = tmp_path / "again"
    shutil.copytree(b, again)
    assert f"shard 2/2 given 2 times: {b}, {again} (overlapping; give each shard once)" in _problems(tmp_path / "m", [a, b, again])


def test_every_missing_shard_is_named_the_first_too(tmp_path: Path) -> None:
    only = _hand_shard(tmp_path / "b", 2, 3, ["fact-02"], whole=3)
    assert "missing shard(s) 1/3, 3/3 of 3: pass every shard's run folder" in _problems(tmp_path / "m", [only])


def test_a_scenario_in_two_shards_is_named_with_the_folder_that_has_it_first(tmp_path: Path) -> None:
    a = _hand_shard(tmp_path / "a", 1, 2, ["fact-01", "fact-02"], whole=3)
    b = _hand_shard(tmp_path / "b", 2, 2, ["fact-02", "fact-03"], whole=3)
    with pytest.raises(MergeError) as caught:
        merge_runs(tmp_path / "m", [a, b])
    assert caught.value.problems == [f"scenario 'fact-02' is in both {a} and {b} (overlapping shards)"]


@pytest.mark.parametrize("held", [MANIFEST_FILE, RESULTS_FILE])
def test_an_out_folder_holding_either_file_of_a_run_is_refused_and_left_alone(tmp_path: Path, held: str) -> None:
    """A run.json alone (a run that never wrote a record) or a results.jsonl alone is still somebody's run."""
    a, b = _two_shards(tmp_path)
    out = tmp_path / "m"
    out.mkdir()
    (out / held).write_text("theirs\n", encoding="utf-8")
    with pytest.raises(MergeError, match="already holds a run"):
        merge_runs(out, [a, b])
    assert sorted(p.name for p in out.iterdir()) == [held] and (out / held).read_text(encoding="utf-8") == "theirs\n"


def test_an_out_folder_given_as_one_of_the_shards_is_named_so(tmp_path: Path) -> None:
    """Reachable only for a folder holding no run yet (one that does is refused as holding a run first)."""
    a = _hand_shard(tmp_path / "a", 1, 2, ["fact-01"], whole=2)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MergeError) as caught:
        merge_runs(empty, [a, empty])
    assert str(caught.value) == f"{empty} is one of the shards; choose a new folder for the merged run"
    assert list(empty.iterdir()) == []


# ---------------------------------------------------------------- the CLI's flags, outputs and failures (issue 29)

def _with_errors(shard: Path, out: Path, count: int) -> Path:
    """A copy of ``shard`` whose first ``count`` records are provider errors (as a timeout would leave them)."""
    import shutil

    from harness.records import SampleError, SampleRecord

    shutil.copytree(shard, out)
    lines = (out / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    for i in range(count):
        record = SampleRecord.model_validate_json(lines[i])
        lines[i] = record.model_copy(update={
            "status": "error", "error": SampleError(type="Timeout", message="provider timed out"),
            "final_answer": None, "stop_reason": "error"}).model_dump_json()
    (out / RESULTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_merge_says_what_it_merged_and_where_the_report_is(shards: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m"
    assert main(["merge", str(out), str(shards / "s2"), str(shards / "s1"), str(shards / "s3")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"merged 3 shard(s): 384 samples of 384 planned -> {out}"
    assert lines[-1] == f"report: {out / 'index.html'}" and (out / "index.html").is_file()


def test_merge_gates_on_the_verdict_only_when_asked(shards: Path, tmp_path: Path) -> None:
    """The starter suite's offline verdict is not pass: exit 0 without --gate, 1 with it, as `report` does."""
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s2"), str(shards / "s3")]) == 0
    assert json.loads((tmp_path / "m" / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] != "pass"
    assert main(["merge", str(tmp_path / "g"), str(shards / "s1"), str(shards / "s2"), str(shards / "s3"), "--gate"]) == 1


def test_merge_without_a_report_writes_the_run_only(shards: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m"
    assert main(["merge", str(out), str(shards / "s1"), str(shards / "s2"), str(shards / "s3"), "--no-report"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [RESULTS_FILE, MANIFEST_FILE]
    assert "report:" not in capsys.readouterr().out


def test_merge_applies_max_error_rate_to_the_merged_run(shards: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """39 errors of 384 samples (10%): above the default 5%, exit 1 and the check says so; within 50%, exit 0."""
    s3 = _with_errors(shards / "s3", tmp_path / "s3", 39)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s2"), str(s3)]) == 1
    assert "ended in error, above --max-error-rate 0.05" in capsys.readouterr().out
    assert main(["merge", str(tmp_path / "ok"), str(shards / "s1"), str(shards / "s2"), str(s3),
                 "--max-error-rate", "0.5"]) == 0
    assert "above --max-error-rate" not in capsys.readouterr().out


def test_the_merged_reports_warnings_go_to_stderr(shards: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A record whose scenario changed since the run: the report's warning is on stderr, whole, and not on stdout."""
    import shutil

    shutil.copytree(shards / "s3", tmp_path / "s3")
    lines = (tmp_path / "s3" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["scenario_hash"] = "0" * 64
    lines[0] = json.dumps(first)
    (tmp_path / "s3" / RESULTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    main(["merge", str(tmp_path / "m"), str(shards / "s1"), str(shards / "s2"), str(tmp_path / "s3")])
    captured = capsys.readouterr()
    warned = [line for line in captured.err.splitlines() if "changed since the run" in line]
    assert len(warned) == 1 and warned[0].startswith(
        f"warning: scenario {first['scenario_id']!r} changed since the run (hash {'0' * 12} in results, ")
    assert "changed since the run" not in captured.out


def test_merge_called_with_only_its_positional_arguments_takes_the_flags_defaults(shards: Path, tmp_path: Path) -> None:
    """A library caller's namespace with OUT and RUN only: the report is built, no gate, the default error rate."""
    from types import SimpleNamespace

    from harness.runs.merge import cli_merge

    runs = [str(shards / "s1"), str(shards / "s2"), str(shards / "s3")]
    assert cli_merge(SimpleNamespace(out=str(tmp_path / "m"), runs=runs)) == 0
    assert (tmp_path / "m" / "index.html").is_file()
    s3 = _with_errors(shards / "s3", tmp_path / "s3", 39)
    assert cli_merge(SimpleNamespace(out=str(tmp_path / "e"), runs=[*runs[:2], str(s3)])) == 1


def test_merge_whose_report_fails_keeps_the_merged_run_and_says_how_to_retry(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Hand-made shards name scenario files that are not there: the merge is written, the report is not, exit 2."""
    a, b = _two_shards(tmp_path)
    out = tmp_path / "m"
    assert main(["merge", str(out), str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recall-eval merge: the merged results are written, the report is not (")
    assert err.rstrip().endswith(f"). Retry with: recall-eval report {out}")
    assert len(scan_results(out / RESULTS_FILE).records) == 8 and not (out / "index.html").exists()


def test_a_foreign_record_is_refused_under_a_heading_that_says_so(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path)
    with open(b / RESULTS_FILE, "a", encoding="utf-8") as handle:
        handle.write(make_record("fact-03", arm="no_such_arm").model_dump_json() + "\n")
    with pytest.raises(MergeError) as caught:
        merge_runs(tmp_path / "m", [a, b])
    assert str(caught.value) == "a shard holds records its run.json does not plan"


def test_the_merged_run_goes_into_a_new_nested_folder_or_an_empty_existing_one(tmp_path: Path) -> None:
    a, b = _two_shards(tmp_path)
    nested = tmp_path / "not" / "yet" / "there"
    assert merge_runs(nested, [a, b]).samples == 8
    empty = tmp_path / "empty"
    empty.mkdir()
    assert merge_runs(empty, [a, b]).samples == 8


def test_a_merged_run_that_cannot_be_written_says_why_in_words(tmp_path: Path) -> None:
    """OUT under a file: the OS's reason ("Not a directory"), not Python's exception text."""
    a, b = _two_shards(tmp_path)
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = tmp_path / "a-file" / "m"
    with pytest.raises(MergeError) as caught:
        merge_runs(out, [a, b])
    assert str(caught.value) == f"cannot write the merged run to {out}: Not a directory; choose another OUT"


def test_records_with_text_outside_ascii_merge_under_an_ascii_locale(tmp_path: Path) -> None:
    """The merged results.jsonl is UTF-8 whatever the locale (a Windows code page, a C locale without coercion)."""
    import subprocess
    import sys

    import harness

    records = [make_record(sid, arm=arm, answer="Billing läuft auf Postgres 15 — 東京.") for sid in ("fact-01", "fact-02")
               for arm in ("history_only", "recall")]
    a = _hand_shard(tmp_path / "a", 1, 2, ["fact-01", "fact-02"], whole=4, records=records)
    b = _hand_shard(tmp_path / "b", 2, 2, ["fact-03", "fact-04"], whole=4)
    code = ("import sys; from pathlib import Path; from harness.runs import merge_runs; "
            "print(merge_runs(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]).samples)")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": str(Path(harness.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m"), str(a), str(b)], env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "8"
    answers = {r.final_answer for r in scan_results(tmp_path / "m" / RESULTS_FILE).records}
    assert "Billing läuft auf Postgres 15 — 東京." in answers
    merge_runs(tmp_path / "here", [a, b])  # and the same bytes as a merge under this process's locale
    assert (tmp_path / "m" / RESULTS_FILE).read_bytes() == (tmp_path / "here" / RESULTS_FILE).read_bytes()


@pytest.mark.parametrize("cleared", [False, True], ids=["results-left", "results-already-gone"])
def test_a_merged_run_whose_manifest_cannot_be_written_leaves_no_results_behind(tmp_path: Path, monkeypatch,
                                                                                 cleared: bool) -> None:
    """The disk fills between results.jsonl and run.json: the merge says why, and removes the results it wrote, so
    OUT is not left looking like a run (which would refuse the retry as "already holds a run"). If someone cleared
    OUT meanwhile, the cleanup finds nothing to remove and the merge's own message still stands (not a bare
    FileNotFoundError)."""
    import harness.runs.merge as merge_module
    from harness.records import ResultsError

    a, b = _two_shards(tmp_path)
    out = tmp_path / "m"

    def full(run_dir: Path, manifest: Any) -> None:
        if cleared:
            (run_dir / RESULTS_FILE).unlink()
        raise ResultsError(f"{run_dir / MANIFEST_FILE}: cannot write the run manifest: No space left on device")

    monkeypatch.setattr(merge_module, "write_manifest", full)
    with pytest.raises(MergeError) as caught:
        merge_runs(out, [a, b])
    assert str(caught.value) == (f"cannot write the merged run to {out}: {out / MANIFEST_FILE}: cannot write the run "
                                 "manifest: No space left on device; choose another OUT")
    assert list(out.iterdir()) == []
    monkeypatch.undo()
    assert merge_runs(out, [a, b]).samples == 8  # the retry, once there is room
