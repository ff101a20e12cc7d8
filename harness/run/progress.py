"""Progress of a run: a rich bar on a terminal, plain log lines elsewhere.

Besides counts it shows running scores: per arm (per model and arm when a
run has several models), the samples answered right so far out of those
scored, when the caller hands it a scorer (``recall-eval run`` passes the
report's own continuity check; this stage cannot import scoring). Error
samples are left out of them, as the report's rates leave them out; a
rubric scenario is scored by its patterns here (the judge, if any, is
called by the report), so the report's figure may differ.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from harness.records import raw_stream
from harness.wrapping import terminal_width, wrap


def _bar(stream: TextIO) -> Any:
    """A rich bar whose counts keep their words at any width: the bar itself takes what is left, and the running
    scores go on the lines under it, wrapped (as one more column they squeezed the rest to ``sa... err...``)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Column
    from rich.text import Text

    class _ScoredProgress(Progress):
        scores = ""

        def get_renderables(self) -> Any:
            yield self.make_tasks_table(self.tasks)
            if self.scores:
                yield Text(self.scores)  # wraps at the console's width

    def fixed(text: str) -> Any:
        return TextColumn(text, table_column=Column(no_wrap=True))

    return _ScoredProgress(
        fixed("[bold]samples"), BarColumn(bar_width=None), MofNCompleteColumn(table_column=Column(no_wrap=True)),
        fixed("errors {task.fields[errors]}"), fixed("cached {task.fields[cached]}"),
        TimeElapsedColumn(table_column=Column(no_wrap=True)), fixed("{task.fields[rate]}"),
        console=Console(file=raw_stream(stream)),  # its own escape sequences, past the guard
        transient=False, expand=True,
    )


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
        scorer: A finished sample record -> was it right (None: not scored, e.g. an error); None: no running scores.
        arms: The order the running scores list arms in (the run's); others follow as they finish.
    """

    def __init__(self, total: int, *, live: bool = True, stream: TextIO | None = None, every_s: float = 5.0, every_n: int | None = None,
                 scorer: Callable[[Any], bool | None] | None = None, arms: Sequence[str] = ()) -> None:
        self.total = total
        self._arms = list(arms)
        self._scorer = scorer
        #: (model, arm) -> [right, scored], in the order the arms first finished.
        self.scores: dict[tuple[str, str], list[int]] = {}
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
            self._bar = _bar(self._stream)
            self._task = self._bar.add_task("run", total=total, errors=0, cached=0, rate="")
            self._bar.start()

    def _rate(self) -> str:
        elapsed = time.monotonic() - self._started
        return f"{self.done / elapsed:.1f}/s" if elapsed > 0 else ""

    @property
    def wants_records(self) -> bool:
        """Whether :meth:`advance` needs the record (a worker's record then has to be parsed)."""
        return self._scorer is not None

    def score_text(self) -> str:
        """``right so far: history_only 2/4, recall 3/4`` (model and arm when there are several models); '' before any."""
        several = len({model for model, _ in self.scores}) > 1
        rank = {arm: index for index, arm in enumerate(self._arms)}
        keys = sorted(self.scores, key=lambda key: rank.get(key[1], len(rank)))  # stable: models in the order they finished
        parts = [f"{f'{model} · {arm}' if several else arm} {self.scores[(model, arm)][0]}/{self.scores[(model, arm)][1]}"
                 for model, arm in keys]
        return f"right so far: {', '.join(parts)}" if parts else ""

    def _score(self, record: Any) -> None:
        if self._scorer is None or record is None:
            return
        right = self._scorer(record)
        if right is None:
            return
        tally = self.scores.setdefault((record.model, record.arm), [0, 0])
        tally[0] += bool(right)
        tally[1] += 1

    def advance(self, ok: bool, cached: bool = False, cut_off: bool = False, *, error: str | None = None, record: Any = None) -> None:
        """Count one finished sample (see :func:`record_flags`); ``error`` is a failed sample's ``type: message``;
        ``record`` the sample itself, for the running scores."""
        self._score(record)
        self.done += 1
        self.last_error = error or self.last_error
        self.errors += 0 if ok else 1
        self.cached += 1 if cached else 0
        self.cut_off += 1 if cut_off else 0
        if self._bar is not None:
            self._bar.scores = self.score_text()
            self._bar.update(self._task, advance=1, errors=self.errors, cached=self.cached, rate=self._rate())
            return
        now = time.monotonic()
        if self.done == self.total or self.done % self._every_n == 0 or now - self._last_line >= self._every_s:
            self._last_line = now
            self._line()

    def _line(self) -> None:
        elapsed = time.monotonic() - self._started
        cached = f", {self.cached} from the cache" if self.cached else ""
        scores = f"; {text}" if (text := self.score_text()) else ""
        text = f"[recall-eval] {self.done}/{self.total} samples, {self.errors} errors{cached}, {elapsed:.1f}s, {self._rate()}{scores}"
        for line in wrap(text, terminal_width(self._stream), indent="    "):  # a log line per update, within the width
            print(line, file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
