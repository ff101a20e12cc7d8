"""Hand-edited run folders that would forge a number: a stale summary, a record standing in for another sample, a
lowered planned count. Each is caught by ``recall-eval report`` or ``compare`` (through ``main`` in the test's process:
the fault is the edited folder, not the process).

The folders come from a real offline run (and, for ``compare``, the synthetic
runs of ``tests/runs/compare_factories``); each test edits a copy the way the
issue saw it done.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.records import MANIFEST_FILE, RESULTS_FILE
from tests.fault.conftest import cli_in_process, offline_smoke_run
from tests.runs.compare_factories import edit_json, synthetic_run

#: 200 scenarios, 180 right in recall and 20 in history_only: a pass (189 is the fewest that bound a rise of unsupported
#: claims within the default tolerance 0.02, docs/statistics.md).
PASSING = {"ids": [f"fact-{i:03d}" for i in range(200)], "recall_right": 180, "history_right": 20}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished offline run: 5 smoke scenarios x history_only, recall = 10 samples."""
    base = tmp_path_factory.mktemp("fault-forged")
    return offline_smoke_run(base)


@pytest.fixture()
def run_dir(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(pristine, copy)
    return copy


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines() if line]


def _write_records(run_dir: Path, records: list[dict]) -> None:
    (run_dir / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _wrong_recall(run_dir: Path) -> None:
    """Every recall answer replaced by one that is wrong (the edit made after the summary was built)."""
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        if record["arm"] == "recall":
            record["final_answer"] = "I don't know."
        edited.append(json.dumps(record))
    (run_dir / RESULTS_FILE).write_text("\n".join(edited) + "\n", encoding="utf-8")


def test_compare_rebuilds_a_summary_whose_results_changed_after_it_was_built(tmp_path: Path) -> None:
    """B's results.jsonl edited after its summary (every recall answer wrong): compare rebuilds B's report and finds
    the regression (exit 1), never "no regression"."""
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    _wrong_recall(b)
    done = cli_in_process("compare", a, b)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no metric regression" not in done.stdout
    assert "continuity_accuracy" in done.stdout
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] != "pass"


def test_compare_refuses_a_stale_summary_it_cannot_rebuild_without_its_judge(tmp_path: Path) -> None:
    """B's summary was scored with a judge model and its results changed since: compare exits 2 naming the `report
    --judge-model` command that rebuilds it."""
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    edit_json(b / "summary.json", lambda s: s.update(judge={"model": "openai/judge-x", "calls": 0, "cached": 0}))
    _wrong_recall(b)
    done = cli_in_process("compare", a, b)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "results.jsonl changed after summary.json was built" in done.stderr
    assert f"recall-eval report {b} --judge-model openai/judge-x" in done.stderr


def test_compare_rebuilds_a_summary_that_records_no_digest(tmp_path: Path) -> None:
    """A summary without the digests (an older report, or a hand-written one claiming "pass"): compare rebuilds it from the results."""
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    _wrong_recall(b)

    def forge(summary: dict) -> None:
        for key in ("results_sha256", "scores_sha256"):
            summary["run"].pop(key)

    edit_json(b / "summary.json", forge)
    done = cli_in_process("compare", a, b)
    assert done.returncode == 1, done.stdout + done.stderr


def test_a_record_whose_sample_id_names_another_arms_sample_is_rejected(run_dir: Path) -> None:
    """A history_only record given the sample_id of the recall sample of its scenario: the line is named as corrupt,
    the report is incomplete (9 of 10), never complete with one arm missing."""
    records = _records(run_dir)
    target = next(r for r in records if r["arm"] == "history_only")
    other = next(r for r in records if r["arm"] == "recall" and r["scenario_id"] == target["scenario_id"])
    target["sample_id"] = other["sample_id"]
    records.remove(target)
    records.append(target)  # the last line: it would win over the genuine recall record
    _write_records(run_dir, records)
    done = cli_in_process("report", run_dir)
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0].startswith("incomplete: 9 of 10 samples (1 unusable line(s) in results.jsonl)")
    assert f"{run_dir / RESULTS_FILE}:10: sample_id {other['sample_id']!r} does not match" in done.stdout + done.stderr
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["present_samples"] == 9 and summary["run"]["complete"] is False


def test_a_lowered_sample_count_does_not_make_an_incomplete_run_complete(run_dir: Path) -> None:
    """One record deleted and run.json's sample_count lowered to 9 to match: the report still says incomplete, 9 of 10, and names the disagreement."""
    _write_records(run_dir, _records(run_dir)[:-1])
    edit_json(run_dir / MANIFEST_FILE, lambda m: m.update(sample_count=9))
    done = cli_in_process("report", run_dir, "--gate")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("incomplete: 9 of 10 samples")
    assert "run.json says sample_count 9, but its plan (scenarios x arms x models x epochs) has 10" in done.stdout + done.stderr
    assert json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] == "incomplete"


def _forge_verdict(summary: dict, status: str = "pass") -> None:
    summary["verdict"]["status"] = status
    for verdict in summary["verdict"]["per_model"].values():
        verdict["status"] = status


