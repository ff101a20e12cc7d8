"""The four original arms by name, straight to their prompt builders (no memory-system protocol in between).

Tests of what a builder sends use these; the runner reaches the same builders
through :func:`harness.memory_systems.resolve_arm`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.memory_systems.document import build_memory_document
from harness.memory_systems.prompts import ArmSetup, build_full_history, build_history_only, build_recall
from harness.scenarios import Scenario


@dataclass(frozen=True)
class Arm:
    """A named builder: ``build(scenario, host_run) -> ArmSetup``; ``host_run`` is None without tools."""

    name: str
    uses_memory: bool
    build: Callable[[Scenario, Any], ArmSetup]


ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        Arm("history_only", False, build_history_only),
        Arm("recall", True, build_recall),
        Arm("full_history", False, build_full_history),
        Arm("memory_document", False, build_memory_document),
    )
}


def get_arm(name: str) -> Arm:
    return ARMS[name]
