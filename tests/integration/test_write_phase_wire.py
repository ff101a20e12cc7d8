"""The write phase over the real HTTP path (litellm's openai provider against the fake server)."""

from __future__ import annotations

import json
import types

import pytest

from harness.memory_systems import registry
from tests.run.write_phase_factories import NotesSystem


@pytest.fixture()
def notes_arm(monkeypatch: pytest.MonkeyPatch):
    system = NotesSystem()
    entry = types.SimpleNamespace(name="notes", value="tests:notes", dist=None, load=lambda: system)
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [entry])
    registry.plugin_arms.cache_clear()
    yield system
    registry.plugin_arms.cache_clear()


def test_write_calls_go_over_the_wire_and_are_recorded_apart_from_the_probe(run_cli, server, notes_arm) -> None:
    server.script.mode = "offline"
    result = run_cli("--no-cache", arms=("test_notes",))
    record = result.record("test_notes")
    assert record.status == "ok", record.error
    sessions = record.write_phase.sessions
    writes = [call for session in sessions for call in session.tool_calls]
    assert writes and {call.name for call in writes} <= {"save_note", "forget_note"}
    write_requests = [seen for seen in server.requests if "long-term memory between conversations" in json.dumps(seen.body["messages"][0])]
    assert len(write_requests) == sum(len(s.model_calls) for s in sessions) > 0
    assert all(call.prompt_tokens == 4242 and call.usage_source == "response" for s in sessions for call in s.model_calls)
    assert len(server.requests) == len(write_requests) + len(record.model_calls)