def test_compare_decides_a_hand_edited_verdict_again_from_the_records(tmp_path: Path) -> None:
    """B's summary.json verdict.status (and each model's) edited from fail to pass, results, scores and digests
    unchanged: compare never prints ``A fail -> B pass``; it names the edit, rebuilds B's report from the results
    (fail) and says so."""
    a = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)  # a loss: fail (equal arms are undecided)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] == "fail"
    edit_json(b / "summary.json", _forge_verdict)
    done = cli_in_process("compare", a, b)
    assert "Traceback" not in done.stderr, done.stderr
    assert "verdict: A fail -> B fail" in done.stdout, done.stdout
    assert "B pass" not in done.stdout
    assert "its verdict.status 'pass' does not follow from its metrics and the run's records, which decide 'fail'" \
        in done.stdout + done.stderr
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] == "fail"



def test_compare_decides_again_a_verdict_failed_by_a_gating_group_reported_apart_and_edited_to_pass(
        tmp_path: Path) -> None:
    """A protocol with ``apart_gates: true`` whose run fails on its adversarial line alone (the headline gains): B's
    verdict edited to pass and its ``protocol`` block deleted, results, scores and digests unchanged. compare reads
    whether the line gates from scores.jsonl, not from the summary: it names the edit, rebuilds B (fail) and prints
    ``A fail -> B fail``, never ``B pass``; A, untouched, is not called edited (compare runs in the test's process, as the
    file's other compares do: the fault is the edited folder)."""
    from tests.runs.compare_factories import claims_reported_apart

    a = claims_reported_apart(tmp_path / "a", gates=True)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] == "fail"

    def forge(summary: dict) -> None:
        _forge_verdict(summary)
        del summary["protocol"]

    edit_json(b / "summary.json", forge)
    done = cli_in_process("compare", a, b)
    assert "Traceback" not in done.stderr, done.stderr
    assert "verdict: A fail -> B fail" in done.stdout, done.stdout + done.stderr
    assert "B pass" not in done.stdout
    said = done.stdout + done.stderr
    assert said.count("does not follow") == 1, said
    assert "its verdict.status 'pass' does not follow from its metrics and the run's records, which decide 'fail'" \
        in " ".join(said.split()), said


def test_compare_refuses_a_hand_edited_verdict_it_cannot_rebuild_without_its_judge(tmp_path: Path) -> None:
    """The same edit in a run scored with a judge: exit 2 naming the verdict that does not follow and the
    `report --judge-model` command; no verdict line printed."""
    a = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)  # a loss: fail
    b = tmp_path / "b"
    shutil.copytree(a, b)

    def forge(summary: dict) -> None:
        _forge_verdict(summary)
        summary["judge"] = {"model": "openai/judge-x", "calls": 0, "cached": 0}

    edit_json(b / "summary.json", forge)
    done = cli_in_process("compare", a, b)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "verdict.status 'pass' does not follow" in done.stderr and "--judge-model openai/judge-x" in done.stderr
    assert "verdict: A" not in done.stdout


def test_compare_accepts_an_untouched_summary_without_rebuilding_it(tmp_path: Path) -> None:
    """Two untouched runs: the verdict decided again agrees, nothing is rebuilt (summary.json's bytes unchanged)."""
    a = synthetic_run(tmp_path / "a", **PASSING)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    before = (b / "summary.json").read_bytes()
    done = cli_in_process("compare", a, b)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: A pass -> B pass" in done.stdout and (b / "summary.json").read_bytes() == before


def _paste_tables_and_verdict(donor: Path, target: Path) -> None:
    """``target``'s summary.json given the aggregate tables and verdict of ``donor``'s (digests left as they are)."""
    from harness.runs.table_check import TABLES

    taken = json.loads((donor / "summary.json").read_text(encoding="utf-8"))
    edit_json(target / "summary.json", lambda s: s.update({k: taken[k] for k in (*TABLES, "verdict")}))


