"""Vector and hybrid memory_search over the same store: ranking by similarity under the Host's gates, budgets and disclosure."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from memory_tools import (
    Embeddings,
    HybridHost,
    ItemInput,
    KeyInput,
    Kind,
    LexicalEmbedder,
    MemoryItemSource,
    MemoryItemStore,
    MemoryPolicy,
    RunContext,
    ScopeType,
    VectorHost,
    rrf_fuse,
)
from memory_tools.fulltext import FullTextIndex
from memory_tools.host import Host
from memory_tools.tool_specs import TOOL_SPECS
from memory_tools.vector_host import RRF_K, VECTOR_SEARCH_DESCRIPTION
from memory_tools.vectors import LEXICAL_DIM, VectorIndex, lexical_vector, passage_text, query_text, top_k

READS = MemoryPolicy(agent_read_enabled=True)


def _item(item_id: str, content: str, keys: tuple[str, ...], workspace: str | None = None, now: int = 1) -> ItemInput:
    return ItemInput(
        content=content, kind=Kind.CONTEXT, keys=tuple(KeyInput(k) for k in keys),
        sources=(MemoryItemSource("s", "r", "t", f"e-{item_id}"),),
        scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL, scope_key=workspace,
        observed_at=now, item_id=item_id, now=now,
    )


class CountingEmbedder(LexicalEmbedder):
    """The lexical embedder, counting every text it is asked to embed (to prove a cold run embeds nothing)."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:  # type: ignore[override]
        self.texts += [(kind, t) for t in texts]
        return super().embed(texts, kind)  # type: ignore[arg-type]


@pytest.fixture()
def store():
    with MemoryItemStore() as s:
        s.bulk_create([
            _item("deploy", "Deployments go to the staging cluster first, every Friday.", ("release process",), "ws-a", now=3),
            _item("other-ws", "Deployments of the billing service go to the blue cluster.", ("billing",), "ws-b", now=4),
            _item("coffee", "Prefers espresso, no sugar.", ("coffee",), now=2),
            _item("editor", "Uses Neovim with the gruvbox theme.", ("editor",), now=1),
        ])
        yield s


def _search(store, terms, *, workspace="ws-a", policy=READS, host=VectorHost, embedder=None, limit=None, **kwargs):
    run = host(store, policy, embedder=embedder, **kwargs).open_run(RunContext(workspace_key=workspace))
    args = {"terms": terms} | ({} if limit is None else {"limit": limit})
    record = run.call("memory_search", json.dumps(args))
    return record, json.loads(record.result_text)


def ids(found: dict) -> list[str]:
    return [r["itemId"] for r in found["results"]]


# --- the lexical embedder ------------------------------------------------------------------------------------


def test_the_lexical_embedder_is_deterministic_and_l2_normalised() -> None:
    first = LexicalEmbedder().embed(["Deployments go to staging", "?!"], "passage").vectors
    again = LexicalEmbedder().embed(["Deployments go to staging", "?!"], "query").vectors
    assert first.shape == (2, LEXICAL_DIM) and first.dtype == np.float32
    assert np.array_equal(first, again)  # no randomness, queries and passages alike
    assert np.linalg.norm(first[0]) == pytest.approx(1.0) and not first[1].any()  # featureless text: a zero row


def test_the_lexical_embedder_is_lexical_inflections_near_synonyms_far() -> None:
    deploy, deployment, coffee, espresso = (lexical_vector(t) for t in ("deploy", "deployment", "coffee", "espresso"))
    assert float(deploy @ deployment) > 0.2
    assert float(coffee @ espresso) < 0.1  # no synonyms: it is not a semantic model


def test_a_plug_ins_lexical_embedding_is_the_lexical_vector_and_a_featureless_text_a_fixed_unit_vector() -> None:
    """A product's own cosine store rejects a zero vector, so a text with no word gets one fixed unit vector."""
    from memory_tools import lexical_embedding

    vector = lexical_embedding("Deployments go to staging")
    assert len(vector) == LEXICAL_DIM and all(type(x) is float for x in vector)
    assert vector == [float(x) for x in lexical_vector("Deployments go to staging")]
    for featureless in ("?!", "", None):
        assert lexical_embedding(featureless) == [1.0] + [0.0] * (LEXICAL_DIM - 1)  # type: ignore[arg-type]


