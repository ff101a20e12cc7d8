"""Options of ``recall-eval run``: flags (and, on ``--resume``, the stored manifest) -> :class:`RunOptions`.

Everything here happens before the first model call: defaults, flag checks,
scenario loading, the conflict checks of a resumed run and the manifest that
will be written. :mod:`harness.run.runner` only executes what this resolves.

Scenario paths are stored absolute in ``run.json``, so ``--resume`` works from
any working directory; a relative path stored by an older run is looked up
from the working directory first, then from the run folder and its parents.
If the scenarios moved, ``--resume DIR --scenarios PATH`` names where they
are now; they are accepted when they hash the same as the run's.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.defaults import DEFAULT_ARMS, DEFAULT_MAX_ERROR_RATE, DEFAULT_MODEL, DEFAULT_SUITE, RUN_DEFAULTS
from harness.records import RunManifest, ShardInfo, is_redacted, redact_url
from harness.run.cache import DEFAULT_CACHE_DIR
from harness.run.contracts import instructions_value
from harness.run.errors import RunOptionsError
from harness.run.fingerprints import arm_fingerprints
from harness.run.given_flags import (
    absolute_path,
    check_values,
    given_values,
    plugin_systems,
    resumed_values,
    stored_path,
)
from harness.run.privacy import PrivacyOptionsError, privacy_options
from harness.run.selection import narrow_scenarios, sample_id_defaults, selected
from harness.run.settings import cache_dir_for, embedding_values, retrieval_budget, scale_values
from harness.run.shards import Shard, shard_ids
from harness.run.suite_loading import incomplete_suite_files, load_selected, selection
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget, Scenario, only, scenario_ids, shipped_path


@dataclass(frozen=True)
class RunOptions:
    """The resolved settings of one ``run`` invocation (fresh or resumed).

    Attributes:
        scenario_paths: Absolute paths of the scenario files or folders.
        max_concurrency: Samples in flight at once, over all workers.
        workers: Processes that run samples (1: everything in this process).
    """

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
    max_tokens: int = 2048
    retry_delay_s: float = 1.0
    workers: int = 1
    api_base: str | None = None
    use_cache: bool = True
    cache_dir: Path = Path(DEFAULT_CACHE_DIR)
    judge_model: str | None = None
    #: ``--judge-api-base``: the judges' OpenAI-compatible endpoint (None: litellm's default for the judge model).
    judge_api_base: str | None = None
    #: ``--judge-preset``: the benchmark protocol the rubric judge follows (None: the strict prompt).
    judge_preset: str | None = None
    #: ``--judge-prompt``: a prompt file the rubric judge uses verbatim (None: the preset or strict prompt).
    judge_prompt: Path | None = None
    #: ``--pairwise-judge``: the report also runs the pairwise judge with ``judge_model`` (:mod:`harness.report.pairwise`).
    pairwise_judge: bool = False
    gate: bool = False
    progress: bool = True
    resume: bool = False
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    #: ``--router-config``: absolute path of the litellm Router configuration (None: no Router).
    router_config: str | None = None
    router_config_hash: str | None = None
    #: ``--rpm`` / ``--tpm``: requests and tokens per minute per model, for this process.
    rpm: dict[str, float] = field(default_factory=dict)
    tpm: dict[str, float] = field(default_factory=dict)
    #: ``--shard I/N`` (None: the whole suite).
    shard: Shard | None = None
    #: ``--max-cost-usd``: the limit of the run's recorded cost of model calls (None: no limit).
    max_cost_usd: float | None = None
    #: What this process may still spend (set by the runner from ``max_cost_usd`` and what was recorded before).
    budget_usd: float | None = None
    #: ``--plan``: print the plan and stop before any model call.
    plan_only: bool = False
    #: ``--limit N``: only the first N scenarios the filters keep, in the suite's order (None: all of them).
    limit: int | None = None
    #: ``--sample-id`` (or ``--rerun-failing``): only these samples, ``scenario|arm|model|epoch`` (empty: all).
    sample_ids: list[str] = field(default_factory=list)
    #: Settings a project file or RECALL_EVAL_* variable gave (harness.cli.project_config); None: flags and defaults only.
    settings_from: dict[str, Any] | None = None
    #: ``--rerun-failing RUN``: the run re-run and what counted as wrong there (None: not a re-run).
    rerun_of: dict[str, Any] | None = None
    #: ``--store FILE``: what run.json records of the team's store seeding the recall arms (None: the scenarios' items).
    store: dict[str, Any] | None = None
    #: The run holds real user data (a sensitive suite, ``--store`` or ``--redact``): redacted, cache kept inside.
    sensitive: bool = False
    #: ``--redact`` patterns (a sensitive run also applies the secret patterns) and how many matches they replaced.
    redact: tuple[str, ...] = ()
    redacted: int = 0
    #: ``--embedding-model``: the vector arms' embedder (None: the lexical default; harness.run.embeddings).
    embedding_model: str | None = None
    #: ``--embedding-api-base``: the embedding model's OpenAI-compatible endpoint.
    embedding_api_base: str | None = None
    #: ``--embedding-prefix``: none, e5 or input_type (None: none).
    embedding_prefix: str | None = None
    #: ``--embedding-price``: USD per million input tokens of the embedding model (None: litellm's price map's).
    embedding_price: float | None = None
    #: ``--instructions``: the memory instruction block, shared or legacy (harness.memory_systems.instructions).
    instructions: str = "shared"
    #: The retrieval budget every arm gets (``--retrieval-budget``, else the suite's, else the default).
    retrieval_budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET
    #: Where it came from: ``--retrieval-budget``, ``suite`` or ``default`` (recorded, never compared).
    retrieval_budget_source: str = "default"

    def parameters(self) -> dict[str, Any]:
        """What the manifest records beside its own fields (never environment values)."""
        return {
            "filters": self.filters,
            "max_tool_rounds": self.max_tool_rounds,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "retry_delay_s": self.retry_delay_s,
            "max_concurrency": self.max_concurrency,
            "workers": self.workers,
            "api_base": redact_url(self.api_base),
            "cache": self.use_cache,
            "cache_dir": str(Path(self.cache_dir).absolute()),  # --resume may run from another directory
            "judge_model": self.judge_model,
            "retrieval_budget": self.retrieval_budget.record(),
            "retrieval_budget_source": self.retrieval_budget_source,
            "retrieval_budget_counts": "memory text",  # each item's text, not the JSON around it (memory_tools.disclosure)
            "instructions": self.instructions,
            **plugin_systems(self.arms),
            **self._scale_parameters(),
            **incomplete_suite_files(self.scenario_paths),
            **self._selection_parameters(),
            **self._privacy_parameters(),
            **self._embedding_parameters(),
            **({"settings_from": _redacted_settings(self.settings_from)} if self.settings_from else {}),
        }

    def _privacy_parameters(self) -> dict[str, Any]:
        """``sensitive``, ``redact`` and ``store``, recorded only when the run holds real user data."""
        from harness.redaction import pattern_digest

        if not self.sensitive:
            return {}
        out: dict[str, Any] = {"sensitive": True,
                               "redact": {"default_patterns": True, "patterns": [pattern_digest(p) for p in self.redact],
                                          "redacted": self.redacted}}
        if self.store is not None:
            out["store"] = dict(self.store)
        return out

    def _embedding_parameters(self) -> dict[str, Any]:
        """The vector arms' embedder, recorded when a vector arm runs or a flag names one (older runs compare unchanged)."""
        from harness.memory_systems import VECTOR_ARMS

        if not (set(self.arms) & set(VECTOR_ARMS) or self.embedding_model or self.embedding_api_base or self.embedding_prefix):
            return {}
        from memory_tools import LEXICAL_MODEL

        return {"embedding_model": self.embedding_model or LEXICAL_MODEL, "embedding_api_base": redact_url(self.embedding_api_base),
                "embedding_prefix": self.embedding_prefix or "none",
                **({"embedding_price": self.embedding_price} if self.embedding_price is not None else {})}

    def incomplete_suites(self) -> list[str]:
        """Problems of imported suites among the scenarios whose ``_suite.json`` says ``complete: false``."""
        from harness.scenarios import incomplete_suites

        return [str(p) for p in incomplete_suites(self.scenario_paths) if p.severity == "error"]

    def _selection_parameters(self) -> dict[str, Any]:
        """``--limit``, ``--sample-id`` and ``--rerun-failing``, recorded only when used (older runs compare unchanged)."""
        out: dict[str, Any] = {}
        if self.limit is not None:
            out["limit"] = self.limit
        if self.sample_ids:
            out["sample_ids"] = list(self.sample_ids)
        if self.rerun_of is not None:
            out["rerun_of"] = dict(self.rerun_of)
        return out

    def _scale_parameters(self) -> dict[str, Any]:
        """The judges' endpoint, Router and rate-limit settings, recorded only when used (older runs compare unchanged)."""
        out: dict[str, Any] = {}
        if self.judge_api_base:
            out["judge_api_base"] = redact_url(self.judge_api_base)
        if self.judge_preset:
            out["judge_preset"] = self.judge_preset
        if self.judge_prompt:
            out["judge_prompt"] = str(Path(self.judge_prompt).absolute())
        if self.pairwise_judge:
            out["pairwise_judge"] = True
        if self.router_config:
            out["router_config"] = self.router_config
            out["router_config_hash"] = self.router_config_hash
        if self.rpm:
            out["rpm"] = dict(self.rpm)
        if self.tpm:
            out["tpm"] = dict(self.tpm)
        return out


