"""``recall-eval run``: every scenario x arm x model x epoch, concurrently, resumable.

Each sample gets its own freshly seeded in-memory store and Host run (arms
with memory) and goes through :func:`harness.agent.run_agent`. Finished
samples stream to ``results.jsonl`` beside ``run.json``; ``--resume DIR``
re-runs only what is missing or failed. API keys come from the environment as
litellm documents and are never written: the manifest holds parameters, and
error messages are scrubbed of secret-looking environment values.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agent import AgentOutcome, ModelClient, ModelSettings, run_agent
from harness.arms import get_arm
from harness.cache import ResponseCache
from harness.progress import RunProgress
from harness.results import (
    RESULTS_FILE,
    SampleError,
    SampleRecord,
    append_line,
    append_record,
    iter_records,
    sample_id,
    write_manifest,
)
from harness.retry import RetryPolicy, is_provider_error
from harness.run_options import RunOptions, RunOptionsError, now_iso, resolve_options
from harness.scenarios.models import Scenario

# A model whose first samples all fail with one provider error is skipped.
CONFIG_FAILURE_THRESHOLD = 3


@dataclass(frozen=True)
class SampleSpec:
    """One planned sample."""

    scenario_id: str
    arm: str
    model: str
    epoch: int
    seed: int

    @property
    def sample_id(self) -> str:
        return sample_id(self.scenario_id, self.arm, self.model, self.epoch)


def sample_seed(base_seed: int, scenario_id: str, epoch: int) -> int:
    """Deterministic per-sample seed, shared by every arm and model (paired comparisons)."""
    digest = hashlib.sha256(f"{base_seed}|{scenario_id}|{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def plan_samples(scenarios: list[Scenario], arms: list[str], models: list[str], epochs: int, seed: int) -> list[SampleSpec]:
    """Every scenario x arm x model x epoch, in a stable order."""
    return [
        SampleSpec(s.id, arm, model, epoch, sample_seed(seed, s.id, epoch))
        for epoch in range(epochs)
        for s in scenarios
        for model in models
        for arm in arms
    ]


def _secret_values() -> list[str]:
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
    scenarios: dict[str, Scenario]
    hashes: dict[str, str]
    client: ModelClient
    secrets: list[str] = field(default_factory=_secret_values)


async def run_sample(spec: SampleSpec, ctx: SampleContext) -> SampleRecord:
    """Run one sample from a fresh store to a record; never raises for model or provider failures."""
    from harness.scenarios import probe_policy, seed_store

    scenario = ctx.scenarios[spec.scenario_id]
    arm = get_arm(spec.arm)
    started_at, t0 = now_iso(), time.perf_counter()
    tools: list[dict[str, Any]] = []
    store = None
    try:
        host_run = None
        if arm.uses_memory:
            from memory_tools import Host, MemoryItemStore

            store = MemoryItemStore(":memory:")
            seed_store(store, scenario)
            policy, context = probe_policy(scenario)
            host_run = Host(store, policy).open_run(context)
        setup = arm.build(scenario, host_run)
        tools = setup.tools
        opts = ctx.options
        settings = ModelSettings(spec.model, opts.temperature, opts.timeout_s, spec.seed, opts.api_base)
        outcome = await run_agent(setup, host_run, client=ctx.client, settings=settings, epoch=spec.epoch, max_tool_rounds=opts.max_tool_rounds)
    except Exception as exc:  # noqa: BLE001 - seeding or arm failure: an error sample, not a crash
        outcome = AgentOutcome(None, "error", [], [], [], SampleError(type=type(exc).__name__, message=str(exc)))
    finally:
        if store is not None:
            store.close()
    error = outcome.error
    if error is not None:
        error = error.model_copy(update={"message": redact(error.message, ctx.secrets)})
    return SampleRecord(
        sample_id=spec.sample_id,
        scenario_id=spec.scenario_id,
        scenario_hash=ctx.hashes[spec.scenario_id],
        category=scenario.category.value,
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
        model_calls=outcome.model_calls,
        tool_calls=outcome.tool_calls,
        started_at=started_at,
        wall_time_s=time.perf_counter() - t0,
    )


@dataclass
class _ConfigWatch:
    """Spots a model whose first samples all failed with one provider error (after retries).

    Such a model is misconfigured (no key, wrong name, no server at --api-base)
    far more often than unlucky; its other samples are skipped and the run
    can be resumed once it is fixed.
    """

    planned: dict[str, int]
    ok: set[str] = field(default_factory=set)
    failures: dict[str, list[str]] = field(default_factory=dict)
    stopped: dict[str, str] = field(default_factory=dict)

    def observe(self, record: SampleRecord) -> bool:
        """Count ``record``; True when its model should be stopped now."""
        model = record.model
        if record.status == "ok" or record.error is None or not is_provider_error(record.error.type):
            self.ok.add(model)
            return False
        if model in self.ok or model in self.stopped:
            return False
        seen = self.failures.setdefault(model, [])
        seen.append(record.error.type)
        if len(seen) >= min(CONFIG_FAILURE_THRESHOLD, self.planned[model]) and len(set(seen)) == 1:
            self.stopped[model] = f"{record.error.type}: {record.error.message}"
            return True
        return False


async def execute(specs: list[SampleSpec], ctx: SampleContext, emit: Callable[[SampleRecord], None]) -> tuple[str, dict[str, str]]:
    """Run ``specs`` with bounded concurrency, handing each record to ``emit`` as it finishes.

    Returns:
        ``("complete" | "interrupted", {model: reason})`` where the dict names
        models stopped early for a configuration error.
    """
    semaphore = asyncio.Semaphore(ctx.options.max_concurrency)
    planned: dict[str, int] = {}
    for spec in specs:
        planned[spec.model] = planned.get(spec.model, 0) + 1
    watch = _ConfigWatch(planned)
    tasks: dict[str, list[asyncio.Task[None]]] = {}

    async def one(spec: SampleSpec) -> None:
        async with semaphore:
            if spec.model in watch.stopped:
                return
            record = await run_sample(spec, ctx)
        emit(record)
        if watch.observe(record):
            for task in tasks[spec.model]:
                if task is not asyncio.current_task():
                    task.cancel()

    for spec in specs:
        tasks.setdefault(spec.model, []).append(asyncio.create_task(one(spec)))
    everything = [task for group in tasks.values() for task in group]
    try:
        await asyncio.gather(*everything, return_exceptions=True)
    except asyncio.CancelledError:  # Ctrl-C: finished lines stay, the rest is resumable
        for task in everything:
            task.cancel()
        await asyncio.gather(*everything, return_exceptions=True)
        return "interrupted", watch.stopped
    return ("interrupted" if watch.stopped else "complete"), watch.stopped


def run_specs(
    specs: list[SampleSpec],
    options: RunOptions,
    scenarios: list[Scenario],
    hashes: dict[str, str],
    handle: Any,
    progress: RunProgress,
    *,
    worker_setup: Callable[[], None] | None = None,
) -> tuple[str, dict[str, str]]:
    """Run ``specs`` in this process (``options.workers == 1``) or in worker processes.

    Either way this process alone appends to ``handle`` (one flushed line per
    record) and advances ``progress``. ``worker_setup`` runs first in every
    worker (a module-level function, e.g. one registering a custom provider).

    Returns:
        As :func:`execute`.
    """

    def emit(record: SampleRecord) -> None:
        append_record(handle, record)
        progress.advance(record.status == "ok")

    def emit_line(line: str, ok: bool) -> None:  # a worker's record, already dumped as JSON
        append_line(handle, line)
        progress.advance(ok)

    if options.workers > 1 and len(specs) > 1:
        from harness.workers import run_in_workers

        return run_in_workers(specs, options, scenarios, hashes, emit_line, worker_setup=worker_setup)
    if worker_setup is not None:
        worker_setup()
    with frozen_heap():
        return asyncio.run(execute(specs, ctx_for(options, scenarios, hashes), emit))


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


def ctx_for(options: RunOptions, scenarios: list[Scenario], hashes: dict[str, str]) -> SampleContext:
    """A fresh :class:`SampleContext` (model client with the run's cache and retry policy)."""
    client = ModelClient(ResponseCache(options.cache_dir, enabled=options.use_cache), RetryPolicy(retries=options.retries, base_delay_s=options.retry_delay_s))
    return SampleContext(options, {s.id: s for s in scenarios}, hashes, client)


def _previous_ok(results: Path) -> list[SampleRecord]:
    """Ok records of an earlier attempt, one per sample id; rewrites the file to exactly those."""
    if not results.is_file():
        return []
    kept: dict[str, SampleRecord] = {}
    for record in iter_records(results):
        if record.status == "ok":
            kept[record.sample_id] = record
    tmp = results.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for record in kept.values():
            out.write(record.model_dump_json() + "\n")
    tmp.replace(results)
    return list(kept.values())


def _build_report(options: RunOptions) -> int:
    """Build the run's report and print its verdict, leads first; the exit code of ``run``.

    Non-zero when the report cannot be built (2), and (1) when the run is
    incomplete, its error rate is above ``--max-error-rate``, or ``--gate``
    is given and the verdict is not pass.
    """
    from harness.report import build_report
    from harness.verdict import VerdictConfig, exit_code, terminal_lines

    thresholds = VerdictConfig(max_error_rate=options.max_error_rate)
    try:
        outcome = build_report(options.run_dir, judge_model=options.judge_model, thresholds=thresholds)
    except Exception as exc:  # noqa: BLE001 - the results are safe; the report can be rebuilt
        print(f"error: report not built ({type(exc).__name__}: {exc}). Retry with: recall-eval report {options.run_dir}", file=sys.stderr)
        return 2
    out, err = terminal_lines(outcome, upper=False)
    for line in out:
        print(line)
    for line in err:
        print(line, file=sys.stderr)
    print(f"report: {outcome.index_html}")
    return exit_code(outcome, gate=options.gate, incomplete_fails=True)


def register_offline() -> None:
    """Make ``offline/*`` callable and priced at 0 in litellm (idempotent; also run in every worker)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # _provider imports litellm: no remote cost-map fetch
    from harness.offline_model import MODEL_NAMES, register
    from harness.offline_model._provider import register_prices

    register()
    register_prices(MODEL_NAMES)


def cli_run(args: Any) -> int:
    """Handler of ``recall-eval run``; returns the exit code."""
    from harness.results import ResultsError
    from harness.scenarios import ScenarioError
    from harness.workers import WorkerError

    try:
        options, scenarios, hashes, manifest = resolve_options(args)
        done = _previous_ok(options.run_dir / RESULTS_FILE) if options.resume else []
    except ScenarioError as exc:
        print("error: the scenarios do not load:", file=sys.stderr)
        for problem in exc.problems or [str(exc)]:
            print(f"  {problem}", file=sys.stderr)
        return 2
    except (RunOptionsError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if options.workers > 1:
        from harness.workers import start_server

        start_server()  # its litellm import overlaps ours (register_offline)
    register_offline()
    # Cancelling in-flight litellm calls (Ctrl-C, a stopped model) leaves its inner coroutines unawaited; harmless.
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    done_ids = {r.sample_id for r in done}
    specs = [s for s in plan_samples(scenarios, options.arms, options.models, options.epochs, options.seed) if s.sample_id not in done_ids]
    write_manifest(options.run_dir, manifest)
    resume_hint = f"recall-eval run --resume {options.run_dir}"
    print(f"run {options.run_dir}: {len(specs)} samples to run ({len(done_ids)} already done)", file=sys.stderr)
    progress = RunProgress(len(specs), live=options.progress)
    status, stopped = "interrupted", {}
    try:
        with (options.run_dir / RESULTS_FILE).open("a", encoding="utf-8") as handle:
            status, stopped = run_specs(specs, options, scenarios, hashes, handle, progress)
    except KeyboardInterrupt:
        status = "interrupted"
    except WorkerError as exc:
        print(f"error: {redact(str(exc), _secret_values())}", file=sys.stderr)
        return 2
    finally:
        progress.close()
        write_manifest(options.run_dir, manifest.model_copy(update={"status": status, "finished_at": now_iso()}))
    if stopped:
        for model, reason in stopped.items():
            print(f"error: stopped model {model}: its first samples all failed with {reason}", file=sys.stderr)
        slow = any("Timeout" in reason.partition(":")[0] for reason in stopped.values())
        print("Fix the model name, API key or --api-base (keys come from the environment, e.g. OPENAI_API_KEY)" + (", or raise --timeout for a slow server" if slow else "") + ", then: " + resume_hint, file=sys.stderr)
        return 2
    if status == "interrupted":
        print(f"interrupted: finished samples are saved. Continue with: {resume_hint}", file=sys.stderr)
        return 130
    return _build_report(options)
