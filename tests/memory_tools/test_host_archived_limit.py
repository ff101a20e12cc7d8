"""Archived and out-of-scope matches never use up ``memory_search``'s limit.

The store applies the lifecycle and scope filter inside its query, before the
limit, so a search returns up to ``limit`` visible items however many newer
archived or other-workspace items share the key. The Host's own visibility
check is a second line that withholds what a faulty store returns; if it were
the only filter, the newer hidden items would fill the limit and the visible
ones would never reach the model. Each of the store's query plans is covered
(one exact term; a narrow and a wide prefix; several terms; one wide prefix
with narrow ones).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_tools.host import Host
from memory_tools.policy import RunContext
from memory_tools.store import MemoryItemStore
from tests.memory_tools.conftest import READ_POLICY, item

VISIBLE = ("v-global", "v-ws-a", "v-ws-a-2")
HIDDEN_PER_KIND = 2100  # above the store's 2,000-row threshold, so a one-term prefix walks by recency


@pytest.fixture(scope="module")
def crowded_store() -> Iterator[MemoryItemStore]:
    """Three visible "coffee" items under thousands of newer archived and other-workspace ones."""
    items = [
        item("v-global", "User drinks flat whites.", ["coffee", "cof-global"], now=100),
        item("v-ws-a", "Project A's office has an espresso machine.", ["coffee", "cof-ws-a"], workspace="ws-a", now=90),
        item("v-ws-a-2", "Project A orders beans monthly.", ["coffee", "cof-ws-a-2"], workspace="ws-a", now=80),
    ]
    items += [item(f"archived-{i:04d}", f"Old coffee note {i}.", ["coffee", f"cof-a{i:04d}"], workspace="ws-a",
                   now=1_000 + i) for i in range(HIDDEN_PER_KIND)]
    items += [item(f"other-{i:04d}", f"Project B coffee note {i}.", ["coffee", f"cof-b{i:04d}"], workspace="ws-b",
                   now=1_000 + i) for i in range(HIDDEN_PER_KIND)]
    with MemoryItemStore(":memory:") as store:
        store.bulk_create(items)
        for i in range(HIDDEN_PER_KIND):
            store.archive(f"archived-{i:04d}", now=10_000 + i)
        yield store


def _search(store: MemoryItemStore, workspace: str | None, arguments: dict) -> list[str]:
    record = Host(store, READ_POLICY).open_run(RunContext(workspace_key=workspace)).call("memory_search", arguments)
    assert record.status == "ok", record.result_text
    assert [r["itemId"] for r in json.loads(record.result_text)["results"]] == list(record.disclosed_item_ids)
    return list(record.disclosed_item_ids)


ALL_VISIBLE = list(VISIBLE)
# plan -> (arguments, the visible items it must return at limit 3, best first)
PLANS = {
    "one-exact-term": ({"terms": ["coffee"]}, ALL_VISIBLE),
    "narrow-prefix": ({"terms": ["cof-ws"], "match": "prefix"}, ["v-ws-a", "v-ws-a-2"]),
    "wide-prefix": ({"terms": ["cof"], "match": "prefix"}, ALL_VISIBLE),
    "several-exact-terms": ({"terms": ["coffee", "tea"]}, ALL_VISIBLE),
    "one-wide-prefix-with-narrow-ones": ({"terms": ["cof", "cof-ws-a-2"], "match": "prefix"},
                                         ["v-ws-a-2", "v-global", "v-ws-a"]),
}


@pytest.mark.parametrize(("arguments", "expected"), PLANS.values(), ids=PLANS.keys())
def test_newer_archived_and_other_workspace_matches_do_not_fill_the_limit(
    crowded_store: MemoryItemStore, arguments: dict, expected: list[str]
) -> None:
    """A search returns up to ``limit`` visible items although thousands of newer hidden items match."""
    assert _search(crowded_store, "ws-a", {**arguments, "limit": 3}) == expected


@pytest.mark.parametrize(("arguments", "expected"), PLANS.values(), ids=PLANS.keys())
def test_limit_one_returns_the_best_visible_match(
    crowded_store: MemoryItemStore, arguments: dict, expected: list[str]
) -> None:
    """With ``limit`` 1 the one result is the best visible item: the hidden ones were filtered before the limit."""
    assert _search(crowded_store, "ws-a", {**arguments, "limit": 1}) == expected[:1]


def test_a_probe_with_no_workspace_sees_only_the_global_match(crowded_store: MemoryItemStore) -> None:
    """Without a workspace only global items count, and they are not crowded out by workspace items."""
    assert _search(crowded_store, None, {"terms": ["coffee"], "limit": 10}) == ["v-global"]
    assert _search(crowded_store, None, {"terms": ["cof"], "match": "prefix", "limit": 10}) == ["v-global"]


def test_the_store_itself_returns_limit_visible_items(crowded_store: MemoryItemStore) -> None:
    """The filter is in the store's query (the Host's check is only a second line)."""
    records = crowded_store.search_by_keys(["coffee"], workspace_key="ws-a", limit=3)
    assert [r.item.item_id for r in records] == list(VISIBLE)
    with_archived = crowded_store.search_by_keys(["coffee"], workspace_key="ws-a", include_archived=True, limit=3)
    assert [r.item.item_id for r in with_archived] == [f"archived-{i:04d}" for i in (2099, 2098, 2097)]