def test_a_words_features_are_the_word_weighted_two_and_its_padded_trigrams_each_repeat_adding_up() -> None:
    from memory_tools.vectors import lexical_features

    trigrams = {"c:<de": 2.0, "c:dep": 2.0, "c:epl": 2.0, "c:plo": 2.0, "c:loy": 2.0, "c:oy>": 2.0}
    assert lexical_features("Deploy deploy") == {"w:deploy": 4.0, **trigrams}
    assert lexical_features("a") == {"w:a": 2.0, "c:<a>": 1.0}


def test_cjk_words_are_overlapping_character_bigrams_weighted_as_words_and_the_text_after_them_still_counts() -> None:
    from memory_tools.vectors import lexical_features

    assert lexical_features("咖啡咖啡 我 tea") == {
        "w:咖啡": 4.0, "w:啡咖": 2.0, "w:我": 2.0, "w:tea": 2.0, "c:<te": 1.0, "c:tea": 1.0, "c:ea>": 1.0}


def test_the_lexical_vector_sums_each_features_signed_sublinear_weight_colliding_features_adding_up() -> None:
    """"aqx" and "bdx" hash to one bucket with one sign: a collision adds their weights, it does not overwrite."""
    import math

    from memory_tools.vectors import _bucket, lexical_features

    assert _bucket("w:aqx") == _bucket("w:bdx")
    expected = np.zeros(LEXICAL_DIM, dtype=np.float64)
    for feature, weight in lexical_features("aqx bdx").items():
        bucket, sign = _bucket(feature)
        expected[bucket] += sign * (1.0 + math.log(weight))
    got = lexical_vector("aqx bdx")
    assert np.allclose(got, expected / np.linalg.norm(expected), atol=1e-6)


def test_embedding_no_texts_gives_an_empty_float32_matrix_of_the_lexical_width() -> None:
    empty = LexicalEmbedder().embed([], "passage").vectors
    assert empty.shape == (0, LEXICAL_DIM) and empty.dtype == np.float32

def test_cjk_text_is_embedded_by_character_bigrams() -> None:
    assert float(lexical_vector("咖啡") @ lexical_vector("我喜欢咖啡")) > 0.3


def test_passage_text_holds_content_then_keys_and_the_query_joins_terms(store) -> None:
    assert passage_text(store.read_item("coffee")) == "Prefers espresso, no sugar. · coffee"
    assert query_text([" staging ", "", "cluster"]) == "staging cluster"


# --- ranking -------------------------------------------------------------------------------------------------


def test_vector_search_finds_content_the_key_search_misses(store) -> None:
    keys_only = json.loads(Host(store, READS).open_run(RunContext("ws-a")).call("memory_search", '{"terms": ["deploy"]}').result_text)
    record, found = _search(store, ["deploy"])
    assert keys_only["results"] == []
    assert ids(found) == ["deploy"]
    assert found["results"][0]["matchedKeys"] == [] and record.disclosed_item_ids == ("deploy",)


def test_results_are_ranked_by_similarity_most_similar_first(store) -> None:
    _, found = _search(store, ["espresso", "editor", "gruvbox", "neovim"], limit=10)
    assert ids(found) == ["editor", "coffee"]  # three words of the editor item's text and keys, one of coffee's


def test_items_sharing_nothing_with_the_query_are_not_results(store) -> None:
    record, found = _search(store, ["zzzqqq"])
    assert found["results"] == [] and record.disclosed_item_ids == () and record.storage_read


def test_top_k_breaks_ties_by_item_id_and_keeps_only_scores_above_the_floor() -> None:
    scores = np.array([0.5, 0.9, 0.9, 0.1, 0.9], dtype=np.float32)
    assert [i for i, _ in top_k(scores, ["e", "d", "b", "a", "c"], 2, 0.1)] == ["b", "c"]
    assert [i for i, _ in top_k(scores, ["e", "d", "b", "a", "c"], 10, 0.1)] == ["b", "c", "d", "e"]
    assert top_k(scores, list("abcde"), 0, 0.0) == []



