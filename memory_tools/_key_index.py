"""An in-process copy of a store's key rows, for key searches over wide prefix ranges.

Ranking by the number of distinct terms matched needs every match of every
term counted: a prefix such as ``pre`` at 100,000 items is ~34,000 key rows,
and SQLite reads a covering-index row in ~40 ns, so two such terms cost
several milliseconds however the query is planned. This index holds the same
rows as numpy arrays (key postings as item ordinals in rank order), so a range
is a slice found by bisection and counting it is a vectorised scatter: ~1 ns a
row. It is a cache of the database, never a second source of truth:

- built inside a read transaction, from that snapshot;
- dropped by every write of the owning store, and ignored when
  ``PRAGMA data_version`` says another connection committed since;
- (re)built only when wide searches have already cost as much as the last
  build did (ski rental: never more than twice what the better choice would
  have cost), so a store that writes between its searches keeps the SQL plans.

Results equal :func:`memory_tools._search.ranked_item_ids`' SQL plans exactly
(``tests/memory_tools/test_store_properties.py`` compares both with a plain
reference on random stores).
"""

from __future__ import annotations

import bisect
import sqlite3
import time
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any


@dataclass(frozen=True, slots=True, eq=False)
class KeyIndex:
    """The key rows of one database snapshot.

    Attributes:
        keys: distinct normalized keys, sorted in code-point order (SQLite's ``memcmp`` on UTF-8).
        starts: ``len(keys) + 1`` offsets; the items of ``keys[i]`` are ``postings[starts[i]:starts[i + 1]]``.
        postings: item ordinals, grouped by key.
        item_ids: by ordinal, in rank order (``updated_at`` descending, then item id).
        scope: per ordinal, 0 for a global item, else the workspace's code in ``workspaces``.
        archived: per ordinal.
        data_version: ``PRAGMA data_version`` when built (other connections' commits change it).
    """

    keys: list[str]
    starts: Any
    postings: Any
    item_ids: list[str]
    scope: Any
    archived: Any
    workspaces: dict[str, int]
    data_version: int
    _allowed: dict[tuple[str | None, bool], Any] = field(default_factory=dict)

    @classmethod
    def build(cls, db: sqlite3.Connection) -> KeyIndex:
        """Read every item and key row (call inside a read transaction)."""
        import numpy as np

        data_version = int(db.execute("PRAGMA data_version").fetchone()[0])
        item_ids: list[str] = []
        scopes: list[int] = []
        archived: list[bool] = []
        workspaces: dict[str, int] = {}
        for item_id, scope_key, state in db.execute(
            "SELECT item_id, scope_key, lifecycle_state FROM memory_item ORDER BY updated_at DESC, item_id"
        ):
            item_ids.append(item_id)
            scopes.append(0 if scope_key is None else workspaces.setdefault(scope_key, len(workspaces) + 1))
            archived.append(state == "archived")
        ordinal = {item_id: n for n, item_id in enumerate(item_ids)}
        keys: list[str] = []
        counts: list[int] = []
        for key, count in db.execute(
            "SELECT normalized_key, count(*) FROM memory_item_key INDEXED BY memory_item_key_search "
            "GROUP BY normalized_key ORDER BY normalized_key"
        ):
            keys.append(key)
            counts.append(count)
        rows = db.execute(
            "SELECT item_id FROM memory_item_key INDEXED BY memory_item_key_search ORDER BY normalized_key"
        ).fetchall()
        # map over C-level getters: half the time of a generator expression per row (~500,000 rows at 100,000 items)
        postings = np.fromiter(map(ordinal.__getitem__, map(itemgetter(0), rows)), dtype=np.int32, count=len(rows))
        starts = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        return cls(
            keys, starts, postings, item_ids, np.array(scopes, dtype=np.int32), np.array(archived, dtype=bool),
            workspaces, data_version,
        )  # fmt: skip

    def term_rows(self, term: str, prefix: bool, upper: str | None) -> tuple[int, int]:
        """The posting slice of ``term`` (a prefix range ends before ``upper``; None: no upper bound)."""
        first = bisect.bisect_left(self.keys, term)
        if not prefix:
            last = first + 1 if first < len(self.keys) and self.keys[first] == term else first
        else:
            last = len(self.keys) if upper is None else bisect.bisect_left(self.keys, upper, first)
        return int(self.starts[first]), int(self.starts[last])

    def allowed(self, workspace_key: str | None, include_archived: bool) -> Any:
        """Per ordinal: in the search's scope and lifecycle filter (kept per filter: a few workspaces)."""
        import numpy as np

        known = self._allowed.get((workspace_key, include_archived))
        if known is None:
            known = self.scope == 0
            code = self.workspaces.get(workspace_key) if workspace_key is not None else None
            if code is not None:
                known = known | (self.scope == code)
            if not include_archived:
                known = known & ~self.archived
            known = np.ascontiguousarray(known)
            if len(self._allowed) >= 64:
                self._allowed.clear()
            self._allowed[(workspace_key, include_archived)] = known
        return known

    def ranked(self, bounds: list[tuple[int, int]], workspace_key: str | None, include_archived: bool, limit: int) -> list[str]:
        """The best ``limit`` item ids in the filter, as the SQL plans rank them; ``bounds`` from :meth:`term_rows` per term."""
        import numpy as np

        matched = np.zeros(len(self.item_ids), dtype=np.uint8)  # distinct terms matched, per ordinal (at most 32)
        for first, last in bounds:
            # Buffered fancy-index add: an ordinal repeated in one range (an item whose keys share
            # the prefix) is incremented once, so each term counts once per item, in O(rows).
            matched[self.postings[first:last]] += 1
        matched *= self.allowed(workspace_key, include_archived)  # the filter before the limit
        hits = np.flatnonzero(matched)
        if hits.size == 0:
            return []
        scores = matched[hits]
        chosen: list[int] = []
        for score in range(int(scores.max()), 0, -1):
            chosen += hits[scores == score][: limit - len(chosen)].tolist()  # ordinals ascend: rank order
            if len(chosen) >= limit:
                break
        return [self.item_ids[n] for n in chosen]


@dataclass(slots=True)
class KeyIndexCache:
    """One store's :class:`KeyIndex`, with the bookkeeping of when to (re)build it.

    Not locked: the store calls it under its own lock.
    """

    index: KeyIndex | None = None
    build_seconds: float = 0.0
    """What the last build took: wide searches answered by SQL since the last change must cost this much first."""
    spent_seconds: float = 0.0
    """Seconds spent on wide searches by SQL since the index was last dropped."""
    builds: int = 0

    def drop(self) -> None:
        """The store wrote: the copy is stale."""
        self.index = None
        self.spent_seconds = 0.0

    def fresh(self, db: sqlite3.Connection) -> KeyIndex | None:
        """The index if it still matches the database (no other connection committed since it was built)."""
        if self.index is not None and int(db.execute("PRAGMA data_version").fetchone()[0]) != self.index.data_version:
            self.drop()
        return self.index

    def worth_building(self) -> bool:
        return self.spent_seconds >= self.build_seconds

    def build(self, db: sqlite3.Connection) -> KeyIndex:
        started = time.perf_counter()
        self.index = KeyIndex.build(db)
        self.build_seconds = time.perf_counter() - started
        self.builds += 1
        return self.index

    def charge(self, seconds: float) -> None:
        self.spent_seconds += seconds
