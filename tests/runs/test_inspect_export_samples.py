"""``recall-eval export inspect``: each sample of a log is its record (messages, events, usage, target, scores)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.runs.inspect_logs import doctored, exported, log_path, read_records, run_dir  # noqa: F401 (fixtures)

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (the test extra installs it: pip install -e '.[test]'; "
                         "tests/test_test_command.py fails without it)")


def test_samples_keep_their_messages_tool_calls_scores_and_metadata(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    records = read_records(run_dir)
    scores = {r["sample_id"]: r for r in map(json.loads, (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines())}
    values = []
    for arm in ("history_only", "recall"):
        log = read_eval_log(str(log_path(logs, arm)))
        for sample in log.samples:
            record, row = records[sample.metadata["sample_id"]], scores[sample.metadata["sample_id"]]
            assert [m.role for m in sample.messages] == [m["role"] for m in record["messages"]]
            assert sample.output.completion == record["final_answer"] and sample.epoch == record["epoch"] + 1
            continuity = next(s for s in row["scores"] if s["name"] == "continuity")
            assert sample.scores["continuity"].value == ("C" if continuity["passed"] else "I")
            assert sample.scores["continuity"].explanation == continuity["reason"]
            assert sample.metadata["outcome"] == row["outcome"] and sample.metadata["arm"] == arm
            calls = [c for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
            assert [(c.id, c.function, c.arguments) for c in calls] == [
                (c["call_id"], c["name"], json.loads(c["arguments"])) for c in record["tool_calls"]]
            values.append(sample.scores["continuity"].value)
    assert sorted(set(values)) == ["C", "I"]  # history_only gets the answerable one wrong
    assert any(m.role == "tool" for s in log.samples for m in s.messages)  # the recall arm searched memory


def test_each_exported_message_is_its_transcripts_message_word_for_word_with_its_id_and_tool_call(
        exported: tuple[Path, Path]) -> None:
    """The log's messages are the run's transcript: each message's text, in order, its tool call id and the function
    that answered it, under a stable id ``<sample_id>#<n>``; the input is the transcript before the first answer."""
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    records = read_records(run_dir)
    seen_tool = False
    for arm in ("history_only", "recall"):
        for sample in read_eval_log(str(log_path(logs, arm))).samples:
            sample_id = sample.metadata["sample_id"]
            raw = records[sample_id]["messages"]
            names = {c["id"]: c["function"]["name"] for m in raw for c in m.get("tool_calls") or []}
            assert [(m.id, m.role, m.content) for m in sample.messages] == [
                (f"{sample_id}#{i}", m["role"], m["content"] or "") for i, m in enumerate(raw)]
            tools = [(m.tool_call_id, m.function) for m in sample.messages if m.role == "tool"]
            assert tools == [(m["tool_call_id"], names[m["tool_call_id"]]) for m in raw if m["role"] == "tool"]
            seen_tool = seen_tool or bool(tools)
            first = next(i for i, m in enumerate(raw) if m["role"] == "assistant")
            assert [(m.role, m.content) for m in sample.input] == [(m["role"], m["content"]) for m in raw[:first]]
    assert seen_tool  # the recall arm's transcripts hold tool results


