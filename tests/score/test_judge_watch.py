"""A judge's calls: retried on transient errors, and given up after STALL_AFTER tries in a row that got no answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from harness.run.concurrency import STALL_AFTER
from harness.score.judge_watch import JudgeStalled, judging, watched_call


class Timeout(Exception):
    """Named as litellm's timeout is (the watch reads class names)."""


class InternalServerError(Exception):
    """A 5xx, named as litellm's."""


class RateLimitError(Exception):
    """A 429, named as litellm's."""


def _script(*replies: object) -> tuple[Callable[[], str], list[int]]:
    """An attempt that raises or returns ``replies`` in turn, and the list counting its tries."""
    it: Iterator[object] = iter(replies)
    tries: list[int] = []

    def attempt() -> str:
        tries.append(1)
        reply = next(it)
        if isinstance(reply, BaseException):
            raise reply
        return str(reply)

    return attempt, tries


def _call(attempt: Callable[[], str], retries: int) -> str:
    return watched_call(attempt, retries=retries, timeout_s=1.0, sleep=lambda _s: None)


def test_a_judge_that_keeps_timing_out_is_given_up_after_stall_after_tries_not_every_retry() -> None:
    """Bug planted: the count never reaches the stop (every retry made): 5 tries instead of 3."""
    attempt, tries = _script(*[Timeout("no answer")] * 5)
    with judging(every_s=1000), pytest.raises(JudgeStalled) as caught:
        _call(attempt, retries=4)
    assert len(tries) == STALL_AFTER == 3
    assert str(caught.value).startswith("stopped: 3 judge tries in a row timed out or failed on the server "
                                        "(--timeout 1 s a try), the last Timeout: no answer.")


def test_tries_in_a_row_are_counted_across_judge_calls() -> None:
    """One call fails after its 2 tries (a 5xx, then a timeout); the next call's first timeout is the third in a row."""
    first, _ = _script(InternalServerError("502"), Timeout("no answer"))
    second, tries = _script(Timeout("no answer"), "pass")
    with judging(every_s=1000):
        with pytest.raises(Timeout):
            _call(first, retries=1)
        with pytest.raises(JudgeStalled):
            _call(second, retries=1)
    assert len(tries) == 1


def test_an_answer_resets_the_count_and_rate_limits_never_count() -> None:
    """Bugs planted: the count not reset by an answer; a rate limit counted as a failure."""
    with judging(every_s=1000):
        for _ in range(3):
            attempt, _ = _script(Timeout("slow"), Timeout("slow"), "pass")
            assert _call(attempt, retries=4) == "pass"
        attempt, tries = _script(*[RateLimitError("429")] * 4, "pass")
        assert _call(attempt, retries=4) == "pass" and len(tries) == 5


def test_an_error_that_is_not_transient_is_raised_at_once() -> None:
    attempt, tries = _script(ValueError("bad request"))
    with judging(every_s=1000), pytest.raises(ValueError):
        _call(attempt, retries=4)
    assert len(tries) == 1
