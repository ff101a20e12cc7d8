"""The write phase: the agent writes memory after each earlier session; its calls are recorded and its costs kept apart."""

from __future__ import annotations

import asyncio
import json
import os
import types
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.memory_systems import (  # noqa: E402
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    policy_denial,
    probe_messages,
    write_messages,
)
from harness.memory_systems import registry  # noqa: E402
from harness.run.sample import run_memory_sample  # noqa: E402
from harness.offline_model import respond  # noqa: E402
from harness.records import SampleRecord  # noqa: E402
from harness.scenarios import Scenario  # noqa: E402
from harness.score.scoring import score_sample  # noqa: E402

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
            hits = [(k, t) for k, t in self.notes.items() if (self.leaky or k[0] in (None, context.workspace_key)) and words & set(t.lower().replace(".", "").split())]
            return ToolExecution("", "", "ok", json.dumps({"results": [{"title": k[1], "text": t} for k, t in hits]}),
                                 tuple(f"note:{k[1]}" for k, _ in hits), storage_read=True)

        return ProbeSetup(probe_messages(self.scenario, tool_instructions="Notes: search them with find_notes."), StaticToolRun({"find_notes": (SEARCH, find)}))


class NotesSystem(MemorySystem):
    name = "test_notes"
    description = "test notebook"
    arms = {"test_notes": "agent", "test_leaky": "agent"}

    def __init__(self) -> None:
        self.opened: list[Notes] = []

    def open(self, scenario, write_mode):
        self.opened.append(Notes(scenario, leaky=False))
        return self.opened[-1]


@pytest.fixture()
def notes(monkeypatch: pytest.MonkeyPatch):
    system = NotesSystem()

    class Leaky(NotesSystem):
        name = "test_leaky_system"
        arms = {"test_leaky": "agent"}

        def open(self, scenario, write_mode):
            return Notes(scenario, leaky=True)

    system.arms = {"test_notes": "agent"}
    entries = [types.SimpleNamespace(name=n, value=f"tests:{n}", dist=None, load=lambda o=o: o) for n, o in (("notes", system), ("leaky", Leaky()))]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: entries)
    registry.plugin_arms.cache_clear()
    yield system
    registry.plugin_arms.cache_clear()


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


def test_the_offline_model_saves_what_the_user_said_and_forgets_what_was_asked() -> None:
    session = scenario().sessions[1]
    reply = respond(write_messages(session), [SAVE, FORGET])
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply["tool_calls"]]
    assert calls == [("forget_note", {"title": "home address"})]
    reply = respond(write_messages(scenario().sessions[0]), [SAVE, FORGET])
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply["tool_calls"]]
    assert calls == [("save_note", {"title": "dev server", "text": "The dev server now runs on port 5174."})]


