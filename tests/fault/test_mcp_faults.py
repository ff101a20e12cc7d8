"""MCP memory servers that misbehave, as real subprocesses (``fake_mcp_server.py``, the SDK's own server class).

Each fault ends as a record of the run, never a hung run nor a live process:
a server that hangs, crashes mid-call or answers out of protocol is an error
record for its sample carrying the server's stderr tail; a huge result is
refused or timed out; a server that will not start stops ``run`` with exit 2;
a server that ignores the workspace it is given shows up as tool-level leaks;
Ctrl-C leaves no server behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

from harness.memory_systems.mcp.connection import TAG_ENV, live_servers  # noqa: E402
from tests.fault.conftest import REPO, wait_until  # noqa: E402

FAKE = Path(__file__).with_name("fake_mcp_server.py")
STARTER = REPO / "scenarios" / "starter"


def fake_config(folder: Path, name: str, mode: str, *, isolation: str = "workspace", call_s: float | None = 60,
                max_result_bytes: int = 8_000_000, env: dict[str, str] | None = None) -> str:
    """Write ``<name>.yaml`` for the fake server in ``mode``; returns the arm name."""
    config = {
        "name": name, "description": f"fake MCP memory server ({mode})",
        "server": {"command": sys.executable, "args": [str(FAKE)],
                   "env": {"FAKE_MODE": mode, "FAKE_STORE": "{data_dir}/notes.json", **(env or {})}},
        "isolation": isolation,
        "write": {"unit": "item", "tool": "save_note", "arguments": {"text": "{content}", "workspace": "{workspace}"}},
        "forget": {"tool": "delete_note", "arguments": {"text": "{content}", "workspace": "{workspace}"}},
        "probe": {"tools": ["search_notes"], "fixed_arguments": {"workspace": "{workspace}"}},
        "timeouts": {"start_s": 60, "call_s": call_s}, "max_result_bytes": max_result_bytes,
    }
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return f"mcp:{name}"


@pytest.fixture()
def configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "mcp"
    folder.mkdir()
    monkeypatch.setenv("RECALL_EVAL_MCP_PATH", str(folder))
    return folder


def run(tmp_path: Path, *arms: str, scenario: str = "fact-01*", flags: tuple[str, ...] = ()) -> tuple[int, list[dict], dict]:
    """``run`` in-process on the offline model; (exit code, records, summary)."""
    from harness.cli import main

    out = tmp_path / "run"
    code = main(["run", "--scenarios", str(STARTER), "--filter", scenario, "--arms", *arms, "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress", *flags])
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()] \
        if (out / "results.jsonl").is_file() else []
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8")) if (out / "summary.json").is_file() else {}
    return code, records, summary


def tagged_processes(folder: Path) -> list[int]:
    """Pids of the processes started as an MCP server by recall-eval (its environment tag) whose server folder lies
    under ``folder``: this test's servers only, never those of a test running beside it (another pytest worker, another
    checkout on the machine). The fake server's environment names its store, inside its server folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if f"{TAG_ENV}=".encode() in environ and str(folder).encode() in environ:
                found.append(int(entry.name))
    return found