def test_compare_recomputes_the_tables_a_forged_verdict_was_made_consistent_with(tmp_path: Path) -> None:
    """B's summary.json given the tables and verdict of a run that passes (continuity's paired row, metrics and the
    verdict all consistent; results, scores and digests unchanged): compare aggregates B's scores.jsonl again, names
    the first forged field, rebuilds B's report and prints ``A fail -> B fail``, never ``B pass``."""
    a = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)  # a loss: fail (equal arms are undecided)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    passing = synthetic_run(tmp_path / "passing", **PASSING)
    _paste_tables_and_verdict(passing, b)
    done = cli_in_process("compare", a, b)
    assert "Traceback" not in done.stderr, done.stderr
    assert "verdict: A fail -> B fail" in done.stdout, done.stdout + done.stderr
    assert "B pass" not in done.stdout
    assert "but the samples of scores.jsonl give" in done.stdout + done.stderr
    assert json.loads((b / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"] == "fail"


def test_compare_refuses_forged_tables_it_cannot_rebuild_without_its_judge(tmp_path: Path) -> None:
    """The same consistent forgery in a run scored with a judge: exit 2 naming the forged field of the tables and the
    `report --judge-model` command; no verdict line printed."""
    a = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)  # a loss: fail
    b = tmp_path / "b"
    shutil.copytree(a, b)
    _paste_tables_and_verdict(synthetic_run(tmp_path / "passing", **PASSING), b)
    edit_json(b / "summary.json", lambda s: s.update(judge={"model": "openai/judge-x", "calls": 0, "cached": 0}))
    done = cli_in_process("compare", a, b)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "its metrics[" in done.stderr and "but the samples of scores.jsonl give" in done.stderr, done.stderr
    assert "--judge-model openai/judge-x" in done.stderr and "verdict: A" not in done.stdout


def test_compare_rebuilds_a_report_whose_scores_predate_whole_sample_scores(tmp_path: Path) -> None:
    """B's scores.jsonl in the older format (no schema_version, only the leading fields) with its digest updated to
    match, and its verdict forged to pass: compare cannot check the tables against it, so it rebuilds B's report
    from the results and says why."""
    import hashlib

    from harness.report.outputs import SCORES_KEYS

    a = synthetic_run(tmp_path / "a", recall_right=2, history_right=9)  # a loss: fail
    b = tmp_path / "b"
    shutil.copytree(a, b)
    rows = [json.loads(line) for line in (b / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    old = "".join(json.dumps({k: row[k] for k in SCORES_KEYS}) + "\n" for row in rows)
    (b / "scores.jsonl").write_text(old, encoding="utf-8")

    def forge(summary: dict) -> None:
        _forge_verdict(summary)
        summary["run"]["scores_sha256"] = hashlib.sha256(old.encode("utf-8")).hexdigest()

    edit_json(b / "summary.json", forge)
    done = cli_in_process("compare", a, b)
    assert "Traceback" not in done.stderr, done.stderr
    assert "verdict: A fail -> B fail" in done.stdout, done.stdout + done.stderr
    assert "schema_version None, not 2" in done.stdout + done.stderr
    assert json.loads((b / "scores.jsonl").read_text(encoding="utf-8").splitlines()[0])["schema_version"] == 3


def _forge_scores_tables_digest_and_verdict(run_dir: Path, change) -> None:
    """``change`` each row of ``scores.jsonl``, then make ``summary.json`` agree with the rows in every way compare's
    other checks look: its tables aggregated again from them, its digest of them, and its verdict decided on those
    tables (the forgery issue 44 item 11 left open)."""
    from harness.analysis import RunHealth, VerdictConfig, decide
    from harness.runs.table_check import recomputed_tables
    from tests.runs.compare_factories import edit_scores

    edit_scores(run_dir, change)
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]

    def decided(summary: dict) -> None:
        config = VerdictConfig(**summary["verdict"]["config"])
        health = RunHealth(planned=len(rows), present=len(rows), run_status="complete", why=(), errors=0,
                           samples=len(rows))
        found = decide(recomputed_tables(rows, config), {r["model"] for r in rows}, config, health=health, headline=None)
        summary["verdict"].update(status=found["status"], per_model=found["per_model"])

    edit_json(run_dir / "summary.json", decided)


def _recall_made_right(row: dict) -> None:
    if row["arm"] == "recall" and row["outcome"] == "wrong":
        row.update(outcome="correct", continuity_correct=True, pattern_correct=True)
        row["scores"][0].update(value=True, passed=True, reason="checks pass")


def test_compare_refuses_scores_rewritten_with_their_tables_digest_and_verdict(pristine: Path, tmp_path: Path) -> None:
    """A real offline run's wrong recall answer (smoke-01) rewritten as correct in scores.jsonl, with summary.json's
    tables, digest and verdict made to agree (every check compare had before passes it): compare scores B's
    transcripts again and refuses B in one line naming the row, the field and `recall-eval report`, exit 2."""
    from harness.records import read_manifest, scan_results
    from harness.runs.verdict_check import verdict_disagreement

    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(pristine, a)
    shutil.copytree(pristine, b)
    _forge_scores_tables_digest_and_verdict(b, _recall_made_right)
    rows = [json.loads(line) for line in (b / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((b / "summary.json").read_text(encoding="utf-8"))
    assert verdict_disagreement(summary, read_manifest(b), scan_results(b / RESULTS_FILE), [], rows) is None
    before = {p.name: p.read_bytes() for p in b.iterdir() if p.is_file()}
    done = cli_in_process("compare", a, b)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"recall-eval compare: {b / 'scores.jsonl'}: row 2 (sample smoke-01-changelog-format|recall|offline/reference|0) "
        "has outcome 'correct', but its transcript in results.jsonl scores 'wrong': the file was edited, or scored by "
        f"another harness version; rebuild the report from the transcripts with `recall-eval report {b}`"]
    assert "verdict: A" not in done.stdout
    assert {p.name: p.read_bytes() for p in b.iterdir() if p.is_file()} == before  # the forged files are kept as found
