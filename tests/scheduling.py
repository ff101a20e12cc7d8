"""The order in which the README's test command (``-n auto --dist loadfile``) hands test files to xdist's workers.

xdist hands out whole files, most tests first. The slowest files hold few tests (a handful of real runs, servers and
signals each), so they went out last and set the suite's tail: in one whole-suite run on the two-core machine the
three workers finished at 310, 327 and 334 s, the last two running the rpm-limit router test (25 s) and the SIGINT
resume test (10 s) alone. Files holding a test marked ``slow`` (over ten seconds on that machine, the marker
``-m 'not slow'`` leaves out) now go first, in collection order; the rest follow most tests first, as xdist orders
them. tests/conftest.py applies it on each worker and switches xdist's own reordering off in the controller.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol, TypeVar


class _Item(Protocol):
    nodeid: str

    def get_closest_marker(self, name: str) -> object: ...


T = TypeVar("T", bound=_Item)


def _file(item: _Item) -> str:
    return item.nodeid.split("::", 1)[0]  # xdist's loadfile scope


def slow_files_first(items: Sequence[T]) -> list[T]:
    """``items`` in their new order: the files holding a ``slow`` test in collection order, then the other files with
    the most tests first (ties in collection order); each file's tests together, in their order."""
    counts = Counter(_file(item) for item in items)
    slow = {_file(item) for item in items if item.get_closest_marker("slow") is not None}
    first: dict[str, int] = {}  # each file's rank in collection order
    for item in items:
        first.setdefault(_file(item), len(first))

    def key(item: T) -> tuple[bool, int, int]:
        name = _file(item)
        return name not in slow, 0 if name in slow else -counts[name], first[name]

    return sorted(items, key=key)
