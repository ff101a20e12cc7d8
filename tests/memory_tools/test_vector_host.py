"""Vector and hybrid runs keep the Host's settings (top-k, budgets, ISO times, a prebuilt index); the hybrid fusion's depth and limit."""

from __future__ import annotations

import json

import pytest

from memory_tools import HybridHost, LexicalEmbedder, MemoryItemStore, RunContext, VectorHost, rrf_fuse
from memory_tools.host import Host
from memory_tools.vectors import VectorIndex
from tests.memory_tools.test_vectors import READS, RuleEmbedder, _item, _search, ids, store  # noqa: F401 - store is a fixture


@pytest.mark.parametrize("host_class", [VectorHost, HybridHost])
def test_vector_and_hybrid_runs_keep_the_hosts_top_k_content_budget_and_iso_times(store, host_class) -> None:
    """The run's retrieval budget (top-k, content chars) and ISO times bind the ranked searches as they bind recall's."""
    settings = {"search_limit": 1, "content_budget_chars": 30, "iso_times": True, "get_result_budget_chars": 8192}
    run = host_class(store, READS, **settings).open_run(RunContext("ws-a"))
    found = json.loads(run.call("memory_search", '{"terms": ["espresso"], "limit": 10}').result_text)
    assert found["limitCapped"] is True and len(found["results"]) == 1
    assert "observedAtIso" in found["results"][0]
    plain = Host(store, READS, **settings).open_run(RunContext("ws-a"))
    got = run.call("memory_get", '{"itemId": "deploy"}').result_text
    assert got == plain.call("memory_get", '{"itemId": "deploy"}').result_text
    assert json.loads(got)["item"]["contentTruncated"] is True and "observedAtIso" in got
    roomy = host_class(store, READS, content_budget_chars=60).open_run(RunContext("ws-a"))
    cut = json.loads(roomy.call("memory_search", '{"terms": ["deployments", "espresso"]}').result_text)
    assert cut["truncated"] is True and len(cut["results"]) == 1  # 58 and 27 characters: one fits in 60


@pytest.mark.parametrize("host_class", [VectorHost, HybridHost])
def test_a_prebuilt_index_given_to_the_host_is_the_one_searched(store, host_class) -> None:
    index = VectorIndex(store, LexicalEmbedder())
    host = host_class(store, READS, index=index)
    assert host.index is index
    host.open_run(RunContext("ws-a")).call("memory_search", '{"terms": ["espresso"]}')
    assert index.usage.texts > 0


def test_hybrid_full_text_searches_the_runs_workspace_with_its_match_mode() -> None:
    """An item only the full text finds (its vector is orthogonal), in the run's workspace, by a prefix term."""
    with MemoryItemStore() as s:
        s.bulk_create([_item("lex-ws", "alpha", ("alpha",), "ws-a"), _item("vec", "beta", ("third",), "ws-a")])
        run = HybridHost(s, READS, embedder=RuleEmbedder()).open_run(RunContext("ws-a"))
        exact = json.loads(run.call("memory_search", '{"terms": ["alph"]}').result_text)
        prefix = json.loads(run.call("memory_search", '{"terms": ["alph"], "match": "prefix"}').result_text)
    assert ids(exact) == ["vec"]
    assert ids(prefix) == ["lex-ws", "vec"] and prefix["results"][0]["matchedKeys"] == ["alpha"]


def test_hybrid_reads_the_full_text_ranking_fifty_deep() -> None:
    """An item at full-text rank 25 and vector rank 1 outranks the full-text first: only if 25 is read."""
    with MemoryItemStore() as s:
        s.bulk_create([_item(f"a-{n:02d}", "alpha alpha", ("alpha",)) for n in range(24)]
                      + [_item("z-both", "alpha beta", ("other",))])
        _, found = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None, limit=1)
    assert ids(found) == ["z-both"]


def test_a_vector_index_returning_an_item_twice_shows_it_once(store, monkeypatch) -> None:
    original = VectorIndex.search

    def twice(self, terms, *args, **kwargs):
        found = original(self, terms, *args, **kwargs)
        return [*found, *found]

    monkeypatch.setattr(VectorIndex, "search", twice)
    _, found = _search(store, ["espresso", "deployments"], limit=10)
    assert sorted(ids(found)) == sorted(set(ids(found))) and len(ids(found)) >= 2


def test_rrf_breaks_equal_sums_by_the_better_best_rank_with_any_k() -> None:
    # k = 0: first once (1/1) equals second twice (1/2 + 1/2); the one ranked first somewhere goes first
    assert rrf_fuse([["x", "y"], ["z", "y"]], k=0) == ["x", "z", "y"]


def test_hybrid_reads_no_ranking_past_the_fusion_depth() -> None:
    """Past FUSION_DEPTH (50) the full text is not read: an item at its rank 56 counts by its vector rank alone."""
    with MemoryItemStore() as s:
        s.bulk_create([_item(f"a-{n:02d}", "alpha alpha", ("alpha",)) for n in range(55)]
                      + [_item("z-both", "alpha beta", ("other",))])
        _, found = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None, limit=2)
    assert ids(found) == ["a-00", "z-both"]  # both 1/61: the tie goes to the id


def test_hybrid_reports_only_keys_equal_to_a_term_for_an_exact_search() -> None:
    with MemoryItemStore() as s:
        s.bulk_create([_item("k", "alpha beta", ("alphabet",))])
        _, exact = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None)
    assert ids(exact) == ["k"] and exact["results"][0]["matchedKeys"] == []


def test_the_hybrid_search_result_budget_truncates_and_counts_only_what_was_shown(store) -> None:
    record, found = _search(store, ["deployments", "espresso", "neovim"], host=HybridHost, limit=10,
                            search_result_budget_chars=420)
    assert found["truncated"] and found["omittedCount"] >= 1
    assert list(record.disclosed_item_ids) == ids(found) and len(record.result_text) <= 420
