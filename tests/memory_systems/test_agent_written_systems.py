"""The agent-written built-in systems: named_memory (+ its cold control) and recall_extracted, on the offline model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.memory_systems import builtin_arms, resolve_arm
from harness.memory_systems.extracted import FORGET_TOOL, SAVE_TOOL, ExtractedItemsInstance
from harness.scenarios import probe_policy
from harness.score.scoring import score_sample
from tests.run.write_phase_factories import _record, _run, scenario

AGENT_ARMS = ("named_memory", "named_memory_cold", "recall_extracted", "memory_document_extracted")


def test_the_agent_written_arms_are_built_in_and_opt_in() -> None:
    from harness.cli import DEFAULT_ARMS

    for arm in AGENT_ARMS:
        assert builtin_arms()[arm].write_mode == "agent" and arm not in DEFAULT_ARMS


def test_named_memory_writes_after_each_session_and_recalls_at_the_probe() -> None:
    scn = scenario()
    result = _run("named_memory", scn)
    sessions = result.write_phase.sessions
    assert [s.session_id for s in sessions] == ["s0", "s1", "s2"]
    saved = {json.loads(c.arguments)["name"]: json.loads(c.result_text) for s in sessions for c in s.tool_calls if c.name == "remember"}
    assert saved["dev server"] == {"event": "created", "name": "dev server", "scope": "project", "version": 1}
    forget = sessions[1].tool_calls[0]
    assert (forget.name, forget.status) == ("forget", "not_found")  # asked to forget before anything was saved
    assert [t["function"]["name"] for t in result.tools] == ["recall"]
    (probe_call,) = result.outcome.tool_calls
    assert probe_call.name == "recall" and "5174" in probe_call.result_text
    assert "9999" not in probe_call.result_text  # another workspace's project memory never comes back
    assert "5174" in result.outcome.final_answer


def test_named_memory_cold_writes_the_same_and_recalls_nothing() -> None:
    scn = scenario()
    warm, cold = _run("named_memory", scn), _run("named_memory_cold", scn)
    calls = lambda r: [(c.name, c.arguments, c.result_text) for s in r.write_phase.sessions for c in s.tool_calls]  # noqa: E731
    assert calls(warm) == calls(cold)
    assert cold.outcome.tool_calls  # the offline model may search again with fewer words after an empty result
    for probe_call in cold.outcome.tool_calls:
        assert probe_call.name == "recall"
        assert json.loads(probe_call.result_text)["memories"] == [] and not probe_call.storage_read
    assert "5174" not in (cold.outcome.final_answer or "")


def test_recall_extracted_stores_items_the_agent_extracted_and_reads_them_like_recall() -> None:
    scn = scenario()
    result = _run("recall_extracted", scn)
    saves = [c for s in result.write_phase.sessions for c in s.tool_calls if c.name == SAVE_TOOL]
    assert [json.loads(c.result_text)["itemId"] for c in saves] == ["s0-x1", "s2-x2"]  # deterministic ids
    assert [t["function"]["name"] for t in result.tools] == ["memory_search", "memory_get"]  # exactly the recall arm
    disclosed = [i for c in result.outcome.tool_calls for i in c.disclosed_item_ids]
    assert "s2-x2" in disclosed and "s0-x1" not in disclosed  # the ws-b item stays in ws-b
    assert "5174" in result.outcome.final_answer


def _instance() -> ExtractedItemsInstance:
    scn = scenario()
    return resolve_arm("recall_extracted").system.open(scn, "agent")  # type: ignore[return-value]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"content": "Port 5174.", "kind": "fact", "keys": ["port"]}, "kind must be one of"),
        ({"content": "Port 5174.", "kind": "context", "keys": []}, "keys"),
        ({"content": "  ", "kind": "context", "keys": ["port"]}, "content"),
        ({"content": "Launch.", "kind": "context", "keys": ["launch"], "temporalType": "point"}, "event_started_at"),
        ({"content": "Port.", "kind": "context", "keys": ["port"], "eventStartedAt": "soon"}, "event_started_at"),
        ({"content": "Port.", "kind": "context", "keys": ["port"], "scope": "ws-b"}, "scope must be"),
        ({"content": "Port.", "kind": "context", "keys": ["port"], "workspaceKey": "ws-b"}, "unknown properties"),
        ({"content": "Port.", "kind": "context", "keys": ["a\nb"]}, "control"),
    ],
)
def test_a_rejected_item_is_a_recorded_tool_error_never_fatal(arguments: dict[str, Any], message: str) -> None:
    instance = _instance()
    tools = instance.begin_write(instance.scenario.sessions[0])
    record = tools.call(SAVE_TOOL, arguments)
    assert record.status == "invalid_arguments" and message in json.loads(record.result_text)["error"]["message"]
    assert instance.rejected and message in instance.rejected[-1]
    good = tools.call(SAVE_TOOL, {"content": "The dev server runs on port 5174.", "kind": "context", "keys": ["port"]})
    assert good.status == "ok"  # the run goes on
    instance.close()


def test_extracted_items_carry_the_hosts_provenance_and_scope() -> None:
    instance = _instance()
    session = next(s for s in instance.scenario.sessions if s.id == "s2")
    tools = instance.begin_write(session)
    body = json.loads(tools.call(SAVE_TOOL, {"content": "Port 5174.", "kind": "context", "keys": ["port"]}).result_text)
    record = instance.store.read_item(body["itemId"])
    assert (record.item.scope_key, record.item.observed_at, record.item.created_at) == ("ws-a", session.started_at, session.started_at)
    assert [(s.session_id, s.turn_id) for s in record.sources] == [("s2", "t2")]
    glob = json.loads(tools.call(SAVE_TOOL, {"content": "Prefers tabs.", "kind": "preference", "keys": ["tabs"], "scope": "global"}).result_text)
    assert instance.store.read_item(glob["itemId"]).item.scope_key is None
    instance.close()


def test_forget_memory_items_archives_only_the_sessions_scope() -> None:
    instance = _instance()
    by_id = {s.id: s for s in instance.scenario.sessions}
    instance.begin_write(by_id["s0"]).call(SAVE_TOOL, {"content": "Billing port 9999.", "kind": "context", "keys": ["port"]})
    tools = instance.begin_write(by_id["s2"])
    tools.call(SAVE_TOOL, {"content": "Dev port 5174.", "kind": "context", "keys": ["port"]})
    forgotten = tools.call(FORGET_TOOL, {"keys": ["PORT"]})
    assert json.loads(forgotten.result_text) == {"event": "forgotten", "itemIds": ["s2-x2"]}
    assert instance.store.read_item("s0-x1").item.lifecycle_state == "active"  # ws-b's item untouched
    assert tools.call(FORGET_TOOL, {"keys": ["port"]}).status == "not_found"
    assert tools.call(FORGET_TOOL, {"keys": "port"}).status == "invalid_arguments"
    instance.close()


@pytest.mark.parametrize("denied", [{"incognito": True}, {"policy": {"agent_read_enabled": False}}, {"policy": {"enabled": False}}])
@pytest.mark.parametrize("arm", AGENT_ARMS)
def test_denied_probes_stay_cold_after_the_agent_wrote(arm: str, denied: dict[str, Any]) -> None:
    scn = scenario(**denied)
    result = _run(arm, scn)
    assert result.write_phase.sessions  # the writes happened
    assert result.tools == [] and result.outcome.tool_calls == []
    cold = resolve_arm("history_only").system.open(scn, "none").begin_probe(*probe_policy(scn)).arm_setup()
    assert result.outcome.messages[0] == cold.messages[0]
    assert "5174" not in (result.outcome.final_answer or "")


def test_write_scores_of_a_named_memory_sample() -> None:
    from harness.scenarios import Scenario

    item = {"id": "it-port", "content": "The dev server now runs on port 5174.", "kind": "context", "workspace": "ws-a",
            "keys": ["port"], "sources": [{"session": "s2", "turn": "t1"}]}
    scn = Scenario.model_validate({**scenario().model_dump(mode="json", by_alias=True), "items": [item]})
    scores = score_sample(_record(_run("named_memory", scn), scn, "named_memory"), scn)
    assert (scores.memories_written, scores.write_duplicates, scores.writes_rejected) == (2, 0, 0)
    assert (scores.forgets_requested, scores.forgets_done) == (1, 1)
    assert scores.written_holds_expected is True and scores.retrieved_holds_expected is True
    assert scores.continuity_correct is True


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["content", "kind", "keys", "statementType", "temporalType", "eventStartedAt", "eventEndedAt", "scope"]),
        st.one_of(st.none(), st.booleans(), st.integers(-5, 10**13), st.text(max_size=12),
                  st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=3), st.sampled_from(["context", "point", "global"])),
        max_size=8,
    )
)
def test_any_save_arguments_give_a_record_never_an_exception(arguments: dict[str, Any]) -> None:
    instance = _instance()
    try:
        record = instance.begin_write(instance.scenario.sessions[0]).call(SAVE_TOOL, arguments)
        assert record.status in {"ok", "invalid_arguments"}
        assert (record.status == "invalid_arguments") == bool(instance.rejected)
    finally:
        instance.close()


def test_summary_json_shows_the_oracle_vs_extracted_split(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from harness.cli import main

    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "run"
    code = main(["run", "--arms", "recall", "recall_extracted", "--scenarios", str(repo / "scenarios" / "smoke"),
                 "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    capsys.readouterr()
    assert code in (0, 1)
    summary = json.loads((out / "summary.json").read_text())
    by_arm = {row["arm"]: row for row in summary["write_path"]}
    assert set(by_arm) == {"recall", "recall_extracted"}
    assert by_arm["recall_extracted"]["memories_written"] > 0 and by_arm["recall"]["memories_written"] == 0
    assert set(by_arm["recall_extracted"]["stages"]) == {"correct", "extraction", "retrieval", "answer"}
    (pair,) = summary["oracle_vs_extracted"]
    assert (pair["oracle_arm"], pair["extracted_arm"]) == ("recall", "recall_extracted") and pair["n_scenarios"] >= 1
    parts = ("both_correct", "extraction_failures", "retrieval_failures", "answer_failures", "oracle_failed_too", "extracted_only_correct")
    assert sum(pair[k] for k in parts) == pair["n_scenarios"]


def test_memory_document_extracted_appends_redacted_entries_and_injects_them_at_the_probe() -> None:
    base = scenario()
    secret = "sk-proj-Abc123def456ghi789jkl012mno"
    sessions = [s.model_copy(update={"turns": [*s.turns, s.turns[0].model_copy(update={"content": f"The deploy key is {secret} for staging."})]})
                if s.id == "s2" else s for s in base.sessions]
    scn = base.model_copy(update={"sessions": sessions})
    result = _run("memory_document_extracted", scn)
    calls = [c for s in result.write_phase.sessions for c in s.tool_calls]
    assert calls and all(c.name == "extract_memory" for c in calls)
    system = result.outcome.messages[0]["content"]
    assert "<memory_document>" in system and "5174" in system
    assert "9999" not in system  # ws-b's file is not the probe's
    assert secret not in json.dumps(result.outcome.messages) and "[REDACTED]" in system
    assert result.tools == [] and "5174" in result.outcome.final_answer
