"""Retries of transient provider errors: exponential backoff with full jitter.

Transient: rate limits, timeouts, connection errors and 5xx responses. Anything
else (authentication, bad request, unknown model) fails at once: retrying it
only burns time and quota.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

_TRANSIENT_NAMES = frozenset(
    {
        "RateLimitError",
        "Timeout",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "TimeoutError",
    }
)

# Non-transient errors that mean the model or credentials are misconfigured:
# when every sample of a model fails with one of these, the run stops early.
CONFIG_ERROR_NAMES = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "LiteLLMUnknownProvider",
        "BadRequestError",
        "UnsupportedParamsError",
    }
)


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying (by class name along the MRO, or an HTTP 5xx/429 status)."""
    if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between tries.

    Attributes:
        retries: Extra tries after the first (0: no retry).
        base_delay_s: Backoff scale; try ``n`` waits ``uniform(0, min(max, base * 2**n))``.
        max_delay_s: Ceiling of one wait.
        sleep: Awaitable sleep, replaceable in tests.
        rng: Jitter source.
    """

    retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        """Full-jitter wait after failed try number ``attempt`` (0-based)."""
        return self.rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * (2**attempt)))


class RetryExhaustedError(Exception):
    """Wraps the last error with the number of tries made."""

    def __init__(self, error: BaseException, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


async def call_with_retries(fn: Callable[[], Awaitable[T]], policy: RetryPolicy) -> tuple[T, int]:
    """Await ``fn()`` until it succeeds, retrying transient errors.

    Returns:
        The result and the number of tries made.

    Raises:
        RetryExhaustedError: a non-transient error, or the last transient one.
    """
    attempt = 0
    while True:
        try:
            return await fn(), attempt + 1
        except Exception as exc:  # noqa: BLE001 - classified below
            if not is_transient(exc) or attempt >= policy.retries:
                raise RetryExhaustedError(exc, attempt + 1) from exc
            await policy.sleep(policy.delay(attempt))
            attempt += 1
