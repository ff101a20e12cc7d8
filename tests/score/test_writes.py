"""Write scoring: memories written, duplicates, rejections, forgetting, specific facts vs vague advice, failure stages."""

from __future__ import annotations

import json
import types
from typing import Any

import pytest

from harness.records import SampleRecord, ToolCallLog, WritePhaseLog, WriteSessionLog
from harness.scenarios import Scenario
from harness.score.writes import failure_stage, memory_check, score_writes, write_path_blocks


def make_scenario(**expect: Any) -> Scenario:
    return Scenario.model_validate({
        "id": "ws-test", "title": "Port", "category": "project_fact", "description": "The port said earlier.",
        "sessions": [
            {"id": "s1", "workspace": "ws-a", "started_at": "2026-01-05T09:00:00Z", "turns": [
                {"role": "user", "content": "The dev server runs on port 5174."},
                {"role": "user", "content": "Also, forget my home address."}]},
            {"id": "s2", "workspace": "ws-a", "started_at": "2026-01-06T09:00:00Z", "turns": [
                {"role": "user", "content": "Nothing much today."}]},
        ],
        "items": [
            {"id": "it-port", "content": "The dev server runs on port 5174.", "kind": "context", "workspace": "ws-a",
             "keys": ["port"], "sources": [{"session": "s1", "turn": "t1"}]},
            {"id": "it-other", "content": "Billing runs on port 9999.", "kind": "context", "workspace": "ws-b",
             "keys": ["port"], "sources": [{"session": "s1", "turn": "t1"}]},
        ],
        "probe": {"workspace": "ws-a", "started_at": "2026-03-02T10:00:00Z", "message": "Which port does the dev server use?"},
        "expect": expect or {"must_contain_any": ["5174"]},
    })


def call(name: str, arguments: dict[str, Any], result: dict[str, Any], status: str = "ok", ids: tuple[str, ...] = ()) -> ToolCallLog:
    text = json.dumps(result)
    return ToolCallLog(round=1, call_id="c", name=name, arguments=json.dumps(arguments), status=status, result_text=text,
                       result_chars=len(text), result_tokens=1, disclosed_item_ids=list(ids), storage_read=True, elapsed_s=0.0)


def record(writes: dict[str, list[ToolCallLog]] | None = None, probe: list[ToolCallLog] = (), tools: list[str] = ("recall",),
           arm: str = "named_memory") -> SampleRecord:
    phase = None if writes is None else WritePhaseLog(sessions=[
        WriteSessionLog(session_id=sid, workspace="ws-a", stop_reason="final_answer", tool_calls=calls) for sid, calls in writes.items()])
    return SampleRecord(
        sample_id=f"ws-test|{arm}|m|0", scenario_id="ws-test", scenario_hash="x", category="project_fact", arm=arm, model="m",
        epoch=0, seed=1, status="ok", final_answer="x", stop_reason="final_answer", tools_offered=list(tools), messages=[],
        model_calls=[], tool_calls=list(probe), write_phase=phase, started_at="2026-01-01T00:00:00Z", wall_time_s=0.0)


def remember(text: str, event: str = "created", name: str = "port", status: str = "ok") -> ToolCallLog:
    return call("remember", {"name": name, "text": text, "scope": "project"}, {"event": event} if status == "ok" else {"error": {}}, status)


def test_written_duplicates_and_rejected_saves_are_counted_apart() -> None:
    writes = {
        "s1": [remember("Dev server: port 5174."), remember("dev server:  PORT 5174.", name="dev"), remember("x", status="invalid_arguments")],
        "s2": [remember("Dev server: port 5174.", event="unchanged"), remember("Prefers tabs.", event="updated", name="tabs")],
    }
    fields = score_writes(record(writes), make_scenario())
    assert (fields["memories_written"], fields["write_duplicates"], fields["writes_rejected"]) == (3, 2, 1)


