"""How many model calls a process has in flight: ``--max-concurrency`` at most, fewer while calls time out.

A local model server that serves one request at a time answers 8 calls in
flight one after another: most time out, their retries queue behind the
abandoned requests the server is still working through, and samples fail
after every retry. So the limit adapts, as TCP's congestion window does:
each timed-out call halves it (multiplicative decrease, at least 1; calls that
started before the last decrease do not lower it again), and each run of
``limit`` calls answered in time raises it by one (additive increase, up to
``--max-concurrency``). Every change is printed as one line and kept in
:attr:`AdaptiveLimit.changes` (``run.json`` ``parameters.adaptive_concurrency``).

At one in flight there is nothing left to lower: a server that still does not
answer within ``--timeout`` will not, however often it is asked (a run that
went on retrying finished no sample in 30 minutes). After :data:`STALL_AFTER`
calls in a row time out alone, :attr:`AdaptiveLimit.on_stall` is called
(:mod:`harness.run.watchdog` stops the run, naming ``--timeout`` and
``--max-tokens``); any call answered in time resets the count.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Calls in a row that time out with only themselves in flight before the run is stopped.
STALL_AFTER = 3


async def wait_in_line(waiters: Any) -> None:
    """Join ``waiters`` (a list or deque of futures) until the holder wakes this one; leave it however the wait ends."""
    waiter = asyncio.get_running_loop().create_future()
    waiters.append(waiter)
    try:
        await waiter
    finally:
        if waiter in waiters:
            waiters.remove(waiter)


@dataclass
class AdaptiveLimit:
    """The in-flight limit of one process's model calls (see the module docstring)."""

    maximum: int
    limit: int = 0
    in_flight: int = 0
    changes: list[dict[str, Any]] = field(default_factory=list)
    #: Calls that timed out, and when the last did (``time.monotonic``; None: none yet).
    timeouts: int = 0
    last_timeout_at: float | None = None
    #: Calls in a row that timed out alone (started at a limit of 1); reset by any call answered in time.
    solo_timeouts: int = 0
    #: Called once when :data:`STALL_AFTER` calls in a row timed out alone.
    on_stall: Callable[[], None] | None = None
    _answered: int = 0
    _generation: int = 0
    _waiters: deque[asyncio.Future[None]] = field(default_factory=deque)
    _started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.maximum = max(1, int(self.maximum))
        self.limit = self.limit or self.maximum

    async def acquire(self) -> int:
        """Wait for a free place; the generation to give back to :meth:`release`."""
        while self.in_flight >= self.limit:
            await wait_in_line(self._waiters)
        self.in_flight += 1
        return self._generation

    def release(self, generation: int, *, timed_out: bool) -> None:
        """One call ended: in time (``timed_out`` False) or by ``--timeout``."""
        self.in_flight = max(0, self.in_flight - 1)
        if timed_out:
            self._answered = 0
            self.timeouts += 1
            self.last_timeout_at = time.monotonic()
            if generation == self._generation and self.limit == 1:  # started at 1 in flight: it was alone
                self.solo_timeouts += 1
                if self.solo_timeouts == STALL_AFTER and self.on_stall is not None:
                    self.on_stall()
            if generation == self._generation and self.limit > 1:
                self._change(max(1, self.limit // 2), "a call timed out")
        else:
            self.solo_timeouts = 0
            self._answered += 1
            if self._answered >= self.limit and self.limit < self.maximum:
                self._answered = 0
                self._change(self.limit + 1, f"{self.limit} calls answered in time")
        self._wake()

    @property
    def waiting(self) -> int:
        """Calls waiting for a place."""
        return len(self._waiters)

    def _change(self, new: int, why: str) -> None:
        self.changes.append({"after_s": round(time.monotonic() - self._started, 3), "from": self.limit, "to": new, "why": why})
        self._generation += 1
        self.limit = new
        print(f"note: model calls in flight {self.changes[-1]['from']} -> {new} ({why}; --max-concurrency {self.maximum})",
              file=sys.stderr, flush=True)

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def summary(self) -> dict[str, Any] | None:
        """What ``run.json`` records (None when the limit never changed)."""
        if not self.changes:
            return None
        return {"max_concurrency": self.maximum, "final": self.limit, "lowest": min(c["to"] for c in self.changes),
                "changes": self.changes[:50]}
