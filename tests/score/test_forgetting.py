"""Forgetting as a measured property: a scripted writer that forgets correctly, under another name, or not at all.

The writer is the scripted model (``tests/run/scripted_model.py``) driving
the notes system of ``tests/run/write_phase_factories.py`` (save_note /
forget_note by exact title, find_notes at the probe) through the real write
phase and probe. What comes back after a forget is ``retained_after_forget``,
never a tool-level leak, and the verdict says so in its own words.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import types  # noqa: E402

from harness.analysis import VerdictConfig, aggregate, decide  # noqa: E402
from harness.memory_systems import registry  # noqa: E402
from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.run.retry import RetryPolicy  # noqa: E402
from harness.run.sample import run_memory_sample  # noqa: E402
from harness.scenarios import Scenario  # noqa: E402
from harness.score import score_sample  # noqa: E402
from harness.score.forgetting import forgetting_table, write_forgetting  # noqa: E402
from tests.run.scripted_model import install_scripted, tool_call  # noqa: E402
from tests.run.write_phase_factories import NotesSystem, _record  # noqa: E402

ARM = "test_notes"
ADDRESS_SENTENCE = "Send the freelance invoices to my home address, 14 Rue Oberkampf, 75011 Paris."


def forgetting_scenario(*, canary_kind: str = "forgotten", archived_workspace: str | None = "ws-a") -> Scenario:
    """An address given in one session of ws-a and withdrawn in a later one; the probe (ws-a) asks for it."""
    items = [] if canary_kind == "forgotten" else [
        {"id": "it-address", "content": "Home address: 14 Rue Oberkampf, 75011 Paris.", "kind": "identity",
         "workspace": archived_workspace, "state": "archived", "keys": ["home address"],
         "sources": [{"session": "s1", "turn": "t1"}], "role": "canary"}]
    return Scenario.model_validate({
        "id": "forget-test", "title": "Address", "category": "forgetting", "description": "An address withdrawn.",
        "sessions": [
            {"id": "s1", "workspace": "ws-a", "started_at": "2026-01-05T09:00:00Z",
             "turns": [{"role": "user", "content": ADDRESS_SENTENCE}]},
            {"id": "s2", "workspace": "ws-a", "started_at": "2026-02-05T09:00:00Z",
             "turns": [{"role": "user", "content": "Please forget my home address."}]},
        ],
        "items": items,
        "probe": {"workspace": "ws-a", "started_at": "2026-03-02T10:00:00Z", "message": "What is my home address?"},
        "expect": {"abstain": True, "canaries": [{"text": "Oberkampf", "kind": canary_kind}]},
    })


def writer(save_title: str, forgets: bool = True):
    """A scripted model: saves the address under ``save_title``, forgets "home address" when asked (if ``forgets``),
    and at the probe searches, then repeats whatever address the search returned."""

    def script(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        names = {t["function"]["name"] for t in tools or []}
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        answered = [m for m in messages[last_user + 1:] if m["role"] == "tool"]
        if "save_note" in names:
            if answered:
                return {"content": "Done."}
            transcript = messages[last_user]["content"]
            if "Oberkampf" in transcript:
                return {"tool_calls": [tool_call("save_note", json.dumps({"title": save_title, "text": ADDRESS_SENTENCE}))]}
            if "forget my home address" in transcript and forgets:
                return {"tool_calls": [tool_call("forget_note", json.dumps({"title": "home address"}))]}
            return {"content": "Nothing to save."}
        if "find_notes" in names and not answered:
            return {"tool_calls": [tool_call("find_notes", json.dumps({"query": "home address"}))]}
        found = " ".join(str(m.get("content")) for m in answered)
        return {"content": "Your home address is 14 Rue Oberkampf." if "Oberkampf" in found else "I don't know your home address."}

    return script


@pytest.fixture()
def notes(monkeypatch: pytest.MonkeyPatch):
    system = NotesSystem()
    system.arms = {ARM: "agent"}
    entry = types.SimpleNamespace(name="notes", value="tests:notes", dist=None, load=lambda: system)
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [entry])
    registry.plugin_arms.cache_clear()
    yield system
    registry.plugin_arms.cache_clear()


def run_scripted(script, scn: Scenario, arm: str = ARM):
    install_scripted(script)
    client = ModelClient(retry=RetryPolicy(retries=0))
    result = asyncio.run(run_memory_sample(arm, scn, client=client, settings=ModelSettings("scripted/writer", seed=1),
                                           epoch=0, max_tool_rounds=4))
    return score_sample(_record(result, scn, arm), scn)


def _check(scores, name: str) -> dict[str, Any]:
    verdict = decide(aggregate([scores]), [scores.model], VerdictConfig(treatment_arm=ARM))
    return next(c for c in verdict["per_model"][scores.model]["checks"] if c["name"] == name)


def test_a_writer_that_forgets_correctly_retains_nothing_and_passes_the_forgetting_check(notes) -> None:
    scores = run_scripted(writer("home address"), forgetting_scenario())
    assert (scores.forget_requests, scores.forget_calls, scores.forgets_removed, scores.forgotten_facts) == (1, 1, 1, 1)
    assert scores.retained_after_forget == [] and scores.answer_forgotten == [] and scores.forget_notes == []
    assert scores.tool_leaks == []
    check = _check(scores, "no_retained_after_forget")
    assert check["passed"] is True
    assert check["reason"] == "retained after forget in test_notes: 0 retrievable, 0 answers (must be 0)"


def test_a_forget_under_another_name_is_retained_after_forget_and_named_in_the_write_record(notes) -> None:
    scores = run_scripted(writer("freelance invoices"), forgetting_scenario())
    assert (scores.forget_calls, scores.forgets_removed) == (1, 0)
    assert scores.forget_notes == ["forgot 'home address'; the fact was stored as 'freelance invoices'"]
    assert [(r.kind, r.detail, r.call_id is not None) for r in scores.retained_after_forget] == [
        ("forgotten_fact", "Oberkampf", True)]
    assert scores.answer_forgotten == ["Oberkampf"]
    assert [c.kind for c in scores.unsupported_claims] == ["forgotten", "answered_unanswerable"]
    assert scores.tool_leaks == [] and scores.answer_leaks == []  # the Host returned what the system stored, in scope
    reason = next(s.reason for s in scores.scores if s.name == "retained_after_forget")
    assert "forgot 'home address'; the fact was stored as 'freelance invoices'" in reason
    check = _check(scores, "no_retained_after_forget")
    assert check["passed"] is False
    assert check["reason"] == "retained after forget in test_notes: 1 retrievable, 1 answers (must be 0)"
    leak_check = _check(scores, "no_tool_leakage")
    assert leak_check["passed"] is True and leak_check["reason"] == "tool-level leaks 0 (Host defect when > 0; must be 0)"


def test_a_writer_that_never_forgets_is_retained_after_forget_and_says_no_call_was_made(notes) -> None:
    scores = run_scripted(writer("home address", forgets=False), forgetting_scenario())
    assert (scores.forget_requests, scores.forget_calls, scores.forgets_removed) == (1, 0, 0)
    assert scores.forget_notes == ["session s2 asked to forget; no forget call was made"]
    assert [r.kind for r in scores.retained_after_forget] == ["forgotten_fact"] and scores.answer_forgotten == ["Oberkampf"]
    assert scores.tool_leaks == []
    check = _check(scores, "no_retained_after_forget")
    assert check["passed"] is False and check["reason"].startswith("retained after forget in test_notes: 1 retrievable")


def test_full_historys_repetition_of_a_forgotten_fact_counts_the_same_way(notes) -> None:
    """The ceiling pastes the raw transcript: the withdrawn address is in its prompt, a privacy cost made visible."""
    scores = run_scripted(writer("unused"), forgetting_scenario(), arm="full_history")
    assert [(r.kind, r.detail, r.call_id) for r in scores.retained_after_forget] == [("forgotten_fact", "Oberkampf", None)]
    assert scores.tool_leaks == []


def test_a_leakage_canary_held_only_archived_in_the_probes_scope_is_a_forgotten_fact_not_a_leak(notes) -> None:
    """The issue's case: the address kept as an archived canary; its return is a failure to forget, not a Host defect."""
    scn = forgetting_scenario(canary_kind="leakage")
    scores = run_scripted(writer("freelance invoices"), scn)
    assert scores.tool_leaks == [] and scores.answer_leaks == []
    assert scores.answer_forgotten == ["Oberkampf"] and scores.retained_after_forget
    leak_check = _check(scores, "no_tool_leakage")
    assert leak_check["reason"] == "tool-level leaks 0 (Host defect when > 0; must be 0)"


