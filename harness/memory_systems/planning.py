"""The probe's first prompt of a built-in arm, built from the scenario alone: what a run's plan counts, with no store opened.

The plan (:mod:`harness.run.plan`) counts the tokens of each sample's first
call before the run starts. Opening each sample's memory instance for that
copied or seeded a store per sample (about 8 of 21 minutes of a 6-arm LoCoMo
run; most of the wait before the first LongMemEval S sample). For the
built-in arms whose probe prompt depends only on the scenario, its policy and
the retrieval budget, never on what the store holds, the prompt is built here
exactly as their ``begin_probe`` builds it:

- ``history_only`` and ``full_history``: the same prompt builders;
- ``recall``, ``recall_fts``, ``recall_vector``, ``recall_hybrid``: the
  ``recall`` prompt with the tools their Host's run class offers
  (:meth:`memory_tools.MemoryRun.specs_json`), or none when the probe's
  policy denies memory (the Host's own admission rule).

Any other arm (a plug-in, a subclass of these, an agent-written system,
``memory_document`` whose prompt holds the store's items) returns None and is
planned by opening its instance, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.memory_systems.builtin import MemoryToolsSystem, NoMemorySystem, TranscriptsSystem
from harness.memory_systems.fts import FullTextSystem
from harness.memory_systems.prompts import ArmSetup, build_full_history, build_history_only, build_recall
from harness.memory_systems.protocol import SystemArm
from harness.memory_systems.vector import HybridSystem, VectorSystem
from harness.scenarios import RetrievalBudget, Scenario, probe_policy
from memory_tools import FullTextRun, HybridRun, MemoryRun, VectorRun, admission


@dataclass(frozen=True)
class _PlannedRun:
    """The part of a Host's run the prompt builders read: whether tools were admitted, and which."""

    admitted: bool
    specs: tuple[dict[str, Any], ...]

    def tool_specs(self) -> list[dict[str, Any]]:
        return list(self.specs)


#: The run class each built-in store-backed system's Host opens (the tools its probe is offered).
_RUN_CLASSES: dict[type, type[MemoryRun]] = {
    MemoryToolsSystem: MemoryRun, FullTextSystem: FullTextRun, VectorSystem: VectorRun, HybridSystem: HybridRun,
}


def plans_without_store(arm: SystemArm) -> bool:
    """Whether :func:`planned_probe` builds ``arm``'s prompt (exactly these classes: a subclass may build another)."""
    return arm.write_mode != "agent" and (type(arm.system) in _RUN_CLASSES or type(arm.system) in (NoMemorySystem, TranscriptsSystem))


def planned_probe(arm: SystemArm, scenario: Scenario, budget: RetrievalBudget) -> ArmSetup | None:
    """The probe's starting messages and tools for ``arm`` without opening its store, or None when only opening tells."""
    import json

    if not plans_without_store(arm):
        return None
    kind = type(arm.system)
    if kind is NoMemorySystem:
        return build_history_only(scenario)
    if kind is TranscriptsSystem:
        return build_full_history(scenario)
    policy, context = probe_policy(scenario)
    admitted = admission(policy, context) is None
    specs = tuple(json.loads(_RUN_CLASSES[kind].specs_json(budget.top_k))) if admitted else ()
    return build_recall(scenario, _PlannedRun(admitted, specs))
