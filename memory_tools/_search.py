"""Key search: request checks and the SQL that ranks item ids.

Rank: number of distinct terms matched (desc), ``updated_at`` (desc), item id.
Query plans, chosen per request (figures from ``benchmarks/store_bench.py``
at 100,000 items, ~500,000 keys):

- exact, one term: one stream per (archived, scope) pair over
  ``memory_item_key_search``; each is already in rank order, so SQLite stops
  after ``limit`` rows, however many items carry the key.
- prefix, one term: the range ``term <= key < successor(term)``. Its rows
  are counted first, up to :data:`_RANGE_ROWS_MAX`; a narrower range is
  ranked whole (~0.35 µs a row), a wider one is answered by walking
  ``memory_item_key_recent`` newest first and stopping at ``limit`` distinct
  items (~0.1 µs a row walked, and the wider the range the sooner it stops).
- several terms: one range or equality per term, ``UNION ALL``, grouped by
  item. Every match must be counted, so the cost grows with the matched
  rows (~0.35 µs a row).
- several prefix terms whose ranges hold :data:`_INDEXED_ROWS_MIN` rows or
  more together: counted in memory by :mod:`memory_tools._key_index` (a numpy
  copy of the key rows, ~1 ns a row; built once, dropped by any write). Short
  prefixes of common words (``pre``, ``prefer``: ~34,000 rows each) made
  this the slow case of the SQL plans: p95 12.8 ms at 5 terms, 17-23 ms for
  two wide terms, where counting a 34,000-row range alone takes ~1.3 ms.
  Until the index is worth (re)building, the SQL plans below answer.
- several prefix terms, the widest matching at least :data:`_RANGE_ROWS_MAX`
  rows and the others fewer than :data:`_NARROW_ROWS_MAX` together (no
  index yet): the wide range is never read whole. The items of the other
  terms are the candidates, ranked exactly (one primary-key probe each tells
  whether the wide term matches them too); any other match matched the wide
  term only, so it ranks 1 and only the newest ``limit`` of them count: a
  walk of ``memory_item_key_recent`` that skips candidates. One statement
  merges both.

SQLite compares TEXT with ``memcmp`` on UTF-8, which is code-point order. The
successor skips the surrogate gap (U+D7FF -> U+E000) and drops trailing
U+10FFFF, which has no successor; a term made only of U+10FFFF has no upper bound.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from memory_tools._key_index import KeyIndexCache
from memory_tools.item_validation import MAX_KEYS_PER_ITEM
from memory_tools.model import MemoryItemRecord, MemoryValidationError
from memory_tools.normalize import normalize_identifier, normalize_search_term

MAX_SEARCH_TERMS: Final = 32
MAX_SEARCH_RESULTS: Final = 100
DEFAULT_SEARCH_LIMIT: Final = 20

_RANGE_ROWS_MAX: Final = 2000
"""Above this many matching key rows a one-term prefix search walks by recency instead (measured crossover)."""

_NARROW_ROWS_MAX: Final = 2000
"""Below this many rows (together) the other terms of a prefix search with one wide term are ranked without it."""

_INDEXED_ROWS_MIN: Final = 2000
"""From this many range rows together (each range counted up to :data:`_RANGE_ROWS_MAX`), several prefix terms are
counted by the in-memory index rather than by SQL (SQL ranks ~0.35 µs a row, so ~0.7 ms here)."""

_FRESH_INDEX_ITEMS_PER_ROW: Final = 250
"""Once the index is built, it also counts ranges of fewer rows: from one row per 250 items, its passes over
every item (~0.1 ms at 100,000) cost less than SQL's ~0.35 µs a row."""

_SURROGATE_GAP_START = 0xD800
_SURROGATE_GAP_END = 0xE000
_MAX_CODE_POINT = 0x10FFFF


def prefix_upper_bound(term: str) -> str | None:
    """The smallest string greater than every string that starts with ``term``.

    Returns None when no such string exists (``term`` is only U+10FFFF).

    Example:
        >>> prefix_upper_bound("ab"), prefix_upper_bound("a\\ud7ff") == "a\\ue000"
        ('ac', True)
    """
    stem = term.rstrip(chr(_MAX_CODE_POINT))
    if not stem:
        return None
    last = ord(stem[-1]) + 1
    if last == _SURROGATE_GAP_START:
        last = _SURROGATE_GAP_END
    return stem[:-1] + chr(last)


