"""The ``--rpm``/``--tpm`` limiter's overhead per model call; print the figures.

Usage: python benchmarks/ratelimit_bench.py [--calls 200000]
Target: the rpm limiter adds < 0.1 ms per call.

Measured: ``await limiter.acquire(model)`` in one event loop with a limit far above
the call rate (so nobody waits and only the bookkeeping is timed), against the same
loop awaiting a no-op coroutine; and the tpm path, whose charge is litellm's token
count of the prompt (counted once per call, only when --tpm is given).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.run.ratelimit import RateLimiter  # noqa: E402


async def _noop(model: str, tokens: int = 0) -> None:
    return None


async def _loop(acquire, calls: int, tokens: int = 0) -> float:
    start = time.process_time()
    for _ in range(calls):
        await acquire("openai/gpt-4o-mini", tokens)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    n = args.calls
    limiter = RateLimiter(rpm={"openai/gpt-4o-mini": 1e12}, tpm={"openai/gpt-4o-mini": 1e15})
    base = min(asyncio.run(_loop(_noop, n)) for _ in range(3))
    rpm_only = RateLimiter(rpm={"openai/gpt-4o-mini": 1e12})
    rpm = min(asyncio.run(_loop(rpm_only.acquire, n)) for _ in range(3))
    both = min(asyncio.run(_loop(limiter.acquire, n, 3000)) for _ in range(3))
    print(f"load average {os.getloadavg()[0]:.1f} (2 shared cores); CPU time, best of 3, {n:,} calls")
    print(f"rpm limiter: {(rpm - base) / n * 1e6:.2f} us per call over an awaited no-op  [target < 100 us]")
    print(f"rpm + tpm buckets: {(both - base) / n * 1e6:.2f} us per call (token count excluded)")

    from harness.memory_systems.prompts import build_history_only
    from harness.run.agent import count_tokens
    from tests.score.scoring_factories import make_scenario

    messages = build_history_only(make_scenario("bench")).messages
    count_tokens("openai/gpt-4o-mini", messages=messages)
    start, k = time.process_time(), 2000
    for _ in range(k):
        count_tokens("openai/gpt-4o-mini", messages=messages)
    print(f"tpm's prompt count (litellm token_counter, {len(messages)} messages): "
          f"{(time.process_time() - start) / k * 1e3:.3f} ms per call, paid only with --tpm or --max-cost-usd")


if __name__ == "__main__":
    main()
