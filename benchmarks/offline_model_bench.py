"""Benchmark of the offline reference model: per-call cost of the policy and of litellm around it.

The runner benchmark measures per-sample overhead, so the offline model must
be cheap. This times, on synthetic but realistic requests (a system prompt,
the two memory tool specs, a question mixing English, an identifier and CJK):

- ``respond`` alone: the first call (term extraction and a search call), the
  call after a 10-item search result (scoring and a get call), the final
  answer after the get, and a no-tools answer over a 40-message history;
- ``litellm.acompletion(model="offline/reference")`` for the same first call,
  i.e. the provider plus litellm's own request/response handling, and again
  with litellm's zero-cost diagnostic switched off (the price lookup it runs
  on every call that states a cost of 0: its share of the call);
- ``harness.run.direct.direct_completion`` for the same call: how a run calls
  the offline model, in-process, without litellm.

``respond`` memoizes its question analysis; each timed call clears it, so the
figures are those of a question seen for the first time.

Usage::

    python benchmarks/offline_model_bench.py              # 2,000 calls per case
    python benchmarks/offline_model_bench.py --calls 500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness.offline_model import register, respond
from harness.offline_model._terms import analyze_question
from harness.run.direct import direct_completion
from memory_tools.tool_specs import TOOL_SPECS_JSON

# The specs a real Host run hands out, so the benchmark measures what the harness sends.
_SPECS = json.loads(TOOL_SPECS_JSON)
_QUESTION = "Remind me: which deploy command and 部署偏好 did we settle on for MemoryItemStore.searchByKeys changes?"


def _item(i: int) -> dict[str, Any]:
    return {
        "itemId": f"item-{i}",
        "version": 1,
        "content": f"Decision {i}: deploys of the store use `make deploy-prod` after review; 部署偏好 蓝绿部署 {i}.",
        "kind": "knowledge",
        "statementType": "fact",
        "temporalType": "undated",
        "eventStartedAt": None,
        "eventEndedAt": None,
        "observedAt": 1_000 + i,
        "matchedKeys": ["deploy", "部署"],
        "sourceCount": 1,
    }


def _requests() -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None]]:
    first = [{"role": "system", "content": "You are a careful assistant. " * 30}, {"role": "user", "content": _QUESTION}]
    search = respond(first, _SPECS)
    call = search["tool_calls"][0]
    results = {"results": [_item(i) for i in range(10)], "truncated": False, "omittedCount": 0, "limitCapped": False}
    after_search = [*first, search, {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(results)}]
    get = respond(after_search, _SPECS)
    item = {"item": _item(9)}
    after_get = [*after_search, get, {"role": "tool", "tool_call_id": get["tool_calls"][0]["id"], "content": json.dumps(item)}]
    history = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Note {i}: the deploy step {i} runs lint, tests and a build."}
        for i in range(40)
    ]
    return {
        "first call (search)": (first, _SPECS),
        "after 10 results (get)": (after_search, _SPECS),
        "after get (answer)": (after_get, _SPECS),
        "no tools, 40-message history": ([*history, {"role": "user", "content": _QUESTION}], None),
    }


def _time(fn: Callable[[], Any], calls: int) -> tuple[float, float]:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return statistics.median(samples) * 1e6, samples[int(len(samples) * 0.95) - 1] * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per case (default 2000)")
    args = parser.parse_args()

    print(f"{'case':<34}{'p50 us':>10}{'p95 us':>10}")
    for name, (messages, tools) in _requests().items():
        p50, p95 = _time(lambda m=messages, t=tools: (analyze_question.cache_clear(), respond(m, t)), args.calls)
        print(f"respond: {name:<25}{p50:>10.1f}{p95:>10.1f}")

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    register()
    import litellm

    first, tools = _requests()["first call (search)"]

    async def _one() -> Any:
        return await litellm.acompletion(model="offline/reference", messages=first, tools=tools)

    cpu: dict[str, float] = {}

    async def _many(n: int) -> list[float]:
        await _one()  # warm-up: litellm's lazy imports
        out = []
        cpu0 = time.process_time()
        for _ in range(n):
            start = time.perf_counter()
            await _one()
            out.append(time.perf_counter() - start)
        cpu["last"] = (time.process_time() - cpu0) / n * 1e6  # every thread's CPU, litellm's logging included
        return sorted(out)

    def _row(name: str, samples: list[float]) -> None:
        p50, p95 = statistics.median(samples) * 1e6, samples[int(len(samples) * 0.95) - 1] * 1e6
        print(f"{name:<34}{p50:>10.1f}{p95:>10.1f}{cpu.pop('last', float('nan')):>12.1f} CPU us/call")

    _row("litellm.acompletion: first call", asyncio.run(_many(max(50, args.calls // 4))))
    from litellm.litellm_core_utils import litellm_logging

    diagnostic = litellm_logging.Logging._record_zero_cost_diagnostic
    litellm_logging.Logging._record_zero_cost_diagnostic = lambda self, *a, **k: None  # type: ignore[method-assign]
    try:
        _row("  the same, no zero-cost diagnostic", asyncio.run(_many(max(50, args.calls // 4))))
    finally:
        litellm_logging.Logging._record_zero_cost_diagnostic = diagnostic  # type: ignore[method-assign]

    async def _direct(n: int) -> list[float]:
        out = []
        cpu0 = time.process_time()
        for _ in range(n):
            analyze_question.cache_clear()
            start = time.perf_counter()
            await direct_completion(model="offline/reference", messages=first, tools=tools)
            out.append(time.perf_counter() - start)
        cpu["last"] = (time.process_time() - cpu0) / n * 1e6
        return sorted(out)

    _row("direct_completion: first call", asyncio.run(_direct(args.calls)))


if __name__ == "__main__":
    main()
