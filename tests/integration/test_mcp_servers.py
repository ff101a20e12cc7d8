"""Real MCP memory servers end to end on the offline model: the shipped configs at 0 leaks, the naive ones caught.

``@modelcontextprotocol/server-memory`` comes from npm with the system Node:
``$RECALL_EVAL_NPM_PREFIX`` when it holds it, else the fixture installs it
with ``npm install --prefix`` into a cache folder outside the repo
(``~/.cache/recall-eval-tests/npm``). ``basic-memory`` (PyPI, Python 3.12+)
is found as ``$RECALL_EVAL_BASIC_MEMORY`` (its executable), else in the venv
``examples/mcp/basic-memory.yaml`` installs it into
(``~/.cache/recall-eval-bm``), else on PATH. Each test skips, saying exactly
what is missing, when its server is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "scenarios" / "starter"
PACKAGE = "@modelcontextprotocol/server-memory"
LEAK_TRAPS = ("category:leakage",)


def _server_memory_js(prefix: Path) -> Path:
    return prefix / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"


@pytest.fixture(scope="module")
def npm_prefix() -> Path:
    """A folder holding server-memory (installed with npm when needed), outside the repo; skips when npm cannot."""
    given = os.environ.get("RECALL_EVAL_NPM_PREFIX")
    if given and _server_memory_js(Path(given)).is_file():
        return Path(given)
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node and npm are needed for {PACKAGE} (apt-get install nodejs npm)")
    prefix = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "recall-eval-tests" / "npm"
    if not _server_memory_js(prefix).is_file():
        done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not _server_memory_js(prefix).is_file():
            pytest.skip(f"npm could not install {PACKAGE} (registry unreachable?): {done.stderr.strip()[-300:]}")
    return prefix


@pytest.fixture()
def server_memory(npm_prefix: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """server-memory's default data file (the naive configs' shared graph), removed before and after the test."""
    monkeypatch.setenv("RECALL_EVAL_NPM_PREFIX", str(npm_prefix))
    shared = _server_memory_js(npm_prefix).with_name("memory.jsonl")
    shared.unlink(missing_ok=True)
    yield shared
    shared.unlink(missing_ok=True)


def run(tmp_path: Path, arms: tuple[str, ...], filters: tuple[str, ...]) -> tuple[int, Path]:
    from harness.cli import main

    out = tmp_path / "run"
    argv = ["run", "--scenarios", str(STARTER), "--arms", *arms, "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
            "--no-progress"]
    for expression in filters:
        argv += ["--filter", expression]
    return main(argv), out


def metric(out: Path, arm: str, name: str) -> float | None:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = [r for r in summary["metrics"] if r["arm"] == arm and r["metric"] == name and r.get("category", "all") == "all"]
    return rows[0]["value"] if rows else None


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def test_server_memory_shipped_config_is_at_zero_leaks_and_the_naive_one_is_caught(tmp_path: Path, server_memory: Path) -> None:
    """The leak traps on server-memory: one graph file per sample and workspace leaks nothing; its default data file,
    shared by every sample and workspace, shows as tool-level leaks (another workspace's entities disclosed)."""
    code, out = run(tmp_path, ("mcp:server-memory", "mcp:server-memory-naive"), LEAK_TRAPS)
    assert code in (0, 1)
    assert {r["status"] for r in records(out)} == {"ok"}
    assert metric(out, "mcp:server-memory", "tool_leakage_count") == 0
    assert metric(out, "mcp:server-memory", "answer_leakage_rate") == 0
    assert (metric(out, "mcp:server-memory-naive", "tool_leakage_count") or 0) > 0
    assert server_memory.is_file()  # the naive graph really is one file outside every sample's folder


def test_server_memory_run_records_the_server_its_writes_and_the_products_own_tools(tmp_path: Path, server_memory: Path) -> None:
    """A run of the shipped config: run.json names the server (from its initialize result) and the config's hash; the
    write phase calls create_entities per item; the probe offers search_nodes and open_nodes (as the server describes
    them: tests/memory_systems/mcp/test_system.py); the answer comes from what search_nodes returned."""
    code, out = run(tmp_path, ("mcp:server-memory",), ("fact-01*",))
    assert code in (0, 1)
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    served = manifest["arm_fingerprints"]["mcp:server-memory"]["served"]
    assert served["server_name"] == "memory-server" and served["server_version"] and len(served["config_sha256"]) == 64
    (record,) = records(out)
    writes = [c for s in record["write_phase"]["sessions"] for c in s["tool_calls"]]
    assert writes and {c["name"] for c in writes} == {"create_entities"} and all(c["status"] == "ok" for c in writes)
    assert record["tools_offered"] == ["search_nodes", "open_nodes"]
    found = [c for c in record["tool_calls"] if c["disclosed_item_ids"]]
    assert found and "it-pg-version" in found[0]["disclosed_item_ids"]
    assert "16.2" in (record["final_answer"] or "")
    assert not list(Path("/tmp").glob("recall-eval-mcp-*/data/memory.jsonl"))  # every sample's folder is removed


#: Where ``examples/mcp/basic-memory.yaml`` says to install basic-memory (a Python 3.12 venv of its own).
BASIC_MEMORY_VENV = Path.home() / ".cache" / "recall-eval-bm" / "bin" / "basic-memory"
BASIC_MEMORY_INSTALL = ("python3.12 -m venv ~/.cache/recall-eval-bm && ~/.cache/recall-eval-bm/bin/pip install basic-memory, "
                        "or set RECALL_EVAL_BASIC_MEMORY to the basic-memory executable of an install")


def find_basic_memory(environ: dict[str, str] | None = None) -> tuple[Path | None, str]:
    """(basic-memory's executable, "") or (None, exactly what is missing): ``$RECALL_EVAL_BASIC_MEMORY`` when set, else
    the documented venv (``~/.cache/recall-eval-bm``), else ``basic-memory`` on PATH."""
    env = os.environ if environ is None else environ
    given = env.get("RECALL_EVAL_BASIC_MEMORY")
    if given:
        path = Path(given).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path, ""
        return None, f"RECALL_EVAL_BASIC_MEMORY={given} is not an executable file (install: {BASIC_MEMORY_INSTALL})"
    if BASIC_MEMORY_VENV.is_file():
        return BASIC_MEMORY_VENV, ""
    on_path = shutil.which("basic-memory", path=env.get("PATH"))
    if on_path:
        return Path(on_path), ""
    return None, (f"basic-memory is not installed: RECALL_EVAL_BASIC_MEMORY is unset, {BASIC_MEMORY_VENV} does not exist "
                  f"and no basic-memory is on PATH (install: {BASIC_MEMORY_INSTALL})")


def test_basic_memory_is_looked_for_where_the_example_config_says_and_a_wrong_path_is_named(tmp_path: Path) -> None:
    """A skip must say what is missing: a RECALL_EVAL_BASIC_MEMORY naming no executable is quoted, not passed over."""
    wrong = tmp_path / "nowhere" / "basic-memory"
    found, why = find_basic_memory({"RECALL_EVAL_BASIC_MEMORY": str(wrong), "PATH": ""})
    assert found is None and str(wrong) in why and "python3.12 -m venv" in why
    executable = tmp_path / "basic-memory"
    executable.write_text("#!/bin/sh\n", encoding="utf-8")
    executable.chmod(0o755)
    assert find_basic_memory({"RECALL_EVAL_BASIC_MEMORY": str(executable)}) == (executable, "")


@pytest.fixture()
def basic_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """basic-memory's executable (:func:`find_basic_memory`); HOME is the test's (the naive store)."""
    found, missing = find_basic_memory()
    if found is None:
        pytest.skip(missing)
    monkeypatch.setenv("RECALL_EVAL_BASIC_MEMORY", str(found))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the naive config's ~/.basic-memory and ~/basic-memory
    return Path(found)


@pytest.mark.slow
def test_basic_memory_shipped_config_is_at_zero_leaks_and_the_naive_one_is_caught(tmp_path: Path, basic_memory: Path) -> None:
    """A leak trap on basic-memory: a config and notes folder per sample and workspace leaks nothing; its default
    folders, one store for every workspace, list the other workspace's note by title: a tool-level leak."""
    code, out = run(tmp_path, ("mcp:basic-memory", "mcp:basic-memory-naive"), ("leak-01*",))
    assert code in (0, 1)
    assert {r["status"] for r in records(out)} == {"ok"}
    assert metric(out, "mcp:basic-memory", "tool_leakage_count") == 0
    assert (metric(out, "mcp:basic-memory-naive", "tool_leakage_count") or 0) > 0


def test_server_memory_storing_raw_sessions_credits_the_items_their_turns_cite(tmp_path: Path, server_memory: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Write unit ``session``: each earlier transcript is one entity's observation (one write call per session); what a
    search returns is credited to the items its turns cite, or to the turns; the contract says raw turns."""
    import yaml

    config = yaml.safe_load((REPO / "examples" / "mcp" / "server-memory.yaml").read_text(encoding="utf-8"))
    config.update(name="server-memory-sessions", forget=None, forgetting="none (raw sessions)",
                  write={"unit": "session", "tool": "create_entities", "arguments": {"entities": [
                      {"name": "conversation {session_id}", "entityType": "conversation", "observations": ["{transcript}"]}]}})
    config.pop("forget")
    (tmp_path / "server-memory-sessions.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    monkeypatch.setenv("RECALL_EVAL_MCP_PATH", str(tmp_path))
    code, out = run(tmp_path, ("mcp:server-memory-sessions",), ("fact-01*",))
    assert code in (0, 1)
    (record,) = records(out)
    assert record["status"] == "ok"
    writes = [c for s in record["write_phase"]["sessions"] for c in s["tool_calls"]]
    assert len(writes) == 2 and "PostgreSQL 16.2, the upgrade is to 16.4" in writes[0]["arguments"]
    disclosed = {i for c in record["tool_calls"] for i in c["disclosed_item_ids"]}
    assert all(i.startswith(("it-", "turn:s-")) for i in disclosed)  # the scenario's items, or the turns themselves
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["arm_fingerprints"]["mcp:server-memory-sessions"]["contract"]["ingests"] == "raw turns"


def test_basic_memory_run_writes_notes_offers_its_own_tools_and_answers_from_them(tmp_path: Path, basic_memory: Path) -> None:
    """A run of the shipped basic-memory config: run.json names the server; the write phase calls write_note per item
    (and delete_note for the archived ones), the probe offers search_notes and read_note as the server describes them,
    and the search discloses the asked-for note by its title (basic-memory lists titles and permalinks, not the note's
    text: the offline model, which does not follow up with read_note, then abstains); nothing is sampled or refused."""
    code, out = run(tmp_path, ("mcp:basic-memory",), ("fact-01*",))
    assert code in (0, 1)
    served = json.loads((out / "run.json").read_text(encoding="utf-8"))["arm_fingerprints"]["mcp:basic-memory"]["served"]
    assert "basic" in served["server_name"].lower() and served["server_version"]
    (record,) = records(out)
    assert record["status"] == "ok" and record["tools_offered"] == ["search_notes", "read_note"]
    writes = [c for s in record["write_phase"]["sessions"] for c in s["tool_calls"]]
    assert writes and {c["name"] for c in writes} <= {"write_note", "delete_note"} and all(c["status"] == "ok" for c in writes)
    searched = [c for c in record["tool_calls"] if c["name"] == "search_notes" and "it-pg-version" in c["disclosed_item_ids"]]
    assert searched and "PostgreSQL (it-pg-version)" in searched[0]["result_text"] and record["sampling_refused"] == 0
