"""A small agent-written memory system (notes) and a scenario to run its write phase on."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from harness.memory_systems import (  # noqa: E402
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    policy_denial,
    probe_messages,  # noqa: E402
)
from harness.records import SampleRecord  # noqa: E402
from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.run.sample import run_memory_sample  # noqa: E402
from harness.scenarios import Scenario  # noqa: E402

SAVE = {"type": "function", "function": {"name": "save_note", "description": "Save one note.", "parameters": {
    "type": "object", "properties": {"title": {"type": "string"}, "text": {"type": "string"}}, "required": ["title", "text"]}}}


FORGET = {"type": "function", "function": {"name": "forget_note", "description": "Forget the note with this title.", "parameters": {
    "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}}


SEARCH = {"type": "function", "function": {"name": "find_notes", "description": "Search saved notes.", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def scenario(**probe: Any) -> Scenario:
    return Scenario.model_validate({
        "id": "write-test", "title": "Port", "category": "project_fact", "description": "The port said earlier.",
        "sessions": [
            {"id": "s2", "workspace": "ws-a", "started_at": "2026-02-10T09:00:00Z", "turns": [
                {"role": "user", "content": "The dev server now runs on port 5174."}, {"role": "assistant", "content": "Noted."}]},
            {"id": "s1", "workspace": "ws-a", "started_at": "2026-01-05T09:00:00Z", "turns": [
                {"role": "user", "content": "My home address is 12 Elm Street."},
                {"role": "user", "content": "Please forget my home address."}]},
            {"id": "s0", "workspace": "ws-b", "started_at": "2026-01-01T09:00:00Z", "turns": [
                {"role": "user", "content": "The billing server runs on port 9999."}]},
        ],
        "probe": {"workspace": "ws-a", "started_at": "2026-03-02T10:00:00Z", "message": "Which port does the dev server use?", **probe},
        "expect": {"must_contain_any": ["5174"], "canaries": [{"text": "9999", "kind": "leakage"}]},
    })


class Notes(MemoryInstance):
    """A notebook in a dict, scoped by the session's workspace."""

    def __init__(self, scenario: Scenario, leaky: bool = False) -> None:
        super().__init__(scenario)
        self.notes: dict[tuple[str | None, str], str] = {}
        self.order: list[str] = []
        self.leaky = leaky

    def begin_write(self, session):
        self.order.append(session.id)

        def save(args):
            self.notes[(session.workspace, args["title"])] = args["text"]
            return ToolExecution("", "", "ok", json.dumps({"saved": args["title"]}), storage_read=True)

        def forget(args):
            gone = self.notes.pop((session.workspace, args["title"]), None)
            return ToolExecution("", "", "ok" if gone else "not_found", json.dumps({"forgotten": bool(gone)}), storage_read=True)

        return StaticToolRun({"save_note": (SAVE, save), "forget_note": (FORGET, forget)})

    def begin_probe(self, policy, context):
        if policy_denial(policy, context) is not None and not self.leaky:
            return ProbeSetup(probe_messages(self.scenario))

        def find(args):
            words = set(args["query"].lower().split())
            hits = [
                (k, t)
                for k, t in self.notes.items()
                if (self.leaky or k[0] in (None, context.workspace_key))
                and words & set(t.lower().replace(".", "").split())
            ]
            return ToolExecution("", "", "ok", json.dumps({"results": [{"title": k[1], "text": t} for k, t in hits]}),
                                 tuple(f"note:{k[1]}" for k, _ in hits), storage_read=True)

        return ProbeSetup(
            probe_messages(self.scenario, tool_instructions="Notes: search them with find_notes."),
            StaticToolRun({"find_notes": (SEARCH, find)}),
        )


class NotesSystem(MemorySystem):
    name = "test_notes"
    description = "test notebook"
    arms = {"test_notes": "agent", "test_leaky": "agent"}

    def __init__(self) -> None:
        self.opened: list[Notes] = []

    def open(self, scenario, write_mode):
        self.opened.append(Notes(scenario, leaky=False))
        return self.opened[-1]


def _run(arm: str, scn: Scenario):
    from harness.offline_model import register_offline

    register_offline()
    client = ModelClient()
    settings = ModelSettings("offline/reference", seed=1)
    return asyncio.run(run_memory_sample(arm, scn, client=client, settings=settings, epoch=0, max_tool_rounds=4))


def _record(result, scn: Scenario, arm: str) -> SampleRecord:
    outcome = result.outcome
    return SampleRecord(
        sample_id=f"{scn.id}|{arm}|offline/reference|0", scenario_id=scn.id, scenario_hash="x", category=scn.category,
        arm=arm, model="offline/reference", epoch=0, seed=1, status="error" if outcome.error else "ok", error=outcome.error,
        final_answer=outcome.final_answer, stop_reason=outcome.stop_reason,
        tools_offered=[t["function"]["name"] for t in result.tools], messages=outcome.messages,
        model_calls=outcome.model_calls, tool_calls=outcome.tool_calls, write_phase=result.write_phase,
        started_at="2026-01-01T00:00:00Z", wall_time_s=0.0,
    )