@dataclass(frozen=True, slots=True)
class KeySearch:
    """A checked key search request.

    Attributes:
        terms: normalized, de-duplicated and sorted.
    """

    terms: tuple[str, ...]
    prefix: bool
    workspace_key: str | None
    include_archived: bool
    limit: int

    def matched_keys(self, record: MemoryItemRecord) -> tuple[str, ...]:
        """The record's normalized keys that match a term, in stored (sorted) order."""
        if self.prefix:
            return tuple(k.normalized_key for k in record.keys if k.normalized_key.startswith(self.terms))
        return tuple(k.normalized_key for k in record.keys if k.normalized_key in self.terms)


def check_key_search(
    terms: object, match: object, workspace_key: object, include_archived: object, limit: object
) -> KeySearch:
    """Apply the request rules in the product's order and with its messages.

    Raises:
        MemoryValidationError: e.g. ``"Memory key search accepts at most 32 terms"``.
    """
    if match not in ("exact", "prefix"):
        raise MemoryValidationError("Memory key match must be exact or prefix")
    if isinstance(terms, (str, bytes)) or not isinstance(terms, Sequence) or len(terms) == 0:
        raise MemoryValidationError("Memory key search requires at least one term")
    if len(terms) > MAX_SEARCH_TERMS:
        raise MemoryValidationError(f"Memory key search accepts at most {MAX_SEARCH_TERMS} terms")
    if type(include_archived) is not bool:
        raise MemoryValidationError("Memory key include_archived must be a boolean")
    unique = tuple(sorted({normalize_search_term(t, f"terms[{i}]") for i, t in enumerate(terms)}))
    if workspace_key is not None:
        workspace_key = normalize_identifier(workspace_key, "workspace_key")
    limit = DEFAULT_SEARCH_LIMIT if limit is None else limit
    if type(limit) is not int or not 1 <= limit <= MAX_SEARCH_RESULTS:
        raise MemoryValidationError(f"Memory key search limit must be between 1 and {MAX_SEARCH_RESULTS}")
    return KeySearch(unique, match == "prefix", workspace_key, include_archived, limit)


def ranked_item_ids(db: sqlite3.Connection, search: KeySearch, cache: KeyIndexCache | None = None) -> list[str]:
    """The ids of the best ``search.limit`` matching items, best first.

    ``cache`` (the store's) lets several prefix terms with wide ranges be
    counted in memory (:mod:`memory_tools._key_index`) instead of by SQL.
    """
    if len(search.terms) > 1:
        if search.prefix:
            return _several_prefixes(db, search, cache)
        sql, params = _grouped_query(search)
    elif not search.prefix:
        sql, params = _exact_streams_query(search)
    else:
        condition, bounds = _term_condition(search.terms[0], True)
        count = db.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM memory_item_key INDEXED BY memory_item_key_search "
            f"WHERE {condition} LIMIT {_RANGE_ROWS_MAX})",
            bounds,
        ).fetchone()[0]
        if count < _RANGE_ROWS_MAX:
            sql, params = _range_query(search, condition, bounds)
        else:
            sql, params = _recent_streams_query(search, condition, bounds)
    return _first_rows(db, sql, params, search.limit)


def _first_rows(db: sqlite3.Connection, sql: str, params: list[Any], limit: int) -> list[str]:
    # A prefix may match several keys of one item: keep the first (best) row of each.
    return list(dict.fromkeys(row[0] for row in db.execute(sql, params)))[:limit]


