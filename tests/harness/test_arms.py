"""Arms: prompts, tools and the scope of pasted history."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.memory_systems.prompts import TOOL_INSTRUCTIONS, system_prompt
from tests.harness.arm_builders import ARMS, get_arm
from harness.memory_systems.registry import UnknownArmError, resolve_arm
from harness.scenarios import Scenario, seed_store
from memory_tools.host import Host
from memory_tools.policy import MemoryPolicy, RunContext
from memory_tools.store import MemoryItemStore


def make_scenario(**probe_overrides: object) -> Scenario:
    probe = {
        "workspace": "ws-a",
        "started_at": "2026-03-02T10:00:00Z",
        "history": [{"role": "user", "content": "Morning."}, {"role": "assistant", "content": "Morning! What's up?"}],
        "message": "Which port does the dev server use?",
        **probe_overrides,
    }
    return Scenario.model_validate(
        {
            "id": "arm-test",
            "title": "Dev server port",
            "category": "project_fact",
            "description": "The port said earlier must be recalled.",
            "sessions": [
                {
                    "id": "s-late",
                    "workspace": "ws-a",
                    "started_at": "2026-02-10T09:00:00Z",
                    "turns": [{"role": "user", "content": "Moved the dev server to port 5174."}, {"role": "assistant", "content": "Noted."}],
                },
                {
                    "id": "s-early",
                    "workspace": None,
                    "started_at": "2026-01-05T09:00:00Z",
                    "turns": [{"role": "user", "content": "I prefer short answers."}],
                },
                {
                    "id": "s-other",
                    "workspace": "ws-b",
                    "started_at": "2026-01-20T09:00:00Z",
                    "turns": [{"role": "user", "content": "CANARY the billing port is 9999."}],
                },
            ],
            "items": [
                {
                    "id": "it-port",
                    "content": "The dev server runs on port 5174.",
                    "kind": "context",
                    "workspace": "ws-a",
                    "keys": ["dev server", "port"],
                    "sources": [{"session": "s-late", "turn": "t1"}],
                    "role": "answer",
                }
            ],
            "probe": probe,
            "expect": {"must_contain_any": ["5174"], "relevant_items": ["it-port"]},
        }
    )


def _host_run(scenario: Scenario, store: MemoryItemStore):
    probe = scenario.probe
    seed_store(store, scenario)
    policy = MemoryPolicy(enabled=probe.policy.enabled, agent_read_enabled=probe.policy.agent_read_enabled)
    return Host(store, policy).open_run(RunContext(workspace_key=probe.workspace, incognito=probe.incognito))


def test_history_only_has_no_tools_and_ends_with_the_users_message() -> None:
    setup = get_arm("history_only").build(make_scenario(), None)
    assert setup.tools == []
    assert [m["role"] for m in setup.messages] == ["system", "user", "assistant", "user"]
    assert setup.messages[-1]["content"] == "Which port does the dev server use?"


def test_system_prompt_states_the_probe_date() -> None:
    assert "Monday, 2 March 2026, 10:00 UTC" in system_prompt(make_scenario(), with_tools=False)


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


def test_full_history_keeps_roles_alternating() -> None:
    roles = [m["role"] for m in get_arm("full_history").build(make_scenario(), None).messages[1:]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    assert roles[-1] == "user"


def test_unknown_arm_lists_the_known_arms() -> None:
    with pytest.raises(UnknownArmError, match="known arms: history_only, recall, full_history, memory_document"):
        resolve_arm("nope")
    assert set(ARMS) == {"history_only", "recall", "full_history", "memory_document"}


def write_small_suite(folder: Path) -> Path:
    """Two copies of :func:`make_scenario` (ids alpha, beta) as scenario files in ``folder``: a tiny suite for runs."""
    import json

    folder.mkdir()
    for sid in ("alpha", "beta"):
        data = make_scenario().model_dump(mode="json", exclude_none=True)
        data["id"] = sid
        (folder / f"{sid}.yaml").write_text(json.dumps(data), encoding="utf-8")
    return folder
