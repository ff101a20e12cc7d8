"""Progress of a run: a rich bar on a terminal, plain log lines elsewhere."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from harness.records import raw_stream


def record_flags(record: Any) -> tuple[bool, bool, bool]:
    """``(ok, cached, cut_off)`` of a finished sample record, as :meth:`RunProgress.advance` takes them.

    cached: the sample is ok and every model call was served from the response
    cache (no model was called). cut_off: a model call ended at ``--max-tokens``
    (``finish_reason`` ``length``).
    """
    phase = getattr(record, "write_phase", None)  # the write phase's calls count too (harness.memory_systems)
    calls = [*record.model_calls, *(phase.model_calls if phase is not None else ())]
    ok = record.status == "ok"
    return ok, ok and bool(calls) and all(call.cached for call in calls), any(call.finish_reason == "length" for call in calls)


class RunProgress:
    """Counts finished samples and shows done/total, errors, elapsed time and rate.

    Args:
        total: Samples this invocation will run.
        live: Use a rich progress bar (only honoured when ``stream`` is a TTY).
        stream: Where to write (standard error by default).
        every_s: Plain mode: at most one line per this many seconds...
        every_n: ...or every this many samples, whichever comes first.
    """

    def __init__(self, total: int, *, live: bool = True, stream: TextIO | None = None, every_s: float = 5.0, every_n: int | None = None) -> None:
        self.total = total
        self.done = 0
        self.errors = 0
        self.cached = 0
        self.cut_off = 0
        #: :meth:`harness.run.concurrency.AdaptiveLimit.summary` of the run's calls in flight (None: never changed).
        self.concurrency: dict[str, Any] | None = None
        self.last_error: str | None = None
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._every_n = every_n or max(1, total // 10)
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar: Any = None
        self._task: Any = None
        if live and getattr(self._stream, "isatty", lambda: False)():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("[bold]samples"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("errors {task.fields[errors]}"),
                TextColumn("cached {task.fields[cached]}"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[rate]}"),
                console=Console(file=raw_stream(self._stream)),  # its own escape sequences, past the guard
                transient=False,
            )
            self._task = self._bar.add_task("run", total=total, errors=0, cached=0, rate="")
            self._bar.start()

    def _rate(self) -> str:
        elapsed = time.monotonic() - self._started
        return f"{self.done / elapsed:.1f}/s" if elapsed > 0 else ""

    def advance(self, ok: bool, cached: bool = False, cut_off: bool = False, *, error: str | None = None) -> None:
        """Count one finished sample (see :func:`record_flags`); ``error`` is a failed sample's ``type: message``."""
        self.done += 1
        self.last_error = error or self.last_error
        self.errors += 0 if ok else 1
        self.cached += 1 if cached else 0
        self.cut_off += 1 if cut_off else 0
        if self._bar is not None:
            self._bar.update(self._task, advance=1, errors=self.errors, cached=self.cached, rate=self._rate())
            return
        now = time.monotonic()
        if self.done == self.total or self.done % self._every_n == 0 or now - self._last_line >= self._every_s:
            self._last_line = now
            self._line()

    def _line(self) -> None:
        elapsed = time.monotonic() - self._started
        cached = f", {self.cached} from the cache" if self.cached else ""
        print(f"[recall-eval] {self.done}/{self.total} samples, {self.errors} errors{cached}, {elapsed:.1f}s, {self._rate()}", file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
