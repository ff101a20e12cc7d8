"""A local model server that serves one request at a time, slowly: timeouts lower the calls in flight (additive
increase, multiplicative decrease) until the server keeps up, so samples finish instead of failing every retry."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.records import scan_results
from harness.run.watchdog import HEARTBEAT_ENV
from tests.fault.conftest import REPO, cli_env, cli_in_process, finish
from tests.integration.conftest import DUMMY_KEY, SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer

ARMS = ("history_only", "recall", "full_history")


@pytest.mark.slow
def test_a_one_slot_server_gets_fewer_calls_in_flight_and_every_sample_finishes(run_cli, server: FakeOpenAIServer) -> None:
    """One request at a time, 0.5 s each (abandoned requests still served), --timeout 3, 6 retries and 8 samples in
    flight: the first wave's last calls time out (8 x 0.5 s > 3 s), the limit comes down (each change one line, and
    in run.json), and all 15 samples end ok (with a fixed 8 in flight, at --timeout 2, 4 of 15 failed every retry).
    The margins leave room for a loaded CI machine: at 2 in flight a call waits about 1 s of its 3."""
    server.script.serial, server.script.delay_s = True, 0.5

    result = run_cli("--no-cache", "--max-concurrency", "8", "--timeout", "3", "--retries", "6", "--retry-delay", "0.05",
                     scenario="smoke-0[12345]*", arms=ARMS)

    records = result.records()
    assert len(records) == 15
    assert [r.error.message for r in records if r.error] == []
    assert "model calls in flight 8 -> 4" in result.err
    adaptive = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))["parameters"]["adaptive_concurrency"]
    assert adaptive["max_concurrency"] == 8 and adaptive["lowest"] < 8
    assert [c["to"] for c in adaptive["changes"]][:1] == [4]


def test_a_timeout_error_names_the_settings_that_would_have_helped(run_cli, server: FakeOpenAIServer) -> None:
    """A server slower than --timeout even for one call: the sample's error says to give a longer --timeout; with
    several in flight it names --max-concurrency too."""
    server.script.serial, server.script.delay_s = True, 1.5

    result = run_cli("--no-cache", "--max-concurrency", "2", "--timeout", "0.5", "--retries", "1", "--retry-delay", "0.01",
                     scenario="smoke-01*", arms=("history_only", "full_history"))

    messages = [r.error.message for r in result.records() if r.error]
    assert messages and all("--timeout" in m for m in messages)
    assert any("--max-concurrency" in m for m in messages) or all("longer --timeout" in m for m in messages)


def _run_process(tmp_path: Path, server: FakeOpenAIServer, *flags: str, heartbeat_s: float | None = None,
                 scenario: str = "smoke-0[123]*", resume: bool = False, process: bool = False) -> tuple[int, str, Path]:
    """``recall-eval run --no-progress`` (``resume``: ``--resume``) of ``tmp_path/run`` against ``server``, in
    ``tmp_path``; (exit code, stderr, run folder). Through ``main`` in the test's process (the fault is the server's
    pace: timeouts, hang-ups and the heartbeat work the same there, and a fresh interpreter would import litellm again,
    ~4.5 CPU-s); ``process``: a real process (``--workers`` starts processes of its own)."""
    env = {HEARTBEAT_ENV: str(heartbeat_s)} if heartbeat_s is not None else {}
    argv = ["run", "--no-progress", "--api-base", server.base_url]
    if resume:
        argv += ["--resume", str(tmp_path / "run")]
    else:
        argv += ["--no-cache", "--model", "openai/fake", "--scenarios", str(SMOKE), "--filter", scenario, "--arms", *ARMS,
                 "--out", str(tmp_path / "run")]
    argv += list(flags)
    if not process:
        done = cli_in_process(*argv, cwd=tmp_path, env={"OPENAI_API_KEY": DUMMY_KEY, **env})
        return done.returncode, done.stderr, tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *argv], cwd=tmp_path,
                            env=cli_env() | {"PYTHONPATH": str(REPO)} | env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    code, _, err = finish(proc, timeout=240)
    return code, err, tmp_path / "run"


def test_a_timed_out_call_hangs_up_so_a_one_slot_server_stops_generating_its_answer(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """One slot; the first request would take 20 s, every other one answers at once; --timeout 1. The client closes the
    timed-out request's connection, the server drops it (as llama.cpp does for a closed connection) and serves the
    retry at once: every sample ends ok. Had the abandoned request kept its connection, it would have held the only
    slot for 20 s and its retries would have timed out behind it."""
    server.script.serial, server.script.cancel_on_disconnect, server.script.delays = True, True, (20.0,)

    code, err, run_dir = _run_process(tmp_path, server, "--max-concurrency", "1", "--timeout", "1", "--retries", "2",
                                      "--retry-delay", "0.05", scenario="smoke-01*")

    assert code in (0, 1), err
    records = [r for r in scan_results(run_dir / "results.jsonl").records]
    assert len(records) == 3 and [r.error for r in records] == [None] * 3
    assert server.cancelled == 1
    assert max(call.attempts for r in records for call in r.model_calls) == 2


@pytest.mark.slow
def test_a_heartbeat_names_samples_done_calls_waiting_and_the_last_timeout_even_with_no_progress(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """A one-slot server answering in 1.2 s, --timeout 2 at four in flight, --no-progress, the heartbeat every 0.5 s:
    while no sample has finished, standard error still gets lines naming the samples done, the calls in flight and
    waiting and the last timeout, at no more than one per interval."""
    server.script.serial, server.script.delay_s = True, 1.2

    started = time.monotonic()
    code, err, _ = _run_process(tmp_path, server, "--max-concurrency", "4", "--timeout", "2", "--retries", "4",
                                "--retry-delay", "0.05", heartbeat_s=0.5, scenario="smoke-01*")
    elapsed = time.monotonic() - started

    beats = [line for line in err.splitlines() if line.startswith("[recall-eval] still running:")]
    assert code in (0, 1, 2), err
    assert beats and beats[0].startswith("[recall-eval] still running: 0 of 3 samples done, ")
    assert all(re.search(r"\d+ model calls? in flight \(limit \d of 4\), \d+ waiting; (no timeout yet|last timeout \d+ s ago \(\d+ in all\))$", b)
               for b in beats), beats
    assert any("last timeout" in b for b in beats), beats
    assert len(beats) <= elapsed / 0.5 + 1  # a bounded rate, not a line per event


def test_calls_that_keep_timing_out_alone_stop_the_run_naming_the_fix_and_resume_finishes(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Every call takes 3 s on one slot, --timeout 0.5, 20 retries, nine samples at four in flight: the calls in flight
    fall to one, and after three calls in a row time out alone the run stops (not after 20 retries of every sample):
    exit 2, a message naming --timeout and --max-tokens and the resume command, run.json interrupted; a resume with a
    longer --timeout against a server that keeps up finishes every sample."""
    server.script.serial, server.script.delay_s = True, 3.0

    code, err, run_dir = _run_process(tmp_path, server, "--max-concurrency", "4", "--timeout", "0.5", "--retries", "20",
                                      "--retry-delay", "0.01")

    assert code == 2, err
    assert "3 model calls in a row timed out with only one call in flight" in err
    assert "--timeout" in err and "--max-tokens" in err and f"recall-eval run --resume {run_dir}" in err
    assert "Traceback" not in err
    assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["status"] == "interrupted"
    made = len(server.requests)
    assert made < 9 * 21  # far from every retry of every sample

    server.script.delay_s = 0.0
    code, err, _ = _run_process(tmp_path, server, "--timeout", "5", resume=True)
    final = scan_results(run_dir / "results.jsonl").records
    assert code in (0, 1), err
    assert len(final) == 9 and {r.status for r in final} == {"ok"}
    assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["status"] == "complete"


@pytest.mark.slow
def test_with_workers_the_run_prints_one_heartbeat_line_with_totals_across_them(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """Two workers on a one-slot server answering in 1.2 s, --no-progress, the heartbeat every 0.5 s: one line per
    interval for the whole run (the parent's), counting all 6 samples and every worker's calls in flight (each worker
    used to print its own line about its own 3 samples, two lines an interval)."""
    server.script.serial, server.script.delay_s = True, 1.2

    started = time.monotonic()
    code, err, _ = _run_process(tmp_path, server, "--workers", "2", "--max-concurrency", "4", "--timeout", "10",
                                heartbeat_s=0.5, scenario="smoke-0[12]*", process=True)
    elapsed = time.monotonic() - started

    beats = [line for line in err.splitlines() if line.startswith("[recall-eval] still running:")]
    assert code in (0, 1), err
    assert beats and all(re.match(r"\[recall-eval\] still running: \d of 6 samples done", b) for b in beats), beats
    assert any(re.search(r"in flight \(limit \d of 4 across 2 workers\), \d+ waiting", b) for b in beats), beats
    assert len(beats) <= elapsed / 0.5 + 1
