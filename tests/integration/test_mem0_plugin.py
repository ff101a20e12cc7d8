"""The mem0 plug-in (examples/recall-eval-mem0): installed, found, run end to end, and its naive configurations caught.

Skipped where ``mem0ai`` is not installed. Each trap of a naive mem0 setup is
a small variant of the plug-in written on the fly; recall-eval's own leakage
metrics (tool-level leaks: a leakage canary in a tool result, another
workspace's item disclosed) catch it, and the plug-in as shipped has none.
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

if importlib.util.find_spec("mem0") is None:
    pytest.skip("mem0ai is not installed (pip install 'mem0ai>=2.2,<3'): skipping the mem0 plug-in tests",
                allow_module_level=True)

SMOKE = REPO / "scenarios" / "smoke"
LEAK = "smoke-04-leak-pilot-customer"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install("recall-eval-mem0", tmp_path_factory.mktemp("mem0-site"))


@pytest.fixture()
def plugin(site: Path) -> Iterator[Path]:
    with on_path(site):
        yield site


def _scenario(name: str = LEAK, directory: Path = SMOKE) -> Any:
    from harness.scenarios import load_scenarios

    return load_scenarios([directory / f"{name}.yaml"])[0]


def _run(out: Path, *flags: str, arms: tuple[str, ...], scenarios: Path = SMOKE) -> dict[tuple[str, str], dict]:
    from harness.cli import main

    code = main(["run", "--scenarios", str(scenarios), "--arms", *arms, "--out", str(out), "--no-cache", "--no-progress", *flags])
    assert code in (0, 1), code
    return records(out)


def _tool_leaks(record: dict, scenario: Any) -> list[str]:
    from harness.records import SampleRecord
    from harness.score import score_sample

    return sorted({leak.kind for leak in score_sample(SampleRecord.model_validate(record), scenario).tool_leaks})


def test_the_installed_mem0_plugin_offers_both_arms_through_its_entry_points(site: Path) -> None:
    code = ("from harness.memory_systems import resolve_arm\n"
            "for name in ('mem0', 'mem0_raw'):\n"
            "    arm = resolve_arm(name)\n"
            "    print(arm.name, arm.write_mode, arm.system.sees_session_times, arm.origin.split()[0])")
    done = subprocess.run([sys.executable, "-c", code], env=child_env(site), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["mem0 agent True recall-eval-mem0", "mem0_raw none True recall-eval-mem0"]


def test_without_mem0ai_the_arm_names_the_package_to_install(plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import recall_eval_mem0

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mem0" else real(name, *a))
    with pytest.raises(ImportError, match=r"needs the mem0ai package: pip install"):
        recall_eval_mem0.Mem0System()


def test_mem0_is_imported_with_telemetry_off_and_writes_nothing_into_the_home_folder(site: Path, tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import os, recall_eval_mem0
        from harness.scenarios import load_scenarios
        system = recall_eval_mem0.Mem0System()
        instance = system.open(load_scenarios([os.environ['SCENARIO']])[0], 'none')
        instance.close()
        import mem0.memory.telemetry as telemetry, mem0.configs.base as base
        print(telemetry.MEM0_TELEMETRY, base.mem0_dir.startswith(os.environ['TMPDIR']), os.path.exists(os.path.expanduser('~/.mem0')))
    """)
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(), tmp.mkdir()
    env = child_env(site) | {"HOME": str(home), "TMPDIR": str(tmp), "MEM0_TELEMETRY": "True",
                             "SCENARIO": str(SMOKE / f"{LEAK}.yaml")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "False"]
    assert not list(home.iterdir()) and not list(tmp.iterdir())  # its folder of the process is removed at exit


def test_mem0_stores_every_earlier_turn_as_one_memory_in_its_workspace_scope(plugin: Path) -> None:
    import recall_eval_mem0

    scenario = _scenario()
    instance = recall_eval_mem0.Mem0RawSystem().open(scenario, "none")
    try:
        stored = {ws: instance.memory.get_all(filters={"user_id": recall_eval_mem0.user_for(ws)})["results"]
                  for ws in ("ws-acme", "ws-globex")}
    finally:
        instance.close()
    turns = {s.workspace: sorted(t.content for t in s.turns) for s in scenario.sessions}
    assert {ws: sorted(m["memory"] for m in found) for ws, found in stored.items()} == turns


