"""The first prompt of every agent run of a sample, for the plan: built from the scenario, a store opened at most once per arm.

The plan (:mod:`harness.run.plan`) counts the tokens of each sample's first
call before the run starts. It used to open every (scenario, arm)'s memory
instance for that, one after another: a plug-in or MCP server ingested its whole
store (or started its server) per sample just to be planned, about 8 of 21
minutes of a 6-arm LoCoMo run and 11 of 17 of a 9-system one. Now:

- **exact** (nothing opened): the built-in arms whose prompt the scenario
  alone decides (:func:`harness.memory_systems.planned_probe`);
- **estimated from the scenario** (every other arm: plug-ins, ``mcp:NAME``,
  agent-written and document arms): the arm is opened **once**, on the first
  planned scenario whose probe may read memory, and that sample's prompts are
  taken apart into what the scenario decides (the shared system prompt, the
  recent history, the probe's message, each earlier session's write
  transcript) and what the system adds (text after the shared system prompt,
  messages before the shared conversation, the probe's and the write phase's
  tool specs). Every other scenario's prompts are the scenario's own parts
  with the system's additions as learned; under a probe policy that denies
  memory, the shared prompt alone (the protocol's cold rule). The opened
  scenario itself is counted as opened, exactly.

What an estimate cannot see: a system whose additions depend on what its
store holds (an injected memory document, a context section of search
results) is counted with the opened sample's additions for every scenario;
a system whose prompt does not keep the shared conversation is counted with
the opened sample's messages *and* the scenario's conversation (an
over-count rather than an under-count). The plan line names the estimated
arms. ``--max-cost-usd`` never rests on the plan: every call reserves its
own worst case from its real prompt (:mod:`harness.run.budget`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.run.errors import PlanInterrupted
from harness.scenarios import Scenario

#: One agent run's first call: (messages, tool specs, round cap; -1: the run's own cap).
AgentRun = tuple[list[dict[str, Any]], list[dict[str, Any]], int]


@dataclass(frozen=True)
class LearnedArm:
    """What one opened sample of an arm taught the plan: the parts of its prompts its scenario does not decide."""

    scenario_id: str
    opened: list[AgentRun]
    """The opened sample's own runs (its scenario is counted with these, exactly)."""
    system_suffix: str | None
    """Text the system appends to the shared system prompt; None: it replaced it with :attr:`system_text`."""
    system_text: str
    injected: tuple[dict[str, Any], ...]
    """Messages the system puts before the shared conversation (all of its messages when it does not keep it)."""
    probe_tools: tuple[dict[str, Any], ...]
    write_tools: tuple[dict[str, Any], ...]
    """The write phase's tool specs (agent-written arms; none: no write run is planned)."""


def opened_runs(arm: Any, scenario: Scenario, budget: Any) -> list[AgentRun]:
    """The runs of one sample of ``arm`` built by opening its instance, exactly as
    :func:`harness.run.sample.run_memory_sample` builds them (write runs first, then the probe); raises what it raises."""
    from harness.memory_systems import WRITE_MAX_TOOL_ROUNDS, open_instance, write_messages, write_order
    from harness.scenarios import probe_policy

    runs: list[AgentRun] = []
    instance = open_instance(arm, scenario, budget)
    try:
        if arm.write_mode == "agent":
            for session in write_order(scenario):
                tools = instance.begin_write(session)
                # A system's own write (ModelWrite) builds its prompts while it runs: not planned.
                specs = list(tools.tool_specs()) if tools is not None and hasattr(tools, "tool_specs") else []
                if specs:
                    runs.append((write_messages(session), specs, WRITE_MAX_TOOL_ROUNDS))
        policy, context = probe_policy(scenario)
        setup = instance.begin_probe(policy, context).arm_setup()
        runs.append((setup.messages, setup.tools, -1))
    finally:
        instance.close()
    return runs


