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
import datetime as _dt
import hashlib
import logging
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.agent import AgentOutcome, ModelClient, ModelSettings, run_agent
from harness.arms import UnknownArmError, get_arm
from harness.cache import DEFAULT_CACHE_DIR, ResponseCache
from harness.progress import RunProgress
from harness.results import (
    RESULTS_FILE,
    RunManifest,
    SampleError,
    SampleRecord,
    append_record,
    iter_records,
    read_manifest,
    sample_id,
    write_manifest,
)
from harness.retry import RetryPolicy, is_provider_error
from harness.scenarios.models import Scenario

_log = logging.getLogger(__name__)

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


def suite_hash(hashes: dict[str, str]) -> str:
    """SHA-256 over the sorted ``id:scenario_hash`` lines of a suite."""
    text = "\n".join(f"{sid}:{hashes[sid]}" for sid in sorted(hashes))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


DEFAULTS: dict[str, Any] = {
    "epochs": 1,
    "seed": 0,
    "max_tool_rounds": 4,
    "temperature": 0.0,
    "timeout_s": 120.0,
    "retries": 4,
    "max_concurrency": 8,
}
# Parameters that define the samples: a resumed run must keep them.
_FIXED = ("models", "arms", "scenario_paths", "filters", "epochs", "seed", "max_tool_rounds", "temperature")
_FLAG = {"models": "--model", "arms": "--arms", "scenario_paths": "--scenarios", "filters": "--filter", "timeout_s": "--timeout"}


class RunOptionsError(Exception):
    """Run flags that cannot be used; the message names the flag or file and the fix."""


@dataclass(frozen=True)
class RunOptions:
    """The resolved settings of one ``run`` invocation (fresh or resumed)."""

    run_dir: Path
    models: list[str]
    arms: list[str]
    scenario_paths: list[str]
    filters: list[str]
    epochs: int
    seed: int
    max_tool_rounds: int
    temperature: float
    timeout_s: float
    retries: int
    max_concurrency: int
    api_base: str | None = None
    use_cache: bool = True
    cache_dir: Path = Path(DEFAULT_CACHE_DIR)
    judge_model: str | None = None
    gate: bool = False
    progress: bool = True
    resume: bool = False

    def parameters(self) -> dict[str, Any]:
        """What the manifest records beside its own fields (never environment values)."""
        return {
            "filters": self.filters,
            "max_tool_rounds": self.max_tool_rounds,
            "temperature": self.temperature,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "max_concurrency": self.max_concurrency,
            "api_base": _without_userinfo(self.api_base),
            "cache": self.use_cache,
            "cache_dir": str(self.cache_dir),
            "judge_model": self.judge_model,
        }


def _without_userinfo(url: str | None) -> str | None:
    """``http://user:pass@host/v1`` -> ``http://host/v1``: credentials never reach the manifest."""
    if not url or "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))) if parts.hostname else url


def _given(args: Any) -> dict[str, Any]:
    """Flags the user actually passed (None: not given)."""
    return {
        "models": list(dict.fromkeys(args.models)) if args.models else None,
        "arms": list(dict.fromkeys(args.arms)) if args.arms else None,
        "scenario_paths": list(args.scenarios) if args.scenarios else None,
        "filters": list(args.filter) if args.filter else None,
        "epochs": args.epochs,
        "seed": args.seed,
        "max_tool_rounds": args.max_tool_rounds,
        "temperature": args.temperature,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "max_concurrency": args.max_concurrency,
    }


def _flag(name: str) -> str:
    return _FLAG.get(name, "--" + name.replace("_", "-"))


def _check_values(values: dict[str, Any]) -> None:
    for name, minimum in (("epochs", 1), ("max_concurrency", 1), ("max_tool_rounds", 0), ("retries", 0)):
        if values[name] < minimum:
            raise RunOptionsError(f"{_flag(name)} {values[name]}: must be at least {minimum}")
    if values["timeout_s"] <= 0:
        raise RunOptionsError(f"--timeout {values['timeout_s']}: must be positive")
    for arm in values["arms"]:
        try:
            get_arm(arm)
        except UnknownArmError as exc:
            raise RunOptionsError(f"--arms: {exc}") from None