def test_a_named_speaker_opens_the_content_mem0_is_given_as_in_mem0s_locomo_harness(plugin: Path) -> None:
    """mem0 renders ``role: content`` and drops ``name``: without the speaker in the content, no memory says who spoke."""
    import recall_eval_mem0

    from harness.scenarios import Scenario

    data = _scenario().model_dump(mode="json", exclude_none=True)
    data["sessions"][0]["turns"][0]["speaker"] = "Dana"
    scenario = Scenario.model_validate(data)
    instance = recall_eval_mem0.Mem0RawSystem().open(scenario, "none")
    try:
        stored = instance.memory.get_all(filters={"user_id": recall_eval_mem0.user_for(scenario.sessions[0].workspace)})["results"]
    finally:
        instance.close()
    first = scenario.sessions[0].turns[0]
    assert f"Dana: {first.content}" in {m["memory"] for m in stored}
    assert all(m["metadata"]["timestamp"] == recall_eval_mem0.iso_time(scenario.sessions[0].started_at) for m in stored)


def test_mem0_search_honours_the_budget_top_k_where_a_limit_is_silently_ignored(plugin: Path) -> None:
    import recall_eval_mem0

    from harness.scenarios import Scenario

    data = _scenario().model_dump(mode="json", exclude_none=True)
    data["sessions"][0]["turns"] = [{"role": "user", "content": f"The pilot customer note number {n} is about the export beta."}
                                    for n in range(30)]
    data["items"] = [i | {"sources": [{"session": data["sessions"][0]["id"], "turn": "t1"}]} for i in data["items"]]
    scenario = Scenario.model_validate(data)
    instance = recall_eval_mem0.Mem0RawSystem().open(scenario, "none")
    try:
        instance.retrieval_budget = SimpleNamespace(top_k=3, chars=100_000)
        from harness.scenarios import probe_policy

        probe = instance.begin_probe(*probe_policy(scenario))
        result = json.loads(probe.tools.call("mem0_search", {"query": "pilot customer export beta"}).result_text)
        naive = instance.memory.search("pilot customer export beta", filters={"user_id": "workspace:ws-acme"}, limit=3)
    finally:
        instance.close()
    assert len(result["results"]) == 3
    assert len(naive["results"]) == 20  # mem0's default top_k: the limit= of its 1.x API is dropped without a word


def test_mem0_embeds_with_the_runs_embedder_so_two_embedders_give_two_results(plugin: Path) -> None:
    """The plug-in's search follows the embedder the harness hands it (queries as queries), counted per sample."""
    from harness.scenarios import probe_policy

    scenario = _scenario()

    def search(instance: Any) -> str:
        probe = instance.begin_probe(*probe_policy(scenario))
        return probe.tools.call("mem0_search", {"query": "Who is the pilot customer?"}).result_text

    kinds = differs_under_two_embedders("mem0_raw", scenario, search)
    assert kinds[-1] == "query" and "passage" in kinds


def test_a_stored_turn_discloses_its_items_but_not_a_value_a_later_item_replaced(plugin: Path) -> None:
    """A raw turn holding a superseded value is not an archived-item leak; one holding a forgotten fact is."""
    import recall_eval_mem0

    from harness.scenarios import Scenario, probe_policy

    upd = _scenario("upd-01-staging-db-host", REPO / "scenarios" / "starter")
    data = upd.model_dump(mode="json", exclude_none=True)
    for item in data["items"]:
        item["supersedes"] = []  # the old host now archived with no successor: forgotten, not replaced
    forgotten = Scenario.model_validate(data)
    disclosed = {}
    for name, scenario in (("replaced", upd), ("forgotten", forgotten)):
        instance = recall_eval_mem0.Mem0RawSystem().open(scenario, "none")
        try:
            probe = instance.begin_probe(*probe_policy(scenario))
            disclosed[name] = probe.tools.call("mem0_search", {"query": "pg-staging-1.internal port 5433"}).disclosed_item_ids
        finally:
            instance.close()
    assert "it-staging-old" not in disclosed["replaced"] and any(i.startswith("turn:") for i in disclosed["replaced"])
    assert "it-staging-old" in disclosed["forgotten"]


