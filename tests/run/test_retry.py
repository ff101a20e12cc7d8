from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import random

import pytest

from harness.run.retry import RetryPolicy, call_with_retries, is_transient, retry_after_s


class _Response:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class RateLimited(Exception):
    status_code = 429

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        super().__init__("rate limited")
        self.response = _Response(headers or {})


def test_retry_after_seconds_are_read_from_the_response_headers() -> None:
    assert retry_after_s(RateLimited({"retry-after": "7"})) == 7.0


def test_retry_after_http_date_is_read_as_seconds_from_now() -> None:
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)
    seconds = retry_after_s(RateLimited({"Retry-After": email.utils.format_datetime(when)}))
    assert seconds is not None and 25 <= seconds <= 31


def test_missing_or_garbled_retry_after_is_none() -> None:
    assert retry_after_s(RateLimited()) is None
    assert retry_after_s(RateLimited({"retry-after": "soon"})) is None
    assert retry_after_s(ValueError("no headers")) is None


def test_backoff_waits_at_least_what_the_server_asked_capped_by_the_maximum() -> None:
    policy = RetryPolicy(base_delay_s=0.001, max_delay_s=10.0, rng=random.Random(1))
    assert policy.delay(0, RateLimited({"retry-after": "3"})) == 3.0
    assert policy.delay(0, RateLimited({"retry-after": "3600"})) == 10.0
    assert policy.delay(0, RateLimited()) <= 0.001


def test_full_jitter_grows_exponentially_with_the_base_delay() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=60.0, rng=random.Random(3))
    waits = [policy.delay(attempt) for attempt in range(6) for _ in range(50)]
    assert max(waits[:50]) <= 0.5 and max(waits[-50:]) > 0.5 * 2**4


def test_call_with_retries_sleeps_what_the_server_asked() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise RateLimited({"retry-after": "2"})
        return "ok"

    policy = RetryPolicy(retries=4, base_delay_s=0.0, sleep=sleep)
    assert asyncio.run(call_with_retries(flaky, policy)) == ("ok", 3)
    assert slept == [2.0, 2.0]
    assert is_transient(RateLimited())


@pytest.mark.parametrize("value", ["-1", "0"])
def test_negative_or_zero_retry_after_never_waits_less_than_zero(value: str) -> None:
    assert retry_after_s(RateLimited({"retry-after": value})) == 0.0


@pytest.mark.parametrize(
    ("type_name", "message"),
    [
        ("RateLimitError", "Rate limit reached; check your api_key's quota"),
        ("ServiceUnavailableError", "overloaded"),
        ("InternalServerError", "fake server says 500"),
        ("BadGatewayError", ""),
        ("Timeout", "no response within 120 s (--timeout)"),
        ("APIConnectionError", "Connection refused"),
    ],
)
def test_rate_limits_server_errors_and_timeouts_are_never_configuration_errors(type_name: str, message: str) -> None:
    from harness.run.retry import is_config_error

    assert not is_config_error(type_name, message)


@pytest.mark.parametrize(
    ("type_name", "message"),
    [
        ("AuthenticationError", "Incorrect API key"),
        ("PermissionDeniedError", "no access to this model"),
        ("NotFoundError", "model not found"),
        ("BadRequestError", "LLM Provider NOT provided"),
        ("InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`"),
    ],
)
def test_authentication_not_found_bad_request_and_missing_credentials_are_configuration_errors(type_name: str, message: str) -> None:
    from harness.run.retry import is_config_error

    assert is_config_error(type_name, message)
