"""An OpenAI-compatible embedding server whose vectors overflow float32 (a component of 1e39, finite as JSON and as
a Python float, infinite as float32 and NaN once normalised) or are all zeros (no direction, similar to nothing):
each is refused as a provider fault naming the model, so the sample is an error, never an "ok" sample whose items
were silently unfindable."""

from __future__ import annotations

import pytest

from tests.integration.fake_openai_server import FakeOpenAIServer
from tests.integration.test_vector_arms_wire import _vector_run

FAULTS = {
    "1e39 in a vector": (lambda text: [1.0, 1e39, 0.5], "beyond float32's range"),
    "an all-zero vector": (lambda text: [0.0, 0.0, 0.0], "all zeros"),
}


@pytest.mark.parametrize("name", FAULTS)
def test_an_unindexable_embedding_is_a_provider_fault_not_an_ok_sample(run_cli, server: FakeOpenAIServer, name: str) -> None:
    """Every vector-arm sample is an error naming the embedding model and the fault; none is ``ok``."""
    server.script.embed, message = FAULTS[name]
    result = _vector_run(run_cli, server, "--retries", "0")
    records = result.records()
    assert records and all(r.status == "error" for r in records), [r.status for r in records]
    assert all("openai/fake-embed" in r.error.message and message in r.error.message for r in records)
    assert result.code != 0 and "Traceback" not in result.err
