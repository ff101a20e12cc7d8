"""Work that allocates millions of objects and frees few of them, with the cyclic garbage collector run less often.

Loading a LongMemEval S scenario file builds ~700 items of ~12 keys each:
hundreds of thousands of dicts, lists and models, nearly all kept. CPython
runs a collection every 700 net allocations (``gc.get_threshold()[0]``), and
each one walks the young objects to find cycles these files never make:
about a sixth of ``validate``'s CPU (3.9 -> 3.1 s on 50 S-shaped files), and
as much of an import's conversion. Inside :func:`bulk_allocation` a
young collection runs every :data:`YOUNG_THRESHOLD` allocations instead (and
the older generations after at least 50 and 100 of those); nothing
else changes (what is freed by reference counting is freed at once, as
always, and a cycle is still collected, later), and the threshold before is
restored on the way out.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 100_000
"""Net allocations between two young-generation collections inside :func:`bulk_allocation` (CPython's default: 700)."""


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Run the body with young collections every :data:`YOUNG_THRESHOLD` allocations (never more often than already set)."""
    before = gc.get_threshold()
    if before[0] == 0 or before[0] >= YOUNG_THRESHOLD:  # collection off, or already as rare: leave it as it is
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, max(before[1], 50), max(before[2], 100))
    try:
        yield
    finally:
        gc.set_threshold(*before)
