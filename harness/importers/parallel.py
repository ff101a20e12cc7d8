"""A benchmark's elements converted in worker processes, in order, with exactly the result of one process.

A LongMemEval S file is 500 independent questions, each ~0.2 s of key
extraction, YAML writing and gold audit: one CPU takes about a minute. The
workers convert element by element while this process streams the file,
writes the files and keeps the logs, so memory still holds a few elements,
not the file.

What makes the result the same as one process's:

- Results are taken in the order of the elements.
- A converter's only dependency on earlier elements is the set of ids already
  taken (a duplicate id is renamed). A worker converts with an empty set that
  records each id it is asked about. If one of them is taken by the time its
  result is used, that element is converted again here, with the real set.
- Repairs and drops are recorded in order in the worker and replayed into the
  import's :class:`FaultLog` (counts and first examples as if logged here).
- If a worker dies (killed, out of memory), the elements it had not answered
  are converted here instead, after a warning.
"""

from __future__ import annotations

import collections
import concurrent.futures
import concurrent.futures.process
import itertools
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.bulk_allocation import bulk_allocation
from harness.defaults import worker_context
from harness.importers.audit import AuditResult
from harness.importers.faults import FaultLog
from harness.importers.output import dump_yaml

Convert = Callable[[Any, int, FaultLog, set[str]], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Converted:
    """One written conversation: its file text and what the import's totals need of it."""

    id: str
    text: str
    items: int
    probes: tuple[tuple[str, bool], ...]
    """(category, answerable without a relevant item) per probe."""
    audit: AuditResult


def finish(data: dict[str, Any]) -> Converted:
    """The text, counts and gold audit of one converted element."""
    audit = AuditResult()
    audit.add(data)
    probes = tuple(
        (probe["category"], not probe["expect"].get("abstain") and not probe["expect"].get("relevant_items"))
        for probe in data["probes"]
    )
    return Converted(data["id"], dump_yaml(data), len(data["items"]), probes, audit)


def convert_here(convert: Convert, element: Any, index: int, faults: FaultLog, taken: set[str]) -> Converted | None:
    with bulk_allocation():  # an element's items and keys are ~100k objects: fewer collections
        data = convert(element, index, faults, taken)
        return None if data is None else finish(data)


@dataclass
class _RecordedFaults(FaultLog):
    """A fault log that also keeps every call in order, to replay into the import's own log."""

    calls: list[tuple[str, str, str]] = field(default_factory=list)

    def repair(self, kind: str, example: str) -> None:
        self.calls.append(("repair", kind, example))

    def drop(self, kind: str, example: str) -> None:
        self.calls.append(("drop", kind, example))

    def report(self, kind: str, example: str) -> None:
        self.calls.append(("report", kind, example))


class _AskedIds(set[str]):
    """An id set that records every id a converter asks about."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def __contains__(self, value: object) -> bool:
        self.asked.append(str(value))
        return super().__contains__(value)


@dataclass(frozen=True)
class _WorkerResult:
    converted: Converted | None
    calls: list[tuple[str, str, str]]
    asked: list[str]
    added: frozenset[str]


# The converter a worker uses, set once per worker (a function of the importer modules, found by name).
_worker_convert: Convert | None = None


def _start_worker(convert: Convert) -> None:
    global _worker_convert
    _worker_convert = convert


def _convert_in_worker(element: Any, index: int) -> _WorkerResult:
    assert _worker_convert is not None  # set by _start_worker
    faults, taken = _RecordedFaults(), _AskedIds()
    converted = convert_here(_worker_convert, element, index, faults, taken)
    return _WorkerResult(converted, faults.calls, taken.asked, frozenset(taken))


def convert_all(convert: Convert, elements: Iterable[tuple[int, Any]], faults: FaultLog, taken: set[str],
                jobs: int) -> Iterator[Converted | None]:
    """Each ``(index, element)``'s conversion, in order, ``jobs`` at a time in worker processes (1: here).

    At most two elements per worker are in flight, so the file is still read
    as it is converted. ``faults`` and ``taken`` end as one process leaves them.
    """
    if jobs <= 1:
        for index, element in elements:
            yield convert_here(convert, element, index, faults, taken)
        return
    window: collections.deque[tuple[int, Any, concurrent.futures.Future[_WorkerResult]]] = collections.deque()
    source = iter(elements)
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context(),
                                                initializer=_start_worker, initargs=(convert,)) as pool:
        unsent: tuple[int, Any] | None = None  # read from the file, not yet in the window (submit can fail)
        try:
            for unsent in source:
                window.append((*unsent, pool.submit(_convert_in_worker, unsent[1], unsent[0])))
                unsent = None
                if len(window) >= 2 * jobs:
                    yield _taken_in_order(convert, window, faults, taken)
            while window:
                yield _taken_in_order(convert, window, faults, taken)
        except concurrent.futures.process.BrokenProcessPool as exc:
            print(f"recall-eval import: a conversion worker stopped ({exc}); converting the rest here", file=sys.stderr)
            rest = itertools.chain(((index, element) for index, element, _ in window), [unsent] if unsent else [], source)
            for index, element in rest:
                yield convert_here(convert, element, index, faults, taken)


def _taken_in_order(convert: Convert, window: collections.deque[tuple[int, Any, concurrent.futures.Future[_WorkerResult]]],
                    faults: FaultLog, taken: set[str]) -> Converted | None:
    """The first element of ``window``'s result, taken off it only once there is one (a dead worker leaves it there)."""
    index, element, future = window[0]
    result = future.result()
    window.popleft()
    if any(cid in taken for cid in result.asked):  # an earlier element took its id: convert as one process would
        return convert_here(convert, element, index, faults, taken)
    for method, kind, example in result.calls:
        getattr(faults, method)(kind, example)
    taken |= result.added
    return result.converted
