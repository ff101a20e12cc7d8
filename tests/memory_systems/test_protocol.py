"""The memory-system protocol's own helpers: the plug-in tool runner, argument decoding, opening an arm, probe messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from harness.memory_systems.protocol import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    SystemArm,
    ToolExecution,
    arguments_text,
    decode_arguments,
    open_instance,
    probe_messages,
)
from harness.scenarios import RetrievalBudget
from tests.memory_systems.prompt_factories import make_scenario

SAVE = {"type": "function", "function": {"name": "save_note", "parameters": {"type": "object"}}}


def _runner(seen: list[dict[str, Any]]) -> StaticToolRun:
    def save(arguments: dict[str, Any]) -> ToolExecution:
        seen.append(arguments)
        return ToolExecution("ignored", "ignored", "ok", "saved", disclosed_item_ids=["n1"], storage_read=True)

    return StaticToolRun({"save_note": (SAVE, save)})


def test_a_known_tool_is_called_with_its_decoded_arguments_and_its_result_recorded_as_sent() -> None:
    seen: list[dict[str, Any]] = []
    record = _runner(seen).call("save_note", '{"text": "port 5433"}')
    assert seen == [{"text": "port 5433"}]
    assert (record.name, record.arguments, record.status, record.result_text) == \
        ("save_note", '{"text": "port 5433"}', "ok", "saved")
    assert record.disclosed_item_ids == ("n1",) and record.storage_read and record.elapsed_s >= 0
    assert _runner(seen).call("save_note", {"text": "x"}).arguments == '{"text":"x"}'


def test_an_unknown_tool_is_an_error_the_model_can_read_naming_the_tools_it_has() -> None:
    record = _runner([]).call("delete_all", "{}")
    assert record.status == "unknown_tool" and not record.storage_read and record.disclosed_item_ids == ()
    assert json.loads(record.result_text) == {
        "error": {"code": "unknown_tool", "message": "unknown tool 'delete_all'; available: save_note"}}
    assert record.result_text.startswith('{"error":{"code":"unknown_tool"')  # compact JSON
    empty = StaticToolRun().call("save_note", "{}")
    assert json.loads(empty.result_text)["error"]["message"] == "unknown tool 'save_note'; available: none"


@pytest.mark.parametrize(("arguments", "message"), [
    ("[1, 2]", "arguments must be a JSON object"),
    (5, "arguments must be a JSON object"),
    ("{not json", "arguments are not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
                  "(char 1)); send one JSON object"),
])
def test_arguments_that_are_not_one_json_object_are_refused_before_the_handler(arguments, message) -> None:
    seen: list[dict[str, Any]] = []
    record = _runner(seen).call("save_note", arguments)
    assert seen == [] and record.status == "invalid_arguments"
    assert json.loads(record.result_text) == {"error": {"code": "invalid_arguments", "message": message}}


@pytest.mark.parametrize(("arguments", "decoded"), [
    (None, {}), ("", {}), ("   ", {}), ({"a": 1}, {"a": 1}), ('{"a": "é"}', {"a": "é"}), ('"text"', None),
])
def test_absent_or_blank_arguments_are_an_empty_object(arguments, decoded) -> None:
    got = decode_arguments(arguments)
    assert got == decoded if decoded is not None else got == "arguments must be a JSON object"


def test_arguments_too_deep_to_decode_are_an_error_not_a_crash() -> None:
    assert decode_arguments("[" * 100_000 + "]" * 100_000).startswith("arguments are not valid JSON (")


def test_the_tool_specs_are_a_fresh_copy_each_time() -> None:
    run = _runner([])
    specs = run.tool_specs()
    specs[0]["function"]["name"] = "changed"
    assert run.tool_specs() == [SAVE] and SAVE["function"]["name"] == "save_note"
    assert arguments_text(None) == "" and arguments_text("raw") == "raw"


def test_a_probe_setup_offers_its_tools_specs_and_none_without_tools() -> None:
    setup = ProbeSetup([{"role": "system", "content": "s"}], _runner([]), pasted=2)
    arm = setup.arm_setup()
    assert arm.tools == [SAVE] and arm.pasted == 2 and arm.messages == setup.messages
    assert ProbeSetup([]).arm_setup().tools == []


def test_the_default_instance_writes_nothing_offers_nothing_and_the_default_system_declares_nothing() -> None:
    scenario = make_scenario()
    instance = MemoryInstance(scenario)
    assert instance.begin_write(scenario.sessions[0]) is None and instance.begin_idle("probe") is None
    assert instance.embedding_usage() is None and instance.close() is None
    setup = instance.begin_probe(None, None)  # type: ignore[arg-type]
    assert setup.tools is None and setup.messages == probe_messages(scenario)
    assert MemorySystem().configuration() == {}
    with pytest.raises(NotImplementedError):
        MemorySystem().open(scenario, "none")


class _Plain(MemorySystem):
    description = "plain"

    def open(self, scenario, write_mode):  # noqa: ANN001, ANN201
        return MemoryInstance(scenario)


class _Budgeted(MemorySystem):
    def __init__(self) -> None:
        self.got: dict[str, Any] = {}

    def open(self, scenario, write_mode, budget=None, embedder=None):  # noqa: ANN001, ANN201
        self.got = {"write_mode": write_mode, "budget": budget, "embedder": embedder}
        return MemoryInstance(scenario)


@dataclass(frozen=True)
class _Frozen:
    scenario: Any


class _FrozenSystem(MemorySystem):
    def open(self, scenario, write_mode):  # noqa: ANN001, ANN201
        return _Frozen(scenario)


def test_open_instance_gives_the_budget_and_embedder_only_to_systems_that_declare_them() -> None:
    scenario, budget = make_scenario(), RetrievalBudget(top_k=3, chars=300)
    plain = open_instance(SystemArm("plain", _Plain(), "seeded"), scenario, budget)
    assert plain.retrieval_budget == budget and plain.run_embedding is None  # type: ignore[attr-defined]
    system = _Budgeted()
    instance = open_instance(SystemArm("budgeted", system, "agent"), scenario, budget)
    assert system.got["write_mode"] == "agent" and system.got["budget"] == budget
    assert system.got["embedder"] is not None and instance.run_embedding is system.got["embedder"]  # type: ignore[attr-defined]
    assert isinstance(open_instance(SystemArm("frozen", _FrozenSystem(), "none"), scenario, budget), _Frozen)


@pytest.mark.parametrize(("declared", "shown"), [("archive", "archive"), ("  ", "not declared"), (None, "not declared"),
                                                 ("", "not declared")])
def test_an_arm_shows_its_systems_forgetting_mechanism_or_says_it_is_not_declared(declared, shown) -> None:
    system = _Plain()
    system.forgetting = declared  # type: ignore[assignment]
    arm = SystemArm("plain", system, "seeded")
    assert arm.forgetting == shown and arm.description == "plain" and arm.origin == "built-in"


def test_the_shared_instructions_come_first_and_only_for_a_system_that_offers_tools_or_injects_context() -> None:
    from harness.memory_systems.instructions import SHARED_MEMORY_INSTRUCTIONS

    scenario = make_scenario()
    bare = probe_messages(scenario)[0]["content"]
    assert SHARED_MEMORY_INSTRUCTIONS not in bare
    both = probe_messages(scenario, tool_instructions="Call save_note.", context_section="<memory>x</memory>")[0]
    assert both["content"] == f"{bare}\n\n{SHARED_MEMORY_INSTRUCTIONS}\n\nCall save_note.\n\n<memory>x</memory>"
    assert both["role"] == "system"
    context_only = probe_messages(scenario, context_section="<memory>x</memory>")[0]["content"]
    assert context_only == f"{bare}\n\n{SHARED_MEMORY_INSTRUCTIONS}\n\n<memory>x</memory>"


def test_a_refused_call_is_recorded_with_its_name_arguments_and_time_and_its_message_in_plain_unicode(monkeypatch) -> None:
    import types

    from harness.memory_systems import protocol

    ticks = iter([10.0, 10.25, 20.0, 20.5])
    monkeypatch.setattr(protocol, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    two = StaticToolRun({"save_note": (SAVE, None), "forget_note": (SAVE, None)})
    unknown = two.call("sauvegardé", '{"texte": "é"}')
    assert (unknown.name, unknown.arguments, unknown.elapsed_s) == ("sauvegardé", '{"texte": "é"}', 0.25)
    assert unknown.result_text == ('{"error":{"code":"unknown_tool","message":"unknown tool \'sauvegardé\'; '
                                   'available: save_note, forget_note"}}')
    invalid = two.call("save_note", "[1]")
    assert (invalid.name, invalid.arguments, invalid.status, invalid.elapsed_s) == \
        ("save_note", "[1]", "invalid_arguments", 0.5)


def test_the_probe_messages_of_a_system_without_tools_say_nothing_of_memory() -> None:
    """history_only's prompt: the base rules alone, then the conversation; no tool paragraph nor memory block."""
    from harness.memory_systems.prompts import system_prompt

    scenario = make_scenario()
    messages = probe_messages(scenario)
    assert messages[0] == {"role": "system", "content": system_prompt(scenario, with_tools=False)}
    assert "Memory tools:" not in messages[0]["content"] and "untrusted context" not in messages[0]["content"]
    assert messages[-1]["role"] == "user"


def test_a_handled_call_is_timed_by_the_clock(monkeypatch) -> None:
    import types

    from harness.memory_systems import protocol

    ticks = iter([50.0, 50.75])
    monkeypatch.setattr(protocol, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    assert _runner([]).call("save_note", "{}").elapsed_s == 0.75


def test_open_instance_hands_a_system_the_runs_own_embedder() -> None:
    from memory_tools import LexicalEmbedder

    class Named(LexicalEmbedder):
        name = "run-embedder"

    system = _Budgeted()
    run_embedder = Named()
    instance = open_instance(SystemArm("budgeted", system, "agent"), make_scenario(), embedder=run_embedder)
    assert system.got["embedder"].embedder is run_embedder and instance.run_embedding.embedder is run_embedder  # type: ignore[attr-defined]