def test_a_transcripts_odd_messages_keep_their_text_and_a_bad_tool_call_says_why() -> None:
    """What a record can hold beyond plain text: a content that is not a string is kept as its JSON (non-ASCII as
    is), a missing content is empty, a tool call's arguments that are not JSON are named as such, arguments that are
    JSON but not an object are kept under ``value``, a tool result names the function of its call, and a message of
    a role inspect_ai has no type for is left out (the ids count what is kept)."""
    from harness.runs.inspect_export import _messages

    raw = [{"role": "system", "content": [{"type": "text", "text": "café"}]},
           {"role": "user"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "c1", "function": {"name": "memory_search", "arguments": "{not json"}},
               {"id": "c2", "function": {"name": "memory_get", "arguments": "[1, 2]"}},
               {"id": "c3", "function": {"name": "memory_list"}}]},
           {"role": "developer", "content": "dropped"},
           {"role": "tool", "tool_call_id": "c2", "content": "found"},
           {"role": "tool", "tool_call_id": "c9", "content": "orphan"},
           {"role": "assistant", "content": "done"}]
    out = _messages(raw, "s1")
    assert [(m.id, m.role, m.content) for m in out] == [
        ("s1#0", "system", '[{"type": "text", "text": "café"}]'), ("s1#1", "user", ""), ("s1#2", "assistant", ""),
        ("s1#3", "tool", "found"), ("s1#4", "tool", "orphan"), ("s1#5", "assistant", "done")]
    calls = out[2].tool_calls
    assert [(c.id, c.function, c.arguments) for c in calls] == [
        ("c1", "memory_search", {}), ("c2", "memory_get", {"value": [1, 2]}), ("c3", "memory_list", {})]
    assert calls[0].parse_error is not None and calls[0].parse_error.startswith("arguments are not JSON: ")
    assert calls[1].parse_error is None and calls[2].parse_error is None
    assert (out[3].tool_call_id, out[3].function, out[4].tool_call_id, out[4].function) == ("c2", "memory_get", "c9", None)
    assert out[5].tool_calls is None
    bare = _messages([{"role": "assistant", "tool_calls": [{"function": {"name": "memory_search"}}, {"id": "c4", "function": {}}]},
                      {"role": "tool", "content": "a"}, {"role": "tool", "tool_call_id": "c4", "content": "b"}], "s2")
    assert [(c.id, c.function) for c in bare[0].tool_calls] == [("", "memory_search"), ("c4", "")]  # no id, no name
    assert [(m.tool_call_id, m.function) for m in bare[1:]] == [("", "memory_search"), ("c4", "")]


def test_each_lone_surrogate_in_keys_values_and_nested_lists_is_replaced_and_counted_once() -> None:
    """What the export writes for a text inspect_ai's log cannot hold: every lone surrogate, in a key or a value, in a
    list or a tuple, becomes U+FFFD and is counted; other text (ASCII or not) and non-text values are kept, uncounted."""
    from harness.runs.inspect_export import valid_text

    value = {"k\ud800": "v\udfff", "list": ["a\udfffb", "plain", "café", 3, None], "n": 1.5, "t": ("\ud800",)}
    assert valid_text(value) == ({"k\ufffd": "v\ufffd", "list": ["a\ufffdb", "plain", "café", 3, None], "n": 1.5,
                                  "t": ["\ufffd"]}, 4)
    assert valid_text("plain") == ("plain", 0) and valid_text(7) == (7, 0)


def test_a_record_with_a_lone_surrogate_is_rebuilt_replaced_and_one_without_is_kept_as_is() -> None:
    from pydantic import BaseModel

    from harness.runs.inspect_export import _valid_record

    class Record(BaseModel):
        answer: str
        notes: list[str]

    dirty = Record(answer="x\ud800", notes=["\udfff"])
    record, row, replaced = _valid_record(dirty, {"reason": "r\ud800"})
    assert (record, row, replaced) == (Record(answer="x\ufffd", notes=["\ufffd"]), {"reason": "r\ufffd"}, 3)
    clean = Record(answer="x", notes=[])
    kept, row, replaced = _valid_record(clean, {"reason": "r\ud800"})
    assert kept is clean and replaced == 1


def test_a_samples_target_is_the_texts_a_right_answer_must_hold_or_the_abstention() -> None:
    from types import SimpleNamespace

    from harness.runs.inspect_export import _target

    def scenario(**expect: Any) -> SimpleNamespace:
        fields = {"abstain": False, "must_contain_all": [], "must_contain_any": [], "must_contain_groups": []}
        return SimpleNamespace(expect=SimpleNamespace(**{**fields, **expect}))

    assert _target(scenario(must_contain_all=["Buildkite", "EC2"], must_contain_any=["Jan", "January"],
                            must_contain_groups=[["Monday", "Mon"], ["Thursday"]])) == [
        "Buildkite", "EC2", "Jan", "January", "Monday | Mon", "Thursday"]
    assert _target(scenario(abstain=True, must_contain_all=["never shown"])) == ["(abstain: the answer is not in memory)"]
    assert _target(None) == []  # the suite moved away: no target


