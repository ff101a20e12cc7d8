"""``report`` (and ``compare``) on a folder whose run is still writing: it says so and writes nothing there.

The writer is a real ``recall-eval run`` against the fake server (slow
answers, so it is mid-run when the reader starts), holding the folder's lock.
A lock whose holder was killed is stale and must not block.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from harness.records import RESULTS_FILE
from tests.fault.conftest import cli_env, fake_run_argv, finish, lines, lock_holder, start, wait_until
from tests.integration.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
OUTPUTS = ("summary.json", "index.html", "metrics.csv", "scores.jsonl", "junit.xml")


def _report(run_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", "report", str(run_dir), *flags], cwd=REPO,
                          env=cli_env(), capture_output=True, text=True, timeout=300)


def _written(run_dir: Path) -> list[str]:
    return [name for name in OUTPUTS if (run_dir / name).exists()]


def test_report_on_a_run_still_writing_says_so_and_writes_nothing(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """A run mid-way (its lock held, records still coming): `report` exits 2 naming the writer's pid, and no output appears in the folder."""
    server.script.delay_s = 0.3
    run_dir = tmp_path / "run"
    writer = start(fake_run_argv(server.base_url, "--max-concurrency", "1", out=run_dir, cache=tmp_path / "cache"), tmp_path)
    try:
        wait_until(lambda: lock_holder(run_dir) == writer.pid and len(lines(run_dir / RESULTS_FILE)) >= 1, writer)
        server.script.delay_s = 3.0  # the run outlasts report's start (seconds of imports on a loaded machine)
        done = _report(run_dir)
        written = _written(run_dir)
        still_running = writer.poll() is None
        server.script.delay_s = 0.0
        code, _, err = finish(writer)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()

    assert still_running, "the run must still be writing when report is refused"
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"its run is in progress (being written by pid {writer.pid}" in done.stderr
    assert "nothing was written" in done.stderr
    assert written == []
    assert code == 0, err  # the run was not disturbed, and writes its own report at its end
    assert _report(run_dir).returncode == 0  # once it has finished, the report is built


def test_a_lock_left_by_a_killed_run_does_not_block_report(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """A run killed with SIGKILL mid-way leaves its lock file: `report` builds the (incomplete) report as usual."""
    server.script.delay_s = 0.3
    run_dir = tmp_path / "run"
    writer = start(fake_run_argv(server.base_url, "--max-concurrency", "1", out=run_dir, cache=tmp_path / "cache"), tmp_path)
    try:
        wait_until(lambda: lock_holder(run_dir) == writer.pid and len(lines(run_dir / RESULTS_FILE)) >= 1, writer)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.communicate()

    assert (run_dir / ".lock").is_file()
    done = _report(run_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "incomplete" in done.stdout + done.stderr
    assert set(_written(run_dir)) == set(OUTPUTS)


def test_compare_does_not_build_a_report_inside_a_run_still_writing(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """`compare` with one run mid-way and no summary yet: exit 2 saying the run is in progress, nothing written into its folder."""
    server.script.delay_s = 0.3
    run_dir = tmp_path / "run"
    writer = start(fake_run_argv(server.base_url, "--max-concurrency", "1", out=run_dir, cache=tmp_path / "cache"), tmp_path)
    try:
        wait_until(lambda: lock_holder(run_dir) == writer.pid and len(lines(run_dir / RESULTS_FILE)) >= 1, writer)
        server.script.delay_s = 3.0  # the run outlasts compare's start (seconds of imports on a loaded machine)
        done = subprocess.run([sys.executable, "-m", "harness.cli", "compare", str(run_dir), str(run_dir)], cwd=REPO,
                              env=cli_env(), capture_output=True, text=True, timeout=300)
        written = _written(run_dir)
        assert writer.poll() is None, "the run must still be writing when compare is refused"
    finally:
        writer.kill()
        writer.communicate()

    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "in progress" in done.stderr
    assert written == []
