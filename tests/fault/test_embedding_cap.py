"""``--max-cost-usd`` and embedding requests, against the fake server's ``/v1/embeddings`` over real HTTP: each request's
worst case is reserved before it is sent, so the cap is never passed by an embedding (they used to be charged after
the request was made, which could pass the cap by a whole batch)."""

from __future__ import annotations

import pytest

from harness.run.budget import Budget, BudgetExceeded
from harness.run.calls import embedding_price
from harness.run.embeddings import LiteLLMEmbedder, worst_case_tokens
from tests.integration.conftest import SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer

MODEL = "openai/text-embedding-3-small"  # $0.02 per million input tokens in litellm's map


def _batch(i: int) -> list[str]:
    """Ten distinct texts of 1,000 words (the server counts 1,000 tokens each; the worst case is 5,008 each)."""
    return [f"batch{i}text{j} " + "word " * 999 for j in range(10)]


def test_embedding_requests_stop_before_their_worst_case_would_pass_the_cap(server: FakeOpenAIServer) -> None:
    """A cap of $0.0025: each request of ten 1,000-word texts costs $0.0002 at the server's usage and may cost $0.001
    at its worst case; requests go out while the worst case fits, the one that does not is never sent
    (BudgetExceeded, the budget exhausted), and what was recorded never passes the cap."""
    price = embedding_price(MODEL)
    assert price.input > 0
    budget = Budget(0.0025, {})
    budget.price(MODEL, price)
    embedder = LiteLLMEmbedder(MODEL, api_base=server.base_url, retries=0)
    embedder.budget = budget
    made = 0
    with pytest.raises(BudgetExceeded):
        for i in range(20):
            embedder.embed(_batch(i), "passage")
            made += 1
            assert budget.recorded_usd <= 0.0025
    sent = [seen for seen in server.requests if "/embeddings" in seen.path]
    assert len(sent) == made == 8  # 8 x $0.0002 recorded + the next $0.001 worst case > $0.0025
    assert budget.exhausted and budget.in_flight == 0 and budget.reserved_usd == 0
    assert abs(budget.recorded_usd - made * 10 * 1000 * price.input) < 1e-12


def test_a_failed_embedding_request_gives_its_reservation_back(server: FakeOpenAIServer) -> None:
    """A request the server fails (503) records nothing and leaves nothing reserved: a later request still fits."""
    from memory_tools import EmbeddingError

    budget = Budget(0.01, {})
    budget.price(MODEL, embedding_price(MODEL))
    embedder = LiteLLMEmbedder(MODEL, api_base=server.base_url, retries=0)
    embedder.budget = budget
    server.script.embedding_fail_status = 503
    with pytest.raises(EmbeddingError):
        embedder.embed(_batch(0), "passage")
    assert budget.recorded_usd == 0 and budget.reserved_usd == 0 and budget.in_flight == 0
    server.script.embedding_fail_status = None
    embedder.embed(_batch(1), "passage")
    assert budget.recorded_usd > 0


@pytest.mark.parametrize("text", ["plain words of English", "日本語のテキストと絵文字 🎉🎉🎉", "x" * 3000, "a\u200db" * 50, ""])
def test_the_worst_case_counts_at_least_the_tokens_a_tokenizer_does(text: str) -> None:
    """One token per UTF-8 byte plus 8 per input is at least what a byte-level tokenizer (litellm's counter) counts."""
    from harness.run import count_tokens

    assert worst_case_tokens([text]) >= count_tokens("openai/text-embedding-3-small", text=text)


def test_an_embedding_model_without_a_price_is_refused_under_a_cap_unless_its_price_is_given(
        server: FakeOpenAIServer, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `run --max-cost-usd 1` with a recall_vector arm whose --embedding-model litellm has no price for: one
    line naming the model and --embedding-price, exit 2, no request sent and no run folder (it used to reserve $0 for
    every request, so the cap bounded nothing). The same run with `--embedding-price 0.02` runs, its embedding requests
    reserved at that price, and run.json records it. Both go through ``main`` in the test's process (the fault is a
    setting; the requests still cross real HTTP to the fake server; an exception fails the test)."""
    import json

    from harness.cli import main

    base = ["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "recall_vector", "--embedding-model",
            "openai/no-such-embedder", "--embedding-api-base", server.base_url, "--max-cost-usd", "1",
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    code = main([*base, "--out", str(tmp_path / "refused")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        "error: --max-cost-usd: litellm's price map has no price for openai/no-such-embedder (--embedding-model), so "
        "what its embeddings cost cannot be bounded; give it with --embedding-price USD (per million input tokens; 0 "
        "for a local server), or drop --max-cost-usd")
    assert not server.requests and not (tmp_path / "refused").exists()
    priced = main([*base, "--embedding-price", "0.02", "--out", str(tmp_path / "priced")])
    assert priced in (0, 1), capsys.readouterr().err
    assert any("/embeddings" in seen.path for seen in server.requests)
    manifest = json.loads((tmp_path / "priced" / "run.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["embedding_price"] == 0.02
