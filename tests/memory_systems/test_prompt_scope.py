"""The scope of what the arms paste or offer, through the arms' prompt building.

Every test here was watched failing against the bug its docstring names, then
passing once the bug was removed.
"""

from __future__ import annotations

from tests.memory_systems.arm_builders import get_arm
from tests.memory_systems.prompt_factories import make_scenario


def _prompt_text(arm: str, scenario) -> str:
    return "\n".join(str(m["content"]) for m in get_arm(arm).build(scenario, None).messages)


def test_full_history_for_a_probe_with_no_workspace_pastes_only_sessions_with_no_workspace() -> None:
    """Bug: a probe with no workspace got every workspace's sessions pasted (None treated as "any workspace")."""
    scenario = make_scenario(workspace=None)
    text = _prompt_text("full_history", scenario)
    assert "[Earlier conversation s-early," in text and "I prefer short answers." in text
    assert "s-late" not in text and "port 5174" not in text
    assert "s-other" not in text and "CANARY" not in text


def test_full_history_in_a_workspace_pastes_its_own_and_global_sessions_only() -> None:
    """Bug: the workspace comparison dropped, so another workspace's session was pasted too."""
    text = _prompt_text("full_history", make_scenario(workspace="ws-b"))
    assert "CANARY the billing port is 9999." in text and "I prefer short answers." in text
    assert "port 5174" not in text


def test_no_arm_without_memory_pastes_any_earlier_session() -> None:
    """Bug: history_only (the baseline) received the earlier sessions, erasing the difference under test."""
    for workspace in ("ws-a", None):
        text = _prompt_text("history_only", make_scenario(workspace=workspace))
        assert "Earlier conversation" not in text and "5174" not in text and "short answers" not in text
