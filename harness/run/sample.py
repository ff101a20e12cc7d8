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
no model call. A system that writes with its own code (a
:class:`~harness.memory_systems.ModelWrite`, e.g. mem0's fact extraction)
runs in a worker thread with the run's model behind
:class:`~harness.memory_systems.WriteModel`: its calls are the same client's,
recorded as the session's write-phase model calls. A write-phase failure (the
model's provider failing after retries) ends the sample as an error: the
probe would otherwise read a half-built memory.

Two more model steps a system may ask for, run the same way: a consolidation
in the idle window before a session or the probe (``begin_idle``: Dream Mode),
logged as the write session ``dream@<next>``; and a selection right before the
probe (``begin_selection``: the top-K document's judge), whose calls are the
probe's first model calls, marked ``purpose="selection"``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from harness.memory_systems import (
    IDLE_LOG_PREFIX,
    WRITE_MAX_TOOL_ROUNDS,
    ArmSetup,
    ModelWrite,
    current_embedder,
    open_instance,
    resolve_arm,
    sample_embedding_usage,
    write_messages,
    write_order,
)
from harness.records import IngestLog, ModelCallLog, SampleError, ToolCallLog, WritePhaseLog, WriteSessionLog
from harness.run.agent import AgentOutcome, count_tokens, model_call_log, run_agent
from harness.run.retry import RetryExhaustedError
from harness.run.sampling import PROBE, RunSampling, place_calls
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget, Scenario, probe_policy


@dataclass
class MemorySampleResult:
    """What a sample produced: the offered tool specs, the probe's outcome and the write log."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    outcome: Any = None
    write_phase: WritePhaseLog | None = None
    pasted: int = 0
    """Messages after the system prompt that are a pasted history (stored once per run)."""
    shadow: Any = None
    """The ``shadow`` arm's harness-side search (:class:`harness.memory_systems.shadow.ShadowObservation`), never shown."""
    embedding: Any = None
    """What the system's embeddings cost (``memory_tools.EmbeddingUsage``), or None: it embeds nothing."""
    ingest: IngestLog | None = None
    """How long the memory took to build before the probe (:func:`ingest_log`)."""
    sampling_refused: int | None = None
    """Model calls the system's servers asked for (MCP sampling) and were refused; None: a system that cannot ask."""
    stray_calls: list[ModelCallLog] = field(default_factory=list)
    """Served sampling calls whose phase left no log (the sample failed in it): the error record keeps them."""


async def run_memory_sample(
    arm_name: str, scenario: Scenario, *, client: Any, settings: Any, epoch: int, max_tool_rounds: int,
    budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET, into: MemorySampleResult | None = None,
) -> MemorySampleResult:
    """Run one sample of ``scenario`` in arm ``arm_name`` from fresh storage.

    Model and provider failures come back in ``outcome.error`` (a write-phase
    failure too, with no probe run); a failure of the system itself (opening,
    seeding, a tool raising) propagates for the runner to record as an error
    sample, with what ``into`` holds by then (the write sessions done, the
    sampling calls served and refused). The instance is closed in every case.
    ``budget`` is the run's retrieval budget, given to the system.
    """
    arm = resolve_arm(arm_name)
    result = into if into is not None else MemorySampleResult()
    started = time.perf_counter()
    instance = open_instance(arm, scenario, budget, current_embedder())
    use_run_timeout = getattr(instance, "use_run_timeout", None)  # a system whose tools wait on a server (MCP)
    if callable(use_run_timeout):
        use_run_timeout(float(settings.timeout_s))
    sampling = RunSampling(client, settings, epoch, asyncio.get_running_loop())
    use_run_model = getattr(instance, "use_run_model", None)  # a system whose servers may ask for model calls (MCP)
    if callable(use_run_model):
        use_run_model(sampling)
    opened = time.perf_counter()
    try:
        if arm.write_mode == "agent":
            written = WritePhaseResult()
            result.write_phase = written.log
            await run_write_phase(instance, scenario, client=client, settings=settings, epoch=epoch, into=written,
                                  sampling=sampling)
            if written.error is not None:
                result.outcome = AgentOutcome(None, "error", [], [], [], written.error)
                return result
        result.ingest = ingest_log(opened - started, time.perf_counter() - opened, sample_embedding_usage(instance))
        policy, context = probe_policy(scenario)
        sampling.phase = PROBE
        chosen, error = await run_selection(instance, policy, context, client=client, settings=settings, epoch=epoch)
        if error is not None:
            result.outcome = AgentOutcome(None, "error", [], chosen, [], error)
            return result
        probe = instance.begin_probe(policy, context)
        setup = probe.arm_setup()
        result.tools, result.pasted, result.shadow = setup.tools, setup.pasted, probe.shadow
        result.outcome = await run_agent(
            setup, probe.tools, client=client, settings=settings, epoch=epoch, max_tool_rounds=max_tool_rounds
        )
        result.outcome.model_calls[:0] = chosen  # the selection's calls are the probe's, first
        return result
    finally:
        result.embedding = sample_embedding_usage(instance)
        instance.close()
        refused = getattr(instance, "sampling_refused", None)  # an MCP server's requests for model calls
        result.sampling_refused = refused if isinstance(refused, int) else None
        probe_calls = result.outcome.model_calls if result.outcome is not None else None
        result.stray_calls = place_calls(sampling.calls, result.write_phase, probe_calls)


async def run_selection(instance: Any, policy: Any, context: Any, *, client: Any, settings: Any,
                        epoch: int) -> tuple[list[ModelCallLog], SampleError | None]:
    """Run the system's model step before the probe (``begin_selection``: the top-K document's judge), if any.

    Returns its model calls, marked ``purpose="selection"`` (counted with the probe's), and a failure of the
    model (after retries) as an error, which ends the sample as a write-phase failure does.
    """
    begin = getattr(instance, "begin_selection", None)
    step = begin(policy, context) if callable(begin) else None
    if not isinstance(step, ModelWrite):
        return [], None
    probe = SimpleNamespace(id="probe", workspace=context.workspace_key)
    log, error = await run_model_write(step, probe, client=client, settings=settings, epoch=epoch)
    calls = [call.model_copy(update={"purpose": "selection"}) for call in log.model_calls]
    if error is not None:
        error = error.model_copy(update={"message": f"selection before the probe: {error.message}"})
    return calls, error


def ingest_log(open_s: float, write_s: float, usage: Any) -> IngestLog:
    """The sample's ingest: opening (store built) and write-phase seconds, and its embeddings so far (None: none)."""
    return IngestLog(open_s=open_s, write_s=write_s, embedding_texts=getattr(usage, "texts", 0),
                     embedding_calls=getattr(usage, "calls", 0), embedding_s=getattr(usage, "latency_s", 0.0))


def error_outcome(exc: BaseException) -> Any:
    """An error outcome for a failure outside the model (seeding, a system raising)."""
    return AgentOutcome(None, "error", [], [], [], SampleError(type=type(exc).__name__, message=str(exc)))


@dataclass
class WritePhaseResult:
    """The log of a write phase and, when it failed, why."""

    log: WritePhaseLog = field(default_factory=lambda: WritePhaseLog(sessions=[]))
    error: SampleError | None = None


async def run_write_phase(instance: Any, scenario: Scenario, *, client: Any, settings: Any, epoch: int,
                          into: WritePhaseResult | None = None, sampling: RunSampling | None = None) -> WritePhaseResult:
    """Write memory after each earlier session through ``instance.begin_write``; stops at the first failure.

    ``into`` receives each session's log as it is done (a system failure then leaves the sessions before it there);
    ``sampling`` is told which session's write is running (its served calls belong to that session's log).
    """
    result = into if into is not None else WritePhaseResult()
    for session in [*write_order(scenario), None]:
        if sampling is not None and session is not None:
            sampling.phase = session.id
        if not await _idle_window(instance, result, "probe" if session is None else session.id,
                                  client=client, settings=settings, epoch=epoch) or session is None:
            break
        tools = instance.begin_write(session)
        if isinstance(tools, ModelWrite):
            log, error = await run_model_write(tools, session, client=client, settings=settings, epoch=epoch)
            result.log.sessions.append(log)
            if error is not None:
                result.error = error.model_copy(update={"message": f"write phase, session {session.id}: {error.message}"})
                break
            continue
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


async def _idle_window(instance: Any, result: WritePhaseResult, before: str, *, client: Any, settings: Any,
                       epoch: int) -> bool:
    """Run the system's consolidation of the idle window before ``before`` (``begin_idle``: Dream Mode), if any,
    logged as a write session ``dream@<before>``; False when its model failed (the phase ends there)."""
    begin = getattr(instance, "begin_idle", None)
    step = begin(before) if callable(begin) else None
    if not isinstance(step, ModelWrite):
        return True
    window = SimpleNamespace(id=f"{IDLE_LOG_PREFIX}{before}", workspace=None)
    log, error = await run_model_write(step, window, client=client, settings=settings, epoch=epoch)
    result.log.sessions.append(log)
    if error is not None:
        result.error = error.model_copy(update={"message": f"write phase, {window.id}: {error.message}"})
        return False
    return True


_WRITE_THREADS: list[concurrent.futures.ThreadPoolExecutor] = []
# A process forked after a run (mutmut forks one per mutant from the process that ran the tests) has none of the
# pool's threads: work handed to the inherited pool would wait forever. The child starts its own.
os.register_at_fork(after_in_child=_WRITE_THREADS.clear)


def _write_threads() -> concurrent.futures.ThreadPoolExecutor:
    """The threads systems' own writes (:class:`ModelWrite`) run in, apart from the loop's default executor."""
    if not _WRITE_THREADS:
        _WRITE_THREADS.append(concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="recall-eval-write"))
    return _WRITE_THREADS[0]


