"""``--rpm`` and ``--tpm``: client-side request and token limits per model, so a run stays under a provider's limits.

Each model gets a token bucket for requests and one for tokens. A bucket refills
at ``limit / 60`` per second up to one second's worth (at least one request),
so a run starts at once but never bursts past a second of its budget. Taking
from a bucket never blocks the bucket: the taker goes into debt and is told
how long to wait, so waiters are served in arrival order without a loop or a
lock (the event loop is the only thread that touches it).

The token bucket is charged the prompt's tokens (litellm's counter) plus
``--max-tokens`` before a call, as providers count a request, and refunded the
difference once the response states its usage.

With ``--workers N`` each worker gets ``1/N`` of every limit (the samples are
dealt evenly), so the limits hold across all workers without shared state.
Every try counts, retries included: a provider counts them too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Seconds of a limit a bucket may hold (its burst).
BURST_S = 1.0


class RateLimitError(ValueError):
    """A ``--rpm``/``--tpm`` value that cannot be used; the message names it and the form expected."""


class TokenBucket:
    """A token bucket with debt: :meth:`take` returns how long the taker must wait (0: go now).

    Example:
        >>> clock = iter([0.0, 0.0, 0.0]).__next__
        >>> bucket = TokenBucket(rate_per_s=2.0, capacity=1.0, clock=clock)
        >>> bucket.take(), bucket.take()
        (0.0, 0.5)
    """

    __slots__ = ("rate", "capacity", "_level", "_stamp", "_clock")

    def __init__(self, rate_per_s: float, capacity: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate_per_s
        self.capacity = capacity
        self._clock = clock
        self._level = capacity
        self._stamp = clock()

    def take(self, amount: float = 1.0) -> float:
        """Take ``amount`` now; the seconds to wait before using it (the bucket's debt at its refill rate)."""
        now = self._clock()
        level = self._level + (now - self._stamp) * self.rate
        if level > self.capacity:
            level = self.capacity
        level -= amount
        self._level, self._stamp = level, now
        return 0.0 if level >= 0.0 else -level / self.rate

    def give(self, amount: float) -> None:
        """Return ``amount`` taken too much (a refund never lifts the level above capacity)."""
        self._level = min(self.capacity, self._level + amount)


def bucket_for(per_minute: float, *, clock: Callable[[], float] = time.monotonic, min_capacity: float = 1.0) -> TokenBucket:
    """A bucket that allows ``per_minute`` on average and one second's worth (at least ``min_capacity``) at once."""
    rate = per_minute / 60.0
    return TokenBucket(rate, max(min_capacity, rate * BURST_S), clock=clock)


def parse_limits(values: Iterable[str], models: Iterable[str], flag: str) -> dict[str, float]:
    """``--rpm`` values -> ``{model: limit}``: ``N`` for every model, ``MODEL=N`` for one (later values win).

    Raises:
        RateLimitError: a value that is not a positive number, or names a model the run does not use.

    Example:
        >>> parse_limits(["60", "openai/gpt-4o=500"], ["openai/gpt-4o", "offline/reference"], "--rpm")
        {'openai/gpt-4o': 500.0, 'offline/reference': 60.0}
    """
    models = list(models)
    limits: dict[str, float] = {}
    for value in values:
        model, sep, number = value.rpartition("=")
        if sep and model not in models:
            raise RateLimitError(f"{flag} {value}: the run has no model {model!r} (its models: {', '.join(models)}); use {flag} MODEL=N or {flag} N")
        try:
            limit = float(number)
        except ValueError:
            raise RateLimitError(f"{flag} {value}: {number!r} is not a number; use {flag} N or {flag} MODEL=N, e.g. {flag} 500") from None
        if not limit > 0:
            raise RateLimitError(f"{flag} {value}: must be above 0 (leave {flag} out for no limit)")
        for name in [model] if sep else models:
            limits[name] = limit
    return {m: limits[m] for m in models if m in limits}


def share_limits(limits: Mapping[str, float], parts: int) -> dict[str, float]:
    """Each limit divided by ``parts`` (one worker's share)."""
    return {model: limit / parts for model, limit in limits.items()}


@dataclass
class RateLimiter:
    """The buckets of a run's models; :meth:`acquire` before every try of a model call.

    Attributes:
        rpm: Requests per minute per model (absent: no limit).
        tpm: Tokens per minute per model (absent: no limit).
    """

    rpm: Mapping[str, float] = field(default_factory=dict)
    tpm: Mapping[str, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Any] = asyncio.sleep
    _requests: dict[str, TokenBucket] = field(default_factory=dict, init=False)
    _tokens: dict[str, TokenBucket] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._requests = {m: bucket_for(v, clock=self.clock) for m, v in self.rpm.items()}
        self._tokens = {m: bucket_for(v, clock=self.clock) for m, v in self.tpm.items()}

    def counts_tokens(self, model: str) -> bool:
        """True when ``model`` has a token limit (the caller must count the prompt's tokens)."""
        return model in self._tokens

    async def acquire(self, model: str, tokens: int = 0) -> None:
        """Wait until ``model`` may make one request of ``tokens`` (prompt plus the completion limit)."""
        wait = 0.0
        bucket = self._requests.get(model)
        if bucket is not None:
            wait = bucket.take(1.0)
        if tokens:
            tbucket = self._tokens.get(model)
            if tbucket is not None:
                wait = max(wait, tbucket.take(float(tokens)))
        if wait > 0.0:
            await self.sleep(wait)

    def settle(self, model: str, charged: int, used: int | None) -> None:
        """Refund what a finished call was charged beyond the tokens its response reports."""
        bucket = self._tokens.get(model)
        if bucket is not None and used is not None and charged > used:
            bucket.give(float(charged - used))
