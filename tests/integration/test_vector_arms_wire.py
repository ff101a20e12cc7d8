"""The vector arms over the wire: embeddings from an OpenAI-compatible server through litellm, cached, counted apart."""

from __future__ import annotations

import json

from tests.integration.fake_openai_server import PROMPT_TOKENS, FakeOpenAIServer

VECTOR_ARMS = ("recall_vector", "recall_hybrid")


def _embedding_requests(server: FakeOpenAIServer) -> list[dict]:
    return [seen.body for seen in server.requests if "/embeddings" in seen.path]


def _vector_run(run_cli, server: FakeOpenAIServer, *flags: str):
    server.script.mode = "offline"  # the agent: the offline reference policy over the wire
    return run_cli("--embedding-model", "openai/fake-embed", "--embedding-api-base", server.base_url,
                   "--embedding-prefix", "input_type", *flags, scenario="smoke-0[12]*", arms=VECTOR_ARMS)


def test_embeddings_come_from_the_server_with_query_and_passage_told_apart(run_cli, server) -> None:
    result = _vector_run(run_cli, server)
    assert result.code in (0, 1), result.err
    requests = _embedding_requests(server)
    assert requests and {r["model"] for r in requests} == {"fake-embed"}
    assert {r.get("input_type") for r in requests} == {"query", "passage"}
    records = result.records()
    assert {r.arm for r in records} == set(VECTOR_ARMS) and all(r.status == "ok" for r in records)
    for record in records:
        assert record.embedding is not None and record.embedding.model == "openai/fake-embed"
    searched = [r for r in records if r.tool_calls]
    assert searched and all(r.embedding.texts > 0 for r in searched)
    assert sum(r.embedding.provider_calls for r in records) == len(requests)
    assert sum(r.embedding.tokens for r in records) > 0


def test_embedding_usage_is_counted_apart_from_the_agent_model(run_cli, server) -> None:
    result = _vector_run(run_cli, server)
    records = result.records()
    assert all(call.prompt_tokens == PROMPT_TOKENS for r in records for call in r.model_calls)  # the chat model's own
    assert any(r.embedding.tokens > 0 for r in records)
    dumped = json.loads(records[0].model_dump_json())
    # calls counts in-process batches too; cached_*: what the cache hits had cost when first paid (no arm looks free
    # on another's cache)
    assert set(dumped["embedding"]) == {"model", "texts", "cached", "calls", "provider_calls", "tokens", "cost_usd", "latency_s",
                                        "cached_tokens", "cached_latency_s", "cached_cost_usd"}


def test_a_second_run_is_served_from_the_embedding_cache(run_cli, server, tmp_path) -> None:
    cache = tmp_path / "shared-cache"
    first = _vector_run(run_cli, server, "--cache-dir", str(cache))
    sent = len(_embedding_requests(server))
    second = _vector_run(run_cli, server, "--cache-dir", str(cache))
    assert first.code == second.code and len(_embedding_requests(server)) == sent  # nothing new reached the server
    records = second.records()
    assert all(r.embedding.provider_calls == 0 and r.embedding.cached == r.embedding.texts for r in records)
    assert list((cache / "embeddings").rglob("*.json"))


def test_the_run_records_its_embedder_and_no_credentials(run_cli, server) -> None:
    result = _vector_run(run_cli, server)
    parameters = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))["parameters"]
    assert parameters["embedding_model"] == "openai/fake-embed"
    assert parameters["embedding_api_base"] == server.base_url and parameters["embedding_prefix"] == "input_type"


def test_an_embedding_server_failure_is_an_error_sample_naming_the_model(run_cli, server) -> None:
    server.script.embedding_fail_status = 500
    result = _vector_run(run_cli, server, "--retries", "0")
    records = result.records()
    failed = [r for r in records if r.status == "error"]
    assert failed and all("openai/fake-embed" in r.error.message for r in failed)
    assert result.code != 0