def test_a_samples_scores_are_the_reports_with_continuity_as_c_or_i_and_no_error_or_empty_score() -> None:
    """``continuity`` is inspect_ai's ``C``/``I`` from whether it passed (its value is not read), with the answer and
    the outcome; every other score keeps its value, reason and whether it passed; an ``error`` score and a score
    without a value are no scores."""
    from harness.runs.inspect_export import _scores

    row = {"outcome": "correct", "scores": [
        {"name": "continuity", "value": None, "passed": True, "reason": "checks pass"},
        {"name": "retrieval", "value": None, "passed": None, "reason": "no memory"},
        {"name": "abstained", "value": False, "passed": None, "reason": "an answer expected"},
        {"name": "error", "value": "boom", "passed": False, "reason": "the call failed"},
        {"name": "unsupported_claims", "value": 2, "passed": False, "reason": "two invented"}]}
    scores = _scores(row, "Buildkite")
    assert {name: (s.value, s.answer, s.explanation, s.metadata) for name, s in scores.items()} == {
        "continuity": ("C", "Buildkite", "checks pass", {"passed": True, "outcome": "correct"}),
        "abstained": (False, None, "an answer expected", {"passed": None}),
        "unsupported_claims": (2, None, "two invented", {"passed": False})}
    for passed in (False, None):
        failed = _scores({"outcome": "wrong", "scores": [{"name": "continuity", "value": True, "passed": passed}]}, "")
        assert (failed["continuity"].value, failed["continuity"].explanation) == ("I", None)
    assert _scores({"scores": None}, "x") == {} and _scores({}, "x") == {}


_ANSWERED = "smoke-02-ci-provider|recall|offline/reference|0"  # the recall arm's sample that searched memory twice


def test_a_samples_events_and_usage_are_its_model_calls_and_tool_calls_one_for_one(run_dir: Path, tmp_path: Path) -> None:
    """inspect_ai's transcript view: a model event per answer (its input, the call's tokens, cost, stop reason, cache
    and latency; none of these when the record has no call for it; a memory system's selection call answers no
    message) and a tool event per tool call (its result and time; empty when the Host kept no record of it). The
    sample's usage and the log's count every call: the selection call's and the write phase's too."""
    from inspect_ai.log import read_eval_log

    def doctor(record: dict[str, Any]) -> None:
        if record["sample_id"] != _ANSWERED:
            return
        calls = record["model_calls"]
        assert len(calls) == 3 and len(record["tool_calls"]) == 2  # search, get, answer
        calls[0].update(prompt_tokens=11, completion_tokens=2, cost_usd=0.25, cached=True, latency_s=1.5,
                        finish_reason="tool_calls")
        calls[1].update(prompt_tokens=0, completion_tokens=0, cost_usd=None, latency_s=2.5, finish_reason="length")
        selection = {**calls[0], "prompt_tokens": 1000, "completion_tokens": 10, "cost_usd": 0.5, "cached": False,
                     "finish_reason": "stop", "purpose": "selection"}
        record["model_calls"] = [selection, calls[0], calls[1]]  # no call for the answer
        record["tool_calls"][0].update(result_text="found it", elapsed_s=0.75)
        del record["tool_calls"][1]
        record["write_phase"] = {"sessions": [{"session_id": "s1", "stop_reason": "final_answer", "model_calls": [
            {**calls[0], "prompt_tokens": 100, "completion_tokens": 7, "cost_usd": 0.5}]}]}

    run = doctored(run_dir, tmp_path, record=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    records = read_records(run)
    log = read_eval_log(str(log_path(tmp_path / "logs", "recall")))
    sample = next(s for s in log.samples if s.metadata["sample_id"] == _ANSWERED)
    assert [e.event for e in sample.events] == ["model", "tool", "model", "tool", "model"]
    models = [e for e in sample.events if e.event == "model"]
    answers = [i for i, m in enumerate(sample.messages) if m.role == "assistant"]
    assert [([m.id for m in e.input], e.output.choices[0].message.id, e.model, e.output.model) for e in models] == [
        ([m.id for m in sample.messages[:i]], sample.messages[i].id, "offline/reference", "offline/reference")
        for i in answers]
    assert [(e.output.usage.input_tokens, e.output.usage.output_tokens, e.output.usage.total_tokens,
             e.output.usage.total_cost) if e.output.usage else None for e in models] == [(11, 2, 13, 0.25), (0, 0, 0, None), None]
    assert [(e.output.choices[0].stop_reason, e.cache, e.working_time) for e in models] == [
        ("tool_calls", "read", 1.5), ("max_tokens", None, 2.5), ("unknown", None, None)]
    tools = [(e.id, e.function, e.arguments, e.result, e.working_time) for e in sample.events if e.event == "tool"]
    assert tools == [("call_offline_2", "memory_search", json.loads(records[_ANSWERED]["tool_calls"][0]["arguments"]),
                      "found it", 0.75), ("call_offline_4", "memory_get", {"itemId": "it-ci-buildkite"}, "", None)]
    assert (sample.output.stop_reason, sample.output.model) == ("max_tokens", "offline/reference")  # the last call's
    usage = sample.model_usage["offline/reference"]
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.total_cost) == (1111, 19, 1130, 1.25)
    other = next(s for s in log.samples if s.metadata["sample_id"] != _ANSWERED)
    calls = records[other.metadata["sample_id"]]["model_calls"]
    assert [(e.output.choices[0].stop_reason, e.cache) for e in other.events if e.event == "model"][-1] == ("stop", None)
    prompt, completion = sum(c["prompt_tokens"] for c in calls), sum(c["completion_tokens"] for c in calls)
    total = log.stats.model_usage["offline/reference"]
    assert (total.input_tokens, total.output_tokens, total.total_tokens, total.total_cost) == (
        1111 + prompt, 19 + completion, 1130 + prompt + completion, 1.25)


