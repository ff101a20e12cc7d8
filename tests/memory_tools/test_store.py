"""The SQLite memory item store: writes, lifecycle, scope, matching and ranking."""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Iterator
from unittest.mock import patch

import pytest

from memory_tools import (
    SCHEMA_VERSION,
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    LifecycleState,
    MemoryConflictError,
    MemoryItemSource,
    MemoryItemStore,
    MemoryNotFoundError,
    MemoryStoreError,
    MemoryValidationError,
    ScopeType,
    TemporalType,
    _search,
)
from memory_tools.store import prefix_upper_bound

SOURCE = MemoryItemSource("s1", "r1", "t1", "e1")


@pytest.fixture
def store() -> Iterator[MemoryItemStore]:
    with MemoryItemStore() as s:
        yield s


def _item(item_id: str, *keys: str, workspace: str | None = None, now: int = 100, content: str | None = None) -> ItemInput:
    return ItemInput(
        content=content or f"content of {item_id}",
        kind=Kind.KNOWLEDGE,
        keys=tuple(KeyInput(k) for k in keys),
        sources=(SOURCE,),
        scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL,
        scope_key=workspace,
        item_id=item_id,
        now=now,
    )


def _ids(records) -> list[str]:  # noqa: ANN001
    return [r.item.item_id for r in records]


# -- create / read ----------------------------------------------------------------------------------
def test_create_gives_version_1_active_and_content_hash(store: MemoryItemStore):
    record = store.create(_item("a", "Indent", content=" Prefers tabs "))
    item = record.item
    assert (item.version, item.lifecycle_state, item.created_at, item.updated_at, item.observed_at) == (
        1, LifecycleState.ACTIVE, 100, 100, 100,
    )  # fmt: skip
    assert item.content == "Prefers tabs"
    assert item.content_hash == hashlib.sha256(b"Prefers tabs").hexdigest()
    assert store.read_item("a") == record


def test_read_item_missing_returns_none(store: MemoryItemStore):
    assert store.read_item("nope") is None


def test_read_item_applies_no_scope_or_lifecycle_filter(store: MemoryItemStore):
    store.create(_item("w", "k", workspace="ws1"))
    store.archive("w", now=200)
    record = store.read_item("w")
    assert record is not None and record.item.lifecycle_state is LifecycleState.ARCHIVED


def test_create_mints_id_and_uses_wall_clock_when_absent(store: MemoryItemStore):
    record = store.create(ItemInput(content="c", kind=Kind.NOTE, keys=(KeyInput("k"),), sources=(SOURCE,)))
    assert len(record.item.item_id) == 32 and record.item.created_at > 1_600_000_000_000
    assert record.item.observed_at == record.item.created_at


def test_duplicate_item_id_is_conflict(store: MemoryItemStore):
    store.create(_item("a", "k"))
    with pytest.raises(MemoryConflictError, match="item_id 'a' already exists"):
        store.create(_item("a", "other"))


def test_bulk_create_is_one_transaction(store: MemoryItemStore):
    store.create(_item("b", "k"))
    with pytest.raises(MemoryConflictError, match="'b' already exists"):
        store.bulk_create([_item("a", "k"), _item("b", "k")])
    assert store.read_item("a") is None


def test_bulk_create_duplicate_within_batch_is_conflict(store: MemoryItemStore):
    with pytest.raises(MemoryConflictError, match="more than once"):
        store.bulk_create([_item("a", "k"), _item("a", "j")])
    assert store.read_item("a") is None


def test_bulk_create_error_names_the_item(store: MemoryItemStore):
    with pytest.raises(MemoryValidationError, match=r"items\[1\]: keys\[0\]\.key must not be empty"):
        store.bulk_create([_item("a", "k"), _item("b", " ")])


def test_bulk_create_returns_what_read_item_returns(store: MemoryItemStore):
    created = store.bulk_create([_item("a", "Zeta", "alpha"), _item("b", "k", workspace="ws")])
    assert created == [store.read_item("a"), store.read_item("b")]
    assert [k.normalized_key for k in created[0].keys] == ["alpha", "zeta"]


