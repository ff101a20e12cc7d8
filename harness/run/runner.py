"""The sample loop: every planned sample, concurrently, each from fresh storage, streamed to ``results.jsonl``.

Each sample gets its own in-memory store (a copy of a template seeded once
per distinct store: a conversation's probes share one) and Host run (arms
with memory) and goes through :func:`harness.run.agent.run_agent`. Finished
samples stream to the caller's ``emit`` as records. API keys come from the
environment as litellm documents and are never written: error messages are
scrubbed of secret-looking environment values. A model whose first samples
all fail with one configuration error is skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.records import (
    SHADOW_SCHEMA_VERSION,
    EmbeddingUsageLog,
    SampleRecord,
    ShadowSearchLog,
    pasted_span,
    url_secrets,
)
from harness.run.agent import ModelClient, ModelSettings, count_tokens
from harness.run.options import RunOptions, now_iso
from harness.run.retry import is_config_error
from harness.run.samples import SampleSpec
from harness.scenarios import Scenario, scenarios_by_id, work_order

# A model whose first samples all fail with one configuration error is skipped.
CONFIG_FAILURE_THRESHOLD = 3


def secret_values() -> list[str]:
    pattern = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
    return sorted({v for k, v in os.environ.items() if pattern.search(k) and len(v) >= 8}, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    """Replace every secret value in ``text`` with ``[REDACTED]``."""
    for secret in secrets:
        text = text.replace(secret, "[REDACTED]")
    return text


@dataclass
class SampleContext:
    """What every sample of a run shares."""

    options: RunOptions
    scenarios: Mapping[str, Scenario]  # a shelf's view: a scenario unpacked while its samples run (harness.scenarios.shelf)
    hashes: dict[str, str]
    client: ModelClient
    secrets: list[str] = field(default_factory=secret_values)
    suite: Sequence[Scenario] = ()
    """The run's scenarios in order (a shelf: sizing the store templates unpacks none)."""


async def run_sample(spec: SampleSpec, ctx: SampleContext) -> SampleRecord:
    """Run one sample from a fresh store to a record; never raises for model or provider failures."""
    from harness.run.sample import MemorySampleResult, error_outcome, run_memory_sample

    scenario = ctx.scenarios[spec.scenario_id]
    started_at, t0 = now_iso(), time.perf_counter()
    tools: list[dict[str, Any]] = []
    write_phase, pasted, shadow, embedding, ingest, sampling_refused = None, 0, None, None, None, None
    partial = MemorySampleResult()  # what a sample whose system failed had done and spent by then
    try:
        opts = ctx.options
        settings = ModelSettings(spec.model, opts.temperature, opts.timeout_s, spec.seed, opts.api_base, max_tokens=opts.max_tokens)
        # The arm's memory system: fresh storage, its write phase (if any), then the probe (harness.memory_systems).
        sample = await run_memory_sample(
            spec.arm,
            scenario,
            client=ctx.client,
            settings=settings,
            epoch=spec.epoch,
            max_tool_rounds=opts.max_tool_rounds,
            budget=opts.retrieval_budget,
            into=partial,
        )
        tools, outcome, write_phase, pasted = sample.tools, sample.outcome, sample.write_phase, sample.pasted
        outcome.model_calls.extend(sample.stray_calls)
        shadow = None if sample.shadow is None else shadow_log(sample.shadow, spec.model)
        embedding, ingest, sampling_refused = embedding_log(sample.embedding), sample.ingest, sample.sampling_refused
    except Exception as exc:  # noqa: BLE001 - seeding or arm failure: an error sample, not a crash
        outcome = error_outcome(exc)
        # the write sessions done and the model calls a server had served: recorded, and counted by --resume's cap
        outcome.model_calls.extend(partial.stray_calls)
        write_phase, sampling_refused = partial.write_phase, partial.sampling_refused
    error = outcome.error
    if error is not None:
        error = error.model_copy(update={"message": redact(error.message, ctx.secrets)})
    extra: dict[str, Any] = {} if shadow is None else {"schema_version": SHADOW_SCHEMA_VERSION, "shadow": shadow}
    return SampleRecord(
        **extra,
        sample_id=spec.sample_id,
        scenario_id=spec.scenario_id,
        scenario_hash=ctx.hashes[spec.scenario_id],
        category=scenario.category,
        arm=spec.arm,
        model=spec.model,
        epoch=spec.epoch,
        seed=spec.seed,
        status="error" if error else "ok",
        error=error,
        final_answer=outcome.final_answer,
        stop_reason=outcome.stop_reason,
        tools_offered=[t.get("function", {}).get("name", "") for t in tools],
        messages=outcome.messages,
        pasted=pasted_span(outcome.messages, 1, pasted) if pasted else None,  # after the system prompt
        model_calls=outcome.model_calls,
        tool_calls=outcome.tool_calls,
        write_phase=write_phase,
        embedding=embedding,
        ingest=ingest,
        sampling_refused=sampling_refused,
        retrieval_budget=ctx.options.retrieval_budget.record() if tools else None,  # what scoring credits at most per call
        started_at=started_at,
        wall_time_s=time.perf_counter() - t0,
    )


