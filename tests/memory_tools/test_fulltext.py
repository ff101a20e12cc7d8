"""The full-text layer: memory_search terms match content as well as keys, under the Host's gates and budgets."""

from __future__ import annotations

import json

import pytest

from memory_tools import (
    ItemInput,
    KeyInput,
    Kind,
    MemoryItemSource,
    MemoryItemStore,
    MemoryPolicy,
    MemoryValidationError,
    RunContext,
    ScopeType,
)
from memory_tools.fulltext import FULLTEXT_SEARCH_DESCRIPTION, FullTextHost, FullTextIndex, FullTextRun
from memory_tools.host import Host

READS = MemoryPolicy(agent_read_enabled=True)


def _item(item_id: str, content: str, keys: tuple[str, ...], workspace: str | None = None, now: int = 1) -> ItemInput:
    return ItemInput(
        content=content, kind=Kind.CONTEXT, keys=tuple(KeyInput(k) for k in keys),
        sources=(MemoryItemSource("s", "r", "t", f"e-{item_id}"),),
        scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL, scope_key=workspace,
        observed_at=now, item_id=item_id, now=now,
    )


@pytest.fixture()
def store():
    with MemoryItemStore() as s:
        s.bulk_create([
            _item("port", "The dev server listens on port 5174.", ("dev server",), "ws-a", now=3),
            _item("other-ws", "The billing server listens on port 9999.", ("billing",), "ws-b", now=4),
            _item("coffee", "Prefers espresso, no sugar.", ("coffee",), now=2),
            _item("café", "Café Léon is the team's lunch spot.", ("lunch",), now=1),
        ])
        yield s


def _search(store, terms, match="exact", workspace="ws-a", policy=READS, host=FullTextHost):
    run = host(store, policy).open_run(RunContext(workspace_key=workspace))
    record = run.call("memory_search", json.dumps({"terms": terms, "match": match}))
    return record, json.loads(record.result_text)


def test_a_term_matches_item_content_that_the_key_search_misses(store) -> None:
    _, keys_only = _search(store, ["port"], host=Host)
    record, found = _search(store, ["port"])
    assert keys_only["results"] == []
    assert [r["itemId"] for r in found["results"]] == ["port"]
    assert found["results"][0]["matchedKeys"] == [] and record.disclosed_item_ids == ("port",)


def test_key_matches_still_count_and_rank_with_content_matches(store) -> None:
    _, found = _search(store, ["dev server", "espresso"])
    assert [r["itemId"] for r in found["results"]] == ["port", "coffee"]
    assert found["results"][0]["matchedKeys"] == ["dev server"]


def test_more_matched_terms_rank_first_then_newer(store) -> None:
    _, found = _search(store, ["server", "5174"])
    assert [r["itemId"] for r in found["results"]] == ["port"]
    _, found = _search(store, ["listens"], workspace=None)
    assert found["results"] == []  # both servers are workspace items: no workspace, global items only


def test_prefix_matches_the_start_of_a_content_word_and_accents_fold(store) -> None:
    _, found = _search(store, ["espres"], match="prefix")
    assert [r["itemId"] for r in found["results"]] == ["coffee"]
    _, found = _search(store, ["cafe leon"])
    assert [r["itemId"] for r in found["results"]] == ["café"]


def test_another_workspace_content_never_matches(store) -> None:
    record, found = _search(store, ["billing", "9999", "listens"])
    assert [r["itemId"] for r in found["results"]] == ["port"]
    assert "9999" not in record.result_text


def test_archived_items_never_match_their_content(store) -> None:
    store.archive("coffee", now=9)
    _, found = _search(store, ["espresso"])
    assert found["results"] == []


@pytest.mark.parametrize("policy, context", [
    (MemoryPolicy(agent_read_enabled=False), RunContext("ws-a")),
    (MemoryPolicy(enabled=False, agent_read_enabled=True), RunContext("ws-a")),
    (READS, RunContext("ws-a", incognito=True)),
])
def test_a_denied_run_gets_no_tools_and_never_reads_the_store(store, policy, context) -> None:
    run = FullTextHost(store, policy).open_run(context)
    assert run.tool_specs() == []
    record = run.call("memory_search", '{"terms": ["port"]}')
    assert record.status == "policy_denied" and not record.storage_read


def test_the_result_budget_and_truncation_hold(store) -> None:
    run = FullTextHost(store, READS, search_result_budget_chars=300).open_run(RunContext("ws-a"))
    found = json.loads(run.call("memory_search", '{"terms": ["port", "espresso", "lunch"]}').result_text)
    assert found["truncated"] and found["omittedCount"] >= 1 and len(found["results"]) < 3