def _several_prefixes(db: sqlite3.Connection, search: KeySearch, cache: KeyIndexCache | None) -> list[str]:
    """Several prefix terms: by SQL while their ranges hold few rows together, else by the in-memory index.

    Without a fresh index, the ranges are counted (each up to :data:`_RANGE_ROWS_MAX`);
    the index is built once wide searches have cost what its last build did
    (:class:`~memory_tools._key_index.KeyIndexCache`), and until then the SQL plans answer.
    """
    index = cache.fresh(db) if cache is not None else None
    if index is not None:
        bounds = [index.term_rows(term, True, prefix_upper_bound(term)) for term in search.terms]
        rows = sum(last - first for first, last in bounds)
        if rows >= _INDEXED_ROWS_MIN or rows * _FRESH_INDEX_ITEMS_PER_ROW >= len(index.item_ids):
            return index.ranked(bounds, search.workspace_key, search.include_archived, search.limit)
        return _first_rows(db, *_grouped_query(search), search.limit)
    counts = _range_rows(db, search.terms, _RANGE_ROWS_MAX)
    if sum(counts) < _INDEXED_ROWS_MIN:
        return _first_rows(db, *_grouped_query(search), search.limit)
    if cache is not None and cache.worth_building():
        index = cache.build(db)
        bounds = [index.term_rows(term, True, prefix_upper_bound(term)) for term in search.terms]
        return index.ranked(bounds, search.workspace_key, search.include_archived, search.limit)
    started = time.perf_counter()
    planned = _one_wide_term_query(search, counts)
    ids = _first_rows(db, *(planned if planned is not None else _grouped_query(search)), search.limit)
    if cache is not None:
        cache.charge(time.perf_counter() - started)
    return ids


def _term_condition(term: str, prefix: bool, column: str = "normalized_key") -> tuple[str, list[str]]:
    if not prefix:
        return f"{column} = ?", [term]
    upper = prefix_upper_bound(term)
    if upper is None:
        return f"{column} >= ?", [term]
    return f"{column} >= ? AND {column} < ?", [term, upper]


def _range_rows(db: sqlite3.Connection, terms: Sequence[str], cap: int) -> list[int]:
    """Key rows (of any scope or state) in each term's prefix range, counted up to ``cap``."""
    counts, params = [], []
    for term in terms:
        condition, bounds = _term_condition(term, True)
        counts.append(
            f"(SELECT count(*) FROM (SELECT 1 FROM memory_item_key INDEXED BY memory_item_key_search "
            f"WHERE {condition} LIMIT {cap}))"
        )
        params += bounds
    return list(db.execute(f"SELECT {', '.join(counts)}", params).fetchone())


def _filters(search: KeySearch) -> tuple[str, list[Any]]:
    """The scope and lifecycle filter as one SQL condition (for the whole-range plans)."""
    sql = "" if search.include_archived else " AND archived = 0"
    if search.workspace_key is None:
        return sql + " AND scope_key IS NULL", []
    return sql + " AND (scope_key IS NULL OR scope_key = ?)", [search.workspace_key]


def _streams(search: KeySearch) -> list[tuple[str, list[Any]]]:
    """The same filter split into equality streams, each in index (rank) order."""
    archived = (0, 1) if search.include_archived else (0,)
    scopes: list[tuple[str, list[Any]]] = [("scope_key IS NULL", [])]
    if search.workspace_key is not None:
        scopes.append(("scope_key = ?", [search.workspace_key]))
    return [(f"archived = {flag} AND {scope}", params) for flag in archived for scope, params in scopes]


def _merged(selects: list[str], params: list[Any], limit: int) -> tuple[str, list[Any]]:
    if len(selects) == 1:
        return selects[0], params
    union = " UNION ALL ".join(f"SELECT * FROM ({select})" for select in selects)
    return f"SELECT item_id, updated_at FROM ({union}) ORDER BY updated_at DESC, item_id LIMIT {limit}", params


def _exact_streams_query(search: KeySearch) -> tuple[str, list[Any]]:
    selects, params = [], []
    for stream, stream_params in _streams(search):
        selects.append(
            "SELECT item_id, updated_at FROM memory_item_key INDEXED BY memory_item_key_search "
            f"WHERE normalized_key = ? AND {stream} ORDER BY updated_at DESC, item_id LIMIT {search.limit}"
        )
        params += [search.terms[0], *stream_params]
    return _merged(selects, params, search.limit)


def _recent_streams_query(search: KeySearch, condition: str, bounds: list[str]) -> tuple[str, list[Any]]:
    selects, params = [], []
    for stream, stream_params in _streams(search):
        selects.append(
            "SELECT DISTINCT item_id, updated_at FROM memory_item_key INDEXED BY memory_item_key_recent "
            f"WHERE {stream} AND {condition} ORDER BY updated_at DESC, item_id LIMIT {search.limit}"
        )
        params += [*stream_params, *bounds]
    return _merged(selects, params, search.limit)