def shadow_log(observed: Any, model: str) -> ShadowSearchLog:
    """The record of a shadow search (:class:`harness.memory_systems.shadow.ShadowObservation`), its text in ``model``'s tokens."""
    return ShadowSearchLog(
        terms=list(observed.terms), terms_dropped=observed.terms_dropped, arguments=observed.arguments,
        admitted=observed.admitted, denial=observed.denial, status=observed.status, result_text=observed.result_text,
        result_chars=len(observed.result_text),
        result_tokens=count_tokens(model, text=observed.result_text) if observed.result_text else 0,
        disclosed_item_ids=list(observed.disclosed_item_ids), truncated=observed.truncated,
        omitted_count=observed.omitted_count, storage_read=observed.storage_read, elapsed_s=observed.elapsed_s,
        scope_violations=list(observed.scope_violations),
    )
def embedding_log(usage: Any) -> EmbeddingUsageLog | None:
    """A sample's embedding usage (``memory_tools.EmbeddingUsage``) as its record holds it; None: nothing embedded."""
    if usage is None:
        return None
    return EmbeddingUsageLog(model=usage.model, texts=usage.texts, cached=usage.cached, provider_calls=usage.provider_calls,
                             tokens=usage.tokens, cost_usd=usage.cost_usd, latency_s=usage.latency_s,
                             calls=getattr(usage, "calls", 0), cached_latency_s=getattr(usage, "cached_latency_s", 0.0),
                             cached_tokens=getattr(usage, "cached_tokens", 0), cached_cost_usd=getattr(usage, "cached_cost_usd", 0.0))


@dataclass
class _ConfigWatch:
    """Spots a model whose first samples all failed with one configuration error.

    Configuration errors (:func:`harness.run.retry.is_config_error`: no or a bad
    key, an unknown model, a bad request) come back the same for every
    sample; the model's other samples are skipped and the run can be resumed
    once it is fixed. Rate limits, 5xx, timeouts and connection errors never
    stop a model: they were retried with backoff, and a sample that still
    failed is an error record that ``--resume`` runs again.
    """

    planned: dict[str, int]
    ok: set[str] = field(default_factory=set)
    failures: dict[str, list[str]] = field(default_factory=dict)
    stopped: dict[str, str] = field(default_factory=dict)

    def observe(self, record: SampleRecord) -> bool:
        """Count ``record``; True when its model should be stopped now."""
        model = record.model
        if record.status == "ok" or record.error is None:
            self.ok.add(model)
            return False
        if not is_config_error(record.error.type, record.error.message):
            return False  # a transient failure says nothing about the configuration
        if model in self.ok or model in self.stopped:
            return False
        seen = self.failures.setdefault(model, [])
        seen.append(record.error.type)
        if len(seen) >= min(CONFIG_FAILURE_THRESHOLD, self.planned[model]) and len(set(seen)) == 1:
            self.stopped[model] = f"{record.error.type}: {record.error.message}"
            return True
        return False


