"""A judge's calls under the run's ``--timeout`` and ``--retries``, and a heartbeat line while judges are called.

A judge call used to go to litellm with no timeout: a judge server that
accepted the request and never answered hung ``report`` (and the end of
``run``) for as long as the connection stayed open, printing nothing. Now each
try of a judge call is bounded by the run's ``--timeout`` (``run.json``
``parameters.timeout_s``; the provider SDK's own retries off) and retried on
transient errors (timeouts, rate limits, 5xx) up to the run's ``--retries``
with the model calls' backoff (:class:`harness.run.retry.RetryPolicy`); a
call still failing after that is a :class:`harness.score.judge.JudgeError`,
one line, exit 2.

A judge that does not answer at all is given up sooner, as the runner gives up
a model server that times out alone (:data:`harness.run.concurrency.STALL_AFTER`):
judge calls go one at a time, so after ``STALL_AFTER`` tries in a row (across
calls) that timed out or failed on the server (5xx, a lost connection; a rate
limit is an answer, and does not count), :func:`watched_call` raises
:class:`JudgeStalled` instead of trying again, and the report stops in one line,
exit 2, its run's results kept. Any answer resets the count. At the defaults
(``--timeout 120``, ``--retries 4``) a dead judge costs 6 minutes, not 10.

While :func:`judging` is open, one line goes to standard error every
:func:`harness.run.watchdog.heartbeat_interval` seconds (``RECALL_EVAL_HEARTBEAT_S``),
as during the samples::

    [recall-eval] still judging: 12 judge calls answered, one in flight for 45 s (try 2 of 3, --timeout 60 s); last timeout 31 s ago (2 in all)
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

__all__ = ["JudgeStalled", "JudgeWatch", "judging", "watched_call"]


class JudgeStalled(Exception):
    """``STALL_AFTER`` judge tries in a row timed out or failed on the server; the message says so, naming the limit."""


@dataclass
class JudgeWatch:
    """What the judges are doing: calls answered, the try in flight, the timeouts (for the heartbeat line)."""

    answered: int = 0
    timeouts: int = 0
    last_timeout_at: float | None = None
    #: When the try in flight started (``time.monotonic``), its number and how many tries it may take.
    in_flight_since: float | None = None
    attempt: int = 0
    tries: int = 1
    timeout_s: float | None = None
    #: Tries in a row that timed out or failed on the server (any answer resets it); STALL_AFTER of them stop.
    in_a_row: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def line(self, now: float) -> str:
        """One heartbeat line (see the module docstring).

        Example:
            >>> JudgeWatch(answered=3).line(0.0)
            '[recall-eval] still judging: 3 judge calls answered, none in flight; no timeout yet'
        """
        with self.lock:
            text = f"[recall-eval] still judging: {self.answered} judge call{'' if self.answered == 1 else 's'} answered"
            if self.in_flight_since is None:
                text += ", none in flight"
            else:
                limit = f", --timeout {self.timeout_s:g} s" if self.timeout_s else ""
                text += (f", one in flight for {now - self.in_flight_since:.0f} s "
                         f"(try {self.attempt} of {self.tries}{limit})")
            if self.last_timeout_at is None:
                return text + "; no timeout yet"
            return text + f"; last timeout {now - self.last_timeout_at:.0f} s ago ({self.timeouts} in all)"


_current: JudgeWatch | None = None


@contextlib.contextmanager
def judging(stream: TextIO | None = None, every_s: float | None = None) -> Iterator[JudgeWatch]:
    """Watch the judge calls made inside the block and print the heartbeat line every ``every_s`` seconds."""
    from harness.run import heartbeat_interval

    global _current
    watch, stop, before = JudgeWatch(), threading.Event(), _current
    interval = every_s or heartbeat_interval()

    def beat() -> None:
        while not stop.wait(interval):
            print(watch.line(time.monotonic()), file=stream or sys.stderr, flush=True)

    thread = threading.Thread(target=beat, name="judge-heartbeat", daemon=True)
    _current = watch
    thread.start()
    try:
        yield watch
    finally:
        stop.set()
        thread.join()
        _current = before


def _is_timeout(exc: BaseException) -> bool:
    return bool({cls.__name__ for cls in type(exc).__mro__} & {"Timeout", "APITimeoutError", "TimeoutError"})


def _is_rate_limit(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "RateLimitError" in names or getattr(exc, "status_code", None) == 429


def _stalled(exc: BaseException, timeout_s: float | None) -> JudgeStalled:
    from harness.run import STALL_AFTER

    limit = f" (--timeout {timeout_s:g} s a try)" if timeout_s else ""
    first = (str(exc).splitlines() or [""])[0]
    return JudgeStalled(f"stopped: {STALL_AFTER} judge tries in a row timed out or failed on the server{limit}, the last "
                        f"{type(exc).__name__}: {first}. The judge is not answering: check its server (--judge-api-base) "
                        "or give the run a longer --timeout; the run's results are kept")


def watched_call(attempt: Callable[[], T], *, retries: int = 0, timeout_s: float | None = None,
                 sleep: Callable[[float], Any] = time.sleep) -> T:
    """``attempt()`` retried on transient errors up to ``retries`` more times, with the model calls' backoff.

    Raises:
        The last error: a non-transient one at once, a transient one after the last try.
        JudgeStalled: ``STALL_AFTER`` tries in a row (of this call and the ones before it) timed out or failed on
            the server.
    """
    from harness.run import STALL_AFTER, RetryPolicy, is_transient

    policy = RetryPolicy(retries=max(0, retries))
    watch = _current or JudgeWatch()
    for number in range(policy.retries + 1):
        with watch.lock:
            watch.in_flight_since, watch.attempt, watch.tries = time.monotonic(), number + 1, policy.retries + 1
            watch.timeout_s = timeout_s
        try:
            result = attempt()
        except Exception as exc:
            with watch.lock:
                watch.in_flight_since = None
                if _is_timeout(exc):
                    watch.timeouts += 1
                    watch.last_timeout_at = time.monotonic()
                if is_transient(exc) and not _is_rate_limit(exc):
                    watch.in_a_row += 1
                stalled = watch.in_a_row >= STALL_AFTER
            if not is_transient(exc):
                raise
            if stalled:
                raise _stalled(exc, timeout_s) from exc
            if number >= policy.retries:
                raise
            sleep(policy.delay(number, exc))
            continue
        with watch.lock:
            watch.in_flight_since = None
            watch.answered += 1
            watch.in_a_row = 0
        return result
    raise AssertionError("unreachable: the last try returns or raises")
