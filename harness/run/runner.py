"""``recall-eval run``: every scenario x arm x model x epoch, concurrently, resumable.

Each sample gets its own in-memory store (a copy of a template seeded once
per distinct store: a conversation's probes share one) and Host run (arms
with memory) and goes through :func:`harness.run.agent.run_agent`. Finished
samples stream to ``results.jsonl`` beside ``run.json``; ``--resume DIR``
re-runs only what is missing or failed, appending (nothing is deleted). API
keys come from the environment as litellm documents and are never written:
the manifest holds parameters, and error messages are scrubbed of
secret-looking environment values.

One process writes a run folder at a time (:mod:`harness.run.folder`). A
record that cannot be written (disk full) stops the run at once: no further
model call, ``run.json`` says ``failed``. SIGTERM stops it like Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.run.agent import ModelClient, ModelSettings
from harness.run.progress import RunProgress, record_flags
from harness.records import (
    RESULTS_FILE,
    ResultsError,
    ResultsWriteError,
    ResultsWriter,
    RunManifest,
    SampleError,
    SampleRecord,
    append_line,
    append_record,
    sample_id,
    write_manifest,
)
from harness.run.retry import is_config_error
from harness.run.folder import EarlierAttempt, RunFolderError, check_fresh, lock_folder, prepare_folder, read_earlier_attempt
from harness.run.options import RunOptions, RunOptionsError, now_iso, resolve_options
from harness.scenarios.models import Scenario

# A model whose first samples all fail with one configuration error is skipped.
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
    from harness.run.sample import error_outcome, run_memory_sample

    scenario = ctx.scenarios[spec.scenario_id]
    started_at, t0 = now_iso(), time.perf_counter()
    tools: list[dict[str, Any]] = []
    write_phase = None
    try:
        opts = ctx.options
        settings = ModelSettings(spec.model, opts.temperature, opts.timeout_s, spec.seed, opts.api_base, max_tokens=opts.max_tokens)
        # The arm's memory system: fresh storage, its write phase (if any), then the probe (harness.memory_systems).
        sample = await run_memory_sample(spec.arm, scenario, client=ctx.client, settings=settings, epoch=spec.epoch, max_tool_rounds=opts.max_tool_rounds)
        tools, outcome, write_phase = sample.tools, sample.outcome, sample.write_phase
    except Exception as exc:  # noqa: BLE001 - seeding or arm failure: an error sample, not a crash
        outcome = error_outcome(exc)
    error = outcome.error
    if error is not None:
        error = error.model_copy(update={"message": redact(error.message, ctx.secrets)})
    return SampleRecord(
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
        model_calls=outcome.model_calls,
        tool_calls=outcome.tool_calls,
        write_phase=write_phase,
        started_at=started_at,
        wall_time_s=time.perf_counter() - t0,
    )


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


async def execute(specs: list[SampleSpec], ctx: SampleContext, emit: Callable[[SampleRecord], None]) -> tuple[str, dict[str, str]]:
    """Run ``specs`` with bounded concurrency, handing each record to ``emit`` as it finishes.

    If ``emit`` raises (a record cannot be written), every other sample is
    cancelled at once, so no further model call starts, and the error is
    raised once they are gone.

    Returns:
        ``("complete" | "interrupted", {model: reason})`` where the dict names
        models stopped early for a configuration error.
    """
    semaphore = asyncio.Semaphore(ctx.options.max_concurrency)
    planned: dict[str, int] = {}
    for spec in specs:
        planned[spec.model] = planned.get(spec.model, 0) + 1
    watch = _ConfigWatch(planned)
    budget = getattr(ctx.client, "budget", None)  # --max-cost-usd: once exhausted, no sample starts
    tasks: dict[str, list[asyncio.Task[None]]] = {}
    everything: list[asyncio.Task[None]] = []
    failure: list[Exception] = []

    def cancel(group: list[asyncio.Task[None]]) -> None:
        for task in group:
            if task is not asyncio.current_task():
                task.cancel()

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
        if watch.observe(record):
            cancel(tasks[spec.model])

    for spec in specs:
        task = asyncio.create_task(one(spec))
        tasks.setdefault(spec.model, []).append(task)
        everything.append(task)
    status = "complete"
    try:
        await asyncio.gather(*everything, return_exceptions=True)
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM: finished lines stay, the rest is resumable
        cancel(everything)
        await asyncio.gather(*everything, return_exceptions=True)
        status = "interrupted"
    if failure:
        raise failure[0]
    stopped_early = watch.stopped or (budget is not None and budget.exhausted)
    return ("interrupted" if stopped_early else status), watch.stopped


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
    record, e.g. a :class:`harness.records.ResultsWriter`) and advances
    ``progress``. ``worker_setup`` runs first in every worker (a module-level
    function, e.g. one registering a custom provider).

    Returns:
        As :func:`execute`.

    Raises:
        harness.records.ResultsWriteError: a record could not be written; nothing was run after it.
    """

    def emit(record: SampleRecord) -> None:
        append_record(handle, record)
        progress.advance(*record_flags(record), error=f"{record.error.type}: {record.error.message}" if record.error else None)

    def emit_line(line: str, flags: tuple[bool, bool, bool]) -> None:  # a worker's record, already dumped as JSON
        append_line(handle, line)
        error = None if flags[0] else SampleRecord.model_validate_json(line).error  # errors are rare: parse only those
        progress.advance(*flags, error=f"{error.type}: {error.message}" if error else None)

    if options.workers > 1 and len(specs) > 1:
        from harness.run.workers import run_in_workers

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
    from harness.run.calls import model_client

    client, secrets = model_client(options)  # cache, retries; Router, rate limits and budget when asked for
    return SampleContext(options, {s.id: s for s in scenarios}, hashes, client, secrets=sorted({*_secret_values(), *secrets}, key=len, reverse=True))


