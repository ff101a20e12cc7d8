"""The recall_vector and recall_hybrid systems: registered beside recall, the run's embedder, the probe's gate, usage per sample."""

from __future__ import annotations

import json

import pytest

from harness.memory_systems import VECTOR_ARMS, builtin_arms, configure_embedder, current_embedder, resolve_arm
from harness.scenarios import probe_policy
from memory_tools import LexicalEmbedder
from tests.memory_systems.prompt_factories import make_scenario
from tests.memory_tools.test_vectors import CountingEmbedder


@pytest.fixture(autouse=True)
def _lexical_again():
    yield
    configure_embedder(None)


def _probe(arm_name: str, scenario):
    arm = resolve_arm(arm_name)
    instance = arm.system.open(scenario, arm.write_mode)
    return instance, instance.begin_probe(*probe_policy(scenario))


def test_the_vector_arms_are_built_in_seeded_and_after_the_original_arms() -> None:
    arms = list(builtin_arms())
    assert arms[:4] == ["history_only", "recall", "full_history", "memory_document"]
    assert [a for a in arms if a in VECTOR_ARMS] == ["recall_vector", "recall_hybrid"]
    assert {resolve_arm(a).write_mode for a in VECTOR_ARMS} == {"seeded"}


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_the_probe_is_recall_s_prompt_with_the_same_tools(arm) -> None:
    scenario = make_scenario()
    recall, recall_probe = _probe("recall", scenario)
    vector, vector_probe = _probe(arm, scenario)
    try:
        assert vector_probe.messages == recall_probe.messages
        names = [s["function"]["name"] for s in vector_probe.arm_setup().tools]
        assert names == [s["function"]["name"] for s in recall_probe.arm_setup().tools] == ["memory_search", "memory_get"]
    finally:
        recall.close(), vector.close()


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_a_search_ranks_the_scenario_s_items_and_counts_the_sample_s_embeddings(arm) -> None:
    instance, probe = _probe(arm, make_scenario())
    try:
        record = probe.tools.call("memory_search", json.dumps({"terms": ["dev server port"]}))
        found = json.loads(record.result_text)["results"]
        assert found and "5174" in found[0]["content"]
        usage = instance.embedding_usage()
        assert usage.model == "lexical" and usage.texts >= 2 and usage.provider_calls == 0
    finally:
        instance.close()


def test_the_configured_embedder_is_the_one_every_new_sample_uses() -> None:
    counting = CountingEmbedder()
    configure_embedder(counting)
    assert current_embedder() is counting
    instance, probe = _probe("recall_vector", make_scenario())
    try:
        probe.tools.call("memory_search", json.dumps({"terms": ["port"]}))
        assert ("query", "port") in counting.texts
    finally:
        instance.close()
    configure_embedder(None)
    assert isinstance(current_embedder(), LexicalEmbedder)


@pytest.mark.parametrize("arm", VECTOR_ARMS)
@pytest.mark.parametrize("denial", [{"incognito": True}, {"policy": {"agent_read_enabled": False}}])
def test_a_denied_probe_has_no_tools_and_embeds_no_query(arm, denial) -> None:
    counting = CountingEmbedder()
    configure_embedder(counting)
    instance, probe = _probe(arm, make_scenario(**denial))
    try:
        indexed = list(counting.texts)  # what the system embedded when it stored the items, before any probe
        assert probe.arm_setup().tools == []
        record = probe.tools.call("memory_search", json.dumps({"terms": ["port"]}))
        assert record.status == "policy_denied" and not record.storage_read
        assert counting.texts == indexed and {kind for kind, _ in indexed} <= {"passage"}
    finally:
        instance.close()


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_the_passages_are_embedded_when_the_sample_opens_and_a_search_embeds_only_its_query(arm) -> None:
    """Bug planted: the index built at the first search again (``prepare`` not called in open): the passages' calls
    and seconds landed under the probe's search and ingest showed 0 embedding calls."""
    counting = CountingEmbedder()
    configure_embedder(counting)
    scenario = make_scenario()
    instance = resolve_arm(arm).system.open(scenario, "seeded")
    try:
        visible = [i for i in scenario.items if i.state.value == "active" and i.workspace in (None, scenario.probe.workspace)]
        assert [kind for kind, _ in counting.texts] == ["passage"] * len(visible) and visible
        usage = instance.embedding_usage()
        assert (usage.texts, usage.calls) == (len(visible), 1)
        instance.begin_probe(*probe_policy(scenario)).tools.call("memory_search", json.dumps({"terms": ["dev server port"]}))
        assert counting.texts[len(visible):] == [("query", "dev server port")]
        assert instance.embedding_usage().texts == len(visible) + 1
    finally:
        instance.close()


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_the_embedder_the_harness_hands_to_open_is_used_over_the_configured_one(arm) -> None:
    from harness.memory_systems.run_embedding import sample_embedding

    configured, given = CountingEmbedder(), CountingEmbedder()
    configure_embedder(configured)
    instance = resolve_arm(arm).system.open(make_scenario(), "seeded", embedder=sample_embedding(given))
    try:
        assert given.texts and configured.texts == []
    finally:
        instance.close()


class _Failing(LexicalEmbedder):
    def embed(self, texts, kind):  # noqa: ANN001, ANN201
        raise RuntimeError("provider down")


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_a_sample_whose_passages_cannot_be_embedded_closes_its_store_and_says_why(arm, monkeypatch) -> None:
    from harness.memory_systems import builtin

    closed: list[object] = []
    original = builtin.ItemStoreInstance.close
    monkeypatch.setattr(builtin.ItemStoreInstance, "close", lambda self: (closed.append(self), original(self))[1])
    configure_embedder(_Failing())
    with pytest.raises(RuntimeError, match="provider down"):
        resolve_arm(arm).system.open(make_scenario(), "seeded")
    assert len(closed) == 1


@pytest.mark.parametrize("arm", VECTOR_ARMS)
def test_a_search_returns_at_most_the_runs_top_k(arm) -> None:
    from harness.scenarios import RetrievalBudget, Scenario

    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["items"] = [{**data["items"][0], "id": f"it-port-{n}", "content": f"The dev server runs on port 517{n}."}
                     for n in range(4)]
    scenario = Scenario.model_validate(data)
    for top_k, shown in ((2, 2), (20, 4)):
        instance = resolve_arm(arm).system.open(scenario, "seeded")
        try:
            instance.retrieval_budget = RetrievalBudget(top_k=top_k, chars=2000)
            probe = instance.begin_probe(*probe_policy(scenario))
            record = probe.tools.call("memory_search", json.dumps({"terms": ["dev server port"], "limit": 10}))
            assert len(json.loads(record.result_text)["results"]) == shown
        finally:
            instance.close()