def _load(values: dict[str, Any]) -> tuple[list[Scenario], dict[str, str]]:
    from harness.scenarios import load_scenarios, scenario_hash

    for path in values["scenario_paths"]:
        if not Path(path).exists():
            raise RunOptionsError(f"scenario path {path!r} does not exist (relative to {Path.cwd()}); pass --scenarios PATH")
    ids, categories, tags = [], [], []
    for expr in values["filters"]:
        kind, _, name = expr.partition(":")
        if kind == "category" and name:
            categories.append(name)
        elif kind == "tag" and name:
            tags.append(name)
        else:
            ids.append(expr)
    scenarios = load_scenarios([Path(p) for p in values["scenario_paths"]], ids=ids, categories=categories, tags=tags)
    if not scenarios:
        raise RunOptionsError(f"no scenario in {', '.join(values['scenario_paths'])} matches --filter {values['filters']}")
    return scenarios, {s.id: scenario_hash(s) for s in scenarios}


def resolve_options(args: Any) -> tuple[RunOptions, list[Scenario], dict[str, str], RunManifest]:
    """Turn parsed ``run`` flags (and, with ``--resume``, the stored manifest) into options.

    Raises:
        RunOptionsError: bad or conflicting flags, or scenarios changed since a resumed run began.
        harness.results.ResultsError: the run folder being resumed is unreadable.
        harness.scenarios.ScenarioError: the scenarios do not load.
    """
    from harness.cli import DEFAULT_ARMS, DEFAULT_MODEL, DEFAULT_SUITE

    given = _given(args)
    previous: RunManifest | None = None
    if args.resume:
        run_dir = Path(args.resume)
        previous = read_manifest(run_dir)
        if args.out and Path(args.out).resolve() != run_dir.resolve():
            raise RunOptionsError(f"--out {args.out} conflicts with --resume {args.resume}; drop --out")
        stored = {
            "models": previous.models,
            "arms": previous.arms,
            "scenario_paths": previous.scenario_paths,
            "filters": previous.parameters.get("filters", []),
            "epochs": previous.epochs,
            "seed": previous.seed,
            **{k: previous.parameters.get(k, DEFAULTS.get(k)) for k in ("max_tool_rounds", "temperature", "timeout_s", "retries", "max_concurrency")},
        }
        conflicts = [f"{_flag(k)} {given[k]} (the run has {stored[k]})" for k in _FIXED if given[k] is not None and given[k] != stored[k]]
        if conflicts:
            raise RunOptionsError(
                f"{run_dir / 'run.json'}: flags conflict with the run being resumed: {'; '.join(conflicts)}. "
                "Drop them to resume, or start a new run with --out."
            )
        values = {**stored, **{k: v for k, v in given.items() if v is not None}}
        api_base = args.api_base or previous.parameters.get("api_base")
    else:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        run_dir = Path(args.out) if args.out else Path("reports") / stamp
        if (run_dir / RESULTS_FILE).exists() or (run_dir / "run.json").exists():
            raise RunOptionsError(f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another --out")
        defaults = {"models": [DEFAULT_MODEL], "arms": list(DEFAULT_ARMS), "scenario_paths": [DEFAULT_SUITE], "filters": [], **DEFAULTS}
        values = {k: given[k] if given[k] is not None else defaults[k] for k in defaults}
        api_base = args.api_base
    _check_values(values)
    scenarios, hashes = _load(values)
    options = RunOptions(
        run_dir=run_dir,
        api_base=api_base,
        use_cache=not args.no_cache,
        cache_dir=Path(args.cache_dir or DEFAULT_CACHE_DIR),
        judge_model=args.judge_model or (previous.parameters.get("judge_model") if previous else None),
        gate=bool(args.gate),
        progress=not args.no_progress,
        resume=previous is not None,
        **values,
    )
    digest = suite_hash(hashes)
    total = len(scenarios) * len(options.arms) * len(options.models) * options.epochs
    if previous is not None:
        if digest != previous.suite_hash or sorted(hashes) != sorted(previous.scenario_ids):
            raise RunOptionsError(
                f"{run_dir / 'run.json'}: the scenarios changed since this run started (suite hash "
                f"{previous.suite_hash[:12]} then, {digest[:12]} now); resuming would mix versions. Start a new run."
            )
        manifest = previous.model_copy(update={"status": "running", "finished_at": None, "parameters": options.parameters()})
    else:
        run_dir.mkdir(parents=True, exist_ok=True)
        manifest = RunManifest(
            run_id=run_dir.name,
            harness_version=__version__,
            status="running",
            started_at=_now_iso(),
            models=options.models,
            arms=options.arms,
            epochs=options.epochs,
            seed=options.seed,
            scenario_paths=options.scenario_paths,
            scenario_ids=sorted(hashes),
            suite_hash=digest,
            parameters=options.parameters(),
            sample_count=total,
        )
    return options, scenarios, hashes, manifest


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
    from harness.scenarios import seed_store

    scenario = ctx.scenarios[spec.scenario_id]
    arm = get_arm(spec.arm)
    started_at, t0 = _now_iso(), time.perf_counter()
    tools: list[dict[str, Any]] = []
    store = None
    try:
        host_run = None
        if arm.uses_memory:
            from memory_tools.host import Host
            from memory_tools.policy import MemoryPolicy, RunContext
            from memory_tools.store import MemoryItemStore

            probe = scenario.probe
            store = MemoryItemStore(":memory:")
            seed_store(store, scenario)
            policy = MemoryPolicy(enabled=probe.policy.enabled, agent_read_enabled=probe.policy.agent_read_enabled)
            host_run = Host(store, policy).open_run(RunContext(workspace_key=probe.workspace, incognito=probe.incognito))
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
        category=str(scenario.category.value if hasattr(scenario.category, "value") else scenario.category),
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


async def execute(specs: list[SampleSpec], ctx: SampleContext, handle: Any, progress: RunProgress) -> tuple[str, dict[str, str]]:
    """Run ``specs`` with bounded concurrency, appending each record as it finishes.

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
        append_record(handle, record)
        progress.advance(record.status == "ok")
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
    try:
        from harness.report import build_report
    except ImportError as exc:
        print(f"report not built: {exc}. Build it later with: recall-eval report {options.run_dir}", file=sys.stderr)
        return 1 if options.gate else 0
    try:
        outcome = build_report(options.run_dir, judge_model=options.judge_model)
    except Exception as exc:  # noqa: BLE001 - the results are safe; the report can be rebuilt
        print(f"error: report not built ({type(exc).__name__}: {exc}). Retry with: recall-eval report {options.run_dir}", file=sys.stderr)
        return 2
    print(f"verdict: {outcome.verdict}")
    for reason in outcome.reasons:
        print(f"  - {reason}")
    for warning in getattr(outcome, "warnings", None) or []:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"report: {outcome.index_html}")
    return 1 if options.gate and outcome.verdict != "pass" else 0


def _register_offline() -> None:
    try:
        from harness.offline_model import register
    except ImportError as exc:  # pragma: no cover - the offline model ships with the harness
        _log.warning("offline model unavailable: %s", exc)
        return
    register()


def cli_run(args: Any) -> int:
    """Handler of ``recall-eval run``; returns the exit code."""
    from harness.results import ResultsError
    from harness.scenarios import ScenarioError

    try:
        options, scenarios, hashes, manifest = resolve_options(args)
        done = _previous_ok(options.run_dir / RESULTS_FILE) if options.resume else []
    except ScenarioError as exc:
        print("error: the scenarios do not load:", file=sys.stderr)
        for problem in getattr(exc, "problems", None) or [str(exc)]:
            print(f"  {problem}", file=sys.stderr)
        return 2
    except (RunOptionsError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _register_offline()
    # Cancelling in-flight litellm calls (Ctrl-C, a stopped model) leaves its inner coroutines unawaited; harmless.
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    done_ids = {r.sample_id for r in done}
    specs = [s for s in plan_samples(scenarios, options.arms, options.models, options.epochs, options.seed) if s.sample_id not in done_ids]
    retry = RetryPolicy(retries=options.retries)
    client = ModelClient(ResponseCache(options.cache_dir, enabled=options.use_cache), retry)
    ctx = SampleContext(options, {s.id: s for s in scenarios}, hashes, client)
    write_manifest(options.run_dir, manifest)
    resume_hint = f"recall-eval run --resume {options.run_dir}"
    print(f"run {options.run_dir}: {len(specs)} samples to run ({len(done_ids)} already done)", file=sys.stderr)
    progress = RunProgress(len(specs), live=options.progress)
    status, stopped = "interrupted", {}
    try:
        with (options.run_dir / RESULTS_FILE).open("a", encoding="utf-8") as handle:
            status, stopped = asyncio.run(execute(specs, ctx, handle, progress))
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        progress.close()
        write_manifest(options.run_dir, manifest.model_copy(update={"status": status, "finished_at": _now_iso()}))
    if stopped:
        for model, reason in stopped.items():
            print(f"error: stopped model {model}: its first samples all failed with {reason}", file=sys.stderr)
        print("Fix the model name, API key or --api-base (keys come from the environment, e.g. OPENAI_API_KEY), then: " + resume_hint, file=sys.stderr)
        return 2
    if status == "interrupted":
        print(f"interrupted: finished samples are saved. Continue with: {resume_hint}", file=sys.stderr)
        return 130
    return _build_report(options)