async def run_model_write(
    write: ModelWrite, session: Any, *, client: Any, settings: Any, epoch: int
) -> tuple[WriteSessionLog, SampleError | None]:
    """Run a system's own write of ``session`` in a worker thread, its model calls through ``client`` (counted).

    Returns the session's log and, when a model call failed (after retries), that failure; a failure of the
    system's own code propagates (an error sample, like a tool raising).
    """
    loop = asyncio.get_running_loop()
    calls: list[ModelCallLog] = []
    failures: list[BaseException] = []

    class _RunModel:
        def complete(self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None) -> str:
            used = settings if response_format is None else dataclasses.replace(
                settings, extra={**settings.extra, "response_format": response_format})
            future = asyncio.run_coroutine_threadsafe(client.complete(messages, [], used, epoch=epoch), loop)
            try:
                completion = future.result()
            except BaseException as exc:
                failures.append(exc)
                raise
            calls.append(model_call_log(completion, len(calls), settings.model, messages))
            content = completion.message.get("content")
            return content if isinstance(content, str) else ""

    error: SampleError | None = None
    executions: list[Any] = []
    try:
        # Its own threads, never the loop's default executor: a call this write makes may need that executor
        # (litellm runs a synchronous provider there), and writes filling it would wait for themselves.
        executions = list(await loop.run_in_executor(_write_threads(), write.run, _RunModel()))
    except Exception:
        if not failures:
            raise
        failed = failures[0]
        if isinstance(failed, RetryExhaustedError):
            error = SampleError(type=type(failed.error).__name__, message=str(failed.error)[:2000], attempts=failed.attempts)
        else:
            error = SampleError(type=type(failed).__name__, message=str(failed)[:2000])
    tool_calls = [
        ToolCallLog(
            round=index, call_id=f"write_{index}", name=e.name, arguments=e.arguments, status=str(e.status),
            result_text=e.result_text, result_chars=len(e.result_text),
            result_tokens=count_tokens(settings.model, text=e.result_text),
            disclosed_item_ids=list(e.disclosed_item_ids), storage_read=bool(e.storage_read), elapsed_s=float(e.elapsed_s),
            forget=getattr(e, "forget", None),
        )
        for index, e in enumerate(executions)
    ]
    log = WriteSessionLog(session_id=session.id, workspace=session.workspace, stop_reason="error" if error else "final_answer",
                          model_calls=calls, tool_calls=tool_calls)
    return log, error