def test_the_offline_model_answers_a_write_request_once_its_calls_came_back() -> None:
    messages = write_messages(scenario().sessions[0])
    first = respond(messages, [SAVE])
    tool = {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": '{"saved":"dev server"}'}
    assert respond([*messages, first, tool], [SAVE]) == {"role": "assistant", "content": "Done: 1 memory call(s) made."}


def test_the_offline_model_never_writes_without_a_save_tool() -> None:
    reply = respond(write_messages(scenario().sessions[0]), [SEARCH])
    assert all(c["function"]["name"] == "find_notes" for c in reply.get("tool_calls", []))


def test_the_write_phase_runs_after_each_session_in_time_order_and_records_every_call(notes: NotesSystem) -> None:
    scn = scenario()
    result = _run("test_notes", scn)
    assert notes.opened[0].order == ["s0", "s1", "s2"]  # time order, every workspace
    sessions = result.write_phase.sessions
    assert [s.session_id for s in sessions] == ["s0", "s1", "s2"]
    assert [s.workspace for s in sessions] == ["ws-b", "ws-a", "ws-a"]
    forget = sessions[1].tool_calls[0]
    assert (forget.name, json.loads(forget.arguments), forget.status) == ("forget_note", {"title": "home address"}, "not_found")
    save = sessions[2].tool_calls[0]
    assert save.name == "save_note" and json.loads(save.result_text) == {"saved": "dev server"}
    assert notes.opened[0].notes == {("ws-b", "billing server"): "The billing server runs on port 9999.",
                                     ("ws-a", "dev server"): "The dev server now runs on port 5174."}
    assert "5174" in result.outcome.final_answer and "9999" not in result.outcome.final_answer


def test_write_phase_costs_are_counted_apart_from_the_probe(notes: NotesSystem) -> None:
    scn = scenario()
    record = _record(_run("test_notes", scn), scn, "test_notes")
    scores = score_sample(record, scn)
    write_calls = [c for s in record.write_phase.sessions for c in s.model_calls]
    assert scores.write_model_calls == len(write_calls) == 6  # three sessions, a batch and an answer each
    assert scores.write_prompt_tokens == sum(c.prompt_tokens for c in write_calls) > 0
    assert scores.write_completion_tokens == sum(c.completion_tokens for c in write_calls) > 0
    assert scores.write_tool_calls == 3
    assert scores.model_calls == len(record.model_calls) and scores.prompt_tokens == sum(c.prompt_tokens for c in record.model_calls)
    from harness.analysis.aggregate import aggregate

    rows = {r["metric"]: r["value"] for r in aggregate([scores])["metrics"] if r["category"] == "all"}
    assert rows["write_prompt_tokens"] == scores.write_prompt_tokens and rows["prompt_tokens"] == scores.prompt_tokens


@pytest.mark.parametrize("denied", [{"incognito": True}, {"policy": {"agent_read_enabled": False}}, {"policy": {"enabled": False}}])
def test_a_denied_probe_stays_cold_after_the_write_phase(notes: NotesSystem, denied: dict) -> None:
    scn = scenario(**denied)
    result = _run("test_notes", scn)
    assert result.write_phase.sessions  # memory was built as usual
    assert result.tools == [] and result.outcome.tool_calls == []
    assert "5174" not in (result.outcome.final_answer or "")


def test_a_system_reading_storage_under_a_denying_policy_is_a_tool_level_leak(notes: NotesSystem) -> None:
    from harness.score.disclosure import tool_leaks

    scn = scenario(incognito=True)
    record = _record(_run("test_leaky", scn), scn, "test_leaky")
    kinds = {leak.kind for leak in tool_leaks(record, scn)}
    assert "policy_denied_read" in kinds and "leakage_canary" in kinds


def test_a_write_phase_failure_ends_the_sample_as_an_error_without_a_probe(notes: NotesSystem, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.run.retry import RetryExhaustedError

    async def broken(self, messages, tools, settings, *, epoch):
        raise RetryExhaustedError(ConnectionError("server gone"), 3)

    monkeypatch.setattr(ModelClient, "complete", broken)
    result = _run("test_notes", scenario())
    assert result.outcome.error.message == "write phase, session s0: server gone"
    assert [s.session_id for s in result.write_phase.sessions] == ["s0"] and result.tools == []


def test_retrieval_precision_is_not_scored_for_agent_written_memory(notes: NotesSystem) -> None:
    """Its records are the agent's, not the scenario's items, so precision against relevant_items would be a false 0."""
    scn = scenario()
    scores = score_sample(_record(_run("test_notes", scn), scn, "test_notes"), scn)
    assert scores.retrieved_items == ["note:dev server"]
    assert scores.retrieved_precision is None and scores.retrieved_recall is None


def _with_writes(scn: Scenario, *arguments: str, status: str = "ok") -> SampleRecord:
    from harness.records import ToolCallLog, WritePhaseLog, WriteSessionLog

    calls = [ToolCallLog(round=0, call_id=f"c{i}", name="save_note", arguments=a, status=status, result_text="{}",
                         result_chars=2, result_tokens=1, storage_read=True, elapsed_s=0.0) for i, a in enumerate(arguments)]
    phase = WritePhaseLog(sessions=[WriteSessionLog(session_id="s2", stop_reason="final_answer", tool_calls=calls)])
    return SampleRecord(sample_id="x", scenario_id=scn.id, scenario_hash="h", category="project_fact", arm="test_notes",
                        model="m", epoch=0, seed=0, status="ok", final_answer="I don't know.", stop_reason="final_answer",
                        write_phase=phase, started_at="t", wall_time_s=0.0)


def test_a_write_holding_the_expected_fact_is_told_from_vague_advice() -> None:
    scn = scenario()
    assert score_sample(_with_writes(scn, '{"title": "dev", "text": "Dev server: port 5174"}'), scn).write_holds_answer is True
    assert score_sample(_with_writes(scn, '{"title": "dev", "text": "Check the dev server config for the port"}'), scn).write_holds_answer is False


def test_only_successful_writes_count_and_escaped_arguments_are_decoded() -> None:
    scn = scenario()
    failed = score_sample(_with_writes(scn, '{"text": "port 5174"}', status="invalid_arguments"), scn)
    assert (failed.write_holds_answer, failed.writes_ok, failed.write_tool_calls) == (False, 0, 1)
    escaped = score_sample(_with_writes(scn, '{"text": "port \\u0035174"}'), scn)
    assert escaped.write_holds_answer is True and escaped.writes_ok == 1


def test_arms_without_a_write_phase_have_no_write_score() -> None:
    scn = scenario()
    record = _with_writes(scn).model_copy(update={"write_phase": None})
    assert score_sample(record, scn).write_holds_answer is None


def test_the_report_shows_write_calls_before_the_probe_and_their_costs_apart(notes: NotesSystem) -> None:
    from harness.report.summary import _sample_dict
    from harness.report.html import _panel
    from harness.report.page_data import _string_table, _tool_logs

    scn = scenario()
    record = _record(_run("test_notes", scn), scn, "test_notes")
    scores = score_sample(record, scn)
    sample = _sample_dict(record, scn, scores)
    table, intern = _string_table()
    names = [list(table)[row[1]] for row in _tool_logs(sample, intern)]
    assert names == ["[write phase, session s0] save_note", "[write phase, session s1] forget_note",
                     "[write phase, session s2] save_note", "find_notes"]
    costs = _panel({**sample, "_pid": "p", "_outcome": "correct"}).costs
    tokens = scores.write_prompt_tokens + scores.write_completion_tokens
    assert costs.endswith(f"write phase 6 model calls, {tokens:,} tokens")
    assert f"tokens {scores.prompt_tokens:,} prompt" in costs or f"tokens {scores.prompt_tokens} prompt" in costs


def test_a_sample_is_cached_only_when_its_write_calls_came_from_the_cache_too() -> None:
    from harness.records import ModelCallLog, WritePhaseLog, WriteSessionLog

    scn = scenario()

    def call(cached: bool) -> ModelCallLog:
        return ModelCallLog(round=0, latency_s=0.1, prompt_tokens=10, completion_tokens=2, usage_source="response", cached=cached)

    record = _with_writes(scn).model_copy(update={"model_calls": [call(True)]})
    fresh_writes = WritePhaseLog(sessions=[WriteSessionLog(session_id="s2", stop_reason="final_answer", model_calls=[call(False)])])
    assert score_sample(record.model_copy(update={"write_phase": fresh_writes}), scn).cached is False
    cached_writes = WritePhaseLog(sessions=[WriteSessionLog(session_id="s2", stop_reason="final_answer", model_calls=[call(True)])])
    assert score_sample(record.model_copy(update={"write_phase": cached_writes}), scn).cached is True


def test_the_run_counts_a_sample_as_cached_and_cut_off_with_its_write_calls() -> None:
    from harness.run.progress import record_flags
    from harness.records import ModelCallLog, WritePhaseLog, WriteSessionLog

    def call(cached: bool, finish: str = "stop") -> ModelCallLog:
        return ModelCallLog(round=0, latency_s=0.1, prompt_tokens=10, completion_tokens=2, usage_source="response", cached=cached, finish_reason=finish)

    record = _with_writes(scenario()).model_copy(update={"model_calls": [call(True)]})
    writes = WritePhaseLog(sessions=[WriteSessionLog(session_id="s2", stop_reason="max_tool_rounds", model_calls=[call(False, "length")])])
    assert record_flags(record.model_copy(update={"write_phase": writes})) == (True, False, True)
    assert record_flags(record) == (True, True, False)
