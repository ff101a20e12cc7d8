"""Arms: prompts, tools and the scope of pasted history."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.memory_systems.prompts import BASE_SYSTEM_PROMPT, TOOL_INSTRUCTIONS, system_prompt, turn_text
from harness.memory_systems.registry import UnknownArmError, resolve_arm
from harness.run.agent import ModelClient, ModelSettings
from harness.run.cache import ResponseCache
from harness.run.retry import RetryPolicy
from harness.scenarios import Scenario
from memory_tools.store import MemoryItemStore
from tests.memory_systems.arm_builders import ARMS, get_arm
from tests.memory_systems.prompt_factories import _host_run, make_scenario
from tests.run.scripted_model import install_scripted


def test_history_only_has_no_tools_and_ends_with_the_users_message() -> None:
    setup = get_arm("history_only").build(make_scenario(), None)
    assert setup.tools == []
    assert [m["role"] for m in setup.messages] == ["system", "user", "assistant", "user"]
    assert setup.messages[-1]["content"] == "Which port does the dev server use?"


def test_system_prompt_states_the_probe_date() -> None:
    assert "Current date and time: 2026-03-02T10:00:00Z (Monday)." in system_prompt(make_scenario(), with_tools=False)


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_recall_offers_tools_when_the_policy_admits_them() -> None:
    scenario = make_scenario()
    with MemoryItemStore(":memory:") as store:
        setup = get_arm("recall").build(scenario, _host_run(scenario, store))
    assert sorted(t["function"]["name"] for t in setup.tools) == ["memory_get", "memory_search"]
    assert setup.messages[0]["content"].endswith(TOOL_INSTRUCTIONS)


@pytest.mark.parametrize(
    "overrides",
    [{"incognito": True}, {"policy": {"enabled": False}}, {"policy": {"agent_read_enabled": False}}],
)
def test_recall_without_admission_equals_history_only(overrides: dict) -> None:
    scenario = make_scenario(**overrides)
    with MemoryItemStore(":memory:") as store:
        setup = get_arm("recall").build(scenario, _host_run(scenario, store))
    assert setup.tools == []
    assert setup.messages == get_arm("history_only").build(scenario, None).messages


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_system_prompts_differ_only_in_the_tool_instructions() -> None:
    scenario = make_scenario()
    plain = system_prompt(scenario, with_tools=False)
    with_tools = system_prompt(scenario, with_tools=True)
    assert with_tools == plain + "\n\n" + TOOL_INSTRUCTIONS
    assert get_arm("full_history").build(scenario, None).messages[0]["content"] == plain


def test_full_history_pastes_in_scope_sessions_in_time_order() -> None:
    messages = get_arm("full_history").build(make_scenario(), None).messages
    text = "\n".join(m["content"] for m in messages)
    assert "I prefer short answers." in text and "port 5174" in text
    assert text.index("s-early") < text.index("s-late") < text.index("Morning.")
    assert messages[1]["content"].startswith("[Earlier conversation s-early, Monday, 5 January 2026")


def test_full_history_leaves_out_other_workspace_sessions() -> None:
    text = "\n".join(m["content"] for m in get_arm("full_history").build(make_scenario(), None).messages)
    assert "CANARY" not in text and "s-other" not in text


@pytest.mark.parametrize(
    "overrides",
    [{"incognito": True}, {"policy": {"enabled": False}}, {"policy": {"agent_read_enabled": False}}],
    ids=["incognito", "memory_disabled", "agent_reads_disabled"],
)
def test_full_history_respects_the_memory_policy_gates(overrides: dict) -> None:
    scenario = make_scenario(**overrides)
    pasted = get_arm("full_history").build(scenario, None)
    assert pasted.messages == get_arm("history_only").build(scenario, None).messages
    assert "5174" not in "\n".join(m["content"] for m in pasted.messages)


def test_full_history_sends_every_turn_as_its_own_message_even_two_of_one_role_in_a_row() -> None:
    """Bug planted: consecutive same-role messages joined (``s-early``'s lone user turn took in the next session's)."""
    setup = get_arm("full_history").build(make_scenario(), None)
    contents = [m["content"] for m in setup.messages[1:]]
    assert contents == ["[Earlier conversation s-early, Monday, 5 January 2026, 09:00 UTC (2026-01-05T09:00:00Z)]\n"
                        "I prefer short answers.",
                        "[Earlier conversation s-late, Tuesday, 10 February 2026, 09:00 UTC (2026-02-10T09:00:00Z)]\n"
                        "Moved the dev server to port 5174.", "Noted.", "Morning.", "Morning! What's up?",
                        "Which port does the dev server use?"]
    assert [m["role"] for m in setup.messages[1:3]] == ["user", "user"]
    assert setup.pasted == 3  # the pasted sessions stand verbatim, whole


def test_unknown_arm_lists_the_known_arms() -> None:
    with pytest.raises(UnknownArmError, match="known arms: history_only, recall, full_history, memory_document"):
        resolve_arm("nope")
    assert set(ARMS) == {"history_only", "recall", "full_history", "memory_document"}


# --- Speaker names on turns, and a scenario's own system prompt shared by every arm.


LOCOMO_PROMPT = "You answer questions about a conversation between Caroline and Melanie. Today is {now}."
ARM_NAMES = ("history_only", "recall", "full_history", "memory_document")


def _with_speakers(scenario: Scenario) -> Scenario:
    """The arm-test scenario with every turn said by a named person."""
    names = {"user": "Caroline", "assistant": "Melanie"}

    def named(turns: list[Any]) -> list[Any]:
        return [t.model_copy(update={"speaker": names[t.role]}) for t in turns]

    sessions = [s.model_copy(update={"turns": named(s.turns)}) for s in scenario.sessions]
    probe = scenario.probe.model_copy(update={"history": named(scenario.probe.history)})
    return scenario.model_copy(update={"sessions": sessions, "probe": probe})


def _build(arm: str, scenario: Scenario) -> list[dict[str, Any]]:
    if not get_arm(arm).uses_memory:
        return get_arm(arm).build(scenario, None).messages
    with MemoryItemStore(":memory:") as store:
        return get_arm(arm).build(scenario, _host_run(scenario, store)).messages


# --- speakers ---------------------------------------------------------------------------------------------------


def test_speaker_names_prefix_the_turns_of_the_probe_history() -> None:
    """Bug planted: ``_turn_messages`` kept ``turn.content`` (the name never reached the model)."""
    messages = get_arm("history_only").build(_with_speakers(make_scenario()), None).messages
    assert [m["content"] for m in messages[1:3]] == ["Caroline: Morning.", "Melanie: Morning! What's up?"]
    assert [m["role"] for m in messages[1:3]] == ["user", "assistant"]  # roles stay user/assistant


def test_speaker_names_prefix_every_turn_of_the_pasted_sessions() -> None:
    """Bug planted: pasted sessions built from ``turn.content`` (the history had names, the sessions none)."""
    messages = get_arm("full_history").build(_with_speakers(make_scenario()), None).messages
    text = "\n".join(m["content"] for m in messages)
    assert "]\nCaroline: I prefer short answers." in text
    assert "Caroline: Moved the dev server to port 5174." in text and "Melanie: Noted." in text


def test_turns_without_a_speaker_reach_the_model_unchanged() -> None:
    """Bug planted: ``None: `` (or ``: ``) prefixed to turns without a speaker."""
    scenario = make_scenario()
    assert [m["content"] for m in get_arm("history_only").build(scenario, None).messages[1:3]] == [
        "Morning.", "Morning! What's up?"]
    assert turn_text(scenario.probe.history[0]) == "Morning."


# --- the scenario's system prompt ------------------------------------------------------------------------------


@pytest.mark.parametrize("arm", ARM_NAMES)
def test_scenario_system_prompt_replaces_the_base_prompt_in_every_arm(arm: str) -> None:
    """Bug planted: ``system_prompt`` ignored ``scenario.system_prompt`` (every arm kept the base prompt)."""
    scenario = make_scenario().model_copy(update={"system_prompt": LOCOMO_PROMPT})
    first = _build(arm, scenario)[0]["content"]
    expected = "You answer questions about a conversation between Caroline and Melanie. " \
               "Today is 2026-03-02T10:00:00Z (Monday)."
    assert first.startswith(expected)
    assert BASE_SYSTEM_PROMPT[:40] not in first


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_every_arm_shares_the_scenario_system_prompt_apart_from_the_tool_paragraph() -> None:
    """Bug planted: the override applied to the tool arm only (``with_tools`` picking the scenario's prompt)."""
    scenario = make_scenario().model_copy(update={"system_prompt": LOCOMO_PROMPT})
    plain = system_prompt(scenario, with_tools=False)
    assert system_prompt(scenario, with_tools=True) == plain + "\n\n" + TOOL_INSTRUCTIONS
    assert _build("recall", scenario)[0]["content"] == plain + "\n\n" + TOOL_INSTRUCTIONS
    for arm in ("history_only", "full_history"):
        assert _build(arm, scenario)[0]["content"] == plain


def test_braces_in_a_scenario_system_prompt_are_kept() -> None:
    """Bug planted: the override run through ``str.format`` (a JSON example in the prompt raised KeyError)."""
    scenario = make_scenario().model_copy(update={"system_prompt": 'Reply as {"answer": "..."} at {now}.'})
    assert system_prompt(scenario, with_tools=False) == 'Reply as {"answer": "..."} at 2026-03-02T10:00:00Z (Monday).'


def test_scenario_system_prompt_enters_the_response_cache_key(tmp_path: Path) -> None:
    """Bug planted: the cache key computed without the system message, so a new prompt replayed old answers."""
    model = install_scripted(lambda messages, tools: {"content": messages[0]["content"][:20]})
    client = ModelClient(cache=ResponseCache(tmp_path / "cache"), retry=RetryPolicy(retries=0))
    settings = ModelSettings("scripted/x")
    base = make_scenario()

    def ask(scenario: Scenario) -> Any:
        messages = get_arm("history_only").build(scenario, None).messages
        return asyncio.run(client.complete(messages, [], settings, epoch=0))

    assert ask(base).cached is False
    assert ask(base).cached is True and model.calls == 1
    other = ask(base.model_copy(update={"system_prompt": LOCOMO_PROMPT}))
    assert other.cached is False and model.calls == 2
    assert other.message["content"] == "You answer questions"


# --- the probe is its own message: every LoCoMo-shaped conversation, every arm ------------------------------------


def _locomo_shaped_suites(tmp_path: Path) -> list[Scenario]:
    """Every LoCoMo-shaped conversation the tests have, imported: the mini fixture (last sessions end with
    speaker_b), the generated samples (end with speaker_a) and the published-size generator (both endings)."""
    from benchmarks.published_shapes import locomo
    from harness.importers import run_import
    from harness.scenarios import load_suite
    from tests.importers.importer_fixtures import LOCOMO, write_locomo

    sources = [LOCOMO, write_locomo(tmp_path / "generated.json", samples=2, sessions=3), tmp_path / "shaped.json"]
    locomo(sources[2], scale=0.005)
    scenarios: list[Scenario] = []
    for n, source in enumerate(sources):
        run_import("locomo", source, tmp_path / f"suite-{n}", echo=lambda _line: None)
        scenarios += load_suite([tmp_path / f"suite-{n}"]).scenarios
    return scenarios


def _arm_messages(name: str, scenario: Scenario) -> list[dict[str, Any]]:
    """The probe messages of arm ``name`` as the runner gets them (through the memory-system protocol)."""
    from harness.memory_systems import resolve_arm
    from harness.scenarios import probe_policy

    arm = resolve_arm(name)
    instance = arm.system.open(scenario, arm.write_mode)
    try:
        return instance.begin_probe(*probe_policy(scenario)).arm_setup().messages
    finally:
        instance.close()


def test_the_locomo_question_is_its_own_message_with_nothing_of_either_speaker_in_every_arm(tmp_path: Path) -> None:
    """Bug planted: the probe joined to the last turn when both are ``user`` (the session ended with speaker_a), so
    the request read ``Maya: In Quito I started ...\\n\\nWhat did Maya name her puppy?``: caught here, in every arm."""
    from harness.memory_systems import builtin_arms

    scenarios = _locomo_shaped_suites(tmp_path)
    ends_with_a = [s for s in scenarios if s.sessions[-1].turns[-1].role == "user"]
    assert ends_with_a and len(ends_with_a) < len(scenarios)  # both endings are covered
    for scenario in scenarios:
        turns = {turn_text(t) for session in scenario.sessions for t in session.turns}
        speakers = {t.speaker for session in scenario.sessions for t in session.turns}
        last_turn = scenario.sessions[-1].turns[-1]
        for name in builtin_arms():
            messages = _arm_messages(name, scenario)
            where = f"{scenario.id} {name}"
            assert messages[-1] == {"role": "user", "content": scenario.probe.message}, where
            assert not any(scenario.probe.message.startswith(f"{who}:") for who in speakers), where
            assert not any(text in scenario.probe.message for text in turns), where
            for message in messages[1:-1]:  # every other message is one turn, a session marker at most before it
                text = message["content"].split("\n", 1)[-1] if message["content"].startswith("[Earlier") else message["content"]
                assert text in turns, f"{where}: {message['content'][:80]!r} is not one turn"
            if len(messages) > 2:  # an arm showing the last session shows its last turn as it was, then the question
                assert messages[-2] == {"role": last_turn.role, "content": turn_text(last_turn)}, where