def test_a_leakage_canary_archived_in_another_workspace_stays_a_leak(notes) -> None:
    """Bug: every archived holder taken as forgetting, so a cross-scope disclosure lost its Host-defect name."""
    scn = forgetting_scenario(canary_kind="leakage", archived_workspace="ws-b")
    scores = run_scripted(writer("freelance invoices"), scn)
    assert [x.kind for x in scores.tool_leaks] == ["leakage_canary"] and scores.answer_leaks == ["Oberkampf"]
    assert scores.retained_after_forget == [] and scores.answer_forgotten == []


def _write_call(name: str, args: dict[str, Any], status: str = "ok"):
    """One logged write-phase tool call."""
    from harness.records import ToolCallLog

    return ToolCallLog(round=0, call_id="c", name=name, arguments=json.dumps(args), status=status, result_text="{}",
                       result_chars=2, result_tokens=1, storage_read=True, elapsed_s=0.0)


def _write_phase_record(scn: Scenario, *sessions: tuple[str, str, list[Any]]):
    """A finished record whose write phase ran ``(session id, workspace, calls)`` in order."""
    from harness.records import SampleRecord, WritePhaseLog, WriteSessionLog

    phase = WritePhaseLog(sessions=[WriteSessionLog(session_id=sid, workspace=ws, stop_reason="final_answer",
                                                    tool_calls=calls) for sid, ws, calls in sessions])
    return SampleRecord(sample_id="x", scenario_id=scn.id, scenario_hash="h", category="forgetting", arm=ARM,
                        model="m", epoch=0, seed=0, status="ok", final_answer="I don't know.",
                        stop_reason="final_answer", write_phase=phase, started_at="t", wall_time_s=0.0)


