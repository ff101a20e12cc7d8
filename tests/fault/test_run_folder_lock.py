"""Two writers on one run folder: the second is refused while the first holds the folder's lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, iter_records, read_manifest, scan_results, write_manifest
from tests.fault.conftest import fake_run_argv, finish, lines, lock_holder, start, wait_until
from tests.integration.fake_openai_server import FakeOpenAIServer

_HOLD = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, json.dumps({"pid": os.getpid(), "host": "elsewhere", "started_at": "2026-01-31T12:00:00Z"}).encode())
print("held", flush=True)
time.sleep(600)
"""


def _hold_lock(run_dir: Path) -> subprocess.Popen[str]:
    """Another process holding ``run_dir``'s lock, as a running ``recall-eval run`` does."""
    run_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(run_dir / ".lock")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_two_runs_given_the_same_out_write_every_sample_once(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Two `run` processes with one --out: the second exits 2 naming the first's pid and start time; each sample is written once."""
    server.script.delay_s = 0.2
    run_dir = tmp_path / "run"
    first = start(fake_run_argv(server.base_url, "--max-concurrency", "1", out=run_dir, cache=tmp_path / "cache"), tmp_path)
    try:
        wait_until(lambda: lock_holder(run_dir) == first.pid and len(lines(run_dir / RESULTS_FILE)) >= 1, first)
        server.script.delay_s = 3.0  # the first run outlasts the second's start (seconds of imports on a loaded machine)
        code, _, err = finish(start(fake_run_argv(server.base_url, "--max-concurrency", "1", out=run_dir, cache=tmp_path / "cache"), tmp_path))
        assert first.poll() is None, "the first run must still be writing when the second is refused"
        server.script.delay_s = 0.0
        first_code, _, first_err = finish(first)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()

    assert code == 2 and "Traceback" not in err
    assert f"run folder {run_dir} is being written by pid {first.pid}" in err and "(started 20" in err and "another --out" in err
    assert first_code == 0, first_err
    ids = [r.sample_id for r in iter_records(run_dir / RESULTS_FILE)]
    assert len(ids) == len(set(ids)) == 9
    assert read_manifest(run_dir).status == "complete"


@pytest.mark.slow
def test_two_concurrent_resumes_of_one_folder_leave_one_complete_copy(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Two `run --resume` of one folder: the second exits 2 and the first completes every sample exactly once."""
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    code, _, err = finish(start(fake_run_argv(server.base_url, "--no-cache", out=run_dir), tmp_path))
    assert code == 0, err
    kept = lines(run_dir / RESULTS_FILE)[:3]
    (run_dir / RESULTS_FILE).write_text("\n".join(kept) + "\n", encoding="utf-8")
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"status": "interrupted"}))

    server.script.delay_s = 0.2
    first = start(fake_run_argv(server.base_url, "--max-concurrency", "1", resume=run_dir, cache=cache), tmp_path)
    try:
        wait_until(lambda: lock_holder(run_dir) == first.pid and len(lines(run_dir / RESULTS_FILE)) >= 4, first)
        server.script.delay_s = 3.0  # the first resume outlasts the second's start (seconds of imports on a loaded machine)
        second_code, _, second_err = finish(start(fake_run_argv(server.base_url, resume=run_dir, cache=cache), tmp_path))
        assert first.poll() is None, "the first resume must still be writing when the second is refused"
        server.script.delay_s = 0.0
        first_code, _, first_err = finish(first)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()

    assert second_code == 2 and "Traceback" not in second_err and f"being written by pid {first.pid}" in second_err
    assert first_code == 0, first_err
    written = lines(run_dir / RESULTS_FILE)
    assert written[:3] == kept  # the resumed run appended; nothing was replaced under it
    ids = [json.loads(line)["sample_id"] for line in written]
    assert len(ids) == len(set(ids)) == 9
    assert read_manifest(run_dir).status == "complete"


def test_a_folder_locked_by_another_process_is_refused_before_any_write(
    tmp_path: Path, suite: Path, fake_report: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run folder whose lock another process holds: exit 2 naming that pid, host and start time; no model call, nothing written."""
    from tests.run.scripted_model import install_scripted

    model = install_scripted(lambda m, t: {"content": "ok"})
    run_dir = tmp_path / "run"
    holder = _hold_lock(run_dir)
    try:
        code = main(["run", "--scenarios", str(suite), "--model", "scripted/x", "--out", str(run_dir), "--no-cache", "--no-progress"])
    finally:
        holder.kill()
        holder.wait()

    err = capsys.readouterr().err
    assert code == 2 and model.calls == 0
    assert f"is being written by pid {holder.pid} on elsewhere (started 2026-01-31T12:00:00Z); wait for it or use another --out" in err
    assert sorted(p.name for p in run_dir.iterdir()) == [".lock"]


def test_a_lock_file_left_by_a_killed_run_does_not_block(tmp_path: Path, suite: Path, fake_report: None) -> None:
    """A lock file whose holder was killed (SIGKILL) does not block the next run: the OS released the lock with the process."""
    from tests.run.scripted_model import install_scripted

    install_scripted(lambda m, t: {"content": "ok"})
    run_dir = tmp_path / "run"
    holder = _hold_lock(run_dir)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert lock_holder(run_dir) == holder.pid  # the stale file is still there

    code = main(["run", "--scenarios", str(suite), "--model", "scripted/x", "--out", str(run_dir), "--no-cache", "--no-progress"])

    assert code == 0
    assert lock_holder(run_dir) == os.getpid()
    assert len(scan_results(run_dir / RESULTS_FILE).records) == 6
