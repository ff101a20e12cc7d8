"""The write phase: the agent writes memory after each earlier session; its calls are recorded and its costs kept apart."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import types

from harness.memory_systems import (  # noqa: E402
    registry,  # noqa: E402
    write_messages,
)
from harness.offline_model import respond  # noqa: E402
from harness.records import SampleRecord  # noqa: E402
from harness.run.agent import ModelClient  # noqa: E402
from harness.scenarios import Scenario  # noqa: E402
from harness.score.scoring import score_sample  # noqa: E402
from tests.run.write_phase_factories import FORGET, SAVE, SEARCH, Notes, NotesSystem, _record, _run, scenario


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
    from harness.report.html import _panel
    from harness.report.page_data import _string_table, _tool_logs
    from harness.report.summary import _sample_dict

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
    from harness.records import ModelCallLog, WritePhaseLog, WriteSessionLog
    from harness.run.progress import record_flags

    def call(cached: bool, finish: str = "stop") -> ModelCallLog:
        return ModelCallLog(
            round=0,
            latency_s=0.1,
            prompt_tokens=10,
            completion_tokens=2,
            usage_source="response",
            cached=cached,
            finish_reason=finish,
        )

    record = _with_writes(scenario()).model_copy(update={"model_calls": [call(True)]})
    writes = WritePhaseLog(sessions=[WriteSessionLog(session_id="s2", stop_reason="max_tool_rounds", model_calls=[call(False, "length")])])
    assert record_flags(record.model_copy(update={"write_phase": writes})) == (True, False, True)
    assert record_flags(record) == (True, True, False)


def test_the_write_prompt_states_its_current_time_in_the_iso_form_the_probe_uses() -> None:
    """Bug planted: ``write_messages`` kept the prose ``Tuesday, 10 February 2026, 09:00 UTC`` as the write phase's
    "now" while the probe (and memory's times) read ISO: the agent-written arms were told the time in another format."""
    from harness.memory_systems.prompts import probe_now

    system, user = write_messages(scenario().sessions[0])
    assert "Current date and time: 2026-02-10T09:00:00Z (Tuesday)." in system["content"]
    assert probe_now(scenario().sessions[0].started_at) == "2026-02-10T09:00:00Z (Tuesday)"  # the probe's one helper
    assert user["content"].startswith("[Conversation s2, Tuesday, 10 February 2026, 09:00 UTC (2026-02-10T09:00:00Z), workspace ws-a]")


def test_under_legacy_the_write_prompt_keeps_its_prose_time_byte_for_byte() -> None:
    from harness.memory_systems import configure_instructions

    configure_instructions("legacy")
    try:
        system, user = write_messages(scenario().sessions[0])
    finally:
        configure_instructions(None)
    assert "Current date and time: Tuesday, 10 February 2026, 09:00 UTC." in system["content"]
    assert user["content"].startswith("[Conversation s2, Tuesday, 10 February 2026, 09:00 UTC, workspace ws-a]")
