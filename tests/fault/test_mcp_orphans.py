"""MCP servers outliving a ``recall-eval`` killed with SIGKILL (no exit handler, no SDK shutdown runs).

A hung server that ignores its closed stdin and SIGTERM, and the helper
process it started, must die with the run that started them: each server
runs under ``harness/memory_systems/mcp/orphan_guard.py``, which the kernel
tells when its parent dies (Linux ``PR_SET_PDEATHSIG``), or which polls its
parent pid where there is no such signal (forced here on Linux), and which
then kills the server's whole process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

from harness.memory_systems.mcp.connection import GUARD_MODE_ENV  # noqa: E402
from tests.fault.conftest import REPO, wait_until  # noqa: E402
from tests.fault.test_mcp_faults import STARTER, fake_config  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the processes are found through Linux's /proc")


def marked_processes(mark: str) -> list[int]:
    """Pids of every process whose environment carries ``FAKE_TEST_MARK=<mark>`` (this test's servers and helpers)."""
    needle = f"FAKE_TEST_MARK={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _kill_a_run_with_a_hung_deaf_server(tmp_path: Path, guard_mode: str | None) -> None:
    """Start a run whose server hangs deaf with a helper, ``kill -9`` the run, and wait for every marked process to go;
    ``guard_mode`` ``poll`` forces the guard's portable fallback (checked: its command line says ``--poll``)."""
    configs = tmp_path / "mcp"
    configs.mkdir()
    mark = str(tmp_path)
    arm = fake_config(configs, "fake-deaf", "hang", call_s=600, env={"FAKE_DEAF": "1", "FAKE_CHILD": "1",
                                                                     "FAKE_TEST_MARK": mark,
                                                                     "FAKE_HANG_FLAG": str(tmp_path / "hanging")})
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "RECALL_EVAL_MCP_PATH": str(configs)}
    env.pop(GUARD_MODE_ENV, None)
    if guard_mode is not None:
        env[GUARD_MODE_ENV] = guard_mode
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--scenarios", str(STARTER), "--filter", "fact-01*",
                             "--arms", arm, "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
                             "--no-progress"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until((tmp_path / "hanging").exists, proc, limit_s=180)  # its helper started before it served
        guards = [pid for pid in marked_processes(mark) if b"orphan_guard.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        polling = [pid for pid in guards if b"--poll" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
        assert guards and bool(polling) == (guard_mode == "poll")
        assert len(marked_processes(mark)) >= 3  # the guard, the server and its helper
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        wait_until(lambda: not marked_processes(mark), limit_s=30)  # a bound for a hang (a loaded machine is slow to reap)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in marked_processes(mark):  # the test failed: leave nothing behind on the shared machine
            os.kill(pid, signal.SIGKILL)


def test_sigkill_of_the_run_takes_a_hung_deaf_server_and_its_helper_with_it(tmp_path: Path) -> None:
    """Fault: ``kill -9`` of a run while its MCP server hangs in a call, ignoring SIGTERM, SIGHUP and its closed stdin,
    with a helper process of its own doing the same; expected: the server, its helper and their guard are all gone
    within seconds (the parent-death signal, then the group killed), although no exit handler of the run ran."""
    _kill_a_run_with_a_hung_deaf_server(tmp_path, None)


def test_the_portable_guard_that_polls_its_parent_takes_the_server_and_its_helper_with_a_killed_run(tmp_path: Path) -> None:
    """Fault: the same ``kill -9`` with the guard forced onto its fallback for systems without ``prctl`` (macOS, the
    BSDs: ``RECALL_EVAL_ORPHAN_GUARD=poll``), which polls its parent pid; expected: every marked process (guard,
    server, helper) gone within seconds, as with the kernel's signal."""
    _kill_a_run_with_a_hung_deaf_server(tmp_path, "poll")
