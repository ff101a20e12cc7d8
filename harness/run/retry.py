"""Retries of transient provider errors: exponential backoff with full jitter.

Transient: rate limits, timeouts, connection errors and 5xx responses. Anything
else (authentication, bad request, unknown model) fails at once: retrying it
only burns time and quota.

Only a configuration error (:func:`is_config_error`: authentication,
not-found, bad request) may stop a run early; a rate limit or a 5xx is never
one, however early it comes.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import random
import re
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

# Errors that mean the model, credentials or endpoint are misconfigured: the
# same answer comes back however often and however late we ask. A connection
# error or timeout is not among them: a local server that restarts or a slow
# first load looks the same, and both pass.
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


# litellm reports some configuration mistakes as 5xx errors (e.g. a missing
# OpenAI key surfaces as InternalServerError "Missing credentials"): these
# messages are never worth retrying.
_CONFIG_MESSAGE = re.compile(r"missing credentials|api[_ ]key|unauthori[sz]ed|llm provider not provided", re.IGNORECASE)


def is_provider_error(type_name: str) -> bool:
    """True for an error class a provider (not the harness) raises, by name."""
    return type_name in _TRANSIENT_NAMES or type_name in CONFIG_ERROR_NAMES


def is_config_error(type_name: str, message: str = "") -> bool:
    """True when a sample's final error (class name and message) means the model is misconfigured.

    Authentication, permission, not-found and bad-request errors are, and so
    is any error whose message says credentials are missing (litellm reports
    a missing OpenAI key as ``InternalServerError: Missing credentials``
    before any request is sent). Rate limits (HTTP 429) and server errors
    (5xx) never are, even when they are all a model has answered so far.

    Example:
        >>> is_config_error("AuthenticationError"), is_config_error("RateLimitError", "slow down")
        (True, False)
    """
    if type_name in CONFIG_ERROR_NAMES:
        return True
    return type_name != "RateLimitError" and bool(_CONFIG_MESSAGE.search(message))


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying (by class name along the MRO, or an HTTP 5xx/429 status),
    except configuration mistakes dressed as server errors."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "RateLimitError" not in names and _CONFIG_MESSAGE.search(str(exc)):
        return False
    if names & _TRANSIENT_NAMES:
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

    def delay(self, attempt: int, error: BaseException | None = None) -> float:
        """Wait after failed try number ``attempt`` (0-based): full jitter, or the
        server's ``Retry-After`` when that is longer (capped at ``max_delay_s``)."""
        jitter = self.rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * (2**attempt)))
        asked = retry_after_s(error) if error is not None else None
        return max(jitter, min(asked, self.max_delay_s)) if asked is not None else jitter


def _header_sources(error: BaseException) -> list[Any]:
    """Where litellm and the provider SDKs keep response headers on an exception."""
    sources = [getattr(error, "litellm_response_headers", None), getattr(error, "headers", None)]
    response = getattr(error, "response", None)
    sources.append(getattr(response, "headers", None))
    return [s for s in sources if s is not None]


def retry_after_s(error: BaseException) -> float | None:
    """Seconds the server asked us to wait (``Retry-After``: seconds or an HTTP date), if any."""
    for headers in _header_sources(error):
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except Exception:  # noqa: BLE001 - not a mapping: look elsewhere
            continue
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except (TypeError, ValueError):
            pass
        try:
            when = email.utils.parsedate_to_datetime(str(value))
        except (TypeError, ValueError):
            continue
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.UTC)
            return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())
    return None


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
            await policy.sleep(policy.delay(attempt, exc))
            attempt += 1