def test_a_single_item_above_the_floor_is_a_result() -> None:
    """A store holding one visible item: its score alone is ranked, not dropped as an empty ranking."""
    assert top_k(np.array([0.7], dtype=np.float32), ["only"], 5, 0.1) == [("only", pytest.approx(0.7))]
    assert top_k(np.array([], dtype=np.float32), [], 5, 0.1) == []

def test_matched_keys_report_the_keys_a_term_matches(store) -> None:
    _, found = _search(store, ["coffee", "espresso"])
    assert found["results"][0]["itemId"] == "coffee" and found["results"][0]["matchedKeys"] == ["coffee"]


# --- scope, lifecycle, policy, budgets ----------------------------------------------------------------------


def test_scope_is_filtered_before_the_limit(store) -> None:
    store.bulk_create([
        _item(f"near-{n}", "Deployments: staging cluster, Friday.", ("deployments",), "ws-b")
        for n in range(12)
    ])  # twelve other-workspace items more similar to the query than anything ws-a may see
    record, found = _search(store, ["deployments", "staging", "cluster", "friday"], limit=1)
    assert ids(found) == ["deploy"]
    assert record.disclosed_item_ids == ("deploy",)


def test_another_workspace_items_are_never_embedded_or_returned(store) -> None:
    embedder = CountingEmbedder()
    record, found = _search(store, ["billing", "blue", "cluster"], embedder=embedder, limit=10)
    assert "other-ws" not in ids(found) and "blue" not in record.result_text
    assert not any("billing" in text for kind, text in embedder.texts if kind == "passage")


def test_without_a_workspace_only_global_items_are_ranked(store) -> None:
    _, found = _search(store, ["deployments", "staging"], workspace=None, limit=10)
    assert "deploy" not in ids(found) and "other-ws" not in ids(found)


def test_archived_items_are_excluded(store) -> None:
    store.archive("coffee", now=9)
    _, found = _search(store, ["espresso", "sugar"], limit=10)
    assert "coffee" not in ids(found)
    run = VectorHost(store, READS).open_run(RunContext("ws-a"))
    archived = run.call("memory_get", '{"itemId": "coffee"}')
    missing = run.call("memory_get", '{"itemId": "nothing-here"}')
    assert archived.status == "not_found" and archived.result_text == missing.result_text


@pytest.mark.parametrize("host", [VectorHost, HybridHost])
@pytest.mark.parametrize(
    ("policy", "context"),
    [
        (MemoryPolicy(agent_read_enabled=False), RunContext("ws-a")),
        (MemoryPolicy(enabled=False, agent_read_enabled=True), RunContext("ws-a")),
        (READS, RunContext("ws-a", incognito=True)),
    ],
)
def test_policy_denial_keeps_the_run_cold(store, host, policy, context) -> None:
    embedder = CountingEmbedder()
    run = host(store, policy, embedder=embedder).open_run(context)
    record = run.call("memory_search", '{"terms": ["espresso"]}')
    assert run.tool_specs() == [] and record.status == "policy_denied"
    assert not record.storage_read and record.disclosed_item_ids == ()
    assert embedder.texts == []  # nothing was embedded: not a passage, not the query


def test_the_model_cannot_choose_a_scope(store) -> None:
    run = VectorHost(store, READS).open_run(RunContext("ws-a"))
    record = run.call("memory_search", '{"terms": ["billing"], "workspaceKey": "ws-b"}')
    assert record.status == "invalid_arguments" and not record.storage_read


def test_the_budget_truncates_and_disclosure_counts_only_what_was_shown(store) -> None:
    record, found = _search(store, ["deployments", "espresso", "neovim"], limit=10, search_result_budget_chars=420)
    assert found["truncated"] and found["omittedCount"] >= 1
    assert list(record.disclosed_item_ids) == ids(found) and len(record.result_text) <= 420


def test_the_tool_specs_are_the_recall_specs_with_their_own_search_description(store) -> None:
    specs = VectorHost(store, READS).open_run(RunContext("ws-a")).tool_specs()
    assert [s["function"]["name"] for s in specs] == ["memory_search", "memory_get"]
    assert specs[0]["function"]["parameters"] == TOOL_SPECS[0]["function"]["parameters"]
    assert specs[1] == TOOL_SPECS[1] and specs[0]["function"]["description"] == VECTOR_SEARCH_DESCRIPTION


