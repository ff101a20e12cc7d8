"""The run's watchdog: a heartbeat line at a bounded rate, and the stop of a run whose server cannot keep up.

A slow one-slot server can keep a run busy for an hour without a sample
finishing: the progress line moves only when a sample ends, and
``--no-progress`` prints nothing at all. So while samples run, one line goes
to standard error every :data:`DEFAULT_HEARTBEAT_S` seconds (the environment
variable ``RECALL_EVAL_HEARTBEAT_S`` changes it; tests use a fraction of a
second), in every mode::

    [recall-eval] still running: 9 of 60 samples done, 1 model call in flight (limit 1 of 8), 5 waiting; last timeout 31 s ago (12 in all)

With ``--workers`` the workers print nothing: each sends its state (a
:class:`Beat`) to the parent twice an interval, and the parent prints the one
line of the run, with the totals across workers (``limit 8 of 8 across 2 workers``).

When :data:`harness.run.concurrency.STALL_AFTER` calls in a row time out with
only themselves in flight, asking again cannot help: the server is slower than
``--timeout`` even alone (at ``--max-tokens`` it may generate for minutes).
The watchdog then cancels every sample at once (the samples that failed are
error records, those in flight are not written: ``--resume`` runs both again)
and :func:`harness.run.runner.execute` returns :data:`STALLED`, which ``run``
records as ``interrupted`` and reports with :func:`stall_message`, exit 2.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

#: Seconds between heartbeat lines.
DEFAULT_HEARTBEAT_S = 30.0
HEARTBEAT_ENV = "RECALL_EVAL_HEARTBEAT_S"
#: What :func:`harness.run.runner.execute` returns when the watchdog stopped the run.
STALLED = "stalled"


def heartbeat_interval() -> float:
    """Seconds between heartbeat lines: ``RECALL_EVAL_HEARTBEAT_S`` when it is a positive number, else the default."""
    try:
        value = float(os.environ.get(HEARTBEAT_ENV, ""))
    except ValueError:
        return DEFAULT_HEARTBEAT_S
    return value if value > 0 else DEFAULT_HEARTBEAT_S


def _calls(count: int) -> str:
    return f"{count} model call" + ("" if count == 1 else "s")


@dataclass(frozen=True)
class Beat:
    """What one process's heartbeat says: samples done and, with an in-flight limit, its calls and timeouts."""

    done: int
    in_flight: int | None = None
    limit: int = 0
    maximum: int = 0
    waiting: int = 0
    timeouts: int = 0
    #: ``time.monotonic()`` of the last timeout (one clock for every process of the machine); None: none yet.
    last_timeout_at: float | None = None
    workers: int = 1

    @classmethod
    def of(cls, done: int, gate: Any, budget: Any) -> Beat:
        """The state of one process: its done count, its in-flight limit ``gate`` and ``--max-cost-usd`` budget."""
        if gate is None:
            return cls(done)
        waiting = gate.waiting + (budget.waiting if budget is not None else 0)
        return cls(done, gate.in_flight, gate.limit, gate.maximum, waiting, gate.timeouts, gate.last_timeout_at)

    @classmethod
    def total(cls, done: int, beats: list[Beat]) -> Beat:
        """The run's state from its workers' last beats (``done``: the records the parent has written)."""
        known = [b for b in beats if b.in_flight is not None]
        if not known:
            return cls(done, workers=len(beats))
        last = [b.last_timeout_at for b in known if b.last_timeout_at is not None]
        return cls(done, sum(b.in_flight or 0 for b in known), sum(b.limit for b in known),
                   sum(b.maximum for b in known), sum(b.waiting for b in known), sum(b.timeouts for b in known),
                   max(last) if last else None, workers=len(beats))

    def line(self, planned: int, now: float) -> str:
        """The heartbeat line (see the module docstring).

        Example:
            >>> Beat(9).line(60, 0.0)
            '[recall-eval] still running: 9 of 60 samples done'
        """
        text = f"[recall-eval] still running: {self.done} of {planned} samples done"
        if self.in_flight is None:
            return text
        across = f" across {self.workers} workers" if self.workers > 1 else ""
        text += (f", {_calls(self.in_flight)} in flight (limit {self.limit} of {self.maximum}{across}), "
                 f"{self.waiting} waiting")
        if self.last_timeout_at is None:
            return text + "; no timeout yet"
        return text + f"; last timeout {now - self.last_timeout_at:.0f} s ago ({self.timeouts} in all)"


def heartbeat_line(done: int, planned: int, gate: Any, budget: Any, now: float) -> str:
    """One heartbeat of one process: samples done, calls in flight and waiting (for a place or for ``--max-cost-usd``),
    the last timeout.

    Example:
        >>> heartbeat_line(9, 60, None, None, 0.0)
        '[recall-eval] still running: 9 of 60 samples done'
    """
    return Beat.of(done, gate, budget).line(planned, now)


def stall_message(timeout_s: float, max_tokens: int, resume: str) -> str:
    """What ``run`` prints when the watchdog stopped it: what happened and the two settings that fix it."""
    from harness.run.concurrency import STALL_AFTER

    return (f"stopped: {STALL_AFTER} model calls in a row timed out with only one call in flight: the server is slower than "
            f"--timeout {timeout_s:g} s allows even alone (it may be generating up to --max-tokens {max_tokens} tokens a call). "
            f"Finished samples are saved. Give a longer --timeout: {resume} --timeout {max(timeout_s * 4, 600):g}; "
            "or start a new run with a lower --max-tokens")


@dataclass
class Watchdog:
    """The heartbeat and stall watch of one :func:`harness.run.runner.execute` (see the module docstring)."""

    client: Any
    planned: int
    stream: TextIO | None = None
    every_s: float = field(default_factory=heartbeat_interval)
    #: A worker's: each beat goes to the parent (which prints the run's one line) instead of being printed.
    announce: Callable[[Beat], None] | None = None
    done: int = 0
    stalled: bool = False
    _task: asyncio.Task[None] | None = None

    def start(self, stop_all: Callable[[], None]) -> None:
        """Start the heartbeat; ``stop_all`` cancels every sample (called from the loop, outside any sample's task)."""
        gate = getattr(self.client, "concurrency", None)
        if gate is not None:
            loop = asyncio.get_running_loop()

            def on_stall() -> None:
                self.stalled = True
                loop.call_soon(stop_all)  # the sample whose call timed out is cancelled too

            gate.on_stall = on_stall
        self._task = asyncio.create_task(self._beat())

    async def _beat(self) -> None:
        gate, budget = getattr(self.client, "concurrency", None), getattr(self.client, "budget", None)
        while True:
            await asyncio.sleep(self.every_s / 2 if self.announce is not None else self.every_s)
            if self.announce is not None:
                self.announce(Beat.of(self.done, gate, budget))
            else:
                print(heartbeat_line(self.done, self.planned, gate, budget, time.monotonic()),
                      file=self.stream or sys.stderr, flush=True)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        gate = getattr(self.client, "concurrency", None)
        if gate is not None:
            gate.on_stall = None