def _range_query(search: KeySearch, condition: str, bounds: list[str]) -> tuple[str, list[Any]]:
    # One term: every matching item matched it once, so rank by recency. Instead of a
    # DISTINCT pass take enough rows for ``limit`` distinct items (an item has at most
    # 32 keys, and its rows are adjacent in this order); the caller drops repeats.
    filters, scope_params = _filters(search)
    sql = (
        f"SELECT item_id, updated_at FROM memory_item_key INDEXED BY memory_item_key_search "
        f"WHERE {condition}{filters} ORDER BY updated_at DESC, item_id LIMIT ?"
    )
    return sql, [*bounds, *scope_params, search.limit * MAX_KEYS_PER_ITEM]


def _grouped_query(search: KeySearch) -> tuple[str, list[Any]]:
    """Every term is one range of the covering key index; matches are counted per item."""
    filters, scope_params = _filters(search)
    selects: list[str] = []
    params: list[Any] = []
    for index, term in enumerate(search.terms):
        condition, bounds = _term_condition(term, search.prefix)
        selects.append(
            f"SELECT item_id, {index} AS term, updated_at FROM memory_item_key INDEXED BY memory_item_key_search "
            f"WHERE {condition}{filters}"
        )
        params += bounds + scope_params
    sql = (
        f"SELECT item_id, COUNT(DISTINCT term) AS matched, MAX(updated_at) AS updated "
        f"FROM ({' UNION ALL '.join(selects)}) "
        "GROUP BY item_id ORDER BY matched DESC, updated DESC, item_id LIMIT ?"
    )
    return sql, [*params, search.limit]


def _one_wide_term_query(search: KeySearch, counts: list[int]) -> tuple[str, list[Any]] | None:
    """The plan for prefix terms of which one is wide and the others narrow (module doc), or None if it does not apply.

    ``counts``: each term's range rows (:func:`_range_rows`). Correct for any counts (an item
    outside the candidates matched the wide term only); the thresholds only choose when it is
    faster than :func:`_grouped_query`.
    """
    wide = max(range(len(counts)), key=counts.__getitem__)
    if counts[wide] < _RANGE_ROWS_MAX or sum(counts) - counts[wide] >= _NARROW_ROWS_MAX:
        return None  # no wide term, or the others are wide too: then the probes and the walk cost more than they save
    filters, scope_params = _filters(search)
    selects: list[str] = []
    narrow_params: list[Any] = []
    for index, term in enumerate(search.terms):
        if index != wide:
            condition, bounds = _term_condition(term, True)
            selects.append(
                f"SELECT item_id, {index} AS term, updated_at FROM memory_item_key "
                f"INDEXED BY memory_item_key_search WHERE {condition}{filters}"
            )
            narrow_params += bounds + scope_params
    probe, probe_params = _term_condition(search.terms[wide], True, "w.normalized_key")
    wide_condition, wide_bounds = _term_condition(search.terms[wide], True)
    # Candidates: exact count, the wide term checked on the item's own keys (primary key probe).
    candidates = (
        "SELECT item_id, COUNT(DISTINCT term) + EXISTS (SELECT 1 FROM memory_item_key AS w "
        f"WHERE w.item_id = narrow.item_id AND {probe}) AS matched, MAX(updated_at) AS updated "
        f"FROM narrow GROUP BY item_id ORDER BY matched DESC, updated DESC, item_id LIMIT {search.limit}"
    )
    walks, walk_params = [], []
    for stream, stream_params in _streams(search):
        walks.append(
            "SELECT DISTINCT item_id, 1 AS matched, updated_at AS updated FROM memory_item_key "
            f"INDEXED BY memory_item_key_recent WHERE {stream} AND {wide_condition} "
            f"AND item_id NOT IN (SELECT item_id FROM narrow) ORDER BY updated_at DESC, item_id LIMIT {search.limit}"
        )
        walk_params += [*stream_params, *wide_bounds]
    parts = " UNION ALL ".join(f"SELECT * FROM ({select})" for select in [candidates, *walks])
    sql = (
        f"WITH narrow AS MATERIALIZED ({' UNION ALL '.join(selects)}) "
        f"SELECT item_id, matched, updated FROM ({parts}) ORDER BY matched DESC, updated DESC, item_id LIMIT {search.limit}"
    )
    return sql, [*narrow_params, *probe_params, *walk_params]