@pytest.fixture()
def server_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this test's servers get their folders (``tempfile``'s folder, in this process and in a child given it
    as ``TMPDIR``), so the test looks only at its own servers and their stderr files."""
    folder = tmp_path / "servers"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def tool_leaks(summary: dict, arm: str) -> float:
    rows = [r for r in summary["metrics"] if r["arm"] == arm and r["metric"] == "tool_leakage_count" and r.get("category", "all") == "all"]
    return float(rows[0]["value"]) if rows else float("nan")


def test_a_server_that_ignores_the_workspace_shows_as_tool_leaks_and_a_scoped_one_does_not(tmp_path: Path, configs: Path) -> None:
    """Fault: a server given the workspace in every call that returns every workspace's notes; expected: tool-level
    leaks in the metrics (its results are attributed to the other workspace's items); the same server honouring the
    workspace, and one isolated by process, at 0."""
    ignores = fake_config(configs, "fake-ignores", "ignore_workspace", isolation="sample")
    scoped = fake_config(configs, "fake-scoped", "ok", isolation="sample")
    isolated = fake_config(configs, "fake-isolated", "ignore_workspace", isolation="workspace")
    code, records, summary = run(tmp_path, ignores, scoped, isolated, scenario="leak-01*")
    assert code in (0, 1) and {r["status"] for r in records} == {"ok"}
    leaked = next(r for r in records if r["arm"] == ignores)
    assert "it-pay-local-db" in {i for c in leaked["tool_calls"] for i in c["disclosed_item_ids"]}
    assert tool_leaks(summary, ignores) > 0
    assert tool_leaks(summary, scoped) == 0 and tool_leaks(summary, isolated) == 0
    assert live_servers() == {}


@pytest.mark.parametrize(("mode", "expected"), [
    ("hang", "timed out after 3 s (hung); killed; its stderr ends: fake server: hanging"),
    ("crash", "its stderr ends: fake server: crashing mid-call"),
    ("malformed", "CallToolResult"),
])
def test_a_server_that_hangs_crashes_or_answers_out_of_protocol_is_an_error_record(
        tmp_path: Path, configs: Path, server_folders: Path, mode: str, expected: str) -> None:
    """Fault: a server that never answers a search (past a 3 s call timeout), exits in the middle of a save, or answers
    with a result that is no CallToolResult; expected: that sample is an error record naming the tool and quoting
    the server's stderr, the run finishes, and no server process is left."""
    arm = fake_config(configs, f"fake-{mode}", mode, call_s=3)
    code, records, _ = run(tmp_path, arm)
    assert code == 2  # every sample failed: the run says so (exit 2) and keeps the error records
    (record,) = records
    assert record["status"] == "error"
    assert expected in record["error"]["message"] and "McpServerError" in record["error"]["type"]
    assert tempfile.gettempdir() == str(server_folders)  # where its servers' folders were made (mkdtemp), so the look is there
    assert live_servers() == {} and tagged_processes(server_folders) == []


def test_a_server_without_its_own_call_timeout_is_given_up_after_the_runs_timeout(tmp_path: Path, configs: Path) -> None:
    """Fault: a server that hangs, its config naming no call timeout, in a run with ``--timeout 3``; expected: the call
    is given up after the run's timeout (not the 60 s default) and the sample is an error record saying so."""
    arm = fake_config(configs, "fake-hang-run-timeout", "hang", call_s=None)
    code, records, _ = run(tmp_path, arm, flags=("--timeout", "3"))
    (record,) = records
    assert code == 2 and record["status"] == "error" and "timed out after 3 s (hung); killed" in record["error"]["message"]


def test_a_result_over_the_size_limit_is_refused_and_a_50_mb_one_never_hangs_the_run(tmp_path: Path, configs: Path,
                                                                                      server_folders: Path) -> None:
    """Fault: a search result of 2 MB against a 1 MB limit, and one of 50 MB (5 s call timeout); expected: the first is a
    ``result_too_large`` tool result the model reads (nothing disclosed), the second that, or an error record
    once the timeout kills the server; the run finishes either way and no server is left."""
    small = fake_config(configs, "fake-big", "huge", max_result_bytes=1_000_000, env={"FAKE_HUGE_BYTES": "2000000"})
    huge = fake_config(configs, "fake-huge", "huge", call_s=5)
    code, records, _ = run(tmp_path, small, huge)
    assert code in (0, 1)
    refused = next(r for r in records if r["arm"] == small)
    assert [c["status"] for c in refused["tool_calls"]][:1] == ["result_too_large"]
    assert refused["tool_calls"][0]["disclosed_item_ids"] == [] and len(refused["tool_calls"][0]["result_text"]) < 1000
    big = next(r for r in records if r["arm"] == huge)
    assert big["status"] == "error" or big["tool_calls"][0]["status"] == "result_too_large"
    assert tempfile.gettempdir() == str(server_folders)  # where its servers' folders were made (mkdtemp), so the look is there
    assert live_servers() == {} and tagged_processes(server_folders) == []


def test_a_server_that_will_not_start_stops_the_run_before_any_sample(tmp_path: Path, configs: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Fault: a server command that exits before initializing; expected: ``run`` exits 2 naming the arm and quoting
    the server's stderr, with no sample run."""
    arm = fake_config(configs, "fake-dead", "exit_at_start")
    code, records, _ = run(tmp_path, arm)
    err = capsys.readouterr().err
    assert code == 2 and records == []
    assert "mcp:fake-dead" in err and "refusing to start" in err and "Traceback" not in err


def test_ctrl_c_during_a_hung_call_leaves_no_server_process(tmp_path: Path, configs: Path, server_folders: Path) -> None:
    """Fault: Ctrl-C (SIGINT) while a server hangs in a call with a long timeout; expected: the run stops and no
    server process of it survives (the SDK's shutdown, then the exit handler kills each server's process group)."""
    arm = fake_config(configs, "fake-slow", "hang", call_s=600)
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TMPDIR": str(server_folders)}
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--scenarios", str(STARTER), "--filter", "fact-01*",
                             "--arms", arm, "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
                             "--no-progress"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a background pytest passes SIGINT on ignored: the run must get Ctrl-C as a terminal gives it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        hanging = lambda: any("hanging" in p.read_text() for p in server_folders.glob("recall-eval-mcp-*/stderr.log")  # noqa: E731
                              if p.is_file())
        wait_until(lambda: bool(tagged_processes(server_folders)) and hanging(), proc, limit_s=120)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    wait_until(lambda: not tagged_processes(server_folders), limit_s=10)