def test_a_forget_that_removed_something_clears_only_its_own_scope(notes) -> None:
    """Bug: an ok forget in one workspace dropped the same name saved in another from the stored set, hiding a note."""
    scn = forgetting_scenario()
    record = _write_phase_record(
        scn, ("s1", "ws-a", [_write_call("save_note", {"title": "invoices", "text": ADDRESS_SENTENCE})]),
        ("s0", "ws-b", [_write_call("forget_note", {"title": "invoices"})]),
        ("s2", "ws-a", [_write_call("forget_note", {"title": "home address"}, "not_found")]))
    fields = write_forgetting(record, scn)
    assert (fields["forget_calls"], fields["forgets_removed"]) == (2, 1)
    assert fields["forget_notes"] == ["forgot 'home address'; the fact was stored as 'invoices'"]


def test_a_failed_forget_names_only_notes_its_own_workspace_could_have_removed() -> None:
    """A forget in ws-a that removed nothing is told where ws-a (or an unscoped save) keeps the fact, never a note of
    another workspace, which that forget could not and should not have touched."""
    scn = forgetting_scenario()
    record = _write_phase_record(
        scn, ("s0", "ws-b", [_write_call("save_note", {"title": "b invoices", "text": ADDRESS_SENTENCE})]),
        ("sx", None, [_write_call("save_note", {"title": "shared", "text": ADDRESS_SENTENCE})]),
        ("s1", "ws-a", [_write_call("save_note", {"title": "a invoices", "text": ADDRESS_SENTENCE})]),
        ("s2", "ws-a", [_write_call("forget_note", {"title": "home address"}, "not_found")]),
        ("s3", "ws-c", [_write_call("forget_note", {"title": "home address"}, "not_found")]))
    assert write_forgetting(record, scn)["forget_notes"] == [
        "forgot 'home address'; the fact was stored as 'shared', 'a invoices'",
        "forgot 'home address'; the fact was stored as 'shared'"]


