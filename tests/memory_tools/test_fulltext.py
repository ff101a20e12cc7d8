"""The full-text layer: memory_search terms match content as well as keys, under the Host's gates and budgets."""

from __future__ import annotations

import json

import pytest

from memory_tools import ItemInput, KeyInput, Kind, MemoryItemSource, MemoryItemStore, MemoryPolicy, RunContext, ScopeType
from memory_tools.fulltext import FULLTEXT_SEARCH_DESCRIPTION, FullTextHost
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