def test_the_specific_fact_holds_the_expected_string_and_vague_advice_does_not() -> None:
    specific = score_writes(record({"s1": [remember("The dev server runs on port 5174.")]}), make_scenario())
    vague = score_writes(record({"s1": [remember("Check the dev server config for its port before answering.")]}), make_scenario())
    nothing = score_writes(record({"s1": []}), make_scenario())
    assert (specific["written_holds_expected"], vague["written_holds_expected"], nothing["written_holds_expected"]) == (True, False, False)


def test_a_rejected_or_unchanged_save_does_not_count_as_holding_the_fact() -> None:
    writes = {"s1": [remember("Port 5174.", status="invalid_arguments"), remember("Port 5174.", event="unchanged")]}
    assert score_writes(record(writes), make_scenario())["written_holds_expected"] is False


def test_forgetting_requested_and_done_per_session() -> None:
    asked = make_scenario()
    none_done = score_writes(record({"s1": [remember("Port 5174.")]}), asked)
    done = score_writes(record({"s1": [call("forget", {"name": "home address", "scope": "user"}, {"error": {}}, "not_found")]}), asked)
    bad = score_writes(record({"s1": [call("forget", {"nam": 1}, {"error": {}}, "invalid_arguments")]}), asked)
    assert (none_done["forgets_requested"], none_done["forgets_done"]) == (1, 0)
    assert done["forgets_done"] == 1 and bad["forgets_done"] == 0
    assert done["writes_rejected"] == 0  # a forget is not a rejected save


def test_strings_the_probe_already_shows_are_not_asked_of_memory() -> None:
    assert memory_check(make_scenario(must_contain_all=["dev server", "5174"])).must_contain_all == ["5174"]
    assert memory_check(make_scenario(must_contain_any=["port", "5174"])) is None  # an alternative is already in view
    assert memory_check(make_scenario(must_match=["51\\d\\d"])) is None  # regexes describe the answer's form
    assert memory_check(make_scenario(abstain=True)) is None


def test_a_seeded_arm_is_judged_on_the_scenarios_items_in_the_probes_scope() -> None:
    in_scope = score_writes(record(None, arm="recall", tools=["memory_search"]), make_scenario())
    other_ws = score_writes(record(None, arm="recall", tools=["memory_search"]), make_scenario(must_contain_any=["9999"]))
    no_memory = score_writes(record(None, arm="history_only", tools=[]), make_scenario())
    assert in_scope["written_holds_expected"] is True
    assert other_ws["written_holds_expected"] is None  # another workspace's item is not the probe's memory: no stage
    assert no_memory["written_holds_expected"] is None and no_memory["retrieved_holds_expected"] is None


def test_a_composed_answer_the_oracle_items_do_not_state_gets_no_memory_check() -> None:
    assert memory_check(make_scenario(must_contain_any=["lena/pay-418-fix"])) is None
    assert score_writes(record({"s1": [remember("Port 5174.")]}), make_scenario(must_contain_any=["5175"]))["written_holds_expected"] is None


def test_retrieval_is_judged_on_the_probes_successful_tool_results_only() -> None:
    hit = call("recall", {"query": "port"}, {"memories": [{"text": "Port 5174."}]})
    error = call("recall", {"query": "5174"}, {"error": {"message": "bad query 5174"}}, "invalid_arguments")
    writes = {"s1": [remember("Port 5174.")]}
    assert score_writes(record(writes, [hit]), make_scenario())["retrieved_holds_expected"] is True
    assert score_writes(record(writes, [error]), make_scenario())["retrieved_holds_expected"] is False
    assert score_writes(record(writes, [], tools=[]), make_scenario())["retrieved_holds_expected"] is None


def scores(**kw: Any) -> Any:
    base = {"status": "ok", "should_abstain": False, "continuity_correct": False, "written_holds_expected": True,
            "retrieved_holds_expected": True, "model": "m", "arm": "recall_extracted", "scenario_id": "a",
            "write_model_calls": 1, "tools_offered": 2, "memories_written": 1, "write_duplicates": 0, "writes_rejected": 0,
            "forgets_requested": 0, "forgets_done": 0}
    return types.SimpleNamespace(**{**base, **kw})