async def execute(specs: list[SampleSpec], ctx: SampleContext, emit: Callable[[SampleRecord], None], *,
                  announce: Callable[[Any], None] | None = None) -> tuple[str, dict[str, str]]:
    """Run ``specs`` with bounded concurrency, handing each record to ``emit`` as it finishes.

    ``announce`` (a worker's): the heartbeat's state goes there instead of to standard error.

    If ``emit`` raises (a record cannot be written), every other sample is
    cancelled at once, so no further model call starts, and the error is
    raised once they are gone.

    Returns:
        ``("complete" | "interrupted" | "stalled", {model: reason})`` where the dict names
        models stopped early for a configuration error; ``stalled``: calls kept timing out at
        one in flight and every sample was stopped (:mod:`harness.run.watchdog`).
    """
    from harness.scenarios import reserve_store_templates

    # Samples run epoch by epoch: keep every store this process will open again (p26store).
    reserve_store_templates(work_order(ctx.suite or list(ctx.scenarios.values()), [s.scenario_id for s in specs]),
                            ctx.options.max_concurrency, grow_only=True)
    semaphore = asyncio.Semaphore(ctx.options.max_concurrency)
    planned: dict[str, int] = {}
    for spec in specs:
        planned[spec.model] = planned.get(spec.model, 0) + 1
    watch = _ConfigWatch(planned)
    budget = getattr(ctx.client, "budget", None)  # --max-cost-usd: once exhausted, no sample starts
    if budget is not None:  # a write phase's embeddings reserve from their own threads through this loop
        budget.bind(asyncio.get_running_loop())
    tasks: dict[str, list[asyncio.Task[None]]] = {}
    everything: list[asyncio.Task[None]] = []
    failure: list[Exception] = []

    def cancel(group: list[asyncio.Task[None]]) -> None:
        for task in group:
            if task is not asyncio.current_task():
                task.cancel()

    from harness.run.watchdog import STALLED, Watchdog

    watchdog = Watchdog(ctx.client, len(specs), announce=announce)  # a heartbeat in every mode; stops a stalled run

    async def one(spec: SampleSpec) -> None:
        async with semaphore:
            if spec.model in watch.stopped or failure or (budget is not None and budget.exhausted):
                return
            record = await run_sample(spec, ctx)
        try:
            emit(record)
        except Exception as exc:  # noqa: BLE001 - re-raised below, once nothing runs any more
            if not failure:
                failure.append(exc)
                cancel(everything)
            return
        watchdog.done += 1
        if watch.observe(record):
            cancel(tasks[spec.model])

    for spec in specs:
        task = asyncio.create_task(one(spec))
        tasks.setdefault(spec.model, []).append(task)
        everything.append(task)
    status = "complete"
    watchdog.start(lambda: cancel(everything))
    try:
        await asyncio.gather(*everything, return_exceptions=True)
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM: finished lines stay, the rest is resumable
        cancel(everything)
        await asyncio.gather(*everything, return_exceptions=True)
        status = "interrupted"
    finally:
        watchdog.stop()
    if failure:
        raise failure[0]
    if watchdog.stalled:
        return STALLED, watch.stopped
    stopped_early = watch.stopped or (budget is not None and budget.exhausted)
    return ("interrupted" if stopped_early else status), watch.stopped


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects alive now (litellm's ~380k module objects) out of the garbage collector's scans during a run.

    litellm allocates enough per call to trigger frequent collections, and
    each full one walked all of litellm's module state: 0.39 s of collections
    in 2,000 calls, 0.12 s when frozen (CPU 2.3 -> 2.2 ms per call). Nothing
    is collected first (that would cost 0.17 s); the objects are unfrozen
    afterwards, so a long-lived caller leaks nothing.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def ctx_for(options: RunOptions, scenarios: Sequence[Scenario], hashes: dict[str, str]) -> SampleContext:
    """A fresh :class:`SampleContext` (model client with the run's cache and retry policy)."""
    from harness.memory_systems import configure_embedder, configure_instructions
    from harness.run.calls import model_client
    from harness.run.embeddings import run_embedder

    client, secrets = model_client(options)  # cache, retries; Router, rate limits and budget when asked for
    embedder = run_embedder(options)  # the vector arms' embedder (lexical unless --embedding-model)
    if hasattr(embedder, "budget") and client.budget is not None:  # its requests are reserved against --max-cost-usd too
        from harness.run.calls import PriceError, embedding_price, embedding_price_problem

        price = embedding_price(embedder.name, getattr(options, "embedding_price", None))
        if price is None:
            raise PriceError(embedding_price_problem(options) or f"no price for {embedder.name}")
        client.budget.price(embedder.name, price)
        embedder.budget = client.budget
    configure_embedder(embedder)
    configure_instructions(getattr(options, "instructions", None))  # every memory arm's instruction block (--instructions)
    secrets = [*secrets, *url_secrets(getattr(options, "embedding_api_base", None))]
    return SampleContext(options, scenarios_by_id(scenarios), hashes, client, suite=scenarios,
                         secrets=sorted({*secret_values(), *secrets}, key=len, reverse=True))