def test_the_forgetting_table_has_no_write_counts_for_an_arm_without_a_write_phase(notes) -> None:
    scn = forgetting_scenario()
    rows = forgetting_table([run_scripted(writer("freelance invoices"), scn), run_scripted(writer("x"), scn, "full_history")],
                            {ARM: "delete by exact title"}, arms=["full_history", ARM])
    assert [(r["arm"], r["mechanism"], r["forget_calls"], r["forgets_removed"], r["retrievable"], r["disclosed"], r["notes"])
            for r in rows] == [("full_history", "not declared", None, None, 1, 0, 0),
                               (ARM, "delete by exact title", 1, 0, 1, 1, 1)]


# ---------------------------------------------------------------- forget requests: declared, not guessed


def _chat(turns: list[str], sid: str = "conv-1/q001") -> Scenario:
    """A conversation without any forgotten fact declared: only turns that ask the assistant to forget count."""
    return Scenario.model_validate({
        "id": sid, "title": "Chat", "category": "single_hop", "description": "A chat.",
        "sessions": [{"id": f"s{i}", "started_at": f"2026-01-0{i + 1}T09:00:00Z",
                      "turns": [{"role": "user", "content": text}]} for i, text in enumerate(turns)],
        "probe": {"started_at": "2026-03-02T10:00:00Z", "message": "Where did I go?"},
        "expect": {"must_contain_any": ["Paris"]},
    })


def test_a_session_saying_ill_never_forget_it_asks_nothing() -> None:
    """LoCoMo's phantom requests: any forget word counted ("I'm not gonna forget a second of it")."""
    from harness.scenarios import forget_requests

    scn = _chat(["Paris was amazing, I'll never forget it!", "I'm not gonna forget a second of it.",
                 "Don't forget to book the train. We should delete the old photos someday."])
    assert forget_requests(scn) == ()
    record_scores = score_sample(_record_for(scn), scn)
    assert record_scores.forget_requests == 0 and forgetting_table([record_scores]) == []


def test_a_turn_asking_the_assistant_to_forget_is_one_request_counted_once_per_conversation() -> None:
    """Two probes of one conversation over 2 epochs share one request: asked 1, not probes x sessions x epochs."""
    from harness.scenarios import forget_requests

    turns = ["I moved to Lyon last spring.", "Please forget my old address. Can you delete it from your notes?"]
    scores = []
    for sid in ("conv-1/q001", "conv-1/q002"):
        scn = _chat(turns, sid)
        assert forget_requests(scn) == (("s1", 0),)
        scores += [score_sample(_record_for(scn, epoch), scn) for epoch in (0, 1)]
    (row,) = forgetting_table(scores)
    assert row["forget_requests"] == 1 and row["samples"] == 4


def _record_for(scn: Scenario, epoch: int = 0):
    from tests.score.scoring_factories import make_record

    return make_record(scn, "Paris.", arm="history_only", epoch=epoch)


@pytest.mark.parametrize("role, retained", [("system", True), ("user", True), ("assistant", False), ("tool", False)])
def test_a_forgotten_fact_in_the_prompt_the_system_built_is_retained(role: str, retained: bool) -> None:
    """The system prompt (an injected memory document) and user turns (a pasted history) are what the memory system
    showed the model; its own answer is scored apart (answer_forgotten) and tool results per call."""
    from harness.score.forgetting import prompt_retained

    record = types.SimpleNamespace(messages=[{"role": "user", "content": "What is my home address?"},
                                             {"role": role, "content": f"Memory: {ADDRESS_SENTENCE}"}])
    found = prompt_retained(record, forgetting_scenario())
    assert [(r.kind, r.detail, r.call_id) for r in found] == ([("forgotten_fact", "Oberkampf", None)] if retained else [])


def test_a_forgotten_fact_reaching_the_model_twice_counts_once() -> None:
    from harness.score.forgetting import RetainedFact, retained_count

    twice = [RetainedFact(call_id=None, kind="forgotten_fact", detail="Oberkampf"),
             RetainedFact(call_id="c2", kind="forgotten_fact", detail="Oberkampf"),
             RetainedFact(call_id="c2", kind="archived_item", detail="it-address")]
    assert retained_count(twice) == 2


# ---------------------------------------------------------------- forgets declared by the system (an MCP config)


