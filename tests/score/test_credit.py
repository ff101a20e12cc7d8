"""The harness-wide cap on credited ids: at most top_k per call, and only items the result showed, for every system."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    policy_denial,
    probe_messages,
    registry,
)
from harness.score import score_sample
from harness.score.credit import credit, shown_text, shows_id
from harness.score.paper_metrics import ranked_sessions
from tests.score.scoring_factories import make_record, make_scenario, tool_call

SCENARIO = "fact-04-research-layout"  # four items of the probe's workspace, two of them relevant


def _budgeted(record: Any, top_k: int) -> Any:
    return record.model_copy(update={"retrieval_budget": {"top_k": top_k, "chars": 4000}})


def test_a_call_is_credited_with_at_most_top_k_ids_in_the_order_it_reported_them() -> None:
    """Bug planted: no cap (every reported id credited): precision 1/2 became 1/2 with recall 1.0 at k = 1."""
    sc = make_scenario()
    record = _budgeted(make_record(sc, calls=[tool_call(["it-global", "it-pg-version"])]), top_k=1)
    scores = score_sample(record, sc)
    assert scores.retrieved_items == ["it-global"] and scores.retrieved_recall == 0.0
    assert scores.uncredited_items == ["it-pg-version: beyond top_k=1"]


def test_an_item_the_result_never_showed_is_not_credited() -> None:
    """Bug planted: ``_shows`` always True (a plug-in's claim taken as given)."""
    sc = make_scenario()
    text = json.dumps({"results": [{"text": next(i.content for i in sc.items if i.id == "it-global")}]})
    scores = score_sample(make_record(sc, calls=[tool_call(["it-global", "it-pg-version"], text)]), sc)
    assert scores.retrieved_items == ["it-global"] and scores.retrieved_recall == 0.0
    assert scores.uncredited_items == ["it-pg-version: not shown"]


def test_an_item_shown_by_its_id_its_content_or_a_turn_it_cites_is_credited() -> None:
    sc = make_scenario()
    item = next(i for i in sc.items if i.id == "it-pg-version")
    turn = next(t.content for s in sc.sessions for t in s.turns
                if (s.id, t.id) == (item.sources[0].session, item.sources[0].turn))
    for text in (json.dumps({"results": [{"itemId": "it-pg-version"}]}), f"[1] {item.content.upper()}",
                 json.dumps({"results": [{"text": f"2026-01-05T09:00:00Z: {turn}"}]})):
        assert credit(make_record(sc, calls=[tool_call(["it-pg-version"], text)]), sc).calls == [["it-pg-version"]], text


def test_an_id_is_shown_only_as_a_whole_token_and_json_strings_are_read_decoded() -> None:
    assert shows_id("it-1 and more", "it-1") and not shows_id('{"itemId":"it-10"}', "it-1")
    assert not shows_id("xit-1", "it-1") and shows_id("(it-1).", "it-1")
    assert 'He said "hi" to Zoë' in shown_text(json.dumps({"text": 'He said "hi" to Zoë'}, ensure_ascii=True))


def test_a_record_without_a_budget_is_not_capped_and_an_id_no_item_has_is_kept() -> None:
    sc = make_scenario()
    record = make_record(sc, calls=[tool_call(["it-global", "it-pg-version", "mem0:abc"])])
    assert credit(record, sc).calls == [["it-global", "it-pg-version", "mem0:abc"]]  # mem0:abc can only lower precision


def test_session_metrics_rank_only_credited_items() -> None:
    sc = make_scenario()
    record = _budgeted(make_record(sc, calls=[tool_call(["it-global", "it-pg-version"])]), top_k=1)
    sessions_of_global = [s.session for i in sc.items if i.id == "it-global" for s in i.sources]
    assert ranked_sessions(record, sc) == list(dict.fromkeys(sessions_of_global))


# --- a deliberately over-crediting plug-in, through a real run -----------------------------------------------------

SEARCH_SPEC = {"type": "function", "function": {
    "name": "note_search", "description": "Search the user's notes from earlier conversations.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def _over_crediting(name: str, arm: str, *, show_all: bool) -> MemorySystem:
    """A plug-in that reports every item of the probe's scope as disclosed: ``show_all`` shows every item (more than
    its budget's top_k allows), else only the irrelevant ones (so the relevant ones it credits were never shown)."""

    class Instance(MemoryInstance):
        def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
            if policy_denial(policy, context) is not None:
                return ProbeSetup(probe_messages(self.scenario))
            relevant = set(self.scenario.expect.relevant_items)
            ranked = sorted(self.scenario.items, key=lambda i: i.id in relevant)  # the irrelevant first

            def search(arguments: dict[str, Any]) -> ToolExecution:
                shown = ranked if show_all else [i for i in ranked if i.id not in relevant]
                text = json.dumps({"results": [{"text": i.content} for i in shown]})
                claimed = ranked if show_all else ranked[::-1]  # the unshown relevant ones claimed first
                return ToolExecution("", "", "ok", text, tuple(i.id for i in claimed), True)

            tools = StaticToolRun({"note_search": (SEARCH_SPEC, search)})
            return ProbeSetup(probe_messages(self.scenario, tool_instructions="Call note_search to find notes."), tools)

    class System(MemorySystem):
        arms = {arm: "seeded"}

        def open(self, scenario: Any, write_mode: Any) -> MemoryInstance:
            return Instance(scenario)

    system = System()
    system.name = name
    return system


@pytest.fixture()
def over_crediting(monkeypatch: pytest.MonkeyPatch) -> None:
    systems = [_over_crediting("unshown_sys", "credits_unshown", show_all=False),
               _over_crediting("beyond_k_sys", "credits_beyond_k", show_all=True)]
    entries = [types.SimpleNamespace(name=s.name, value=f"tests:{s.name}", dist=None, load=lambda s=s: s) for s in systems]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: entries)
    registry.plugin_arms.cache_clear()
    yield
    registry.plugin_arms.cache_clear()


@pytest.mark.usefixtures("over_crediting")
def test_a_plug_in_that_over_credits_gets_recall_at_k_only_for_what_it_showed_at_k(tmp_path: Path, capsys: Any) -> None:
    """Bug planted (either half): no cap at top_k, or every reported id credited: both arms scored recall@k 1.0."""
    from harness.cli import main

    out = tmp_path / "run"
    code = main(["run", "--scenarios", "scenarios/starter", "--filter", SCENARIO, "--arms", "recall", "credits_unshown",
                 "credits_beyond_k", "--retrieval-budget", "top_k=1,chars=4000", "--out", str(out), "--no-cache",
                 "--no-progress"])
    assert code in (0, 1)
    assert "ids reported but not credited (beyond top_k, or not shown): credits_unshown 3, credits_beyond_k 3" in \
        capsys.readouterr().out
    records = {r["arm"]: r for r in map(json.loads, (out / "results.jsonl").read_text(encoding="utf-8").splitlines())}
    assert records["credits_beyond_k"]["retrieval_budget"] == {"top_k": 1, "chars": 4000}
    assert all(len(c["disclosed_item_ids"]) == 4 for arm in ("credits_unshown", "credits_beyond_k")
               for c in records[arm]["tool_calls"])  # what the plug-in claimed, kept in the record as evidence
    scores = {s["arm"]: s for s in map(json.loads, (out / "scores.jsonl").read_text(encoding="utf-8").splitlines())}
    systems = {r["arm"]: r for r in json.loads((out / "summary.json").read_text(encoding="utf-8"))["systems"]}
    for arm in ("credits_unshown", "credits_beyond_k"):
        assert records[arm]["tool_calls"], arm
        assert systems[arm]["retrieved_recall"] == 0.0 and systems[arm]["uncredited_ids"] > 0, arm
    unshown = scores["credits_unshown"]["uncredited_items"]
    assert {u.split(": ")[0] for u in unshown if u.endswith(": not shown")} == {"it-layout", "it-loader-io"}
    assert all(u.endswith("beyond top_k=1") for u in scores["credits_beyond_k"]["uncredited_items"])
    assert scores["recall"]["uncredited_items"] == [] and systems["recall"]["uncredited_ids"] == 0  # the Host reports what it showed


def test_an_id_followed_by_a_dot_and_more_of_a_name_is_another_id() -> None:
    assert not shows_id("see it-1.5 for details", "it-1") and shows_id("see it-1.", "it-1")
    assert not shows_id("it-1_b", "it-1") and shows_id("it-1, it-2", "it-2")


@pytest.mark.parametrize("shape", ["key", "list"])
def test_an_item_shown_as_a_json_key_or_a_list_entry_is_read_decoded_too(shape: str) -> None:
    """A product may key its results by memory text, or list bare strings; decoded, they show the item (``ö`` sent as
    ``\\u00f6``). Bug caught by mutmut: a list's entries not decoded (``_strings(None)``)."""
    sc = make_scenario()
    item = next(i for i in sc.items if i.id == "it-global")
    content = item.content.replace("short", "shört")
    body = {"scores": {content: 0.9}} if shape == "key" else {"memories": [[content]]}
    text = json.dumps(body, ensure_ascii=True)
    assert "\\u00f6" in text  # as sent, escaped
    shown = item.model_copy(update={"content": content})
    scenario = sc.model_copy(update={"items": [shown if i.id == "it-global" else i for i in sc.items]})
    assert credit(make_record(scenario, calls=[tool_call(["it-global"], text)]), scenario).calls == [["it-global"]]


def test_a_budget_without_a_positive_whole_top_k_caps_nothing() -> None:
    """Only a recorded positive ``top_k`` caps; a record from before budgets were recorded (or a malformed one) is
    shown-checked only, never capped at 0 (which would take every credit away)."""
    sc = make_scenario()
    record = make_record(sc, calls=[tool_call(["it-global", "it-pg-version"])])
    for budget in ({"top_k": 0, "chars": 4000}, {"chars": 4000}, {"top_k": "10"}, None):
        assert credit(record.model_copy(update={"retrieval_budget": budget}), sc).calls == [["it-global", "it-pg-version"]]
