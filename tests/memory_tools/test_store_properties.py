"""Property test: key search equals a brute-force reference of the matching, scope and ranking rules.

Random stores spread over several workspaces (including two that differ only
by case) and random exact/prefix queries. The reference is plain Python over
the generated items, so the test checks that no result belongs to another
workspace, that every result matches a term, and that nothing ranked within
the limit is missed. The alphabet holds the awkward code points of a range
scan: the top of the BMP below the surrogates (U+D7FF), U+E000, U+FFFF,
U+10000, U+10FFFE and U+10FFFF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_tools import (
    ItemInput,
    KeyInput,
    Kind,
    MemoryConflictError,
    MemoryItemSource,
    MemoryItemStore,
    ScopeType,
    _search,
    normalize_search_term,
)

ALPHABET = ["a", "b", "A", "ß", "İ", "偏", "好", "_", " ", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010fffe", "\U0010ffff"]
WORKSPACES = [None, "ws1", "ws2", "WS1"]

texts = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4).map("".join).filter(lambda s: s.strip())


@dataclass(frozen=True)
class _Spec:
    item_id: str
    keys: tuple[str, ...]
    workspace: str | None
    updated_at: int
    archived: bool


@st.composite
def stores(draw: st.DrawFn) -> list[_Spec]:
    count = draw(st.integers(0, 14))
    return [
        _Spec(
            item_id=f"i{n:02}",
            keys=tuple(draw(st.lists(texts, min_size=1, max_size=4))),
            workspace=draw(st.sampled_from(WORKSPACES)),
            updated_at=draw(st.integers(0, 3)),  # few values: ties on updated_at are common
            archived=draw(st.booleans()),
        )
        for n in range(count)
    ]


def _reference(
    specs: list[_Spec], terms: list[str], prefix: bool, workspace: str | None, include_archived: bool, limit: int
) -> list[tuple[str, tuple[str, ...]]]:
    wanted = sorted({normalize_search_term(t) for t in terms})
    ranked = []
    for spec in specs:
        if spec.workspace is not None and spec.workspace != workspace:
            continue
        if spec.archived and not include_archived:
            continue
        keys = sorted({normalize_search_term(k) for k in spec.keys})

        def hit(key: str, term: str) -> bool:
            return key.startswith(term) if prefix else key == term

        matched_terms = [t for t in wanted if any(hit(k, t) for k in keys)]
        if matched_terms:
            matched_keys = tuple(k for k in keys if any(hit(k, t) for t in wanted))
            ranked.append(((-len(matched_terms), -spec.updated_at, spec.item_id), (spec.item_id, matched_keys)))
    ranked.sort()
    return [entry for _, entry in ranked[:limit]]


@st.composite
def queries(draw: st.DrawFn, specs: list[_Spec]) -> list[str]:
    """1..4 terms, mostly whole keys or cuts of stored keys so that matches are common."""
    stored = [key for spec in specs for key in spec.keys]
    if not stored:
        return draw(st.lists(texts, min_size=1, max_size=4))
    cut = st.tuples(st.sampled_from(stored), st.integers(1, 4)).map(lambda pair: pair[0][: pair[1]])
    candidates = st.one_of(cut, st.sampled_from(stored), texts).filter(lambda s: s.strip())
    return draw(st.lists(candidates, min_size=1, max_size=4))


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[_Spec], list[str]]:
    specs = draw(stores())
    return specs, draw(queries(specs))


@settings(max_examples=300, deadline=None)
@given(
    case=cases(),
    prefix=st.booleans(),
    workspace=st.sampled_from(WORKSPACES),
    include_archived=st.booleans(),
    limit=st.integers(1, 8),
)
def test_search_matches_brute_force_reference(
    case: tuple[list[_Spec], list[str]], prefix: bool, workspace: str | None, include_archived: bool, limit: int
) -> None:
    _check_against_reference(case, prefix, workspace, include_archived, limit)


@settings(max_examples=150, deadline=None)
@given(
    case=cases(),
    workspace=st.sampled_from(WORKSPACES),
    include_archived=st.booleans(),
    limit=st.integers(1, 8),
)
def test_wide_prefix_search_by_recency_matches_brute_force_reference(
    case: tuple[list[_Spec], list[str]], workspace: str | None, include_archived: bool, limit: int
) -> None:
    """A one-term prefix matching many keys walks the recency index; every range counts as wide here."""
    with patch.object(_search, "_RANGE_ROWS_MAX", 1):
        _check_against_reference(case, True, workspace, include_archived, limit)


def _check_against_reference(
    case: tuple[list[_Spec], list[str]], prefix: bool, workspace: str | None, include_archived: bool, limit: int,
    *, sql_only: bool = False,
) -> None:
    """``sql_only``: the in-memory key index is never built, so the SQL plans answer every search."""
    specs, terms = case
    with MemoryItemStore() as store:
        if sql_only:
            store._key_index.build_seconds = math.inf
        store.bulk_create(
            ItemInput(
                content=f"content {spec.item_id}",
                kind=Kind.NOTE,
                keys=tuple(KeyInput(k) for k in spec.keys),
                sources=(MemoryItemSource("s", "r", "t", "e"),),
                scope_type=ScopeType.GLOBAL if spec.workspace is None else ScopeType.WORKSPACE,
                scope_key=spec.workspace,
                item_id=spec.item_id,
                now=spec.updated_at,
            )
            for spec in specs
        )
        for spec in specs:
            if spec.archived:
                store.archive(spec.item_id, now=0)  # never moves updated_at
        results = store.search_by_keys_with_matches(
            terms, "prefix" if prefix else "exact", workspace_key=workspace, include_archived=include_archived, limit=limit
        )
    for record, _ in results:
        assert record.item.scope_key in (None, workspace), "result from another workspace"
    got = [(record.item.item_id, matched) for record, matched in results]
    assert got == _reference(specs, terms, prefix, workspace, include_archived, limit)


@settings(max_examples=200, deadline=None)
@given(
    case=cases(),
    workspace=st.sampled_from(WORKSPACES),
    include_archived=st.booleans(),
    limit=st.integers(1, 8),
    wide_rows=st.integers(1, 4),
)
def test_prefix_search_with_one_wide_term_matches_brute_force_reference(
    case: tuple[list[_Spec], list[str]], workspace: str | None, include_archived: bool, limit: int, wide_rows: int
) -> None:
    """Several prefix terms, the widest walked by recency and the others ranked exactly (any counts: the plan is exact)."""
    with patch.object(_search, "_RANGE_ROWS_MAX", wide_rows), patch.object(_search, "_NARROW_ROWS_MAX", 1000), \
            patch.object(_search, "_INDEXED_ROWS_MIN", wide_rows):
        _check_against_reference(case, True, workspace, include_archived, limit, sql_only=True)


@settings(max_examples=300, deadline=None)
@given(
    case=cases(),
    workspace=st.sampled_from(WORKSPACES),
    include_archived=st.booleans(),
    limit=st.integers(1, 8),
)
def test_prefix_search_counted_by_the_key_index_matches_brute_force_reference(
    case: tuple[list[_Spec], list[str]], workspace: str | None, include_archived: bool, limit: int
) -> None:
    """Several prefix terms counted in memory (every search counts as wide here) rank as the rules say."""
    with patch.object(_search, "_INDEXED_ROWS_MIN", 0):
        _check_against_reference(case, True, workspace, include_archived, limit)


@settings(max_examples=150, deadline=None)
@given(
    case=cases(),
    later=st.lists(st.tuples(st.sampled_from(["archive", "restore", "rekey", "add"]), st.integers(0, 13), texts), max_size=4),
    workspace=st.sampled_from(WORKSPACES),
    include_archived=st.booleans(),
)
def test_key_index_follows_every_write_of_its_store(
    case: tuple[list[_Spec], list[str]], later: list[tuple[str, int, str]], workspace: str | None, include_archived: bool
) -> None:
    """Search (building the index), write, search again: the second answer is the SQL plans' on the changed store."""
    specs, terms = case
    with patch.object(_search, "_INDEXED_ROWS_MIN", 0), MemoryItemStore() as store, MemoryItemStore() as plain:
        plain._key_index.build_seconds = math.inf
        for target in (store, plain):
            target.bulk_create(_inputs(specs))
        search = {"workspace_key": workspace, "include_archived": include_archived, "limit": 8}
        store.search_by_keys(terms, "prefix", **search)
        for step, (action, n, text) in enumerate(later):
            for target in (store, plain):
                _write(target, specs, action, n, text, step)
            got = [r.item.item_id for r in store.search_by_keys(terms, "prefix", **search)]
            assert got == [r.item.item_id for r in plain.search_by_keys(terms, "prefix", **search)]