def _template_record(scn: Scenario, sessions: list[tuple[str, list[tuple[str, bool | None]]]]):
    """A record whose write phase is template calls with no model call (an MCP arm): (session, [(tool, forget)])."""
    from harness.records import SampleRecord, ToolCallLog, WritePhaseLog, WriteSessionLog

    def call(name: str, forget: bool | None) -> ToolCallLog:
        return ToolCallLog(round=0, call_id="write_0", name=name, arguments=json.dumps({"entityNames": ["home address"]}),
                           status="ok", result_text="ok", result_chars=2, result_tokens=1, storage_read=False,
                           elapsed_s=0.0, forget=forget)

    phase = WritePhaseLog(sessions=[WriteSessionLog(session_id=sid, workspace="ws-a", stop_reason="final_answer",
                                                    tool_calls=[call(n, f) for n, f in calls]) for sid, calls in sessions])
    return SampleRecord(sample_id=f"{scn.id}|mcp:graph|m|0", scenario_id=scn.id, scenario_hash="h", category="forgetting",
                        arm="mcp:graph", model="m", epoch=0, seed=0, status="ok", final_answer="I don't know.",
                        stop_reason="final_answer", write_phase=phase, started_at="t", wall_time_s=0.0)


def test_a_forget_tool_the_config_names_counts_whatever_its_name_and_a_declared_write_never_does() -> None:
    """An MCP product's forget tool named ``archive_entities`` (no forget word) is a forget because the config names it;
    its write tool ``upsert_or_remove_entities`` (a forget word) is not, because the config declares it a write."""
    scn = forgetting_scenario()
    record = _template_record(scn, [("s1", [("upsert_or_remove_entities", False)]), ("s2", [("archive_entities", True)])])
    fields = write_forgetting(record, scn)
    assert (fields["forget_calls"], fields["forgets_removed"], fields["forget_notes"]) == (1, 1, [])
    undeclared = _template_record(scn, [("s1", [("upsert_or_remove_entities", None)]), ("s2", [("archive_entities", None)])])
    assert write_forgetting(undeclared, scn)["forget_calls"] == 1  # undeclared: by name, the write taken for a forget


def test_the_forgetting_table_counts_the_calls_of_a_write_phase_without_model_calls() -> None:
    """Bug: an arm whose write phase made tool calls but no model call (an MCP config's templates) read ``calls -``,
    as if it had no write phase, although its forget calls were recorded."""
    scn = forgetting_scenario()
    record = _template_record(scn, [("s1", [("create_entities", False)]), ("s2", [("delete_entities", True)])])
    (row,) = forgetting_table([score_sample(record, scn)], {"mcp:graph": "delete entity by exact name"})
    assert (row["forget_calls"], row["forgets_removed"], row["notes"]) == (1, 1, 0)


def test_a_forget_after_the_session_that_asked_answers_the_request() -> None:
    """A forget made after the last session (an MCP config forgets archived items then) acts on an earlier session's
    request: no 'no forget call was made' note; a request after the last forget still gets one."""
    scn = forgetting_scenario()
    later = _template_record(scn, [("s2", []), ("s3", [("delete_entities", True)])])
    assert write_forgetting(later, scn)["forget_notes"] == []
    earlier = _template_record(scn, [("s0", [("delete_entities", True)]), ("s2", [])])
    assert write_forgetting(earlier, scn)["forget_notes"] == ["session s2 asked to forget; no forget call was made"]


# ---------------------------------------------------------------- the write record's rules, the reason, the table


