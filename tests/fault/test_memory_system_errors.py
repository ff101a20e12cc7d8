"""Faulty memory systems (plug-ins): each failure ends only its own sample as an error; the run and the other arms go on."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    probe_messages,
    registry,
)

SMOKE = Path(__file__).resolve().parents[2] / "scenarios" / "smoke"
SAVE = {"type": "function", "function": {"name": "save_note", "description": "Save one note.", "parameters": {
    "type": "object", "properties": {"title": {"type": "string"}, "text": {"type": "string"}}, "required": ["title", "text"]}}}


class _Faulty(MemoryInstance):
    def __init__(self, scenario, where: str) -> None:
        super().__init__(scenario)
        self.where = where
        self.closed = False

    def begin_write(self, session):
        def save(arguments):
            if self.where == "write_tool":
                raise OSError("the notes disk went away")
            return ToolExecution("", "", "ok", "{}")

        return StaticToolRun({"save_note": (SAVE, save)})

    def begin_probe(self, policy, context):
        if self.where == "probe":
            raise RuntimeError("probe setup broke")
        return ProbeSetup(probe_messages(self.scenario))

    def close(self):
        CLOSED.append(self.where)


CLOSED: list[str] = []


class _System(MemorySystem):
    description = "fails on purpose"

    def __init__(self, where: str) -> None:
        self.name = f"faulty_{where}"
        self.arms = {f"faulty_{where}": "agent"}
        self.where = where

    def open(self, scenario, write_mode):
        if self.where == "open":
            raise ValueError("cannot open the notes store")
        return _Faulty(scenario, self.where)


@pytest.fixture()
def faulty(monkeypatch: pytest.MonkeyPatch):
    systems = [_System(w) for w in ("open", "write_tool", "probe")]
    entries = [types.SimpleNamespace(name=s.name, value=f"tests:{s.name}", dist=None, load=lambda s=s: s) for s in systems]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: entries)
    monkeypatch.setattr(
        "harness.report.build_report",
        lambda run_dir, **_: types.SimpleNamespace(verdict="pass", reasons=[], index_html=Path(run_dir) / "i.html"),
    )
    monkeypatch.setattr("harness.analysis.terminal_lines", lambda outcome, upper=False: (["verdict: PASS"], []))
    monkeypatch.setattr("harness.analysis.exit_code", lambda outcome, **_: 0)
    registry.plugin_arms.cache_clear()
    CLOSED.clear()
    yield
    registry.plugin_arms.cache_clear()


def test_a_memory_system_raising_in_open_a_write_tool_or_the_probe_fails_only_its_samples(faulty, tmp_path: Path) -> None:
    """A plug-in raising while opening, in a write tool or building the probe: that sample is an error naming the
    cause, every instance it opened is closed, the other arms' samples are fine and the run completes."""
    from harness.cli import main

    out = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-01*", "--arms", "history_only", "faulty_open",
                 "faulty_write_tool", "faulty_probe", "--out", str(out), "--no-cache", "--no-progress"])
    records = {r["arm"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert records["history_only"]["status"] == "ok"
    errors = {arm: (r["error"]["type"], r["error"]["message"]) for arm, r in records.items() if r["status"] == "error"}
    assert errors["faulty_open"] == ("ValueError", "cannot open the notes store")
    assert errors["faulty_write_tool"][0] == "OSError" and errors["faulty_write_tool"][1].startswith("write phase, session ")
    assert errors["faulty_probe"] == ("RuntimeError", "probe setup broke")
    assert records["faulty_write_tool"]["write_phase"]["sessions"][0]["stop_reason"] == "error"
    # each instance opened is closed: one by the plan line (which builds every arm's prompts), one by the sample
    assert sorted(CLOSED) == ["probe", "probe", "write_tool", "write_tool"]
    assert json.loads((out / "run.json").read_text())["status"] == "complete" and code == 0  # the verdict is faked here