def _inputs(specs: list[_Spec]) -> list[ItemInput]:
    return [
        ItemInput(
            content=f"content {spec.item_id}", kind=Kind.NOTE, keys=tuple(KeyInput(k) for k in spec.keys),
            sources=(MemoryItemSource("s", "r", "t", "e"),),
            scope_type=ScopeType.GLOBAL if spec.workspace is None else ScopeType.WORKSPACE, scope_key=spec.workspace,
            item_id=spec.item_id, now=spec.updated_at,
        )
        for spec in specs
    ]  # fmt: skip


def _write(store: MemoryItemStore, specs: list[_Spec], action: str, n: int, text: str, step: int) -> None:
    """One write of the index test; a transition the item's state refuses is skipped (the same in both stores)."""
    if action == "add" or not specs:
        store.create(_inputs([_Spec(f"new{step}", (text,), None, 2, False)])[0])
        return
    item_id = specs[n % len(specs)].item_id
    try:
        if action == "archive":
            store.archive(item_id, now=10 + step)
        elif action == "restore":
            store.restore(item_id, now=10 + step)
        else:
            store.update(item_id, keys=[KeyInput(text)], now=10 + step)
    except MemoryConflictError:
        pass


def test_key_index_is_rebuilt_when_another_connection_commits(tmp_path: Path) -> None:
    """Two stores on one file: a write through one is seen by the other's next wide search (PRAGMA data_version)."""
    path = tmp_path / "m.db"
    with patch.object(_search, "_INDEXED_ROWS_MIN", 0), MemoryItemStore(path) as reader, MemoryItemStore(path) as writer:
        writer.create(_inputs([_Spec("old", ("memory",), None, 1, False)])[0])
        assert [r.item.item_id for r in reader.search_by_keys(["mem", "zz"], "prefix")] == ["old"]
        assert reader._key_index.builds == 1
        writer.create(_inputs([_Spec("new", ("memo", "zz"), None, 2, False)])[0])
        reader._key_index.build_seconds = 0.0  # rebuild at once instead of answering by SQL first
        assert [r.item.item_id for r in reader.search_by_keys(["mem", "zz"], "prefix")] == ["new", "old"]
        assert reader._key_index.builds == 2