def test_the_search_tool_says_it_matches_content() -> None:
    with MemoryItemStore() as s:
        specs = FullTextHost(s, READS).open_run(RunContext()).tool_specs()
    assert [t["function"]["name"] for t in specs] == ["memory_search", "memory_get"]
    assert specs[0]["function"]["description"] == FULLTEXT_SEARCH_DESCRIPTION


# --- the index on its own (FullTextIndex.search, no Host behind it) ------------------------------------------


def _ids(found) -> list[str]:
    return [record.item.item_id for record, _ in found]


def _store_of(*items: ItemInput) -> MemoryItemStore:
    store = MemoryItemStore()
    store.bulk_create(items)
    return store


def test_an_exact_term_needs_whole_content_words(store) -> None:
    index = FullTextIndex(store)
    assert _ids(index.search(["espres"], "exact", workspace_key="ws-a")) == []
    assert _ids(index.search(["espres"], "prefix", workspace_key="ws-a")) == ["coffee"]


def test_the_index_searches_exact_by_default_as_the_vector_hosts_call_it(store) -> None:
    index = FullTextIndex(store)
    assert _ids(index.search(["espresso"], workspace_key="ws-a")) == ["coffee"]
    assert _ids(index.search(["espres"], workspace_key="ws-a")) == []


def test_the_index_returns_at_most_twenty_items_by_default() -> None:
    with _store_of(*(_item(f"n{i:02}", f"Note {i} about tea.", ("note",), now=i + 1) for i in range(25))) as store:
        assert len(FullTextIndex(store).search(["tea"])) == 20
        assert len(FullTextIndex(store).search(["tea"], limit=25)) == 25


def test_a_term_the_store_would_reject_is_rejected_naming_the_terms_field(store) -> None:
    with pytest.raises(MemoryValidationError, match=r"^terms must not be empty or only whitespace$"):
        FullTextIndex(store).search(["espresso", "   "], workspace_key="ws-a")


def test_the_index_returns_each_items_matched_normalized_keys_and_none_for_a_content_match(store) -> None:
    found = FullTextIndex(store).search(["Dev Server", "espresso"], workspace_key="ws-a")
    assert [(record.item.item_id, keys) for record, keys in found] == [("port", ("dev server",)), ("coffee", ())]


def test_a_term_without_words_does_not_stop_the_content_search_of_the_others(store) -> None:
    # "?!" sorts before "espresso" and has no word for FTS5 to match: it is skipped, not the end of the terms.
    assert _ids(FullTextIndex(store).search(["?!", "espresso"], workspace_key="ws-a")) == ["coffee"]


def test_an_items_id_is_not_searchable_text(store) -> None:
    index = FullTextIndex(store)
    assert _ids(index.search(["billing"], workspace_key="ws-b")) == ["other-ws"]  # its key and content say billing
    assert _ids(index.search(["other"], workspace_key="ws-b")) == []  # only its id "other-ws" says other
    assert _ids(index.search(["ws"], workspace_key="ws-b")) == []


def test_the_index_alone_never_lets_archived_or_other_workspace_items_take_result_slots(store) -> None:
    # Both hidden items match all three terms, in content and by key; "coffee" matches two, in content only. So
    # each hidden item would take the one slot if the SQL (or the store's key search) let it in.
    store.bulk_create([
        _item("old", "Espresso with sugar every morning.", ("espresso", "sugar", "morning"), now=8),
        _item("elsewhere", "Espresso with sugar every morning.", ("espresso", "sugar", "morning"), "ws-b", now=9),
    ])
    store.archive("old", now=10)
    index = FullTextIndex(store)
    terms = ["espresso", "sugar", "morning"]
    assert _ids(index.search(terms, workspace_key="ws-a", limit=1)) == ["coffee"]
    assert _ids(index.search(terms, workspace_key=None, limit=1)) == ["coffee"]
    assert _ids(index.search(terms, "prefix", workspace_key="ws-a", limit=1)) == ["coffee"]


def test_refresh_returns_how_many_items_the_index_holds(store) -> None:
    store.archive("coffee", now=9)
    assert FullTextIndex(store).refresh() == 4  # every stored item; scope and state are filtered per search


def test_the_index_is_built_on_the_first_search_and_rebuilt_only_by_refresh(store) -> None:
    # One rebuild per refresh, not per search (a rebuild reads the whole store); a write after it needs refresh().
    index = FullTextIndex(store)
    assert _ids(index.search(["tea"], workspace_key="ws-a")) == []
    store.create(_item("tea", "Drinks green tea.", ("drink",), now=5))
    assert _ids(index.search(["tea"], workspace_key="ws-a")) == []
    assert index.refresh() == 5
    assert _ids(index.search(["tea"], workspace_key="ws-a")) == ["tea"]