def test_the_index_counts_what_it_embedded(store) -> None:
    host = VectorHost(store, READS)
    run = host.open_run(RunContext("ws-a"))
    run.call("memory_search", '{"terms": ["espresso"]}')
    run.call("memory_search", '{"terms": ["neovim"]}')
    usage = host.index.usage
    assert usage.model == "lexical" and usage.texts == 3 + 2  # three visible items once, then two queries
    assert usage.provider_calls == 0 and usage.tokens == 0


def test_refresh_sees_items_written_after_the_first_search(store) -> None:
    host = VectorHost(store, READS)
    run = host.open_run(RunContext("ws-a"))
    run.call("memory_search", '{"terms": ["tea"]}')
    store.create(_item("tea", "Drinks green tea in the afternoon.", ("tea",), now=5))
    host.index.refresh()
    assert "tea" in json.loads(run.call("memory_search", '{"terms": ["tea"]}').result_text)["results"][0]["itemId"]


# --- reciprocal-rank fusion ---------------------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    # second in both lists (2/62) beats first in one list only (1/61)
    assert rrf_fuse([["a", "b"], ["c", "b"]]) == ["b", "a", "c"]
    assert RRF_K == 60


def test_rrf_ties_go_to_the_better_best_rank_then_the_id() -> None:
    assert rrf_fuse([["x", "y"], ["y", "x"]]) == ["x", "y"]  # equal sums, equal best ranks: by id
    assert rrf_fuse([["b"], ["a"]]) == ["a", "b"]


def test_rrf_counts_an_id_once_per_list() -> None:
    assert rrf_fuse([["a", "a", "b"], ["b"]]) == ["b", "a"]


def test_rrf_uses_ranks_so_the_scale_of_either_list_does_not_matter() -> None:
    # the fusion sees only order: a list of near-equal cosines counts as much as a list of far-apart BM25 scores
    assert rrf_fuse([["lexical-top", "shared"], ["vector-top", "shared"]])[0] == "shared"


def test_hybrid_finds_items_either_ranking_finds(store) -> None:
    _, found = _search(store, ["coffee", "deploy"], host=HybridHost, limit=10)
    assert set(ids(found)) == {"coffee", "deploy"}  # coffee by its key, deploy by vector similarity only
    assert found["results"][ids(found).index("coffee")]["matchedKeys"] == ["coffee"]


def test_hybrid_ranks_an_item_both_rankings_find_above_one_found_by_one(store) -> None:
    store.create(_item("sugar", "Has no sugar in tea.", ("tea",), now=6))
    _, found = _search(store, ["espresso", "sugar"], host=HybridHost, limit=10)
    assert ids(found)[0] == "coffee"


def test_hybrid_keeps_scope_before_the_limit(store) -> None:
    store.bulk_create([_item(f"b-{n}", f"Billing cluster note {n}.", ("billing",), "ws-b") for n in range(12)])
    record, found = _search(store, ["billing", "cluster", "deployments"], host=HybridHost, limit=1)
    assert ids(found) == ["deploy"] and record.disclosed_item_ids == ("deploy",)


class RuleEmbedder:
    """Vectors chosen by the test: the query is e1; a passage is e1 with "beta", near e1 with "gamma", else e2."""

    name = "rules"
    min_similarity = 0.0

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:
        def row(text: str) -> list[float]:
            if kind == "query" or "beta" in text:
                return [1.0, 0.0]
            return [0.9, 0.43589] if "gamma" in text else [0.0, 1.0]

        return Embeddings(np.array([row(t) for t in texts], dtype=np.float32))


def test_hybrid_fuses_the_two_rankings_rather_than_appending_one_to_the_other() -> None:
    with MemoryItemStore() as s:
        s.bulk_create([
            _item("lex-only", "alpha", ("alpha",)),        # full text: 1st (key and word); vectors: orthogonal, not a result
            _item("both", "alpha beta", ("other",)),       # full text: 2nd (word only); vectors: 1st
            _item("vec-only", "gamma", ("third",)),        # full text: none; vectors: 2nd
        ])
        _, found = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None, limit=10)
        _, vector = _search(s, ["alpha"], embedder=RuleEmbedder(), workspace=None, limit=10)
    assert ids(vector) == ["both", "vec-only"]
    assert ids(found) == ["both", "lex-only", "vec-only"]  # 1/61 + 1/62, then 1/61, then 1/62