def test_a_forget_matches_names_by_case_and_spacing_and_a_failed_one_names_every_other_note_holding_the_fact_or_name() -> None:
    """What a forget removed and what a failed one is told: a name matched whatever its case or spacing, saves after a
    forget in the same session still stored, a failed save never stored, a note holding the forgotten name (not the
    fact) named too, a note of the forget's own name never "elsewhere", a nameless forget said so, each ok forget counted."""
    from harness.score.forgetting import call_name

    scn = forgetting_scenario()
    record = _write_phase_record(scn, ("s1", "ws-a", [
        _write_call("save_note", {"title": "Home Address", "text": ADDRESS_SENTENCE}),
        _write_call("save_note", {"title": "failed save", "text": ADDRESS_SENTENCE}, "error"),
        _write_call("save_note", {"keys": ["lunch", "friday"], "text": "Lunch on Friday."})]),
        ("s2", "ws-a", [
            _write_call("forget_note", {"title": "home  ADDRESS"}),
            _write_call("save_note", {"title": "contact", "text": "The home address is on file."}),
            _write_call("save_note", {"title": "HOME address", "text": "14 Rue Oberkampf"}),
            _write_call("forget_note", {"title": "home address"}, "not_found")]),
        ("s3", "ws-a", [_write_call("forget_note", {"keys": ["lunch", "friday"]}),
                        _write_call("forget_note", {"title": "old address"}, "not_found")]),
        ("s4", "ws-b", [_write_call("forget_note", {"query": "it"}, "error")]))
    fields = write_forgetting(record, scn)
    assert (fields["forget_calls"], fields["forgets_removed"]) == (5, 2)
    assert fields["forget_notes"] == ["forgot 'home address'; the fact was stored as 'contact'",
                                      "forgot 'old address'; the fact was stored as 'HOME address'",
                                      "forgot without a name: error, nothing removed"]
    assert call_name(_write_call("forget_note", {"keys": ["lunch", 7]})) == "lunch, 7"
    assert call_name(_write_call("forget_note", {"keys": []})) is None


def test_the_forgetting_reason_gives_the_counts_each_retained_fact_where_it_came_from_and_each_note() -> None:
    from harness.score.forgetting import RetainedFact, forgetting_reason

    scores = {"forget_requests": 1, "forget_calls": 2, "forgets_removed": 1, "forgotten_facts": 1,
              "retained_after_forget": [RetainedFact(call_id=None, kind="forgotten_fact", detail="Oberkampf"),
                                        RetainedFact(call_id="c2", kind="forgotten_fact", detail="Oberkampf")],
              "forget_notes": ["forgot 'x': not_found, nothing removed", "session s2 asked to forget; no forget call was made"]}
    assert forgetting_reason(scores, ["Oberkampf"]) == (
        "forget requests 1, forget calls 2 (1 removed something), forgotten facts 1: 1 still retrievable at the probe, "
        "1 in the answer; retained_after_forget: 'Oberkampf' in the prompt, 'Oberkampf' in c2; "
        "forgot 'x': not_found, nothing removed; session s2 asked to forget; no forget call was made")


def _sample(model: str, arm: str, scenario_id: str, requests: int, retained: int = 0, facts: int = 0) -> Any:
    """A scored sample as forgetting_table reads it."""
    from harness.score.forgetting import RetainedFact

    return types.SimpleNamespace(
        model=model, arm=arm, scenario_id=scenario_id, status="ok", forget_requests=requests, forgotten_facts=facts,
        retained_after_forget=[RetainedFact(call_id="c", kind="forgotten_fact", detail=f"f{i}") for i in range(retained)],
        write_model_calls=1, write_tool_calls=1, forget_calls=1, forgets_removed=1, answer_forgotten=[], forget_notes=[])


def test_the_forgetting_table_goes_by_model_then_the_runs_arm_order_then_name_and_counts_each_conversations_requests_once() -> None:
    """Per conversation (the id before the first ``/``) the most any sample saw, summed; a sample that only retained
    a fact counts; rows by model, then ``arms`` order, other arms after by name."""
    group = [_sample("m-a", "treat", "c1/p1", 2, facts=1), _sample("m-a", "treat", "c1/p2", 1, facts=1),
             _sample("m-a", "treat", "c2/p1", 0, retained=1), _sample("m-a", "treat", "c3/a/x", 1),
             _sample("m-a", "treat", "c3/b/x", 1)]
    others = [_sample(m, a, "c1/p1", 1) for m, a in (("m-b", "treat"), ("m-a", "zz"), ("m-a", "aa"), ("m-a", "base"))]
    rows = forgetting_table([*others, *group], {"treat": "delete"}, arms=["treat", "base"])
    assert [(r["model"], r["arm"]) for r in rows] == [("m-a", "treat"), ("m-a", "base"), ("m-a", "aa"), ("m-a", "zz"),
                                                      ("m-b", "treat")]
    assert rows[0] == {"model": "m-a", "arm": "treat", "mechanism": "delete", "samples": 5, "forget_requests": 3,
                       "forget_calls": 5, "forgets_removed": 5, "forgotten_facts": 2, "retrievable": 1, "disclosed": 0,
                       "notes": 0}
