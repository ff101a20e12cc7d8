"""SIGTERM (what CI sends on cancel or timeout) on a real ``recall-eval run``: handled like Ctrl-C, then resumable; both while
the run's plan opens a system that swallows the interrupt."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, read_manifest
from tests.fault.conftest import RECALL_EVAL, fake_run_argv, finish, lines, start, wait_until
from tests.integration.fake_openai_server import FakeOpenAIServer


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "whole_group"),
    [("1", False), ("2", False), ("2", True)],
    ids=["one-process", "workers", "workers-whole-process-group"],
)
def test_sigterm_marks_the_run_interrupted_keeps_whole_lines_and_prints_the_resume_command(
    tmp_path: Path, server: FakeOpenAIServer, workers: str, whole_group: bool
) -> None:
    """SIGTERM mid-run (to the run, or to its whole process group with --workers): exit 143, run.json 'interrupted',
    only whole unique lines, and the printed resume command finishes the run."""
    server.script.delay_s = 0.3
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    argv = fake_run_argv(server.base_url, "--workers", workers, "--max-concurrency", "2", out=run_dir, cache=cache)
    proc = start(argv, tmp_path, new_session=whole_group)
    try:
        wait_until(lambda: len(lines(run_dir / RESULTS_FILE)) >= 2, proc)
        if whole_group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        code, _, err = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert code == 143, err
    assert "Traceback" not in err
    assert read_manifest(run_dir).status == "interrupted"
    written = lines(run_dir / RESULTS_FILE)
    ids = [json.loads(line)["sample_id"] for line in written]  # every line whole JSON
    assert 2 <= len(ids) < 9 and len(set(ids)) == len(ids)
    assert (run_dir / RESULTS_FILE).read_bytes().endswith(b"\n")
    match = re.search(r"terminated \(SIGTERM\): finished samples are saved\. Continue with: (recall-eval run --resume \S+)", err)
    assert match, err

    server.script.delay_s = 0.0
    resume = [str(RECALL_EVAL), *shlex.split(match.group(1))[1:], "--no-progress"]
    code, out, err = finish(start(resume, tmp_path))
    assert code == 0, err
    final = [json.loads(line)["sample_id"] for line in lines(run_dir / RESULTS_FILE)]
    assert len(final) == len(set(final)) == 9
    assert read_manifest(run_dir).status == "complete"


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
def test_a_worker_terminated_on_its_own_makes_the_run_interrupted_not_failed(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """SIGTERM to one --workers process only: the run ends 'interrupted' (exit 130, resume command), not as a crashed worker."""
    server.script.delay_s = 0.3
    run_dir = tmp_path / "run"
    proc = start(fake_run_argv(server.base_url, "--workers", "2", "--max-concurrency", "2", out=run_dir, cache=tmp_path / "cache"), tmp_path)
    try:
        wait_until(lambda: len(lines(run_dir / RESULTS_FILE)) >= 1, proc)
        workers = [w for server_pid in _children(proc.pid) for w in _children(server_pid)]  # run -> forkserver -> workers
        assert workers
        os.kill(workers[0], signal.SIGTERM)
        code, _, err = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert code == 130, err
    assert "Traceback" not in err and "exited with code" not in err
    assert f"interrupted: finished samples are saved. Continue with: recall-eval run --resume {run_dir}" in err
    assert read_manifest(run_dir).status == "interrupted"


SLOW_PLUGIN = '''
import os, time
from harness.memory_systems import MemoryInstance, MemorySystem, ProbeSetup, probe_messages


class _Instance(MemoryInstance):
    def begin_probe(self, policy, context):
        return ProbeSetup(probe_messages(self.scenario))


class SlowToOpen(MemorySystem):
    """A store that takes a while to open and, like a broad retry loop, swallows the KeyboardInterrupt it gets."""

    name, description, arms = "slow_to_open", "a store slow to open", {"slow_to_open": "seeded"}

    def open(self, scenario, write_mode):
        with open(os.environ["SLOW_OPEN_LOG"], "a") as log:
            log.write(scenario.id + "\\n")
        try:
            time.sleep(float(os.environ.get("SLOW_OPEN_S", "0")))
        except BaseException:  # noqa: BLE001 - the fault: a signal's KeyboardInterrupt swallowed
            pass
        return _Instance(scenario)


system = SlowToOpen()
'''


def _slow_plugin(site: Path) -> None:
    """An installed plug-in (a module and its dist-info entry point on ``site``) whose ``open`` is slow and deaf."""
    (site / "slowplan-0.dist-info").mkdir(parents=True)
    (site / "slowplan.py").write_text(SLOW_PLUGIN, encoding="utf-8")
    (site / "slowplan-0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: slowplan\nVersion: 0\n")
    (site / "slowplan-0.dist-info" / "entry_points.txt").write_text(
        "[recall_eval.memory_systems]\nslow_to_open = slowplan:system\n")


@pytest.mark.parametrize(("sig", "code", "cause"), [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")],
                         ids=["sigterm", "ctrl-c"])
def test_a_signal_while_the_plan_opens_a_slow_system_that_swallows_it_stops_the_plan(
        tmp_path: Path, sig: signal.Signals, code: int, cause: str) -> None:
    """SIGTERM or Ctrl-C (SIGINT) while the run's plan opens a memory system that takes 3 s to open and swallows the
    KeyboardInterrupt: the plan (which opens it once, not per scenario) stops at the flag read after that opening, no
    sample is run, exit 143 or 130, run.json 'interrupted', the resume command printed, no traceback; the resume
    command then runs the suite. (Before, Ctrl-C set no flag: the plan went on and the run started its samples.)"""
    import subprocess
    import sys

    from tests.fault.conftest import REPO

    site, opened, run_dir = tmp_path / "site", tmp_path / "opened.log", tmp_path / "run"
    _slow_plugin(site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "SLOW_OPEN_LOG": str(opened),
           "SLOW_OPEN_S": "3", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [sys.executable, "-m", "harness.cli", "run", "--scenarios", str(REPO / "scenarios" / "starter"), "--arms",
            "slow_to_open", "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until(lambda: len(lines(opened)) >= 1, proc, limit_s=120)
        proc.send_signal(sig)
        returned, _, err = finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert returned == code, err
    assert len(lines(opened)) == 1  # the plan's one opening; no sample opened its own
    assert "Traceback" not in err and read_manifest(run_dir).status == "interrupted"
    assert f"{cause} while planning: no sample was run. Continue with: recall-eval run --resume {run_dir}" in err
    resumed = subprocess.run([*argv[:3], "run", "--resume", str(run_dir), "--no-progress"], cwd=tmp_path,
                             env={**env, "SLOW_OPEN_S": "0"}, capture_output=True, text=True, timeout=600)
    assert resumed.returncode in (0, 1), resumed.stderr
    assert read_manifest(run_dir).status == "complete" and len(lines(run_dir / RESULTS_FILE)) == 64
