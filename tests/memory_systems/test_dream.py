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


DECAYED = "## Old\n<!-- maka-memory: id=old1 createdAt=1000 decayTtlMs=500 -->\nThe office is on floor 3.\n\n"
"""An entry whose decay timer ran out at 1,500 ms: archived for any clock after that, active with no clock."""


def _titled(title: str, content: str, document: str = "", now: int = 1_000) -> str:
    from harness.memory_systems.document_write import append_entry, parse_extract_arguments

    return append_entry(document, parse_extract_arguments({"content": content, "title": title}), now_ms=now, settings=ON)[0]


def test_a_gap_of_exactly_x_opens_no_window_and_a_window_opens_at_the_next_start() -> None:
    """Bug this guards: ``>=`` for ``>`` (a gap of exactly X consolidating), or a window without its time."""
    scenario = dream_scenario()  # sessions a day apart, the probe three days after the last
    windows = idle_windows(write_order(scenario), scenario.probe.started_at, 24 * HOUR)
    assert [(w.before, w.at_ms, len(w.sessions)) for w in windows] == [("probe", scenario.probe.started_at, 5)]


def test_denial_reasons_name_the_switch_that_is_off() -> None:
    scenario = dream_scenario()
    assert consolidation_denial(DocumentSettings(enabled=False, agent_read_enabled=True, extract_tool_enabled=True),
                                scenario) == "memory is turned off"
    assert consolidation_denial(DocumentSettings(agent_read_enabled=True, extract_tool_enabled=False),
                                scenario) == "extraction is off (Dream Mode is an opt-in on top of it)"


def test_the_consolidation_request_is_the_exact_schema_roles_and_text_the_model_is_given() -> None:
    """Bug this guards: a misspelt schema key or role a provider ignores, entries shown without their titles or run
    together, decayed entries offered for replacement, transcripts run together."""
    from harness.memory_systems.dream import CONSOLIDATE_SYSTEM
    from harness.memory_systems.write_prompt import render_transcript

    scenario = dream_scenario()
    document = _titled("Port", "The dev server runs on port 5173.", DECAYED + _titled("Standup", "Standup is at 09:30."))
    messages, response_format, labels = consolidation_request(document, scenario.sessions[:2], now_ms=9_000)
    assert labels == ["e1", "e2"]  # the decayed entry is not offered
    transcripts = render_transcript(scenario.sessions[0]) + "\n\n" + render_transcript(scenario.sessions[1])
    assert messages == [{"role": "system", "content": CONSOLIDATE_SYSTEM}, {"role": "user", "content": (
        "Current entries:\n[e1] Standup — Standup is at 09:30.\n[e2] Port — The dev server runs on port 5173.\n\n"
        f"Conversations since the last consolidation:\n{transcripts}")}]
    item = {"type": "object", "required": ["content"], "additionalProperties": False, "properties": {
        "content": {"type": "string"}, "title": {"type": "string"},
        "replaces": {"type": "array", "items": {"type": "string", "enum": ["e1", "e2"]}}}}
    assert response_format == {"type": "json_schema", "json_schema": {"name": "memory_consolidation", "schema": {
        "type": "object", "additionalProperties": False, "required": ["entries"],
        "properties": {"entries": {"type": "array", "items": item}}}}}
    messages, response_format, labels = consolidation_request(DECAYED, [], now_ms=9_000)
    assert labels == [] and messages[1]["content"].startswith("Current entries:\n(none)\n\nConversations")
    replaces = response_format["json_schema"]["schema"]["properties"]["entries"]["items"]["properties"]["replaces"]
    assert replaces == {"type": "array", "maxItems": 0}  # nothing to replace: the model may name none


def test_an_entry_line_is_shown_whole_up_to_its_limit_and_cut_with_a_mark_past_it() -> None:
    from harness.memory_systems.dream import MAX_ENTRY_LINE_CHARS

    exact = "x" * (MAX_ENTRY_LINE_CHARS - len("a — "))
    longer = "y" * (MAX_ENTRY_LINE_CHARS - len("b — ") + 1)
    user = consolidation_request(_titled("b", longer, _titled("a", exact)), [], now_ms=9_000)[0][1]["content"]
    assert f"[e1] a — {exact}\n" in user
    assert f"[e2] {('b — ' + longer)[: MAX_ENTRY_LINE_CHARS - 1]}…\n" in user


def test_a_reply_of_another_shape_is_read_as_far_as_it_is_well_formed() -> None:
    from harness.memory_systems.dream import parse_consolidation

    assert parse_consolidation('["not", "an", "object"]') == [] and parse_consolidation('{"entries": 5}') == []
    reply = _reply("junk", {"content": "a", "title": "T", "replaces": ["e1", 2, None]}, {"content": "b", "replaces": "e1"})
    assert parse_consolidation(reply) == [({"content": "a", "title": "T"}, ("e1",)), ({"content": "b"}, ())]


def test_supersede_marks_exactly_that_entry_archived_in_its_metadata_line() -> None:
    """Bug this guards: a status other than ``archived`` written (the reader drops the entry, but the file says
    something else), an indented metadata line missed, or an id matching another id's beginning."""
    from harness.memory_systems.dream import supersede

    document = ("## A\n  <!-- maka-memory: id=a status=active -->\nFirst.\n\n"
                "## AB\n<!-- maka-memory: id=ab status=active -->\nSecond.\n")
    after = supersede(document, "a")
    assert "  <!-- maka-memory: id=a status=archived -->\n" in after
    assert "<!-- maka-memory: id=ab status=active -->" in after


def test_every_write_of_a_consolidation_is_recorded_as_it_was_made() -> None:
    """Bug this guards: a refused entry stopping the rest of the reply or recorded as something else, an append
    recorded without its id or written (redacted) text, a supersession without the archived entry's id or event."""
    from harness.memory_systems.dream import DreamWrite

    document = _titled("Port", "The dev server runs on port 5173.", DECAYED)
    _, _, labels = consolidation_request(document, [], now_ms=9_000)
    reply = _reply({"content": "   "}, {"content": f"The port is 8080, key {SECRET}", "replaces": ["e1"]},
                   {"content": "Port 8080 since January.", "replaces": ["e1"]})
    after, writes = apply_consolidation(document, reply, labels, now_ms=9_000, settings=ON)
    entries = parse_memory_document(after).entries
    new = [e for e in entries if e.created_at == 9_000]
    old = next(e for e in entries if e.content == "The dev server runs on port 5173.")
    assert writes[0] == DreamWrite("append", "", "", "refused: content must be non-empty text, got blank text")
    assert writes[1:] == [DreamWrite("append", new[0].id, "The port is 8080, key [REDACTED]", "appended"),
                          DreamWrite("supersede", old.id, old.content, "archived"),
                          DreamWrite("append", new[1].id, "Port 8080 since January.", "appended")]  # archived once
    assert old.status == "archived" and next(e for e in entries if e.id == "old1").status is None  # the decayed kept
