"""The model client of a run: the rate limiter before every try, the budget per call, Router secrets redacted."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.run.budget import Budget, Price  # noqa: E402
from harness.run.options import RunOptions  # noqa: E402
from harness.run.ratelimit import RateLimiter  # noqa: E402
from harness.run.retry import RetryPolicy  # noqa: E402
from harness.run.runner import ctx_for  # noqa: E402
from tests.run.scripted_model import _run, install_scripted  # noqa: E402


async def _no_sleep(seconds: float) -> None:
    return None


class SpyLimiter(RateLimiter):
    def __init__(self) -> None:
        super().__init__(rpm={"scripted/x": 1e9})
        self.acquired: list[tuple[str, int]] = []

    async def acquire(self, model: str, tokens: int = 0) -> None:
        self.acquired.append((model, tokens))


def test_every_try_waits_for_the_rate_limiter_retries_included() -> None:
    failures = iter([litellm.RateLimitError("slow down", "scripted", "x")])
    install_scripted(lambda m, t: next(failures, {"content": "answer"}))
    limiter = SpyLimiter()
    client = ModelClient(retry=RetryPolicy(retries=2, sleep=_no_sleep), limiter=limiter)
    outcome = _run("history_only", client=client)
    assert outcome.final_answer == "answer" and outcome.model_calls[0].attempts == 2
    assert limiter.acquired == [("scripted/x", 0), ("scripted/x", 0)]  # one per try: a provider counts retries too


def test_a_cached_answer_neither_waits_nor_spends(tmp_path: Path) -> None:
    from harness.run.cache import ResponseCache

    install_scripted(lambda m, t: {"content": "answer"})
    cache = ResponseCache(tmp_path)
    _run("history_only", client=ModelClient(cache, RetryPolicy(retries=0)))
    limiter, budget = SpyLimiter(), Budget(0.0, {"scripted/x": Price(1.0, 1.0)})
    outcome = _run("history_only", client=ModelClient(cache, RetryPolicy(retries=0), limiter=limiter, budget=budget))
    assert outcome.final_answer == "answer" and outcome.model_calls[0].cached
    assert limiter.acquired == [] and not budget.exhausted


def test_a_call_past_the_budget_is_not_made_and_the_sample_is_a_budget_error() -> None:
    scripted = install_scripted(lambda m, t: {"content": "answer"})
    budget = Budget(0.001, {"scripted/x": Price(input=0.0, output=0.001)})  # --max-tokens 2048 of output: $2 worst case
    outcome = _run("history_only", client=ModelClient(retry=RetryPolicy(retries=0), budget=budget),
                   settings=ModelSettings("scripted/x", max_tokens=2048))
    assert scripted.calls == 0 and outcome.error is not None and outcome.error.type == "BudgetExceeded"
    assert budget.exhausted


def test_literal_keys_of_a_router_config_are_redacted_like_environment_keys(tmp_path: Path) -> None:
    config = tmp_path / "router.json"
    key = "sk-literal-in-the-config-0123456789"
    config.write_text(json.dumps({"model_list": [
        {"model_name": "agent", "litellm_params": {"model": "openai/fake", "api_base": "http://127.0.0.1:9/v1", "api_key": key}}]}))
    options = RunOptions(run_dir=tmp_path / "r", models=["agent"], arms=["history_only"], scenario_paths=[], filters=[], epochs=1,
                         seed=0, max_tool_rounds=4, temperature=0.0, timeout_s=1.0, retries=0, max_concurrency=1,
                         router_config=str(config), cache_dir=tmp_path / "cache")
    ctx = ctx_for(options, [], {})
    assert key in ctx.secrets and ctx.client.router is not None and ctx.client.routes["agent"]
