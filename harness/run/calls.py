"""How a run's model calls are made: one :class:`harness.run.model_client.ModelClient` per process, from the run's options.

The client always has the response cache and the retry policy; ``--router-config``
adds a ``litellm.Router``, ``--rpm``/``--tpm`` a :class:`harness.run.ratelimit.RateLimiter`
and ``--max-cost-usd`` a :class:`harness.run.budget.Budget`. Prices come from litellm's
price map (:func:`prices`), for a Router group the highest of its deployments'.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.records import url_secrets
from harness.run.agent import ModelClient
from harness.run.budget import Budget, Price
from harness.run.cache import ResponseCache
from harness.run.retry import RetryPolicy


class PriceError(ValueError):
    """litellm knows no price for a model, so its cost cannot be planned or bounded."""


def _price_of(litellm: Any, model: str) -> Price | None:
    """litellm's price per input and output token of ``model`` (None when its map has none)."""
    entry = litellm.model_cost.get(model)
    if entry is None and "/" in model:
        entry = litellm.model_cost.get(model.split("/", 1)[1])
    if entry is None:
        try:
            entry = litellm.get_model_info(model)
        except Exception:  # noqa: BLE001 - an unknown model has no price, which the caller reports
            return None
    inp, out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if inp is None and out is None:
        return None
    return Price(float(inp or 0.0), float(out or 0.0))


def prices(models: Iterable[str], router_config: Any = None) -> dict[str, Price | None]:
    """Price per run model; a Router group costs what its dearest deployment costs (None: unknown)."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from harness.offline_model import register_offline

    register_offline()  # offline/* priced at 0, as the plan prices them (a run's process may not have registered them)
    out: dict[str, Price | None] = {}
    for model in models:
        underlying = router_config.underlying_models(model) if router_config is not None else [model]
        found = [_price_of(litellm, m) for m in underlying]
        if any(p is None for p in found) or not found:
            out[model] = None
        else:
            out[model] = Price(max(p.input for p in found), max(p.output for p in found))  # type: ignore[union-attr]
    return out


def embedding_price(model: str, usd_per_million: float | None = None) -> Price | None:
    """The price per input token of an embedding model: ``--embedding-price`` (USD per million tokens) when given,
    else litellm's price map's; None when neither prices it (``--max-cost-usd`` refuses that, as for a chat model)."""
    if usd_per_million is not None:
        return Price(usd_per_million / 1e6, 0.0)
    return prices([model]).get(model)


def embedding_price_problem(options: Any) -> str | None:
    """Why ``--max-cost-usd`` cannot bound the run's embeddings (a litellm embedding model without a price), or None."""
    from harness.run.embeddings import litellm_embedding_model

    model = getattr(options, "embedding_model", None)
    if options.max_cost_usd is None or not litellm_embedding_model(model):
        return None
    if embedding_price(str(model), getattr(options, "embedding_price", None)) is not None:
        return None
    return (f"--max-cost-usd: litellm's price map has no price for {model} (--embedding-model), so what its embeddings "
            "cost cannot be bounded; give it with --embedding-price USD (per million input tokens; 0 for a local "
            "server), or drop --max-cost-usd")


def model_client(options: Any) -> tuple[ModelClient, list[str]]:
    """The client of one process, and the credential values its error messages must never show.

    Raises:
        PriceError: ``--max-cost-usd`` with a model whose price litellm does not know.
    """
    cache = ResponseCache(options.cache_dir, enabled=options.use_cache)
    retry = RetryPolicy(retries=options.retries, base_delay_s=options.retry_delay_s)
    router, routes, secrets, config = None, {}, [], None
    if getattr(options, "router_config", None):
        from harness.run.router import build_router, group_hash, load_router_config

        config = load_router_config(options.router_config)
        router, secrets = build_router(config), config.secrets()
        routes = {m: group_hash(config, m) for m in options.models}
    limiter = None
    if getattr(options, "rpm", None) or getattr(options, "tpm", None):
        from harness.run.ratelimit import RateLimiter

        limiter = RateLimiter(rpm=dict(options.rpm or {}), tpm=dict(options.tpm or {}))
    budget = None
    if getattr(options, "budget_usd", None) is not None:
        found = prices(options.models, config)
        unknown = [m for m, p in found.items() if p is None]
        if unknown:
            raise PriceError(f"--max-cost-usd: litellm's price map has no price for {', '.join(unknown)}, so the cost cannot be bounded; "
                             "drop --max-cost-usd for these models")
        budget = Budget(options.budget_usd, {m: p for m, p in found.items() if p is not None})
    secrets = [*secrets, *url_secrets(getattr(options, "api_base", None)), *url_secrets(getattr(options, "judge_api_base", None))]
    from harness.run.concurrency import AdaptiveLimit

    concurrency = AdaptiveLimit(max(1, int(getattr(options, "max_concurrency", 1) or 1)))
    return ModelClient(cache, retry, router=router, routes=routes, limiter=limiter, budget=budget, concurrency=concurrency), secrets


def judge_budget(run_dir: Path | None, limit_usd: float, judge_model: str) -> Budget:
    """The budget of a run's judge calls: ``--max-cost-usd`` minus what the run's own calls recorded in ``run_dir``
    (``run``), or all of it (``run_dir`` None: ``report --max-cost-usd`` caps the judge calls of that report).

    Raises:
        harness.run.calls.PriceError: litellm has no price for ``judge_model`` (``run`` refuses that before any call).
    """
    from harness.records import RESULTS_FILE, scan_results
    from harness.run.budget import recorded_cost

    price = prices([judge_model]).get(judge_model)
    if price is None:
        raise PriceError(f"--max-cost-usd: litellm's price map has no price for {judge_model} (--judge-model), so the "
                         "judge's cost cannot be bounded; drop --max-cost-usd or choose a priced judge")
    spent = 0.0 if run_dir is None else recorded_cost(scan_results(Path(run_dir) / RESULTS_FILE).records)
    return Budget(max(0.0, limit_usd - spent), {judge_model: price})