def test_mem0_offline_run_answers_from_stored_turns_within_its_scope(plugin: Path, tmp_path: Path) -> None:
    found = _run(tmp_path / "run", arms=("mem0_raw",))
    leak = found[(LEAK, "mem0_raw")]
    assert leak["status"] == "ok" and leak["tools_offered"] == ["mem0_search"]
    calls = leak["tool_calls"]
    assert calls and calls[0]["name"] == "mem0_search" and "Brightwater" in calls[0]["result_text"]
    assert "it-acme-pilot" in calls[0]["disclosed_item_ids"] and "Northwind" not in calls[0]["result_text"]
    assert _tool_leaks(leak, _scenario()) == []
    assert leak["write_phase"] is None  # infer=False: no model call before the probe
    policy = found[("smoke-05-policy-reads-off", "mem0_raw")]
    assert policy["tools_offered"] == [] and policy["tool_calls"] == []


def test_a_denied_policy_leaves_mem0_cold(plugin: Path) -> None:
    import recall_eval_mem0

    from harness.scenarios import probe_policy

    scenario = _scenario("smoke-05-policy-reads-off")
    for system in (recall_eval_mem0.Mem0RawSystem(), recall_eval_mem0.Mem0System()):
        instance = system.open(scenario, next(iter(system.arms.values())))
        try:
            probe = instance.begin_probe(*probe_policy(scenario))
        finally:
            instance.close()
        assert probe.tools is None
        assert "mem0_search" not in probe.messages[0]["content"]


NAIVE_SEARCHES = textwrap.dedent('''
    """mem0 set up the naive ways (tests only): each one is a trap recall-eval's leakage metrics catch."""
    from recall_eval_mem0 import Mem0Instance, Mem0RawSystem, Mem0System, user_for

    AGENT, RUN = "recall-eval-agent", "recall-eval-run"


    class Wildcard(Mem0Instance):
        def search_filters(self, workspace):
            return [{"user_id": "*"}]  # "any user": every user's memories


    class AgentOnly(Mem0Instance):
        def add_arguments(self, session):
            return {**super().add_arguments(session), "agent_id": AGENT}

        def search_filters(self, workspace):
            return [{"agent_id": AGENT}]  # the agent's memories, across every user


    class RunOnly(Mem0Instance):
        def add_arguments(self, session):
            return {**super().add_arguments(session), "run_id": RUN}

        def search_filters(self, workspace):
            return [{"run_id": RUN}]  # the run's memories, across every user


    class SharedHistory(Mem0Instance):
        """One mem0 user for the person, workspaces as metadata, mem0's default history database."""

        history_db_path = None

        def add_arguments(self, session):
            return {"user_id": "user", "metadata": {"session": session.id, "workspace": session.workspace or "-"}}

        def search_filters(self, workspace):
            return [{"user_id": "user", "workspace": workspace or "-"}]  # the search itself is scoped right


    class DefaultHistory(Mem0Instance):
        """Scoped right, but with mem0's default history database: one file for every instance of the process."""

        history_db_path = None


    def _system(name, instance, infer):
        base = Mem0System if infer else Mem0RawSystem

        class System(base):
            def open(self, scenario, write_mode, embedder=None):
                return instance(scenario, infer=infer, embedder=embedder)

        System.name, System.arms = name, {name: "agent" if infer else "none"}
        return System


    WildcardSystem = _system("mem0_naive_wildcard", Wildcard, False)
    AgentOnlySystem = _system("mem0_naive_agent_only", AgentOnly, False)
    RunOnlySystem = _system("mem0_naive_run_only", RunOnly, False)
    SharedHistorySystem = _system("mem0_naive_shared_history", SharedHistory, True)
    DefaultHistorySystem = _system("mem0_naive_default_history", DefaultHistory, True)
''')
NAIVE_ARMS = {"mem0_naive_wildcard": "naive_mem0:WildcardSystem", "mem0_naive_agent_only": "naive_mem0:AgentOnlySystem",
              "mem0_naive_run_only": "naive_mem0:RunOnlySystem", "mem0_naive_shared_history": "naive_mem0:SharedHistorySystem",
              "mem0_naive_default_history": "naive_mem0:DefaultHistorySystem"}