def test_an_item_matching_a_term_by_key_keeps_it_when_more_than_twenty_newer_items_share_the_key() -> None:
    # The key search reads up to 100 candidates, not the store's default 20: the oldest item with the key "alpha"
    # also says "beta", so with both terms it ranks first, though 21 newer items hold the key "alpha" too (it is
    # the store's 22nd key match; found by its content alone it would match one term and by no key, and rank last).
    items = [_item(f"k{i:02}", f"Note {i}.", ("alpha",), now=10 + i) for i in range(21)]
    with _store_of(_item("old", "Says beta.", ("alpha",), now=1), *items) as store:
        assert _ids(FullTextIndex(store).search(["alpha", "beta"], limit=3))[0] == "old"


@pytest.mark.parametrize("match", ["exact", "prefix"])
def test_distinct_terms_matched_by_key_or_content_rank_first_then_terms_matched_by_key(match) -> None:
    with _store_of(
        _item("key-and-text", "Takes it with sugar.", ("espresso",), now=1),  # espresso by key, sugar in content
        _item("text-only", "Espresso with sugar.", ("drink",), now=2),  # both terms, in content only
        _item("key-only", "Black and strong.", ("espresso",), now=3),  # one term, by key
    ) as store:
        assert _ids(FullTextIndex(store).search(["espresso", "sugar"], match)) == ["key-and-text", "text-only", "key-only"]


def test_among_equal_matches_the_better_bm25_summed_over_the_terms_ranks_first() -> None:
    # "weekend" is common (its idf is at FTS5's floor), so the sum is decided by "kayak": "two-kayaks" ranks
    # first though it is older and "two-weekends" scores better on the last term alone.
    fillers = [_item(f"w{i}", f"weekend note {i}", ("note",), now=1) for i in range(3)]
    fillers += [_item(f"o{i}", f"other {i}", ("note",), now=1) for i in range(3)]
    with _store_of(
        _item("two-kayaks", "kayak kayak weekend", ("trip",), now=2),
        _item("two-weekends", "kayak weekend weekend", ("trip",), now=3),
        *fillers,
    ) as store:
        assert _ids(FullTextIndex(store).search(["kayak", "weekend"]))[:2] == ["two-kayaks", "two-weekends"]


def test_a_content_match_of_a_key_matched_term_ranks_before_the_key_match_alone() -> None:
    with _store_of(
        _item("says-it", "Coffee every morning.", ("coffee",), now=1),
        _item("key-only", "Tea in the afternoon.", ("coffee",), now=2),
    ) as store:
        assert _ids(FullTextIndex(store).search(["coffee"])) == ["says-it", "key-only"]


def test_newer_items_rank_first_among_equal_matches() -> None:
    with _store_of(
        _item("a-old", "Prefers espresso.", ("drink",), now=1),
        _item("b-new", "Prefers espresso.", ("drink",), now=5),
        _item("c-old-key", "Tea.", ("coffee",), now=1),
        _item("d-new-key", "Tea.", ("coffee",), now=5),
    ) as store:
        index = FullTextIndex(store)
        assert _ids(index.search(["espresso"])) == ["b-new", "a-old"]
        assert _ids(index.search(["coffee"])) == ["d-new-key", "c-old-key"]


# --- the run on its own: what it does with what the index returns ---------------------------------------------


def test_prefix_terms_match_the_start_of_a_key_whose_content_lacks_the_word(store) -> None:
    _, found = _search(store, ["cof"], match="prefix")
    assert [(r["itemId"], r["matchedKeys"]) for r in found["results"]] == [("coffee", ["coffee"])]


def test_in_exact_mode_a_key_that_only_starts_with_a_term_is_not_a_matched_key(store) -> None:
    _, found = _search(store, ["dev"])  # found by its content; its key "dev server" only starts with the term
    assert [(r["itemId"], r["matchedKeys"]) for r in found["results"]] == [("port", [])]


class _LeakyIndex:
    """An index whose SQL filter failed: it returns an archived and another workspace's item before a visible one."""

    def __init__(self, store: MemoryItemStore) -> None:
        self._records = [store.read_item(i) for i in ("coffee", "other-ws", "port")]

    def search(self, terms, match="exact", *, workspace_key=None, limit=20):
        return [(record, ()) for record in self._records][:limit]


def test_the_run_drops_items_its_index_should_not_have_returned_and_keeps_the_rest(store) -> None:
    store.archive("coffee", now=9)
    run = FullTextRun(_LeakyIndex(store), store, RunContext("ws-a"), None, 4000, 16000)
    record = run.call("memory_search", '{"terms": ["espresso", "billing", "port"]}')
    assert [r["itemId"] for r in json.loads(record.result_text)["results"]] == ["port"]
    assert record.disclosed_item_ids == ("port",)