def test_hybrid_reads_each_ranking_past_the_limit_before_fusing() -> None:
    """The item both rankings put second outranks each one's first (2/62 > 1/61): seen only if both are read deep."""
    with MemoryItemStore() as s:
        s.bulk_create([
            _item("a-lex", "alpha", ("alpha",)),          # full text: 1st; vectors: orthogonal, not a result
            _item("y-both", "alpha gamma", ("other",)),   # full text: 2nd; vectors: 2nd
            _item("b-vec", "beta", ("third",)),           # full text: none; vectors: 1st
        ])
        _, top = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None, limit=1)
        _, every = _search(s, ["alpha"], host=HybridHost, embedder=RuleEmbedder(), workspace=None, limit=10)
    assert ids(every) == ["y-both", "a-lex", "b-vec"] and ids(top) == ["y-both"]


def test_hybrid_returns_exactly_limit_results_best_first(store) -> None:
    _, every = _search(store, ["deployments", "espresso", "neovim"], host=HybridHost, limit=10)
    assert len(ids(every)) == 3
    for limit in (1, 2):
        _, found = _search(store, ["deployments", "espresso", "neovim"], host=HybridHost, limit=limit)
        assert ids(found) == ids(every)[:limit]


def test_hybrid_holds_back_what_leaky_indexes_return_and_still_fills_the_limit(store, monkeypatch) -> None:
    """Both indexes' own scope filters removed: the run's visibility check alone keeps ws-b's item out, before the
    limit is counted (so the one in-scope match is still given)."""
    fulltext, vectors = FullTextIndex.search, VectorIndex.search

    def leaky(original):
        def search(self, terms, *args, workspace_key=None, limit=20):
            return [*original(self, terms, *args, workspace_key="ws-b", limit=limit),
                    *original(self, terms, *args, workspace_key=workspace_key, limit=limit)]
        return search

    monkeypatch.setattr(FullTextIndex, "search", leaky(fulltext))
    monkeypatch.setattr(VectorIndex, "search", leaky(vectors))
    record, found = _search(store, ["billing", "cluster", "deployments"], host=HybridHost, limit=1)
    assert ids(found) == ["deploy"] and record.disclosed_item_ids == ("deploy",)


class OverflowingEmbedder(LexicalEmbedder):
    """A plug-in embedder whose float64 rows hold a value past float32's range (1e39 becomes inf in the index)."""

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:  # type: ignore[override]
        rows = np.ones((len(texts), 4), dtype=np.float64)
        rows[:, 1] = 1e39
        return Embeddings(rows)


def test_an_embedder_whose_vectors_are_not_finite_as_float32_is_an_embedding_error(store) -> None:
    """No NaN similarity ranks silently: the search fails naming the embedder."""
    from memory_tools import EmbeddingError

    with pytest.raises(EmbeddingError, match="not finite as float32"):
        _search(store, ["deploy"], embedder=OverflowingEmbedder())


def test_an_overflowing_embedder_is_refused_by_name_without_a_numpy_warning_on_the_terminal(store) -> None:
    import warnings

    from memory_tools import EmbeddingError

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in cast" would be raised here
        with pytest.raises(EmbeddingError, match="not finite as float32"):
            _search(store, ["deploy"], embedder=OverflowingEmbedder())


class ShortEmbedder(LexicalEmbedder):
    """A plug-in embedder that drops the last text of every batch (rows of the right width, one row short)."""

    name = "short"

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:  # type: ignore[override]
        return super().embed(list(texts)[:-1], kind)  # type: ignore[arg-type]


def test_an_embedder_returning_fewer_rows_than_texts_is_an_embedding_error_naming_the_counts(store) -> None:
    """Rows matched to the wrong items would rank one item by another's text."""
    from memory_tools import EmbeddingError

    with pytest.raises(EmbeddingError) as raised:
        VectorIndex(store, ShortEmbedder()).prepare("ws-a")
    assert str(raised.value) == f"embedder 'short' returned (2, {LEXICAL_DIM}) vectors for 3 texts"


