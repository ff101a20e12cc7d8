"""Provider errors during ``recall-eval run`` (against a fake server on 127.0.0.1, through ``main`` in the test's
process: the fault is the server's replies, and a fresh interpreter would import litellm again, ~4.5 CPU-s): the
error count leads, and the exit code says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.fault.conftest import cli_in_process
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


def _run(server: FakeOpenAIServer, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process("run", "--model", "openai/fake", "--api-base", server.base_url, "--scenarios", SMOKE,
                          "--arms", "history_only", "recall", "--out", tmp_path / "run", "--cache-dir", tmp_path / "cache",
                          "--no-progress", "--retries", "0", "--max-concurrency", "1", *flags,
                          env={"OPENAI_API_KEY": "sk-recall-eval-dummy-0123456789"})


def test_errors_above_the_maximum_rate_lead_the_summary_and_fail_the_run(tmp_path: Path) -> None:
    """Two of ten samples fail with HTTP 500: run prints the error count and rate first, the verdict is
    inconclusive, and it exits 1 without --gate."""
    with FakeOpenAIServer(Script(fail_status=500, fail_times=2)) as server:
        done = _run(server, tmp_path)

    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("errors: 2 of 10 samples (20.0%) ended in error, above --max-error-rate 0.05"), done.stdout
    assert "verdict: INCONCLUSIVE" in done.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["verdict"]["status"] == "inconclusive" and summary["run"]["errors"] == 2
    assert summary["verdict"]["config"]["max_error_rate"] == 0.05


def test_a_looser_max_error_rate_lets_the_run_pass_its_errors(tmp_path: Path) -> None:
    """The same two failures under --max-error-rate 0.2: the errors are noted, not leading, and the run exits 0."""
    with FakeOpenAIServer(Script(fail_status=500, fail_times=2)) as server:
        done = _run(server, tmp_path, "--max-error-rate", "0.2")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith("model · arm")  # no lead: the per-arm table comes first
    assert "verdict: PASS" in done.stdout or "verdict: FAIL" in done.stdout or "verdict: INCONCLUSIVE" in done.stdout
    assert "note: 2 of 10 samples ended in error (20.0%), within --max-error-rate 0.2" in done.stdout