def learn(scenario: Scenario, runs: list[AgentRun]) -> LearnedArm:
    """Take one opened sample's runs apart against its scenario's shared prompt."""
    from harness.memory_systems import probe_messages

    messages, probe_tools, _ = runs[-1]
    shared = probe_messages(scenario)  # the shared prompt: history_only's
    base = shared[0]["content"]
    first = str(messages[0].get("content") or "") if messages else ""
    suffix = first[len(base):] if messages and messages[0].get("role") == "system" and first.startswith(base) else None
    rest, conversation = messages[1:], shared[1:]
    keeps = len(rest) >= len(conversation) and rest[len(rest) - len(conversation):] == conversation
    injected = rest[: len(rest) - len(conversation)] if keeps else rest
    write_tools = next((tools for _, tools, _cap in runs[:-1] if tools), [])
    return LearnedArm(scenario.id, runs, suffix, first, tuple(injected), tuple(probe_tools), tuple(write_tools))


def estimated_runs(learned: LearnedArm, scenario: Scenario) -> list[AgentRun]:
    """``scenario``'s runs with the system's additions as ``learned`` (its own opened runs for the opened scenario)."""
    from harness.memory_systems import WRITE_MAX_TOOL_ROUNDS, probe_messages, write_messages, write_order
    from harness.scenarios import probe_denial

    if scenario.id == learned.scenario_id:
        return learned.opened
    runs: list[AgentRun] = []
    if learned.write_tools:
        runs = [(write_messages(session), list(learned.write_tools), WRITE_MAX_TOOL_ROUNDS) for session in write_order(scenario)]
    shared = probe_messages(scenario)  # the shared prompt: history_only's
    if probe_denial(scenario) is not None:  # the protocol's cold rule: no injected context, no tool reading storage
        return [*runs, (shared, [], -1)]
    text = learned.system_text if learned.system_suffix is None else shared[0]["content"] + learned.system_suffix
    messages = [{"role": "system", "content": text}, *learned.injected, *shared[1:]]
    return [*runs, (messages, list(learned.probe_tools), -1)]


def learning_scenario(ids: Sequence[str], by_id: Any) -> str:
    """The scenario an estimated arm is opened on: the first of ``ids`` whose probe may read memory (its tools and
    additions show), else the first."""
    from harness.scenarios import probe_denial

    for scenario_id in ids:
        if probe_denial(by_id[scenario_id]) is None:
            return scenario_id
    return ids[0]


class ArmPrompts:
    """Every planned (scenario, arm)'s runs, with each estimated arm opened once (:meth:`learn_all`) before any is built."""

    def __init__(self, arms: Sequence[str], budget: Any, unplanned: dict[str, str]) -> None:
        from harness.memory_systems import planning, resolve_arm
        from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET

        self.arms = {name: resolve_arm(name) for name in arms}
        self.budget = budget or DEFAULT_RETRIEVAL_BUDGET
        self.unplanned = unplanned
        self.estimated = [name for name, arm in self.arms.items() if not planning.plans_without_store(arm)]
        self.learned: dict[str, LearnedArm] = {}

    def learn_all(self, scenario_id: str, by_id: Any, should_stop: Callable[[], bool] | None = None) -> None:
        """Open each estimated arm once, on ``scenario_id``; an arm that raises is planned as nothing (its error kept)."""
        scenario = by_id[scenario_id]
        for done, name in enumerate(self.estimated):
            if should_stop is not None and should_stop():
                raise PlanInterrupted(f"stopped while planning, after opening {done} of {len(self.estimated)} arms once")
            try:
                self.learned[name] = learn(scenario, opened_runs(self.arms[name], scenario, self.budget))
            except Exception as exc:  # noqa: BLE001 - a system that cannot build its prompts fails its samples in the run
                # The plan never stops a run: those samples will be error records naming the cause; plan them as nothing.
                self.unplanned.setdefault(name, f"{type(exc).__name__}: {exc}")

    def runs(self, scenario: Scenario, name: str) -> list[AgentRun]:
        """The agent runs of one sample of arm ``name`` on ``scenario`` (none for an arm that failed to open)."""
        from harness.memory_systems import planned_probe

        if name in self.estimated:
            learned = self.learned.get(name)
            return [] if learned is None else estimated_runs(learned, scenario)
        planned = planned_probe(self.arms[name], scenario, self.budget)  # exact, no store opened
        return [] if planned is None else [(planned.messages, planned.tools, -1)]