@pytest.mark.parametrize(
    "kw, stage",
    [
        ({"continuity_correct": True}, "correct"),
        ({"written_holds_expected": False}, "extraction"),
        ({"retrieved_holds_expected": False}, "retrieval"),
        ({}, "answer"),
        ({"retrieved_holds_expected": None}, "answer"),
        ({"should_abstain": True}, None),
        ({"status": "error"}, None),
        ({"written_holds_expected": None}, None),
        ({"continuity_correct": None}, None),
    ],
)
def test_failure_stage_names_where_the_sample_was_lost(kw: dict[str, Any], stage: str | None) -> None:
    assert failure_stage(scores(**kw)) == stage


def test_oracle_vs_extracted_splits_extraction_from_retrieval_failures() -> None:
    rows = []
    for sid, oracle, extracted in [
        ("a", {"continuity_correct": True}, {"continuity_correct": True}),
        ("b", {"continuity_correct": True}, {"written_holds_expected": False}),
        ("c", {"continuity_correct": True}, {"written_holds_expected": False}),
        ("d", {"continuity_correct": True}, {"retrieved_holds_expected": False}),
        ("e", {"continuity_correct": True}, {}),
        ("f", {"retrieved_holds_expected": False}, {"continuity_correct": True}),
        ("g", {}, {}),
        ("h", {"should_abstain": True}, {"should_abstain": True}),
    ]:
        rows.append(scores(scenario_id=sid, arm="recall", write_model_calls=0, memories_written=0, **oracle))
        rows.append(scores(scenario_id=sid, **extracted))
    rows.append(scores(scenario_id="z", continuity_correct=True))  # only in the extracted arm: not paired
    blocks = write_path_blocks(rows)
    (pair,) = blocks["oracle_vs_extracted"]
    assert pair == {"model": "m", "oracle_arm": "recall", "extracted_arm": "recall_extracted", "n_scenarios": 7,
                    "both_correct": 1, "extraction_failures": 2, "retrieval_failures": 1, "answer_failures": 1,
                    "oracle_failed_too": 1, "extracted_only_correct": 1}
    by_arm = {row["arm"]: row for row in blocks["write_path"]}
    assert by_arm["recall_extracted"]["stages"] == {"correct": 3, "extraction": 2, "retrieval": 1, "answer": 2}
    assert by_arm["recall_extracted"]["samples"] == 9 and by_arm["recall"]["memories_written"] == 0


def test_arms_without_memory_have_no_write_path_row() -> None:
    blocks = write_path_blocks([scores(arm="history_only", write_model_calls=0, tools_offered=0, written_holds_expected=None)])
    assert blocks == {"write_path": [], "oracle_vs_extracted": []}


def test_the_oracle_is_the_probes_workspace_plus_global_items_for_any_workspace() -> None:
    """A probe in ws-b sees ws-b's item; a probe in a workspace no item names, or in none, sees the global items only.

    Bug planted: a workspace no item names seeing nothing at all (its global items lost from the oracle).
    """
    base = make_scenario(must_contain_any=["9999"])
    glob = base.items[1].model_copy(update={"id": "it-global", "content": "Deploys go out on Tuesdays.", "workspace": None})
    scenario = base.model_copy(update={"items": [*base.items, glob]})
    assert memory_check(scenario) is None  # ws-a does not see ws-b's 9999
    in_b = scenario.model_copy(update={"probe": scenario.probe.model_copy(update={"workspace": "ws-b"})})
    assert memory_check(in_b).must_contain_any == ["9999"]
    for workspace in ("ws-unnamed", None):
        probe = scenario.probe.model_copy(update={"workspace": workspace})
        for needed, seen in ((["Tuesdays"], True), (["9999"], False), (["5174"], False)):
            other = scenario.model_copy(update={"probe": probe, "expect": scenario.expect.model_copy(update={"must_contain_any": needed})})
            assert (memory_check(other) is not None) is seen, (workspace, needed)


