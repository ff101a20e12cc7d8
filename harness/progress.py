"""Progress of a run: a rich bar on a terminal, plain log lines elsewhere."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


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
        self.cached_calls = 0
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._every_n = every_n or max(1, total // 10)
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar: Any = None
        self._task: Any = None
        if live and getattr(self._stream, "isatty", lambda: False)():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            from rich.console import Console

            self._bar = Progress(
                TextColumn("[bold]samples"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("errors {task.fields[errors]}"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[rate]}"),
                console=Console(file=self._stream),
                transient=False,
            )
            self._task = self._bar.add_task("run", total=total, errors=0, rate="")
            self._bar.start()

    def _rate(self) -> str:
        elapsed = time.monotonic() - self._started
        return f"{self.done / elapsed:.1f}/s" if elapsed > 0 else ""

    def advance(self, ok: bool) -> None:
        """Count one finished sample."""
        self.done += 1
        self.errors += 0 if ok else 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, errors=self.errors, rate=self._rate())
            return
        now = time.monotonic()
        if self.done == self.total or self.done % self._every_n == 0 or now - self._last_line >= self._every_s:
            self._last_line = now
            self._line()

    def _line(self) -> None:
        elapsed = time.monotonic() - self._started
        print(f"[recall-eval] {self.done}/{self.total} samples, {self.errors} errors, {elapsed:.1f}s, {self._rate()}", file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
