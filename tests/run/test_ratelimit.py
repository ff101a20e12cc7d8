"""``--rpm``/``--tpm``: token buckets per model, on a fake clock (no wall time), and their flags."""

from __future__ import annotations

import asyncio

import pytest

from harness.run.ratelimit import RateLimiter, RateLimitError, TokenBucket, bucket_for, parse_limits, share_limits


class FakeClock:
    """A clock that moves only when a waiter sleeps (what a limited caller does)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _limited_calls(limiter: RateLimiter, clock: FakeClock, model: str, calls: int, tokens: int = 0) -> list[float]:
    """Times at which ``calls`` sequential callers may call."""
    times = []

    async def go() -> None:
        for _ in range(calls):
            await limiter.acquire(model, tokens)
            times.append(clock.now)

    asyncio.run(go())
    return times


def test_rpm_limit_gives_exactly_the_rate_after_one_second_of_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm={"m": 600}, clock=clock, sleep=clock.sleep)
    times = _limited_calls(limiter, clock, "m", 110)
    assert times[:10] == [100.0] * 10  # one second's worth at once
    steady = times[10:]
    assert steady[-1] - steady[0] == pytest.approx(99 / 10.0)  # then 10 per second, exactly
    in_any_minute = sum(1 for t in times if t < times[0] + 60)
    assert in_any_minute <= 600


def test_concurrent_waiters_are_spaced_by_the_rate_not_released_together() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm={"m": 60}, clock=clock)  # 1 per second, burst 1
    waits = [limiter._requests["m"].take() for _ in range(5)]  # five callers arrive at once
    assert waits == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_models_have_their_own_buckets_and_unlimited_models_never_wait() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm={"slow": 60}, clock=clock, sleep=clock.sleep)
    _limited_calls(limiter, clock, "fast", 50)
    assert clock.sleeps == []
    _limited_calls(limiter, clock, "slow", 3)
    assert clock.sleeps == [1.0, 1.0]


def test_tpm_charges_prompt_and_limit_and_refunds_the_unused_part() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm={"m": 6000}, clock=clock, sleep=clock.sleep)  # 100 tokens/s, burst 100
    assert limiter.counts_tokens("m") and not limiter.counts_tokens("other")
    asyncio.run(limiter.acquire("m", 100))
    asyncio.run(limiter.acquire("m", 100))
    assert clock.sleeps == [1.0]
    asyncio.run(limiter.acquire("m", 100))
    limiter.settle("m", 100, 40)  # the response used 40 of the 100 charged: 60 come back, not 100
    asyncio.run(limiter.acquire("m", 60))
    assert clock.sleeps == [1.0, 1.0]  # the refund paid for these 60 tokens
    asyncio.run(limiter.acquire("m", 1))
    assert clock.sleeps == [1.0, 1.0, pytest.approx(0.01)]  # and for nothing more


def test_idle_time_saves_at_most_one_second_of_requests() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm={"m": 60}, clock=clock)
    clock.now += 3600  # an hour without calls
    assert [limiter._requests["m"].take() for _ in range(3)] == [0.0, 1.0, 2.0]


def test_a_refund_never_fills_a_bucket_past_its_burst() -> None:
    bucket = TokenBucket(rate_per_s=1.0, capacity=2.0, clock=lambda: 0.0)
    bucket.give(50.0)
    assert [bucket.take(), bucket.take(), bucket.take()] == [0.0, 0.0, 1.0]


def test_bucket_burst_is_one_second_of_the_limit_and_at_least_one_request() -> None:
    assert bucket_for(6000).capacity == 100.0 and bucket_for(30).capacity == 1.0


def test_parse_limits_takes_n_for_every_model_and_model_equals_n_for_one() -> None:
    models = ["openai/gpt-4o-mini", "offline/reference"]
    assert parse_limits(["500"], models, "--rpm") == {"openai/gpt-4o-mini": 500.0, "offline/reference": 500.0}
    assert parse_limits(["offline/reference=5", "50"], models, "--rpm") == {"openai/gpt-4o-mini": 50.0, "offline/reference": 50.0}
    assert parse_limits(["50", "offline/reference=5"], models, "--rpm") == {"openai/gpt-4o-mini": 50.0, "offline/reference": 5.0}


@pytest.mark.parametrize(("value", "message"), [("fast", "is not a number"), ("0", "must be above 0"), ("x/y=5", "has no model 'x/y'")])
def test_parse_limits_names_a_bad_value(value: str, message: str) -> None:
    with pytest.raises(RateLimitError, match=message):
        parse_limits([value], ["offline/reference"], "--tpm")


def test_workers_share_every_limit_so_the_sum_holds() -> None:
    shares = [share_limits({"m": 900.0}, 3) for _ in range(3)]
    assert sum(s["m"] for s in shares) == pytest.approx(900.0)


def test_worker_options_carry_their_share_of_limits_and_budget() -> None:
    from pathlib import Path

    from harness.run.options import RunOptions
    from harness.run.workers import _limit_shares

    options = RunOptions(run_dir=Path("r"), models=["m"], arms=["recall"], scenario_paths=[], filters=[], epochs=1, seed=0,
                         max_tool_rounds=4, temperature=0.0, timeout_s=1.0, retries=0, max_concurrency=4,
                         rpm={"m": 120.0}, tpm={"m": 10000.0}, budget_usd=3.0)
    assert _limit_shares(options, 2) == {"rpm": {"m": 60.0}, "tpm": {"m": 5000.0}, "budget_usd": 1.5}


def test_a_taker_left_with_part_of_a_token_goes_at_once() -> None:
    """A token bucket is charged fractions (a prompt's tokens): a level between 0 and 1 is no debt, so no wait."""
    bucket = TokenBucket(rate_per_s=2.0, capacity=2.0, clock=lambda: 0.0)
    assert bucket.take(1.5) == 0.0  # 0.5 left: go now, not a negative wait
    assert bucket.take(0.5) == 0.0  # exactly empty: still go now
    assert bucket.take(1.0) == 0.5  # one token of debt at 2 per second


def test_the_burst_is_burst_s_seconds_of_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BURST_S`` is the seconds of a limit held at once: two seconds of 600 a minute is 20, not 5."""
    monkeypatch.setattr("harness.run.ratelimit.BURST_S", 2.0)
    assert bucket_for(600).capacity == 20.0


def test_an_unknown_model_is_refused_with_the_runs_models_listed() -> None:
    with pytest.raises(RateLimitError, match=r"its models: openai/gpt-4o, offline/reference\)"):
        parse_limits(["x/y=5"], ["openai/gpt-4o", "offline/reference"], "--rpm")


@pytest.mark.parametrize("value", ["0.5", "1", "offline/reference=0.25"])
def test_a_limit_below_one_a_minute_is_a_limit_not_an_error(value: str) -> None:
    """Any positive number is a limit: one request every two minutes is ``--rpm 0.5``."""
    assert parse_limits([value], ["offline/reference"], "--rpm") == {"offline/reference": float(value.rpartition("=")[2])}


def test_a_request_without_a_token_count_charges_only_the_request_bucket() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm={"m": 60}, clock=clock, sleep=clock.sleep)  # 1 token per second, burst 1
    for _ in range(3):
        asyncio.run(limiter.acquire("m"))
    assert clock.sleeps == []
    assert limiter._tokens["m"].take(1.0) == 0.0  # the bucket is still full


def test_settling_a_model_without_a_token_limit_is_a_no_op() -> None:
    """The agent settles every call of a limited model; with only ``--rpm`` there is no token bucket to refund."""
    clock = FakeClock()
    limiter = RateLimiter(rpm={"m": 60}, clock=clock, sleep=clock.sleep)
    limiter.settle("m", 0, None)  # usage unknown
    limiter.settle("m", 0, 40)
    limiter.settle("other", 100, 40)
    assert [limiter._requests["m"].take() for _ in range(2)] == [0.0, 1.0]  # the request bucket is untouched


def test_a_call_whose_usage_is_unknown_gets_no_refund() -> None:
    """No usage in the response: what was charged stays charged (the provider may have counted all of it)."""
    clock = FakeClock()
    limiter = RateLimiter(tpm={"m": 6000}, clock=clock, sleep=clock.sleep)  # 100 tokens/s, burst 100
    asyncio.run(limiter.acquire("m", 100))
    limiter.settle("m", 100, None)
    assert limiter._tokens["m"].take(50.0) == 0.5  # still empty: 50 tokens of debt at 100 per second


@pytest.mark.parametrize("value", ["nan", "-5", "m=-0.0", "m=nan"])
def test_a_limit_that_is_not_above_zero_is_refused_even_when_it_is_nan(value: str) -> None:
    """``float()`` accepts "nan" and negatives; only the "above 0" check refuses them (NaN is not <= 0 either)."""
    with pytest.raises(RateLimitError, match="must be above 0"):
        parse_limits([value], ["m"], "--rpm")