@pytest.fixture()
def naive(plugin: Path, tmp_path: Path) -> Iterator[Path]:
    site = write_distribution(tmp_path / "naive-site", "naive-mem0", "naive_mem0", NAIVE_SEARCHES, NAIVE_ARMS)
    with on_path(site):
        yield site


@pytest.mark.parametrize("arm", ["mem0_naive_wildcard", "mem0_naive_agent_only", "mem0_naive_run_only"])
def test_a_naive_mem0_search_filter_leaks_another_workspace_and_the_leakage_metrics_catch_it(naive: Path, tmp_path: Path, arm: str) -> None:
    found = _run(tmp_path / "run", "--filter", LEAK, arms=("mem0_raw", arm))
    scenario = _scenario()
    assert "leakage_canary" in _tool_leaks(found[(LEAK, arm)], scenario)
    assert "out_of_scope_item" in _tool_leaks(found[(LEAK, arm)], scenario)
    assert _tool_leaks(found[(LEAK, "mem0_raw")], scenario) == []


def extraction_reply(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """A model doing mem0's extraction as an LLM might: every user line it is shown becomes a memory.

    Lines of the new messages are kept as said; lines of the earlier context it was given ("Last k Messages")
    are noted as earlier (an LLM words them its own way, so mem0's exact-text dedup does not drop them).
    """
    if (body.get("response_format") or {}).get("type") != "json_schema":
        return reply
    prompt = body["messages"][-1]["content"]
    facts, earlier = [], False
    for line in prompt.splitlines():
        earlier = line == "## Last k Messages" or (earlier and not line.startswith("## "))
        if line.startswith("user: "):
            said = line[len("user: "):].strip()
            facts.append(f"Earlier the user said: {said}" if earlier else said)
    reply["choices"][0]["message"] = {"role": "assistant", "content": json.dumps({"memory": [{"text": f} for f in facts]})}
    reply["choices"][0]["finish_reason"] = "stop"
    return reply


def _globex_first(tmp_path: Path) -> Path:
    """smoke-04 with the other workspace's session first, so the probe workspace's extraction comes after it."""
    import yaml

    data = yaml.safe_load((SMOKE / f"{LEAK}.yaml").read_text(encoding="utf-8"))
    data["sessions"][0]["started_at"], data["sessions"][1]["started_at"] = "2026-01-16T10:00:00Z", "2026-01-14T14:00:00Z"
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / f"{LEAK}.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return folder


def test_mem0_infer_extracts_with_the_run_model_counted_as_write_phase_calls(plugin: Path, server: Any, tmp_path: Path) -> None:
    import recall_eval_mem0

    from tests.integration.fake_openai_server import PROMPT_TOKENS

    server.script.mode, server.script.respond = "offline", extraction_reply
    found = _run(tmp_path / "run", "--model", "openai/fake", "--api-base", server.base_url, "--filter", LEAK, arms=("mem0",))
    record = found[(LEAK, "mem0")]
    assert record["status"] == "ok", record.get("error")
    sessions = record["write_phase"]["sessions"]
    assert [s["workspace"] for s in sessions] == ["ws-acme", "ws-globex"]
    assert all(len(s["model_calls"]) == 1 and s["model_calls"][0]["prompt_tokens"] == PROMPT_TOKENS for s in sessions)
    assert all(s["tool_calls"][0]["name"] == "mem0.add" and "Brightwater" in sessions[0]["tool_calls"][0]["result_text"] for s in sessions)
    extraction = [r.body for r in server.requests if r.body.get("response_format")]
    schema = {"type": "json_schema", "json_schema": recall_eval_mem0.EXTRACTION_SCHEMA}
    assert len(extraction) == 2 and all(b["response_format"] == schema and "tools" not in b for b in extraction)
    assert "Northwind" not in extraction[0]["messages"][-1]["content"]
    assert "Brightwater" in record["tool_calls"][0]["result_text"] and _tool_leaks(record, _scenario()) == []
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    write = {m["metric"]: m["value"] for m in summary["metrics"] if m["arm"] == "mem0" and m["category"] == "all"
             and m["metric"] in ("write_model_calls", "write_prompt_tokens")}
    assert write == {"write_model_calls": 2, "write_prompt_tokens": 2 * PROMPT_TOKENS}


def test_a_shared_mem0_history_puts_one_workspace_into_anothers_extraction_and_the_leakage_metrics_catch_it(
        naive: Path, server: Any, tmp_path: Path) -> None:
    server.script.mode, server.script.respond = "offline", extraction_reply
    suite = _globex_first(tmp_path)
    found = _run(tmp_path / "run", "--model", "openai/fake", "--api-base", server.base_url,
                 arms=("mem0", "mem0_naive_shared_history"), scenarios=suite)
    scenario = _scenario(directory=suite)
    assert "leakage_canary" in _tool_leaks(found[(LEAK, "mem0_naive_shared_history")], scenario)
    assert _tool_leaks(found[(LEAK, "mem0")], scenario) == []
    acme = [r.body["messages"][-1]["content"] for r in server.requests
            if r.body.get("response_format") and "Brightwater" in r.body["messages"][-1]["content"]]
    assert len(acme) == 2 and sum("Northwind" in prompt for prompt in acme) == 1  # the naive arm's prompt only


def _earlier_client_first(tmp_path: Path) -> Path:
    """smoke-04 after another user's sample ("a-..." runs first) whose Acme workspace named Northwind as its pilot."""
    import yaml

    data = yaml.safe_load((SMOKE / f"{LEAK}.yaml").read_text(encoding="utf-8"))
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / f"{LEAK}.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    data["id"] = "a-earlier-sample"
    data["sessions"] = data["sessions"][:1]
    data["sessions"][0]["turns"][0]["content"] = "For the CSV export beta at Acme, the pilot customer is Northwind Freight."
    data["items"] = data["items"][:1]
    (folder / "a-earlier-sample.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return folder


def test_mem0s_default_history_file_carries_one_sample_into_the_next_ones_extraction_and_the_leakage_metrics_catch_it(
        naive: Path, server: Any, tmp_path: Path) -> None:
    server.script.mode, server.script.respond = "offline", extraction_reply
    suite = _earlier_client_first(tmp_path)
    # one sample at a time, "a-earlier-sample" first: the order a long run's samples meet in the one history file
    found = _run(tmp_path / "run", "--model", "openai/fake", "--api-base", server.base_url, "--max-concurrency", "1",
                 arms=("mem0", "mem0_naive_default_history"), scenarios=suite)
    scenario = _scenario(directory=suite)
    assert "leakage_canary" in _tool_leaks(found[(LEAK, "mem0_naive_default_history")], scenario)
    assert _tool_leaks(found[(LEAK, "mem0")], scenario) == []


def test_mem0_at_its_defaults_extracts_offline_and_shows_each_memory_with_its_session_time(plugin: Path, tmp_path: Path) -> None:
    """offline/reference honours the JSON schema mem0's extraction asks for: mem0 stores facts, and the probe finds one."""
    import recall_eval_mem0

    found = _run(tmp_path / "run", "--filter", LEAK, arms=("mem0",))
    record = found[(LEAK, "mem0")]
    assert record["status"] == "ok", record.get("error")
    calls = [c for s in record["write_phase"]["sessions"] for c in s["model_calls"]]
    assert len(calls) == 2 and all(c["prompt_tokens"] > 0 for c in calls)
    writes = [json.loads(c["result_text"]) for s in record["write_phase"]["sessions"] for c in s["tool_calls"]]
    assert all(w["results"] and "note" not in w for w in writes)
    assert any("Brightwater" in m["memory"] and m["event"] == "ADD" for m in writes[0]["results"])
    search = record["tool_calls"][0]
    shown = json.loads(search["result_text"])["results"]
    assert search["name"] == "mem0_search" and shown
    scenario = _scenario()
    stamp = recall_eval_mem0.iso_time(scenario.sessions[0].started_at)
    assert any(entry["text"].startswith(f"{stamp}: ") and "Brightwater" in entry["text"] for entry in shown)
    assert _tool_leaks(record, scenario) == [] and "Brightwater" in (record["final_answer"] or "")
    ingest, embedding = record["ingest"], record["embedding"]  # accounted like any system: its store and its extraction
    assert ingest["open_s"] > 0 and ingest["write_s"] > 0 and ingest["embedding_calls"] > 0
    assert embedding["model"] == "lexical" and embedding["calls"] >= ingest["embedding_calls"]