def test_a_save_whose_arguments_are_not_an_object_stores_no_text() -> None:
    """A plug-in's save called with a JSON list or string: counted as written, its text unknown (not a crash)."""
    for arguments in (["The dev server runs on port 5174."], "The dev server runs on port 5174.", 5174):
        save = call("remember", arguments, {"event": "created"})  # type: ignore[arg-type]
        fields = score_writes(record({"s1": [save]}), make_scenario())
        assert (fields["memories_written"], fields["written_holds_expected"]) == (1, False), arguments


def test_a_save_without_a_text_like_argument_counts_as_written_and_holds_nothing() -> None:
    save = call("remember", {"name": "port", "scope": "project", "port": 5174, "text": None}, {"event": "created"})
    fields = score_writes(record({"s1": [save, save]}), make_scenario())
    assert (fields["memories_written"], fields["write_duplicates"], fields["written_holds_expected"]) == (2, 0, False)


def test_stage_counts_count_only_the_stages_that_apply() -> None:
    from harness.score.writes import stage_counts

    rows = [scores(continuity_correct=True), scores(), scores(), scores(written_holds_expected=False),
            scores(status="error"), scores(should_abstain=True)]
    assert stage_counts(rows) == {"correct": 1, "answer": 2, "extraction": 1}


def test_a_scenario_only_the_extracted_arm_got_right_is_not_one_the_oracle_failed_too() -> None:
    """Two scenarios the oracle lost and the extracted arm answered, none lost by both: the counts are not symmetric."""
    rows = []
    for sid in ("a", "b"):
        rows.append(scores(scenario_id=sid, arm="recall", write_model_calls=0, retrieved_holds_expected=False))
        rows.append(scores(scenario_id=sid, continuity_correct=True))
    (pair,) = write_path_blocks(rows)["oracle_vs_extracted"]
    assert (pair["extracted_only_correct"], pair["oracle_failed_too"], pair["n_scenarios"]) == (2, 0, 2)


def test_a_forget_tool_named_in_another_case_is_a_forget_not_a_save() -> None:
    """Plug-ins name their tools as they like: ``DeleteMemory`` and ``Forget`` forget; they are not saves."""
    for name in ("DeleteMemory", "Forget", "ERASE_note"):
        forget = call(name, {"name": "home address"}, {"event": "deleted"})
        fields = score_writes(record({"s1": [forget]}), make_scenario())
        assert (fields["memories_written"], fields["forgets_done"]) == (0, 1), name


def test_an_unchanged_reply_in_compact_json_is_a_duplicate_not_a_new_memory() -> None:
    save = remember("The dev server runs on port 5174.")
    compact = save.model_copy(update={"result_text": '{"event":"unchanged"}'})
    fields = score_writes(record({"s1": [compact]}), make_scenario())
    assert (fields["memories_written"], fields["write_duplicates"], fields["written_holds_expected"]) == (0, 1, False)


def test_error_samples_are_not_counted_in_the_write_path_rows() -> None:
    rows = [scores(continuity_correct=True), scores(status="error", memories_written=5, forgets_requested=1)]
    (row,) = write_path_blocks(rows)["write_path"]
    assert (row["samples"], row["memories_written"], row["forgets_requested"]) == (1, 1, 0)


def test_the_write_path_rates_are_the_share_of_samples_with_a_verdict_to_four_places() -> None:
    """Three samples whose written memories were judged (two hold the answer), one not judged: 2/3 -> 0.6667;
    the retrieved rate is of its own judged samples; no judged sample at all: None, not 0."""
    rows = [scores(written_holds_expected=True, retrieved_holds_expected=True),
            scores(written_holds_expected=True, retrieved_holds_expected=False),
            scores(written_holds_expected=False, retrieved_holds_expected=None),
            scores(written_holds_expected=None, retrieved_holds_expected=None)]
    (row,) = write_path_blocks(rows)["write_path"]
    assert (row["written_holds_expected_rate"], row["retrieved_holds_expected_rate"]) == (0.6667, 0.5)
    (row,) = write_path_blocks([scores(written_holds_expected=None, retrieved_holds_expected=None)])["write_path"]
    assert (row["written_holds_expected_rate"], row["retrieved_holds_expected_rate"]) == (None, None)