def _schema_and_answers(store: MemoryItemStore) -> tuple[list[tuple[str, str]], list[list[str]], str]:
    with store._read() as db:
        schema = db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
    answers = [_ids(store.search_by_keys(terms, match, workspace_key="ws"))
               for terms, match in ((["k3"], "exact"), (["k1", "k2"], "prefix"), (["alpha"], "exact"))]
    return schema, answers, check


def test_a_large_batch_into_an_empty_store_builds_the_same_indexes_and_answers(store: MemoryItemStore):
    """Past DEFERRED_INDEX_ROWS key rows into an empty store the key indexes are built after the rows: same store."""
    from memory_tools._schema import DEFERRED_INDEX_ROWS

    items = [_item(f"i{n:04}", f"k{n % 7}", f"k{n % 13}x", "alpha" if n % 5 else "beta", workspace="ws" if n % 2 else None,
                   now=100 + n % 17) for n in range(DEFERRED_INDEX_ROWS // 3 + 50)]
    assert sum(len(i.keys) for i in items) >= DEFERRED_INDEX_ROWS
    store.bulk_create(items)
    with MemoryItemStore() as row_by_row:
        for start in range(0, len(items), 100):  # batches too small to defer: indexes kept up row by row
            row_by_row.bulk_create(items[start:start + 100])
        assert _schema_and_answers(store) == _schema_and_answers(row_by_row)
    assert _schema_and_answers(store)[2] == "ok" and len(_schema_and_answers(store)[1][0]) > 0
    with store._read() as db:
        plan = " ".join(str(row) for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT item_id FROM memory_item_key WHERE normalized_key = 'k3' AND archived = 0"))
    assert "memory_item_key_search" in plan


def test_a_large_batch_that_fails_leaves_the_empty_store_and_its_indexes_as_they_were(store: MemoryItemStore):
    from memory_tools._schema import DEFERRED_INDEX_ROWS

    items = [_item(f"i{n:04}", "a", "b", "c", "d") for n in range(DEFERRED_INDEX_ROWS // 4 + 10)]
    with pytest.raises(MemoryValidationError):
        store.bulk_create([*items, _item("bad", " ")])
    db = store._conn()  # a stray source row (autocommit): the batch fails on its sources, after its key rows went in
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("INSERT INTO memory_item_source VALUES ('i0005', 0, 's', 'r', 't', 'e')")
    db.execute("PRAGMA foreign_keys = ON")
    with pytest.raises(MemoryStoreError):
        store.bulk_create(items)
    with store._write() as db:
        db.execute("DELETE FROM memory_item_source")
    assert store.read_item("i0000") is None
    with MemoryItemStore() as fresh:
        assert _schema_and_answers(store) == _schema_and_answers(fresh)


# -- update / lifecycle -----------------------------------------------------------------------------
def test_versions_go_1_2_3_4_across_update_archive_restore(store: MemoryItemStore):
    versions = [store.create(_item("a", "k")).item.version]
    versions.append(store.update("a", content="new", now=200).item.version)
    versions.append(store.archive("a", now=300).item.version)
    versions.append(store.restore("a", now=400).item.version)
    assert versions == [1, 2, 3, 4]
    assert store.read_item("a").item.version == 4  # type: ignore[union-attr]


def test_noop_update_keeps_version(store: MemoryItemStore):
    created = store.create(_item("a", "k", content="same"))
    again = store.update("a", content=" same ", keys=[KeyInput("k")], now=999)
    assert again == created and again.item.updated_at == 100


def test_updated_at_never_moves_backwards(store: MemoryItemStore):
    store.create(_item("a", "k", now=500))
    assert store.update("a", content="x", now=100).item.updated_at == 500
    assert store.archive("a", now=50).item.updated_at == 500
    assert store.restore("a", now=900).item.updated_at == 900


def test_invalid_lifecycle_transition_is_conflict(store: MemoryItemStore):
    store.create(_item("a", "k"))
    with pytest.raises(MemoryConflictError, match="invalid lifecycle transition .*cannot restore"):
        store.restore("a")
    store.archive("a")
    with pytest.raises(MemoryConflictError, match="invalid lifecycle transition .*cannot archive"):
        store.archive("a")


def test_unknown_id_is_not_found(store: MemoryItemStore):
    for call in (store.archive, store.restore, lambda i: store.update(i, content="x")):
        with pytest.raises(MemoryNotFoundError, match="'ghost' not found"):
            call("ghost")


def test_update_archived_item_stays_archived(store: MemoryItemStore):
    store.create(_item("a", "k"))
    store.archive("a", now=200)
    record = store.update("a", content="changed", now=300)
    assert record.item.lifecycle_state is LifecycleState.ARCHIVED and record.item.version == 3
    assert store.search_by_keys(["k"]) == []


def test_update_replaces_keys_and_sources(store: MemoryItemStore):
    store.create(_item("a", "old"))
    new_source = MemoryItemSource("s2", "r2", "t2", "e2")
    record = store.update("a", keys=[KeyInput("New", KeyType.CODE, KeyOrigin.USER)], sources=[new_source], now=200)
    assert [k.normalized_key for k in record.keys] == ["new"] and record.sources == (new_source,)
    assert store.read_item("a") == record
    assert store.search_by_keys(["old"]) == [] and _ids(store.search_by_keys(["new"])) == ["a"]


def test_update_applies_create_rules(store: MemoryItemStore):
    store.create(_item("a", "k"))
    with pytest.raises(MemoryValidationError, match="event_ended_at must be later than event_started_at for an interval"):
        store.update("a", temporal_type=TemporalType.INTERVAL, event_started_at=10, event_ended_at=10)
    assert store.read_item("a").item.version == 1  # type: ignore[union-attr]


def test_update_cannot_change_scope(store: MemoryItemStore):
    store.create(_item("a", "k"))
    with pytest.raises(TypeError):
        store.update("a", scope_key="ws")  # type: ignore[call-arg]


# -- scope ------------------------------------------------------------------------------------------
@pytest.fixture
def scoped(store: MemoryItemStore) -> MemoryItemStore:
    store.bulk_create([
        _item("g", "topic"),
        _item("w1", "topic", workspace="ws1"),
        _item("w2", "topic", workspace="ws2"),
        _item("W1", "topic", workspace="WS1"),
    ])  # fmt: skip
    return store


def test_without_workspace_key_only_global_items(scoped: MemoryItemStore):
    assert _ids(scoped.search_by_keys(["topic"])) == ["g"]


def test_with_workspace_key_global_plus_that_workspace(scoped: MemoryItemStore):
    assert sorted(_ids(scoped.search_by_keys(["topic"], workspace_key="ws1"))) == ["g", "w1"]


def test_never_another_workspace(scoped: MemoryItemStore):
    assert "w2" not in _ids(scoped.search_by_keys(["topic"], "prefix", workspace_key="ws1", include_archived=True))


def test_workspace_keys_compare_case_sensitively(scoped: MemoryItemStore):
    assert sorted(_ids(scoped.search_by_keys(["topic"], workspace_key="WS1"))) == ["W1", "g"]


# -- archived -------------------------------------------------------------------------------------
def test_archived_excluded_by_default_included_on_request_back_after_restore(store: MemoryItemStore):
    store.create(_item("a", "k"))
    store.archive("a", now=200)
    assert store.search_by_keys(["k"]) == []
    assert _ids(store.search_by_keys(["k"], include_archived=True)) == ["a"]
    store.restore("a", now=300)
    assert _ids(store.search_by_keys(["k"])) == ["a"]


# -- matching -------------------------------------------------------------------------------------
def test_exact_vs_prefix(store: MemoryItemStore):
    store.bulk_create([_item("a", "偏好"), _item("b", "偏好设置"), _item("c", "偏")])
    assert _ids(store.search_by_keys(["偏好"])) == ["a"]
    assert sorted(_ids(store.search_by_keys(["偏好"], "prefix"))) == ["a", "b"]


def test_single_cjk_character_prefix(store: MemoryItemStore):
    store.bulk_create([_item("a", "偏好"), _item("b", "好")])
    assert sorted(_ids(store.search_by_keys(["偏"], "prefix"))) == ["a"]
    assert store.search_by_keys(["偏"]) == []


@pytest.mark.parametrize("top", ["\ud7ff", "\uffff", "\U0010ffff"])
def test_prefix_upper_bound_at_top_of_planes(store: MemoryItemStore, top: str):
    after = {"\ud7ff": "\ue000", "\uffff": "\U00010000", "\U0010ffff": None}[top]
    store.bulk_create([
        _item("exact", f"a{top}"),
        _item("longer", f"a{top}{top}z"),
        _item("below", "a\ud7fe" if top == "\ud7ff" else f"a{chr(ord(top) - 1)}z"),
        _item("next", "b"),
        *([_item("after", f"a{after}")] if after else []),
    ])  # fmt: skip
    assert sorted(_ids(store.search_by_keys([f"a{top}"], "prefix"))) == ["exact", "longer"]
    assert sorted(_ids(store.search_by_keys([top], "prefix"))) == []


def test_prefix_of_only_max_code_points_has_no_upper_bound(store: MemoryItemStore):
    store.bulk_create([_item("m", "\U0010ffff\U0010ffffx"), _item("n", "\U0010fffe")])
    assert _ids(store.search_by_keys(["\U0010ffff"], "prefix")) == ["m"]
    assert prefix_upper_bound("\U0010ffff\U0010ffff") is None
    assert prefix_upper_bound("a\U0010ffff") == "b"
    assert prefix_upper_bound("a\ud7ff") == "a\ue000"


def test_mixed_language_keys(store: MemoryItemStore):
    store.bulk_create([_item("a", "Python 偏好"), _item("b", "python 风格指南")])
    assert _ids(store.search_by_keys(["PYTHON  偏好"])) == ["a"]
    assert sorted(_ids(store.search_by_keys(["python "], "prefix"))) == ["a", "b"]


def test_code_identifiers(store: MemoryItemStore):
    store.bulk_create([
        _item("a", "memory_item_store", now=3),
        _item("b", "MemoryItemStore.searchByKeys", now=2),
        _item("c", "memory-store", now=1),
    ])  # fmt: skip
    assert _ids(store.search_by_keys(["memory_"], "prefix")) == ["a"]
    assert _ids(store.search_by_keys(["memoryitemstore.searchbykeys"])) == ["b"]
    assert _ids(store.search_by_keys(["MemoryItemStore."], "prefix")) == ["b"]


def test_matched_keys_reported(store: MemoryItemStore):
    store.create(_item("a", "memory", "memory_store", "search"))
    [(record, matched)] = store.search_by_keys_with_matches(["Memory"], "prefix")
    assert matched == ("memory", "memory_store")
    [(record, matched)] = store.search_by_keys_with_matches(["memory", "search"])
    assert matched == ("memory", "search")


# -- ranking and limits ---------------------------------------------------------------------------
def test_rank_by_distinct_terms_then_updated_at_then_item_id(store: MemoryItemStore):
    store.bulk_create([
        _item("one-new", "a", now=900),
        _item("two-old", "a", "b", now=100),
        _item("one-old-y", "b", now=50),
        _item("one-old-x", "a", now=50),
    ])  # fmt: skip
    assert _ids(store.search_by_keys(["a", "b"])) == ["two-old", "one-new", "one-old-x", "one-old-y"]


def test_duplicate_terms_count_once(store: MemoryItemStore):
    store.bulk_create([_item("ab", "a", "b", now=1), _item("aa", "a", now=2)])
    assert _ids(store.search_by_keys(["a", " A ", "a"])) == ["aa", "ab"]


def test_prefix_term_matching_two_keys_counts_once(store: MemoryItemStore):
    store.bulk_create([_item("two-keys", "mem1", "mem2", now=1), _item("both-terms", "mem", "x", now=0)])
    assert _ids(store.search_by_keys(["mem", "x"], "prefix")) == ["both-terms", "two-keys"]


def _spy_on(name: str) -> tuple[list[object], object]:
    """A patch of ``_search.<name>`` recording each plan it returns, to assert which plan a search took."""
    plans: list[object] = []
    original = getattr(_search, name)

    def spy(*args: object) -> object:
        plans.append(original(*args))
        return plans[-1]

    return plans, patch.object(_search, name, spy)


def test_prefix_search_with_one_wide_term_ranks_narrow_candidates_exactly(store: MemoryItemStore):
    """The wide term "mem" is walked by recency; items of the narrow terms are counted on all terms."""
    store.bulk_create([
        *(_item(f"wide-{n}", f"mem{n}", now=1000 + n) for n in range(6)),
        _item("all-three", "memo", "tabs", "zz", now=1),
        _item("narrow-and-wide", "memory", "tabs", now=2),
        _item("narrow-only", "tabs", now=3),
        _item("archived", "mem", "tabs", "zz", now=4),
        _item("other-ws", "mem", "tabs", "zz", workspace="ws", now=5),
    ])  # fmt: skip
    store.archive("archived", now=0)
    plans, spy = _spy_on("_one_wide_term_query")
    no_index = patch.object(store._key_index, "build_seconds", math.inf)  # the SQL plans answer
    with patch.object(_search, "_RANGE_ROWS_MAX", 6), patch.object(_search, "_INDEXED_ROWS_MIN", 6), no_index, \
            spy:
        got = _ids(store.search_by_keys(["mem", "tab", "zz"], "prefix", limit=6))
    assert len(plans) == 1 and plans[0] is not None, "the one-wide-term plan was not taken"
    assert got == ["all-three", "narrow-and-wide", "wide-5", "wide-4", "wide-3", "wide-2"]



def _wide_scope_items() -> list[ItemInput]:
    return [
        *(_item(f"wide-{n}", f"mem{n}", now=1000 + n) for n in range(4)),
        _item("mine-new", "memo", workspace="ws-a", now=2000),
        _item("theirs-newest", "memo", workspace="ws-b", now=3000),
        _item("archived-new", "memx", now=2500),
        _item("mine-narrow", "memo", "tabs", workspace="ws-a", now=1),
    ]


@pytest.mark.parametrize(("workspace", "archived", "expected"), [
    (None, False, ["wide-3", "wide-2", "wide-1"]),
    ("ws-a", False, ["mine-new", "wide-3", "wide-2"]),
    ("ws-a", True, ["archived-new", "mine-new", "wide-3"]),
])
def test_a_wide_one_term_prefix_search_walks_by_recency_within_the_runs_scope(
        store: MemoryItemStore, workspace: str | None, archived: bool, expected: list[str]):
    """The recency walk (a prefix matching more rows than a range is ranked whole) keeps the scope and lifecycle
    filters: another workspace's newest item and an archived one never take a place unless asked for."""
    store.bulk_create(_wide_scope_items())
    store.archive("archived-new", now=2500)
    plans, spy = _spy_on("_recent_streams_query")
    with patch.object(_search, "_RANGE_ROWS_MAX", 4), spy:
        got = _ids(store.search_by_keys(["mem"], "prefix", workspace_key=workspace, include_archived=archived, limit=3))
    assert len(plans) == 1, "the recency walk was not taken"
    assert got == expected


def test_the_one_wide_term_plan_keeps_the_runs_workspace_and_no_other(store: MemoryItemStore):
    """Several prefix terms, one wide: the walk of the wide term runs one stream per scope (global, the run's
    workspace), each with its own parameters; another workspace's items never come back."""
    store.bulk_create([*_wide_scope_items(), _item("theirs-narrow", "memo", "tabs", workspace="ws-b", now=9000)])
    store.archive("archived-new", now=2500)
    plans, spy = _spy_on("_one_wide_term_query")
    no_index = patch.object(store._key_index, "build_seconds", math.inf)
    with patch.object(_search, "_RANGE_ROWS_MAX", 4), patch.object(_search, "_INDEXED_ROWS_MIN", 4), no_index, \
            spy:
        got = _ids(store.search_by_keys(["mem", "tab"], "prefix", workspace_key="ws-a", limit=4))
    assert len(plans) == 1 and plans[0] is not None, "the one-wide-term plan was not taken"
    assert got == ["mine-narrow", "mine-new", "wide-3", "wide-2"]


@pytest.mark.parametrize(("workspace", "archived", "expected"), [
    ("ws-a", False, ["mine-narrow", "mine-new", "wide-3", "wide-2"]),
    ("ws-a", True, ["mine-narrow", "archived-new", "mine-new", "wide-3"]),
    (None, False, ["wide-3", "wide-2", "wide-1", "wide-0"]),
])
def test_several_wide_prefix_terms_counted_by_the_key_index_keep_the_runs_scope_and_rank(
        store: MemoryItemStore, workspace: str | None, archived: bool, expected: list[str]):
    """The in-memory index (built once wide searches are worth it) ranks as the SQL plans do, within the run's
    workspace and lifecycle: another workspace's items never come back, an archived one only when asked for."""
    store.bulk_create([*_wide_scope_items(), _item("theirs-narrow", "memo", "tabs", workspace="ws-b", now=9000),
                       _item("tea-after-the-range", "tea", now=9500)])
    store.archive("archived-new", now=2500)
    with patch.object(_search, "_RANGE_ROWS_MAX", 4), patch.object(_search, "_INDEXED_ROWS_MIN", 4):
        first = _ids(store.search_by_keys(["mem", "tab"], "prefix", workspace_key=workspace,
                                          include_archived=archived, limit=4))
        assert store._key_index.builds == 1 and store._key_index.index is not None, "the index was not built"
        # "tabs" is a key too: read as a prefix by the fresh index, not as the exact key; "tea" is past its range
        again = _ids(store.search_by_keys(["mem", "tabs"], "prefix", workspace_key=workspace,
                                          include_archived=archived, limit=4))
        nothing = store.search_by_keys(["qq", "qr"], "prefix", workspace_key=workspace)  # no rows: by SQL
    assert first == again == expected and store._key_index.builds == 1
    assert store._key_index.spent_seconds == 0.0  # the second search read the fresh index: no SQL search charged
    assert nothing == []


def test_two_wide_prefix_terms_without_an_index_are_ranked_by_the_grouped_plan(store: MemoryItemStore):
    store.bulk_create([*_wide_scope_items(), _item("tabby", "tabby", now=50), _item("table", "table", now=60)])
    store.archive("archived-new", now=2500)
    no_index = patch.object(store._key_index, "build_seconds", math.inf)
    limits = (patch.object(_search, "_RANGE_ROWS_MAX", 2), patch.object(_search, "_INDEXED_ROWS_MIN", 2),
              patch.object(_search, "_NARROW_ROWS_MAX", 2))
    with limits[0], limits[1], limits[2], no_index:
        got = _ids(store.search_by_keys(["mem", "tab"], "prefix", workspace_key="ws-a", limit=4))
    assert got == ["mine-narrow", "mine-new", "wide-3", "wide-2"]


def test_a_write_drops_the_key_index_so_the_next_search_sees_the_new_item(store: MemoryItemStore):
    store.bulk_create(_wide_scope_items())
    store.archive("archived-new", now=2500)
    with patch.object(_search, "_RANGE_ROWS_MAX", 4), patch.object(_search, "_INDEXED_ROWS_MIN", 4):
        assert _ids(store.search_by_keys(["mem", "tab"], "prefix", limit=2)) == ["wide-3", "wide-2"]
        store.bulk_create([_item("newest", "memz", "tabz", now=5000)])
        assert _ids(store.search_by_keys(["mem", "tab"], "prefix", limit=2)) == ["newest", "wide-3"]
    assert store._key_index.index is None  # dropped by the write, not read stale


def test_a_wide_search_answered_by_sql_is_charged_what_it_took_towards_building_the_index(store: MemoryItemStore):
    """The index is built once wide SQL searches have cost what a build does: each is charged its own seconds."""
    import types

    store.bulk_create(_wide_scope_items())
    ticks = iter([10.0, 10.5])
    no_index = patch.object(store._key_index, "build_seconds", math.inf)
    clock = patch.object(_search, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    with patch.object(_search, "_RANGE_ROWS_MAX", 4), patch.object(_search, "_INDEXED_ROWS_MIN", 4), no_index, clock:
        store.search_by_keys(["mem", "tab"], "prefix", limit=2)
    assert store._key_index.spent_seconds == 0.5 and store._key_index.builds == 0


@pytest.mark.parametrize(("terms", "match"), [
    (["key"], "exact"), (["key", "other"], "exact"), (["ke"], "prefix"), (["ke", "oth"], "prefix"),
], ids=["exact-streams", "exact-grouped", "prefix-range", "prefix-grouped"])
@pytest.mark.parametrize(("workspace", "archived"), [(None, False), (None, True), ("ws-a", False), ("ws-a", True)])
def test_every_search_plan_returns_exactly_the_runs_scope_and_lifecycle(
        store: MemoryItemStore, terms: list[str], match: str, workspace: str | None, archived: bool):
    """Global items always, the run's workspace's when it has one, never another's; archived ones only when asked."""
    store.bulk_create([
        _item("global", "key", "other", now=1), _item("global-archived", "key", "other", now=2),
        _item("mine", "key", "other", workspace="ws-a", now=3), _item("theirs", "key", "other", workspace="ws-b", now=4),
    ])
    store.archive("global-archived", now=5)
    got = set(_ids(store.search_by_keys(terms, match, workspace_key=workspace, include_archived=archived)))
    expected = {"global"} | ({"global-archived"} if archived else set()) | ({"mine"} if workspace else set())
    assert got == expected


def test_a_prefix_search_returns_at_most_its_limit(store: MemoryItemStore):
    """The range plan reads up to limit x 32 key rows: the distinct items past the limit are cut."""
    store.bulk_create([_item(f"i{n:02}", f"key{n}", now=n) for n in range(25)])
    assert _ids(store.search_by_keys(["key"], "prefix", limit=3)) == ["i24", "i23", "i22"]


def test_a_bad_workspace_key_is_refused_naming_the_field(store: MemoryItemStore):
    with pytest.raises(MemoryValidationError, match="^workspace_key must be a string \\(got int\\)$"):
        store.search_by_keys(["k"], workspace_key=5)  # type: ignore[arg-type]

def test_default_limit_is_20(store: MemoryItemStore):
    store.bulk_create([_item(f"i{n:02}", "k", now=n) for n in range(25)])
    assert len(store.search_by_keys(["k"])) == 20
    assert len(store.search_by_keys(["k"], limit=100)) == 25


@pytest.mark.parametrize("limit", [0, 101, -1, 2.0, True, "5"])
def test_limit_outside_1_to_100_rejected(store: MemoryItemStore, limit: object):
    with pytest.raises(MemoryValidationError, match="^Memory key search limit must be between 1 and 100$"):
        store.search_by_keys(["k"], limit=limit)  # type: ignore[arg-type]


def test_limit_1_and_100_accepted(store: MemoryItemStore):
    assert store.search_by_keys(["k"], limit=1) == store.search_by_keys(["k"], limit=100) == []


def test_terms_1_to_32_enforced_before_dedup(store: MemoryItemStore):
    assert store.search_by_keys(["k"] * 32) == []
    with pytest.raises(MemoryValidationError, match="^Memory key search accepts at most 32 terms$"):
        store.search_by_keys(["k"] * 33)
    for empty in ([], (), "k"):
        with pytest.raises(MemoryValidationError, match="^Memory key search requires at least one term$"):
            store.search_by_keys(empty)  # type: ignore[arg-type]


def test_match_must_be_exact_or_prefix(store: MemoryItemStore):
    with pytest.raises(MemoryValidationError, match="^Memory key match must be exact or prefix$"):
        store.search_by_keys(["k"], "fuzzy")


def test_include_archived_must_be_bool(store: MemoryItemStore):
    with pytest.raises(MemoryValidationError, match="^Memory key include_archived must be a boolean$"):
        store.search_by_keys(["k"], include_archived=1)  # type: ignore[arg-type]


def test_bad_term_error_names_its_index(store: MemoryItemStore):
    with pytest.raises(MemoryValidationError, match=r"terms\[1\] must not be empty"):
        store.search_by_keys(["k", "  "])


# -- the database -----------------------------------------------------------------------------------
def test_schema_version_recorded(tmp_path):  # noqa: ANN001
    path = tmp_path / "m.db"
    with MemoryItemStore(path) as s:
        assert s.schema_version() == SCHEMA_VERSION
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_file_database_uses_wal_and_reopens(tmp_path):  # noqa: ANN001
    path = tmp_path / "m.db"
    with MemoryItemStore(path) as s:
        assert s.journal_mode() == "wal"
        s.create(_item("a", "k"))
    with MemoryItemStore(str(path)) as s:
        assert _ids(s.search_by_keys(["k"])) == ["a"]


def test_foreign_keys_on(store: MemoryItemStore):
    with pytest.raises(sqlite3.IntegrityError):
        store._conn().execute("INSERT INTO memory_item_source VALUES ('ghost', 0, 's', 'r', 't', 'e')")


def test_context_manager_closes():
    with MemoryItemStore() as s:
        pass
    assert s.closed
    with pytest.raises(MemoryStoreError, match="is closed"):
        s.read_item("a")


def test_foreign_database_rejected(tmp_path):  # noqa: ANN001
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE t (x)")
    with pytest.raises(MemoryStoreError, match="is not a memory store of schema version"):
        MemoryItemStore(path)


def test_not_a_database_file_rejected(tmp_path):  # noqa: ANN001
    path = tmp_path / "text.db"
    path.write_text("hello, this is not sqlite" * 100)
    with pytest.raises(MemoryStoreError, match="cannot open memory store"):
        MemoryItemStore(path)


# -- snapshots ----------------------------------------------------------------------------------------
def test_from_snapshot_copies_the_store_and_copies_are_independent(store: MemoryItemStore):
    store.create(_item("a", "indent"))
    image = store.snapshot()
    with MemoryItemStore.from_snapshot(image) as first, MemoryItemStore.from_snapshot(image) as second:
        assert first.read_item("a") == store.read_item("a")
        first.archive("a", now=200)
        first.create(_item("b", "tabs"))
        assert second.read_item("a").item.lifecycle_state is LifecycleState.ACTIVE
        assert second.read_item("b") is None
        assert _ids(second.search_by_keys(["indent"], "exact")) == ["a"]
    assert store.snapshot() == image


def test_from_snapshot_refuses_what_is_not_a_store_image():
    with pytest.raises(MemoryStoreError, match="not a memory store image"):
        MemoryItemStore.from_snapshot(b"not a database at all" * 40)
    other = sqlite3.connect(":memory:")
    other.execute("CREATE TABLE t (x)")
    with pytest.raises(MemoryStoreError, match="schema version 0"):
        MemoryItemStore.from_snapshot(other.serialize())


class _CommitFails:
    """A connection whose next ``COMMIT`` fails as a full disk makes it fail; everything else is the real one."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.failures = db, 1

    def execute(self, sql: str, *args):  # noqa: ANN002, ANN201
        if sql == "COMMIT" and self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.db, name)


def test_a_write_whose_commit_fails_is_rolled_back_and_the_store_stays_usable(tmp_path) -> None:  # noqa: ANN001
    with MemoryItemStore(tmp_path / "items.sqlite") as store:
        real = store._db
        store._db = _CommitFails(real)  # the fault a full disk gives: SQLITE_FULL at COMMIT
        with pytest.raises(sqlite3.OperationalError, match="full"):
            store.create(_item("a", "port"))
        assert not real.in_transaction  # left open, every later call would fail "within a transaction"
        assert store.read_item("a") is None  # the failed write left nothing behind
        store.create(_item("b", "port"))
        store._db = real
        assert store.read_item("b") is not None