def now_iso() -> str:
    """UTC now as ``2026-01-31T12:00:00Z``."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def suite_hash(hashes: dict[str, str]) -> str:
    """SHA-256 over the sorted ``id:scenario_hash`` lines of a suite."""
    text = "\n".join(f"{sid}:{hashes[sid]}" for sid in sorted(hashes))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_options(args: Any) -> tuple[RunOptions, Sequence[Scenario], dict[str, str], RunManifest]:
    """Turn parsed ``run`` flags (and, with ``--resume``, the stored manifest) into options.

    Raises:
        RunOptionsError: bad or conflicting flags, or scenarios changed since a resumed run began.
        harness.records.ResultsError: the run folder being resumed is unreadable.
        harness.scenarios.ScenarioError: the scenarios do not load.
    """
    given = given_values(args)
    previous: RunManifest | None = None
    if args.resume:
        run_dir, previous, values = resumed_values(args, given)
        api_base = args.api_base or previous.parameters.get("api_base")
        if not args.api_base and is_redacted(api_base):
            raise RunOptionsError(f"{run_dir / 'run.json'}: the run's --api-base was recorded with its credentials redacted "
                                  f"({api_base}); give it again: --resume {run_dir} --api-base URL")
    else:
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        # (whether it already holds a run is checked once its lock is held: harness.run.folder.check_fresh)
        run_dir = Path(args.out) if args.out else Path(getattr(args, "reports_dir", None) or "reports") / stamp
        defaults = {
            "models": [DEFAULT_MODEL],
            "arms": list(DEFAULT_ARMS),
            "scenario_paths": [absolute_path(shipped_path(DEFAULT_SUITE))],
            "filters": [],
            "limit": None,
            "sample_ids": [],
            **RUN_DEFAULTS,
        }
        given = selection(sample_id_defaults, given)
        values = {k: given[k] if given[k] is not None else defaults[k] for k in defaults}
        api_base = args.api_base
    check_values(values)
    try:
        privacy = privacy_options(args, values, previous)
    except PrivacyOptionsError as exc:
        raise RunOptionsError(str(exc)) from None
    scenarios, hashes = load_selected(values, privacy)
    budget = retrieval_budget(args, scenarios, previous)
    scenarios, hashes = selection(narrow_scenarios, scenarios, hashes, values)
    values["sample_ids"] = selected(values["sample_ids"], set(hashes))
    scale = scale_values(args, values, previous, api_base)
    scenarios, hashes, shard_info = _select_shard(scenarios, hashes, scale.pop("shard_given"), previous,
                                                  len(values["arms"]) * len(values["models"]) * values["epochs"])
    options = RunOptions(
        run_dir=run_dir,
        api_base=api_base,
        # a resumed run keeps its cache choice unless the flags say otherwise
        use_cache=not args.no_cache and bool(previous.parameters.get("cache", True) if previous else True),
        cache_dir=cache_dir_for(args, previous, run_dir, privacy["sensitive"]),
        sensitive=privacy["sensitive"],
        store=privacy["store"].record() if privacy["store"] is not None else None,
        redact=privacy["redact"],
        redacted=int(privacy.get("redacted") or 0),
        judge_model=args.judge_model or (previous.parameters.get("judge_model") if previous else None),
        judge_api_base=getattr(args, "judge_api_base", None) or (previous.parameters.get("judge_api_base") if previous else None),
        judge_preset=getattr(args, "judge_preset", None) or (previous.parameters.get("judge_preset") if previous else None),
        judge_prompt=getattr(args, "judge_prompt", None) or (previous.parameters.get("judge_prompt") if previous else None),
        pairwise_judge=bool(getattr(args, "pairwise_judge", False)
                            or (previous.parameters.get("pairwise_judge") if previous else False)),
        gate=bool(args.gate),
        max_error_rate=getattr(args, "max_error_rate", RunOptions.max_error_rate),
        progress=not args.no_progress,
        resume=previous is not None,
        shard=Shard(shard_info.index, shard_info.count) if shard_info else None,
        rerun_of=getattr(args, "rerun_of", None) or (previous.parameters.get("rerun_of") if previous else None),
        settings_from=getattr(args, "project_settings", None) or (previous.parameters.get("settings_from") if previous else None),
        **embedding_values(args, previous),
        instructions=instructions_value(args, previous),
        retrieval_budget=budget[0],
        retrieval_budget_source=budget[1],
        **scale,
        **values,
    )
    if options.pairwise_judge and not options.judge_model:
        raise RunOptionsError("--pairwise-judge compares answers with --judge-model's model; also pass --judge-model M")
    manifest = _manifest(options, hashes, previous, total=len(scenarios) * len(options.arms) * len(options.models) * options.epochs)
    if shard_info is not None and previous is None:
        manifest = manifest.model_copy(update={"shard": shard_info})
    if options.sample_ids:
        manifest = manifest.model_copy(update={"sample_count": len(options.sample_ids)})
    return options, scenarios, hashes, manifest


def _redacted_settings(record: dict[str, Any]) -> dict[str, Any]:
    """Where the run's settings came from, as run.json records it: a file's api_base without its credentials."""
    values = dict(record.get("file_values") or {})
    if values.get("api_base"):
        values["api_base"] = redact_url(values["api_base"])
    return {**record, "file_values": values}


def _select_shard(scenarios: Sequence[Scenario], hashes: dict[str, str], given: Shard | None, previous: RunManifest | None,
                  per_scenario: int) -> tuple[Sequence[Scenario], dict[str, str], ShardInfo | None]:
    """The scenarios of the shard asked for (or of the resumed run's shard), with the whole suite's facts."""
    stored = previous.shard if previous is not None else None
    if stored is not None and given is not None and (given.index, given.count) != (stored.index, stored.count):
        raise RunOptionsError(f"--shard {given} conflicts with the run being resumed (shard {stored.index}/{stored.count}); drop --shard")
    if previous is not None and stored is None and given is not None:
        raise RunOptionsError(f"--shard {given}: the run being resumed is not a shard; drop --shard")
    shard = given or (Shard(stored.index, stored.count) if stored is not None else None)
    if shard is None:
        return scenarios, hashes, None
    keep = set(shard_ids({sid: per_scenario for sid in scenario_ids(scenarios)}, shard))
    info = ShardInfo(index=shard.index, count=shard.count, suite_hash=suite_hash(hashes), scenario_count=len(scenarios),
                     sample_count=len(scenarios) * per_scenario)
    if previous is not None and stored is not None and stored.suite_hash != info.suite_hash:
        raise RunOptionsError(f"{previous.run_id}: the whole suite changed since this shard started (suite hash "
                              f"{stored.suite_hash[:12]} then, {info.suite_hash[:12]} now); start a new run")
    if not keep:
        import sys

        print(f"note: shard {shard} holds no scenario (the suite has {len(scenarios)}, fewer than {shard.count} shards)", file=sys.stderr)
    return only(scenarios, keep), {sid: h for sid, h in hashes.items() if sid in keep}, info


def _manifest(options: RunOptions, hashes: dict[str, str], previous: RunManifest | None, *, total: int) -> RunManifest:
    digest = suite_hash(hashes)
    if previous is not None:
        if digest != previous.suite_hash or sorted(hashes) != sorted(previous.scenario_ids):
            if options.scenario_paths != [stored_path(p, options.run_dir) for p in previous.scenario_paths]:
                raise RunOptionsError(
                    f"--scenarios {' '.join(options.scenario_paths)}: these are not the scenarios of {options.run_dir} "
                    f"(suite hash {digest[:12]}, the run has {previous.suite_hash[:12]}); pass the folder that holds the run's "
                    f"scenarios unchanged ({', '.join(previous.scenario_paths)}), or start a new run."
                )
            raise RunOptionsError(
                f"{options.run_dir / 'run.json'}: the scenarios changed since this run started (suite hash "
                f"{previous.suite_hash[:12]} then, {digest[:12]} now); resuming would mix versions. Start a new run."
            )
        return previous.model_copy(
            update={"status": "running", "finished_at": None, "parameters": options.parameters(), "scenario_paths": options.scenario_paths,
                    "arm_fingerprints": previous.arm_fingerprints or arm_fingerprints(options)}
        )
    return RunManifest(
        run_id=options.run_dir.name,
        harness_version=__version__,
        status="running",
        started_at=now_iso(),
        models=options.models,
        arms=options.arms,
        epochs=options.epochs,
        seed=options.seed,
        scenario_paths=options.scenario_paths,
        scenario_ids=sorted(hashes),
        suite_hash=digest,
        parameters=options.parameters(),
        arm_fingerprints=arm_fingerprints(options),
        sample_count=total,
    )