def _build_report(options: RunOptions) -> int:
    """Build the run's report and print its verdict, leads first; the exit code of ``run``.

    Non-zero when the report cannot be built (2), and (1) when the run is
    incomplete, its error rate is above ``--max-error-rate``, or ``--gate``
    is given and the verdict is not pass.
    """
    from harness.report import build_report
    from harness.report.terminal import report_lines
    from harness.analysis.verdict import VerdictConfig, exit_code

    thresholds = VerdictConfig(max_error_rate=options.max_error_rate)
    try:
        outcome = build_report(options.run_dir, judge_model=options.judge_model, thresholds=thresholds,
                               judge_api_base=options.judge_api_base)
    except Exception as exc:  # noqa: BLE001 - the results are safe; the report can be rebuilt
        print(f"error: report not built ({type(exc).__name__}: {exc}). Retry with: recall-eval report {options.run_dir}", file=sys.stderr)
        return 2
    out, err = report_lines(outcome)  # the same words as `recall-eval report`
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
    from harness.scenarios import ScenarioError

    try:
        options, scenarios, hashes, manifest = resolve_options(args)
    except ScenarioError as exc:
        print("error: the scenarios do not load:", file=sys.stderr)
        for problem in exc.problems or [str(exc)]:
            print(f"  {problem}", file=sys.stderr)
        return 2
    except (RunOptionsError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from harness.run.plan import cli_plan, price_problem

    if options.plan_only:
        return cli_plan(options, scenarios)
    if (problem := price_problem(options)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        prepare_folder(options.run_dir)
        lock = lock_folder(options.run_dir, now_iso())
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with _sigterm_as_ctrl_c() as terminated:
            return _run_locked(options, scenarios, hashes, manifest, terminated)
    finally:
        lock.release()


def _run_locked(options: RunOptions, scenarios: list[Scenario], hashes: dict[str, str], manifest: RunManifest, terminated: threading.Event) -> int:
    """The run itself, with the run folder locked: check the folder, run what is missing, record the outcome, report."""
    from harness.run.workers import WorkerError

    run_dir = options.run_dir
    try:
        earlier = read_earlier_attempt(run_dir) if options.resume else EarlierAttempt()
        if not options.resume:
            check_fresh(run_dir)  # again under the lock: another run may have finished here meanwhile
        writer = ResultsWriter(run_dir / RESULTS_FILE)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write the run folder {run_dir}: {exc.strerror or exc} ({run_dir / RESULTS_FILE}); choose another --out", file=sys.stderr)
        return 2
    resume_hint = f"recall-eval run --resume {run_dir}"
    with writer:
        try:
            write_manifest(run_dir, manifest)
        except ResultsError as exc:
            print(f"error: {exc}; nothing was run. Free space or choose another --out", file=sys.stderr)
            return 2
        for warning in earlier.warnings():
            print(f"warning: {warning}", file=sys.stderr)
        if options.workers > 1:
            from harness.run.workers import start_server

            start_server()  # its litellm import overlaps ours (register_offline)
        register_offline()
        # Cancelling in-flight litellm calls (Ctrl-C, a stopped model) leaves its inner coroutines unawaited; harmless.
        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
        done_ids = {r.sample_id for r in earlier.done}
        specs = [s for s in plan_samples(scenarios, options.arms, options.models, options.epochs, options.seed) if s.sample_id not in done_ids]
        from harness.run.plan import start_line

        options, problem = start_line(options, scenarios, specs, earlier.done)  # the plan, first; the budget left
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        again = f", {earlier.failed} failed before and run again" if earlier.failed else ""
        print(f"run {run_dir}: {len(specs)} samples to run ({len(done_ids)} already done{again})", file=sys.stderr)
        progress = RunProgress(len(specs), live=options.progress)
        status, stopped, failure, crash = "interrupted", {}, None, None
        try:
            status, stopped = run_specs(specs, options, scenarios, hashes, writer, progress)
        except KeyboardInterrupt:
            status = "interrupted"
        except ResultsWriteError as exc:
            status, failure = "failed", exc
        except WorkerError as exc:
            crash = exc
        finally:
            progress.close()
            cached = sum(record_flags(r)[1] for r in earlier.done) + progress.cached
            final = manifest.model_copy(update={"status": status, "finished_at": now_iso(), "cached_samples": cached})
            try:
                write_manifest(run_dir, final)
                manifest_problem = None
            except ResultsError as exc:
                manifest_problem = exc
    if manifest_problem is not None:
        print(f"warning: {manifest_problem}; it may still say 'running' (the run is {status})", file=sys.stderr)
    if progress.cached:
        print(f"{_samples(progress.cached)} from the cache (no model call); --no-cache calls the model again", file=sys.stderr)
    if progress.cut_off:
        print(
            f"{_samples(progress.cut_off)} had a model call cut off at --max-tokens {options.max_tokens} (finish_reason length); "
            "the answers are scored as given",
            file=sys.stderr,
        )
    if crash is not None:
        print(f"error: {redact(str(crash), _secret_values())}", file=sys.stderr)
        return 2
    if failure is not None:
        print(
            f"error: {failure}. The run stopped there: no further model calls ({progress.done} samples written). "
            f"Free space or fix the folder, then: {resume_hint}",
            file=sys.stderr,
        )
        return 2
    if options.max_cost_usd is not None and status == "interrupted" and not terminated.is_set():
        from harness.run.budget import budget_stop

        message = budget_stop(run_dir, options.max_cost_usd)
        if message is not None:
            print(f"{message}. Continue with: {resume_hint} --max-cost-usd <a higher limit>", file=sys.stderr)
            return 3
    if stopped:
        for model, reason in stopped.items():
            print(f"error: stopped model {model}: its first samples all failed with {reason}", file=sys.stderr)
        print(f"Fix the model name, API key or --api-base (keys come from the environment, e.g. OPENAI_API_KEY), then: {resume_hint}", file=sys.stderr)
        return 2
    all_failed = status == "complete" and progress.done > 0 and progress.errors == progress.done
    if all_failed:
        print(
            f"error: every sample failed, the last with {progress.last_error} (all errors are in {run_dir / RESULTS_FILE}). "
            f"Fix the cause, then: {resume_hint}",
            file=sys.stderr,
        )
    if status == "interrupted":
        cause = "terminated (SIGTERM)" if terminated.is_set() else "interrupted"
        print(f"{cause}: finished samples are saved. Continue with: {resume_hint}", file=sys.stderr)
        return 143 if terminated.is_set() else 130
    code = _build_report(options)
    return 2 if all_failed else code


def _samples(count: int) -> str:
    return f"{count} sample" + ("" if count == 1 else "s")


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[threading.Event]:
    """Handle SIGTERM (what CI systems send on cancel and timeout) as Ctrl-C: the run stops, saved and resumable.

    While asyncio runs the samples its own Ctrl-C handler is called, which
    cancels the run so that it ends between records; elsewhere (a
    ``--workers`` parent, or SIGINT ignored in a background job)
    KeyboardInterrupt is raised, as Ctrl-C does. The event yielded is set
    once SIGTERM arrived. A SIGTERM ignored by the caller stays ignored.
    """
    terminated = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield terminated
        return

    def on_term(signum: int, frame: Any) -> None:
        terminated.set()
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not signal.default_int_handler:
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield terminated
    finally:
        signal.signal(signal.SIGTERM, previous)
