"""Faults in the run folders given to ``recall-eval compare``: one line naming the file (and line), exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.cli import main
from harness.records import MANIFEST_FILE, RESULTS_FILE
from harness.runs.compare_cli import cli_compare
from tests.runs.compare_factories import comparable_pair, synthetic_run
from tests.score.scoring_factories import make_record

REPO = Path(__file__).resolve().parents[2]


def _compare(capsys: pytest.CaptureFixture[str], a: Path, b: Path, **flags: Any) -> tuple[int, str]:
    args = SimpleNamespace(**{"run_a": str(a), "run_b": str(b), "force": False, "all": False,
                              "include_foreign": False, **flags})
    code = cli_compare(args)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    return code, text


@pytest.fixture()
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two identical, comparable runs (B a copy of A) whose files a test then damages."""
    return comparable_pair(tmp_path)


def _replace_line(path: Path, number: int, raw: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = raw
    path.write_bytes(b"\n".join(lines))


def test_a_binary_line_in_results_is_named_by_file_and_line(pair, capsys) -> None:
    """A results.jsonl line of binary bytes: exit 2 naming results.jsonl:3 and "not UTF-8", no traceback."""
    a, b = pair
    _replace_line(b / RESULTS_FILE, 3, b"\xff\xfe\x00garbage")
    code, text = _compare(capsys, a, b)
    assert code == 2
    assert f"{b / RESULTS_FILE}:3: not UTF-8" in text


def test_a_json_line_that_is_not_an_object_is_named_by_file_and_line(pair, capsys) -> None:
    """A results.jsonl line that is JSON but not an object: exit 2 naming the file, line and what it is."""
    a, b = pair
    _replace_line(b / RESULTS_FILE, 2, b"[1, 2, 3]")
    code, text = _compare(capsys, a, b)
    assert code == 2
    assert f"{b / RESULTS_FILE}:2: a JSON list, not a sample record object" in text


def test_unreadable_result_lines_can_be_compared_anyway_with_force(tmp_path: Path, capsys) -> None:
    """With --force, unreadable results lines are listed and the rest is compared; B's report, rebuilt from those
    results, is incomplete: a verdict regression, exit 1."""
    a = synthetic_run(tmp_path / "a", ids=[f"fact-{i:03d}" for i in range(200)], recall_right=180, history_right=20)
    b = tmp_path / "b"  # A passes (189 scenarios bound a 0.02 rise of unsupported claims); B is its copy, damaged
    shutil.copytree(a, b)
    _replace_line(b / RESULTS_FILE, 2, b'"just a string"')
    code, text = _compare(capsys, a, b, force=True)
    assert code == 1 and "verdict regression: A pass -> B incomplete" in text
    assert f"{b / RESULTS_FILE}:2: a JSON str" in text and "compared anyway" in text


def test_a_torn_last_line_makes_the_run_no_basis_for_a_gate(pair, capsys) -> None:
    """A results.jsonl cut mid-line by a crash: exit 2 saying the last line is an interrupted write."""
    a, b = pair
    data = (b / RESULTS_FILE).read_bytes()
    (b / RESULTS_FILE).write_bytes(data[:-200])
    code, text = _compare(capsys, a, b)
    assert code == 2 and "interrupted write" in text


@pytest.mark.parametrize(("raw", "said"), [
    (b"\x80\x81 binary", "not UTF-8"),
    (b"[1, 2]", "a JSON list, not a sample object"),
    (b'{"model": "m"}', "no arm, scenario_id, status"),
    (b"{not json", "not valid JSON"),
])
def test_a_corrupt_scores_line_is_rebuilt_from_the_results(pair, capsys, raw: bytes, said: str) -> None:
    """A damaged scores.jsonl line no longer matches the digest summary.json recorded: the report is rebuilt from the
    results, and the runs compare as the same (exit 0)."""
    a, b = pair
    _replace_line(b / "scores.jsonl", 2, raw)
    code, text = _compare(capsys, a, b)
    assert code == 0, text
    assert (b / "scores.jsonl").read_bytes() == (a / "scores.jsonl").read_bytes()


@pytest.mark.parametrize(("raw", "said"), [
    (b"\x80\x81 binary", "not UTF-8"),
    (b"[1, 2]", "a JSON list, not a sample object"),
    (b"{not json", "not valid JSON"),
])
def test_a_corrupt_scores_line_matching_a_forged_digest_is_named_by_file_and_line(pair, capsys, raw: bytes, said: str) -> None:
    """A damaged scores.jsonl line with summary.json's digest forged to match it: exit 2 naming scores.jsonl:2 and
    `recall-eval report` to fix it."""
    import hashlib

    from tests.runs.compare_factories import edit_json

    a, b = pair
    _replace_line(b / "scores.jsonl", 2, raw)
    digest = hashlib.sha256((b / "scores.jsonl").read_bytes()).hexdigest()
    edit_json(b / "summary.json", lambda s: s["run"].update(scores_sha256=digest))
    code, text = _compare(capsys, a, b)
    assert code == 2
    assert f"{b / 'scores.jsonl'}:2: {said}" in text and "recall-eval report" in text


@pytest.mark.parametrize(("raw", "said"), [
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[]", "a JSON list, not an object"),
    (b'{"schema_version": 1}', "no verdict.status or metrics"),
    (b'{"schema_version": 99, "verdict": {"status": "pass"}, "metrics": []}', "schema_version 99 is not supported"),
    (b'{"schema_version": 1,\n "verdict": ', "summary.json:2: not valid JSON"),
    (b'{"schema_version": 1, "verdict": {"status": "pass"}, "metrics": [{"model": "m"}]}', "metrics[0] lacks"),
    ((b'{"schema_version": 1, "verdict": {"status": "pass"}, "metrics": [{"model": "m", "arm": "r", '
      b'"category": "all", "metric": "coverage", "value": "high"}]}'), "metrics[0].value is 'high', not a number"),
])
def test_a_corrupt_summary_is_named(pair, capsys, raw: bytes, said: str) -> None:
    """A damaged summary.json: exit 2 naming the file and what is wrong, no traceback."""
    a, b = pair
    (b / "summary.json").write_bytes(raw)
    code, text = _compare(capsys, a, b)
    assert code == 2 and said in text and str(b / "summary.json") in text


def test_a_folder_without_run_json_is_named(pair, capsys) -> None:
    """A folder without run.json: exit 2 saying it is not a run folder."""
    a, b = pair
    (b / MANIFEST_FILE).unlink()
    code, text = _compare(capsys, a, b)
    assert code == 2 and "no run manifest" in text and str(b) in text


def test_a_file_that_cannot_be_read_is_one_line(pair, capsys, monkeypatch) -> None:
    """An OSError reading a run's file (permissions, I/O error): exit 2 with one line naming the file."""
    a, b = pair
    real = Path.read_bytes

    def failing(self: Path) -> bytes:
        if self == b / "scores.jsonl":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    code, text = _compare(capsys, a, b)
    assert code == 2
    assert text.strip() == f"recall-eval compare: {b / 'scores.jsonl'}: Permission denied"


def test_records_outside_the_manifest_are_refused_unless_include_foreign(pair, capsys) -> None:
    """Results records of samples run.json does not plan: refused with a message naming --include-foreign."""
    a, b = pair
    stray = make_record("other-01", arm="recall")
    with (b / RESULTS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(stray.model_dump_json() + "\n")
    code, text = _compare(capsys, a, b)
    assert code == 2
    assert "1 record(s) of samples its run.json does not plan" in text and "--include-foreign" in text
    assert "other-01|recall|offline/reference|0: scenario 'other-01' not in run.json" in text
    code, text = _compare(capsys, a, b, include_foreign=True)
    assert code == 0 and "B warning: 1 record(s) outside run.json" in text


# ---------------------------------------------------------------- real runs, real processes


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small real run on the offline model (two smoke scenarios, two arms)."""
    tmp = tmp_path_factory.mktemp("real")
    code = main(["run", "--scenarios", str(REPO / "scenarios" / "smoke"), "--filter", "smoke-0[12]-*",
                 "--arms", "history_only", "recall", "--out", str(tmp / "run"), "--cache-dir", str(tmp / "cache"),
                 "--no-progress"])
    assert code in (0, 1)
    return tmp / "run"


def test_a_corrupt_results_file_without_a_report_is_named_when_rebuilding(real_run, tmp_path, capsys) -> None:
    """No summary yet and a corrupt middle line: the rebuild stops with exit 2 naming results.jsonl:2."""
    b = tmp_path / "b"
    shutil.copytree(real_run, b)
    for name in ("summary.json", "scores.jsonl"):
        (b / name).unlink()
    _replace_line(b / RESULTS_FILE, 2, b"\x00\x01\x02")
    code, text = _compare(capsys, real_run, b)
    assert code == 2 and f"{b / RESULTS_FILE}:2" in text


def test_compare_in_a_real_process_shows_no_traceback(real_run, tmp_path) -> None:
    """`recall-eval compare` as a process on a corrupt results file: exit 2, the file and line, no traceback."""
    b = tmp_path / "b"
    shutil.copytree(real_run, b)
    _replace_line(b / RESULTS_FILE, 1, b"\xff" * 20)
    env = {**os.environ, "COLUMNS": "1000", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "compare", str(real_run), str(b)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"{b / RESULTS_FILE}:1: not UTF-8" in proc.stdout + proc.stderr
    assert "not comparable" in proc.stderr
