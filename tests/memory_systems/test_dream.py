"""Dream Mode: idle windows, the consolidator's gates (switches, incognito, scope), redaction and supersession."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from harness.memory_systems.document import DocumentSettings
from harness.memory_systems.document_format import parse_memory_document
from harness.memory_systems.dream import (
    apply_consolidation,
    consolidation_denial,
    consolidation_request,
    consolidation_scopes,
    idle_windows,
)
from harness.memory_systems.dream_arm import DREAM_ARM, DreamDocumentInstance
from harness.memory_systems.extracted_document import WRITE_SETTINGS
from harness.memory_systems.write_prompt import write_order
from tests.memory_systems.dream_factories import FOREIGN, SECRET, dream_scenario

HOUR = 3_600_000
ON = DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=True)


def _doc(*contents: str, now: int = 1_000) -> str:
    from harness.memory_systems.document_write import append_entry, parse_extract_arguments

    text = ""
    for index, content in enumerate(contents):
        text, _, _ = append_entry(text, parse_extract_arguments({"content": content}), now_ms=now + index, settings=ON)
    return text


def _reply(*entries: dict[str, Any]) -> str:
    return json.dumps({"entries": list(entries)})


def _run(arm: str, scenario: Any) -> Any:
    from harness.offline_model import register_offline
    from harness.run.agent import ModelClient, ModelSettings
    from harness.run.sample import run_memory_sample

    register_offline()
    return asyncio.run(run_memory_sample(arm, scenario, client=ModelClient(),
                                         settings=ModelSettings("offline/reference", seed=1), epoch=0, max_tool_rounds=4))


def test_a_window_opens_only_where_the_gap_to_the_next_start_exceeds_x() -> None:
    scenario = dream_scenario()
    windows = idle_windows(write_order(scenario), scenario.probe.started_at, 60 * 60_000)
    assert [w.before for w in windows] == ["s2", "s3", "s4", "s5", "probe"]
    assert [[s.id for s in w.sessions] for w in windows][-1] == ["s5"]
    same_day = dream_scenario(same_day=True)
    windows = idle_windows(write_order(same_day), same_day.probe.started_at, 60 * 60_000)
    assert [(w.before, [s.id for s in w.sessions]) for w in windows] == [("probe", ["s1", "s2", "s3", "s4", "s5"])]


def test_every_switch_off_denies_consolidation_fail_closed() -> None:
    scenario = dream_scenario()
    assert consolidation_denial(ON, scenario) is None
    for settings in (DocumentSettings(enabled=False, agent_read_enabled=True, extract_tool_enabled=True),
                     DocumentSettings(agent_read_enabled=False, extract_tool_enabled=True),
                     DocumentSettings(agent_read_enabled=True, extract_tool_enabled=False),
                     DocumentSettings(agent_read_enabled=1, extract_tool_enabled=True)):  # type: ignore[arg-type]
        assert consolidation_denial(settings, scenario) is not None, settings
    off = dream_scenario(probe={"policy": {"agent_read_enabled": False}})
    assert consolidation_denial(ON, off) == "agent reads are off"
    assert DreamDocumentInstance(off, ON).begin_idle("probe") is None


def test_an_incognito_workspace_is_never_consolidated_nor_extracted() -> None:
    """Planted bug caught: ``consolidation_scopes`` without the incognito filter consolidated ws-a's sessions."""
    scenario = dream_scenario(probe={"incognito": True})
    instance = DreamDocumentInstance(scenario, ON)
    assert instance.begin_idle("s3") is None  # its only pending session is ws-a's
    window = instance.windows["s5"]
    assert list(consolidation_scopes(window, scenario)) == ["ws-b"]
    assert instance.begin_write(scenario.sessions[0]).tool_specs() == []  # no extract_memory for ws-a either


def test_a_consolidation_request_holds_only_its_own_workspaces_sessions() -> None:
    scenario = dream_scenario(same_day=True)
    (window,) = idle_windows(write_order(scenario), scenario.probe.started_at, HOUR)  # one window: all five
    scopes = consolidation_scopes(window, scenario)
    messages, _, _ = consolidation_request("", scopes["ws-a"], now_ms=scenario.probe.started_at)
    assert FOREIGN not in messages[1]["content"] and "8080" in messages[1]["content"]


def test_a_secret_in_a_consolidated_entry_is_redacted_on_the_way_in() -> None:
    """Planted bug caught: appending the reply's content without ``redact_secrets`` wrote the key into the file."""
    document, writes = apply_consolidation("", _reply({"content": f"The OpenAI key is {SECRET}", "title": SECRET}),
                                           [], now_ms=5_000, settings=ON)
    assert SECRET not in document and "[REDACTED]" in document
    assert [w.action for w in writes] == ["append"] and SECRET not in writes[0].content


def test_a_replaced_entry_is_archived_and_no_longer_served() -> None:
    """Planted bug caught: appending without marking the replaced entry archived kept 5173 active (superseded kept)."""
    document = _doc("The dev server runs on port 5173.", "Standup is at 09:30.")
    _, _, labels = consolidation_request(document, [], now_ms=9_000)
    after, writes = apply_consolidation(document, _reply({"content": "The dev server runs on port 8080.", "replaces": ["e1"]}),
                                        labels, now_ms=9_000, settings=ON)
    active = [e.content for e in parse_memory_document(after).active_entries]
    assert active == ["The dev server runs on port 5173.", "Standup is at 09:30.", "The dev server runs on port 8080."][1:]
    assert [w.action for w in writes] == ["append", "supersede"] and writes[1].content == "The dev server runs on port 5173."


def test_a_repeat_of_an_entry_merges_into_it_and_ids_never_shown_change_nothing() -> None:
    document = _doc("The dev server runs on port 5173.")
    _, _, labels = consolidation_request(document, [], now_ms=9_000)
    after, writes = apply_consolidation(document, _reply({"content": "The dev server runs on port 5173.",
                                                          "replaces": ["e1", "e7"]}), labels, now_ms=9_000, settings=ON)
    assert after == document and [(w.action, w.event) for w in writes] == [("append", "unchanged")]
    assert apply_consolidation(document, "not json", labels, now_ms=9_000, settings=ON) == (document, [])


def test_the_dream_arm_serves_the_correction_and_records_every_window_write() -> None:
    result = _run(DREAM_ARM, dream_scenario())
    windows = [s for s in result.write_phase.sessions if s.session_id.startswith("dream@")]
    assert [s.session_id for s in windows] == ["dream@s2", "dream@s3", "dream@s4", "dream@s5", "dream@probe"]
    assert all(len(s.model_calls) == 1 and s.model_calls[0].prompt_tokens > 0 for s in windows)
    assert all(t.name in ("dream.append", "dream.supersede", "dream.snapshot") for s in windows for t in s.tool_calls)
    section = result.outcome.messages[0]["content"]
    assert "8080" in section and "port 5173" not in section and SECRET not in section
    assert "8080" in (result.outcome.final_answer or "")


def test_the_dream_arm_writes_nothing_with_agent_reads_off() -> None:
    result = _run(DREAM_ARM, dream_scenario(probe={"policy": {"agent_read_enabled": False}}))
    assert not [s for s in result.write_phase.sessions if s.session_id.startswith("dream@")]


def test_the_dream_arm_uses_the_extraction_settings_and_an_hour_as_x() -> None:
    from harness.memory_systems import resolve_arm

    system = resolve_arm(DREAM_ARM).system
    assert system.configuration() == {"idle_minutes": 60} and resolve_arm(DREAM_ARM).write_mode == "agent"
    assert system.open(dream_scenario(), "agent").settings == WRITE_SETTINGS