def test_the_index_times_each_embedding_call_by_the_clock_not_since_the_epoch(store, monkeypatch) -> None:
    import types

    from memory_tools import vectors

    ticks = iter([100.0, 100.25, 200.0, 200.5])
    monkeypatch.setattr(vectors, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))  # this module's clock
    index = VectorIndex(store, LexicalEmbedder())
    index.search(["espresso"], workspace_key=None, limit=3)
    assert index.usage.latency_s == pytest.approx(0.75) and index.usage.texts == 3 and index.usage.calls == 2


def test_embedding_usage_adds_every_field_of_a_batch_and_counts_a_call_only_when_something_was_computed() -> None:
    from memory_tools import EmbeddingUsage

    usage = EmbeddingUsage(model="m")
    usage.add(Embeddings(np.zeros((3, 2)), provider_calls=1, tokens=30, cost_usd=0.25, latency_s=9.0, cached=1,
                         saved_latency_s=0.5, saved_tokens=7, saved_cost_usd=0.125), 3, 1.5)
    usage.add(Embeddings(np.zeros((2, 2)), provider_calls=2, tokens=20, cost_usd=0.5, cached=0,
                         saved_latency_s=0.25, saved_tokens=3, saved_cost_usd=0.0625), 2, 0.5)
    usage.add(Embeddings(np.zeros((4, 2)), cached=4, saved_latency_s=1.0, saved_tokens=10, saved_cost_usd=1.0), 4, 0.25)
    assert usage == EmbeddingUsage(model="m", texts=9, cached=5, provider_calls=3, tokens=50, cost_usd=0.75,
                                   latency_s=2.25, calls=2, cached_latency_s=1.75, cached_tokens=20,
                                   cached_cost_usd=1.1875)


class NarrowQueryEmbedder(LexicalEmbedder):
    """A plug-in embedder that embeds queries with another model than passages (8 dimensions, not 1,024)."""

    name = "mixed"

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:  # type: ignore[override]
        if kind == "query":
            return Embeddings(np.full((len(texts), 8), 8 ** -0.5, dtype=np.float32))
        return super().embed(texts, kind)  # type: ignore[arg-type]


def test_a_query_of_another_width_than_the_passages_is_an_embedding_error_naming_both(store) -> None:
    from memory_tools import EmbeddingError

    with pytest.raises(EmbeddingError) as raised:
        VectorIndex(store, NarrowQueryEmbedder()).search(["espresso"], workspace_key=None, limit=3)
    assert str(raised.value) == f"embedder 'mixed' gave a query of 8 dimensions and passages of {LEXICAL_DIM}"


def test_the_runs_own_visibility_check_holds_back_what_the_sql_filter_lets_through(store, monkeypatch) -> None:
    """The index's second scope layer alone: with the SQL filter standing, the run's ``item_visible`` still decides
    (here it refuses the coffee item): what it refuses is never embedded nor ranked."""
    from memory_tools import vectors
    from memory_tools.policy import item_visible

    monkeypatch.setattr(vectors, "item_visible", lambda item, ws: item.item_id != "coffee" and item_visible(item, ws))
    embedder = CountingEmbedder()
    index = VectorIndex(store, embedder)
    assert [record.item.item_id for record, _ in index.search(["espresso", "neovim"], workspace_key="ws-a", limit=5)] \
        == ["editor"]
    assert not any("espresso" in text for kind, text in embedder.texts if kind == "passage")


def test_passages_are_embedded_as_passages_and_the_query_as_a_query(store) -> None:
    embedder = CountingEmbedder()
    VectorIndex(store, embedder).search(["espresso"], workspace_key=None, limit=3)
    assert [kind for kind, _ in embedder.texts] == ["passage", "passage", "query"]


def test_a_scope_with_no_visible_items_asks_the_embedder_for_nothing() -> None:
    class Calls(LexicalEmbedder):
        calls = 0

        def embed(self, texts: Sequence[str], kind: str) -> Embeddings:  # type: ignore[override]
            Calls.calls += 1
            return super().embed(texts, kind)  # type: ignore[arg-type]

    with MemoryItemStore() as empty:
        empty.bulk_create([_item("theirs", "Only another workspace's note.", ("note",), "ws-b")])
        index = VectorIndex(empty, Calls())
        assert index.prepare("ws-a") == 0 and index.search(["note"], workspace_key="ws-a", limit=3) == []
    assert Calls.calls == 0 and index.usage.texts == 0
