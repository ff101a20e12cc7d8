"""One sample through a memory system: open, write phase, probe, close.

The runner calls :func:`run_memory_sample` and writes what it returns into
the sample record; nothing here knows about run folders or scoring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.memory_systems.registry import resolve_arm
from harness.records import SampleError, WritePhaseLog
from harness.scenarios.models import Scenario


@dataclass
class MemorySampleResult:
    """What a sample produced: the offered tool specs, the probe's outcome and the write log."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    outcome: Any = None
    write_phase: WritePhaseLog | None = None


async def run_memory_sample(
    arm_name: str, scenario: Scenario, *, client: Any, settings: Any, epoch: int, max_tool_rounds: int
) -> MemorySampleResult:
    """Run one sample of ``scenario`` in arm ``arm_name`` from fresh storage.

    Model and provider failures come back in ``outcome.error`` (a write-phase
    failure too, with no probe run); a failure of the system itself (opening,
    seeding, a tool raising) propagates for the runner to record as an error
    sample. The instance is closed in every case.
    """
    from harness.run.agent import AgentOutcome, run_agent
    from harness.run.write_phase import run_write_phase
    from harness.scenarios import probe_policy

    arm = resolve_arm(arm_name)
    result = MemorySampleResult()
    instance = arm.system.open(scenario, arm.write_mode)
    try:
        if arm.write_mode == "agent":
            written = await run_write_phase(instance, scenario, client=client, settings=settings, epoch=epoch)
            result.write_phase = written.log
            if written.error is not None:
                result.outcome = AgentOutcome(None, "error", [], [], [], written.error)
                return result
        policy, context = probe_policy(scenario)
        probe = instance.begin_probe(policy, context)
        setup = probe.arm_setup()
        result.tools = setup.tools
        result.outcome = await run_agent(
            setup, probe.tools, client=client, settings=settings, epoch=epoch, max_tool_rounds=max_tool_rounds
        )
        return result
    finally:
        instance.close()


def error_outcome(exc: BaseException) -> Any:
    """An error outcome for a failure outside the model (seeding, a system raising)."""
    from harness.run.agent import AgentOutcome

    return AgentOutcome(None, "error", [], [], [], SampleError(type=type(exc).__name__, message=str(exc)))
