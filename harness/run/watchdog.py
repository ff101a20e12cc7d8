"""The run's watchdog: a heartbeat line at a bounded rate, and the stop of a run whose server cannot keep up.

A slow one-slot server can keep a run busy for an hour without a sample
finishing: the progress line moves only when a sample ends, and
``--no-progress`` prints nothing at all. So while samples run, one line goes
to standard error every :data:`DEFAULT_HEARTBEAT_S` seconds (the environment
variable ``RECALL_EVAL_HEARTBEAT_S`` changes it; tests use a fraction of a
second), in every mode::

    [recall-eval] still running: 9 of 60 samples done, 1 model call in flight (limit 1 of 8), 5 waiting; last timeout 31 s ago (12 in all)

With ``--workers`` each worker prints its own line about its own samples.

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


def heartbeat_line(done: int, planned: int, gate: Any, budget: Any, now: float) -> str:
    """One heartbeat: samples done, calls in flight and waiting (for a place or for ``--max-cost-usd``), the last timeout.

    Example:
        >>> heartbeat_line(9, 60, None, None, 0.0)
        '[recall-eval] still running: 9 of 60 samples done'
    """
    text = f"[recall-eval] still running: {done} of {planned} samples done"
    if gate is None:
        return text
    waiting = gate.waiting + (budget.waiting if budget is not None else 0)
    text += f", {_calls(gate.in_flight)} in flight (limit {gate.limit} of {gate.maximum}), {waiting} waiting"
    if gate.last_timeout_at is None:
        return text + "; no timeout yet"
    return text + f"; last timeout {now - gate.last_timeout_at:.0f} s ago ({gate.timeouts} in all)"


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
            await asyncio.sleep(self.every_s)
            print(heartbeat_line(self.done, self.planned, gate, budget, time.monotonic()), file=self.stream or sys.stderr, flush=True)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        gate = getattr(self.client, "concurrency", None)
        if gate is not None:
            gate.on_stall = None
