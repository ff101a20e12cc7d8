"""One sample through a memory system: open, write phase, probe, close.

The runner calls :func:`run_memory_sample` and writes what it returns into
the sample record; nothing here knows about run folders or scoring.

The write phase (an arm whose write mode is ``agent``): each earlier session
gets one small agent run on the write prompt of
:mod:`harness.memory_systems.write_prompt`; every call goes through the
system's :class:`~harness.memory_systems.ToolRun` and is recorded with its
arguments and result (:class:`harness.records.WriteSessionLog`). The model
calls are the same client, cache and settings as the probe's and are counted
apart from them. A session for which the system offers no write tools costs
no model call. A write-phase failure (the model's provider failing after
retries) ends the sample as an error: the probe would otherwise read a
half-built memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.memory_systems import WRITE_MAX_TOOL_ROUNDS, ArmSetup, open_instance, resolve_arm, write_messages, write_order
from harness.records import SampleError, WritePhaseLog, WriteSessionLog
from harness.run.agent import AgentOutcome, run_agent
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget, Scenario, probe_policy


@dataclass
class MemorySampleResult:
    """What a sample produced: the offered tool specs, the probe's outcome and the write log."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    outcome: Any = None
    write_phase: WritePhaseLog | None = None
    pasted: int = 0
    """Messages after the system prompt that are a pasted history (stored once per run)."""


async def run_memory_sample(
    arm_name: str, scenario: Scenario, *, client: Any, settings: Any, epoch: int, max_tool_rounds: int,
    budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET,
) -> MemorySampleResult:
    """Run one sample of ``scenario`` in arm ``arm_name`` from fresh storage.

    Model and provider failures come back in ``outcome.error`` (a write-phase
    failure too, with no probe run); a failure of the system itself (opening,
    seeding, a tool raising) propagates for the runner to record as an error
    sample. The instance is closed in every case. ``budget`` is the run's retrieval budget, given to the system.
    """
    arm = resolve_arm(arm_name)
    result = MemorySampleResult()
    instance = open_instance(arm, scenario, budget)
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
        result.tools, result.pasted = setup.tools, setup.pasted
        result.outcome = await run_agent(
            setup, probe.tools, client=client, settings=settings, epoch=epoch, max_tool_rounds=max_tool_rounds
        )
        return result
    finally:
        instance.close()


def error_outcome(exc: BaseException) -> Any:
    """An error outcome for a failure outside the model (seeding, a system raising)."""
    return AgentOutcome(None, "error", [], [], [], SampleError(type=type(exc).__name__, message=str(exc)))


@dataclass
class WritePhaseResult:
    """The log of a write phase and, when it failed, why."""

    log: WritePhaseLog = field(default_factory=lambda: WritePhaseLog(sessions=[]))
    error: SampleError | None = None


async def run_write_phase(instance: Any, scenario: Scenario, *, client: Any, settings: Any, epoch: int) -> WritePhaseResult:
    """Write memory after each earlier session through ``instance.begin_write``; stops at the first failure."""
    result = WritePhaseResult()
    for session in write_order(scenario):
        tools = instance.begin_write(session)
        specs = list(tools.tool_specs()) if tools is not None else []
        if not specs:
            continue
        outcome = await run_agent(
            ArmSetup(messages=write_messages(session), tools=specs),
            tools,
            client=client,
            settings=settings,
            epoch=epoch,
            max_tool_rounds=WRITE_MAX_TOOL_ROUNDS,
        )
        result.log.sessions.append(
            WriteSessionLog(
                session_id=session.id,
                workspace=session.workspace,
                stop_reason=outcome.stop_reason,
                final_answer=outcome.final_answer,
                model_calls=outcome.model_calls,
                tool_calls=outcome.tool_calls,
            )
        )
        if outcome.error is not None:
            message = f"write phase, session {session.id}: {outcome.error.message}"
            result.error = outcome.error.model_copy(update={"message": message})
            break
    return result
