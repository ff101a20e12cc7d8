"""The plan's prompts without a store per sample: an arm the scenario alone cannot plan is opened once, the rest estimated."""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.memory_systems import (  # noqa: E402
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    policy_denial,
    probe_messages,
    registry,
)
from harness.run import plan_prompts  # noqa: E402
from harness.run.plan import make_plan  # noqa: E402
from harness.run.samples import plan_samples  # noqa: E402
from harness.scenarios import load_scenarios, probe_denial  # noqa: E402

STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"
SEARCH = {"type": "function", "function": {"name": "notes_search", "description": "Search the notes.",
                                           "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}
OPENED: list[tuple[str, str]] = []  # (system, scenario id) of every open


class _Notes(MemoryInstance):
    """A product's usual probe: the shared prompt plus its tool paragraph and one search tool; cold when denied."""

    def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
        if policy_denial(policy, context) is not None:
            return ProbeSetup(probe_messages(self.scenario))
        tools = StaticToolRun({"notes_search": (SEARCH, lambda arguments: ToolExecution("notes_search", "", "ok", "[]"))})
        return ProbeSetup(probe_messages(self.scenario, tool_instructions="Search your notes with notes_search."), tools)


class Notes(MemorySystem):
    name, description, arms = "notes", "counts its openings", {"notes": "seeded"}

    def open(self, scenario: Any, write_mode: str) -> MemoryInstance:
        OPENED.append((self.name, scenario.id))
        return _Notes(scenario)


class Broken(Notes):
    name, arms = "broken", {"broken": "seeded"}

    def open(self, scenario: Any, write_mode: str) -> MemoryInstance:
        OPENED.append((self.name, scenario.id))
        raise RuntimeError(f"cannot reach the store for {scenario.id}")


def _entry_point(name: str, obj: object) -> object:
    return types.SimpleNamespace(name=name, value=f"fake:{name}", dist=types.SimpleNamespace(name="fake-dist", version="1.0"),
                                 load=lambda: obj)


@pytest.fixture()
def plugins(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The two plug-ins above installed (through the entry-point registry, as a real plug-in is found)."""
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [_entry_point("notes", Notes), _entry_point("broken", Broken)])
    registry.plugin_arms.cache_clear()
    OPENED.clear()
    yield OPENED
    registry.plugin_arms.cache_clear()


@pytest.fixture(scope="module")
def starter() -> list[Any]:
    """The starter suite: 64 scenarios, some of them incognito or with memory off (the cold rule is exercised)."""
    return load_scenarios([STARTER])


def _plan(scenarios: list[Any], arms: list[str], epochs: int = 1) -> Any:
    specs = plan_samples(scenarios, arms, ["openai/gpt-4o-mini"], epochs, 0)
    return make_plan(scenarios, specs, round_cap=4, max_tokens=2048)


def test_the_plan_opens_a_plugin_arm_once_whatever_the_number_of_samples(plugins: list[tuple[str, str]], starter: list[Any]) -> None:
    plan = _plan(starter, ["history_only", "notes", "named_memory"], epochs=2)
    assert plan.unplanned == {}
    assert plugins == [("notes", plan.estimated["notes"])]  # once, not 64 x 2
    first_admitted = next(s.id for s in starter if probe_denial(s) is None)
    assert plan.estimated == {"notes": first_admitted, "named_memory": first_admitted}
    assert plan.models[0].calls_expected > 0


@pytest.mark.parametrize("arm", ["notes", "named_memory", "recall_extracted"])
def test_an_arm_estimated_from_the_scenario_counts_what_opening_every_sample_counts_when_its_additions_are_fixed(
        plugins: list[tuple[str, str]], starter: list[Any], monkeypatch: pytest.MonkeyPatch, arm: str) -> None:
    """A paragraph and tools added to the shared prompt (cold under a denying policy), a write tool set per session:
    the estimate is exact, on every scenario of the starter suite (denied ones included)."""
    estimated = vars(_plan(starter, [arm]).models[0])
    monkeypatch.setattr(plan_prompts.ArmPrompts, "runs", lambda self, scenario, name: plan_prompts.opened_runs(
        self.arms[name], scenario, self.budget))
    opened = vars(_plan(starter, [arm]).models[0])
    assert estimated == opened
    assert estimated["calls_max"] > estimated["calls_expected"] > estimated["samples"]  # tools offered and counted


def test_a_plugin_that_fails_to_open_is_planned_as_nothing_with_its_error_after_one_attempt(
        plugins: list[tuple[str, str]], starter: list[Any]) -> None:
    plan = _plan(starter, ["history_only", "broken"])
    assert [name for name, _ in plugins] == ["broken"]
    assert plan.unplanned == {"broken": f"RuntimeError: cannot reach the store for {plugins[0][1]}"}
    assert "broken" not in plan.estimated
    assert plan.models[0].calls_expected == len(starter)  # history_only's one call each; broken's: none
    assert "arm broken not counted (RuntimeError: cannot reach the store" in plan.line()


def test_the_plan_line_says_which_arms_are_estimated_and_which_sample_they_were_opened_on(
        plugins: list[tuple[str, str]], starter: list[Any]) -> None:
    plan = _plan(starter[:3], ["recall", "notes"])
    assert f"; arm notes estimated from the scenarios (opened once, on {starter[0].id})" in plan.line()
    assert plan.as_dict()["estimated"] == {"notes": starter[0].id}
    exact = _plan(starter[:3], ["recall", "full_history"])
    assert exact.estimated == {} and "estimated" not in exact.line()


def test_a_system_that_drops_the_shared_conversation_is_over_counted_rather_than_under(starter: list[Any]) -> None:
    """A prompt that is not the shared conversation: the opened sample's messages are kept and the scenario's
    conversation added (the plan may count more than the run sends, never the opened sample's tokens alone)."""
    admitted = [s for s in starter if probe_denial(s) is None]
    first, other = admitted[0], admitted[1]
    own = [{"role": "system", "content": "my own prompt"}, {"role": "user", "content": "a summary of my store"}]
    learned = plan_prompts.learn(first, [(own, [], -1)])
    (messages, tools, cap), = plan_prompts.estimated_runs(learned, other)
    shared = plan_prompts.estimated_runs(plan_prompts.learn(first, [(probe_messages(first), [], -1)]), other)[0][0]
    assert messages[:2] == own and messages[2:] == shared[1:]
    assert plan_prompts.estimated_runs(learned, first) == [(own, [], -1)]  # the opened sample: as it was opened