def test_a_samples_id_target_metadata_and_times_are_its_records(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    records = read_records(run_dir)
    scores = {r["sample_id"]: r for r in map(json.loads, (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines())}
    targets = {"smoke-02-ci-provider": ["Buildkite"], "smoke-03-abstain-freeze-window": ["(abstain: the answer is not in memory)"]}
    for arm in ("history_only", "recall"):
        for sample in read_eval_log(str(log_path(logs, arm))).samples:
            record, row = records[sample.metadata["sample_id"]], scores[sample.metadata["sample_id"]]
            assert (sample.id, sample.target, sample.error) == (record["scenario_id"], targets[record["scenario_id"]], None)
            assert sample.scores["continuity"].answer == record["final_answer"]
            assert sample.metadata == {
                "sample_id": record["sample_id"], "scenario_id": record["scenario_id"], "category": record["category"],
                "arm": arm, "recall_eval_epoch": record["epoch"], "seed": record["seed"], "status": "ok",
                "outcome": row["outcome"], "stop_reason": record["stop_reason"], "scenario_hash": record["scenario_hash"],
                "tools_offered": record["tools_offered"], "title": row["title"]}
            assert (sample.total_time, dt.datetime.fromisoformat(sample.started_at)) == (
                record["wall_time_s"], dt.datetime.fromisoformat(record["started_at"]))


def test_a_failed_sample_says_its_error_and_one_without_messages_has_an_empty_input_and_answer(
        run_dir: Path, tmp_path: Path) -> None:
    """A sample whose model call failed before any message: the error is named in the sample and its output, its
    input and answer are empty, its stop reason unknown."""
    from inspect_ai.log import read_eval_log

    failed = "smoke-03-abstain-freeze-window|recall|offline/reference|0"

    def doctor(record: dict[str, Any]) -> None:
        if record["sample_id"] == failed:
            record.update(status="error", stop_reason="error", messages=[], final_answer=None, model_calls=[],
                          tool_calls=[], error={"type": "APIError", "message": "server error", "attempts": 3})

    run = doctored(run_dir, tmp_path, record=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    samples = read_eval_log(str(log_path(tmp_path / "logs", "recall"))).samples
    sample = next(s for s in samples if s.metadata["sample_id"] == failed)
    assert (sample.error.message, sample.output.error) == ("APIError: server error", "APIError: server error")
    assert (sample.error.traceback, sample.error.traceback_ansi) == ("", "")  # no traceback: the harness caught it
    assert (sample.input, sample.messages, sample.output.completion, sample.output.stop_reason) == ("", [], "", "unknown")
    assert (sample.metadata["status"], sample.metadata["stop_reason"]) == ("error", "error")
    other = next(s for s in samples if s is not sample)
    assert (other.error, other.output.error, other.output.stop_reason) == (None, None, "stop")
