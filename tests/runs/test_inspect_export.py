"""``recall-eval export inspect RUN OUT``: inspect_ai eval logs that inspect_ai's own reader and dataframes open."""

from __future__ import annotations

import builtins
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.integration.offline_runs import offline_run

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (the test extra installs it: pip install -e '.[test]'; "
                         "tests/test_test_command.py fails without it)")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline run for the file (the run is not what these tests check; each test copies it before changing it)."""
    return offline_run(tmp_path_factory.mktemp("export"))


@pytest.fixture
def exported(run_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``run_dir`` exported afresh for each test (a fraction of a second), so each test runs the export itself: a
    module-scoped export ran in the first test's setup alone, and mutmut then tied the export to that test only."""
    assert main(["export", "inspect", str(run_dir), str(tmp_path / "logs")]) == 0
    return run_dir, tmp_path / "logs"


def _records(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["sample_id"]: r for r in map(json.loads, lines)}


def _log(logs: Path, arm: str) -> Path:
    """The exported log of ``arm`` (file names end with the log's task id: ``<time>_run-<model>-<arm>_<id>.eval``)."""
    (path,) = logs.glob(f"*_run-offline-reference-{arm.replace('_', '-')}_*.eval")
    return path


def test_one_log_per_model_and_arm_reads_back_with_inspect_ais_reader(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    paths = [_log(logs, arm) for arm in ("history_only", "recall")]
    assert sorted(logs.glob("*.eval")) == sorted(paths)
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    for path, arm in zip(paths, ["history_only", "recall"], strict=True):
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.task == f"recall-eval/{arm}" and log.eval.model == "offline/reference"
        assert log.eval.run_id == manifest["run_id"] and log.eval.config.epochs == manifest["epochs"]
        assert log.eval.model_generate_config.max_tokens == manifest["parameters"]["max_tokens"]
        assert log.eval.metadata["recall_eval"]["parameters"] == manifest["parameters"]
        assert sorted(s.id for s in log.samples) == sorted(manifest["scenario_ids"])


def test_samples_keep_their_messages_tool_calls_scores_and_metadata(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    records = _records(run_dir)
    scores = {r["sample_id"]: r for r in map(json.loads, (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines())}
    values = []
    for arm in ("history_only", "recall"):
        log = read_eval_log(str(_log(logs, arm)))
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
    records = _records(run_dir)
    seen_tool = False
    for arm in ("history_only", "recall"):
        for sample in read_eval_log(str(_log(logs, arm))).samples:
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


def test_the_eval_results_are_the_reports_metrics(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    expected = next(r["value"] for r in summary["metrics"] if r["model"] == "offline/reference" and r["arm"] == "recall"
                    and r.get("category", "all") == "all" and r["metric"] == "continuity_accuracy")
    log = read_eval_log(str(_log(logs, "recall")))
    assert log.results.scores[0].metrics["continuity_accuracy"].value == expected


def test_inspect_ais_dataframes_open_the_logs(exported: tuple[Path, Path]) -> None:
    pytest.importorskip("pyarrow", reason="inspect_ai's dataframes need pyarrow (in the test and inspect extras)")
    from inspect_ai.analysis import evals_df, messages_df, samples_df

    run_dir, logs = exported
    # (evals_df names a task without its package prefix: recall-eval/recall -> recall)
    assert sorted(evals_df(str(logs))["task_name"]) == ["history_only", "recall"]
    samples = samples_df(str(logs))
    assert len(samples) == len(_records(run_dir)) and "score_continuity" in samples.columns
    messages = messages_df(str(logs))
    assert len(messages) == sum(len(r["messages"]) for r in _records(run_dir).values())


def test_export_of_a_folder_that_is_not_a_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "inspect", str(tmp_path), str(tmp_path / "out")]) == 2
    assert "not a run folder (no run.json)" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_without_inspect_ai_export_says_how_to_install_it(run_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    real_import = builtins.__import__

    def no_inspect(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("inspect_ai"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    assert main(["export", "inspect", str(run_dir), str(tmp_path / "out")]) == 2
    assert "inspect_ai is missing: pip install 'recall-eval[inspect]'" in capsys.readouterr().err


def test_two_runs_exported_to_one_folder_are_distinct_evals_to_inspect_ais_listing(tmp_path: Path) -> None:
    """inspect_ai's viewer keeps the newest log of each (folder, task_id) and hides the rest as retried: two runs
    (even of one folder name) exported to one folder must give every log its own task_id, in the listing (which
    parses the file name) and in the header alike."""
    import shutil

    from inspect_ai.log import list_eval_logs, read_eval_log

    first = offline_run(tmp_path / "first")
    second = tmp_path / "second" / "run"  # the same folder name, another run (another start time)
    shutil.copytree(first, second)
    manifest = json.loads((second / "run.json").read_text(encoding="utf-8"))
    manifest["started_at"] = "2026-01-02T03:04:05Z"
    (second / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    other = offline_run(tmp_path / "other")
    logs = tmp_path / "logs"
    for run_dir in (first, second, other):
        assert main(["export", "inspect", str(run_dir), str(logs)]) == 0
    listed = list_eval_logs(str(logs))
    assert len(listed) == 6 and len(list(logs.glob("*.eval"))) == 6  # nothing overwritten
    groups = {(Path(info.name).parent, info.task_id) for info in listed}  # the viewer's retry groups
    assert len(groups) == 6 and all(info.task_id for info in listed)
    for info in listed:
        header = read_eval_log(info.name, header_only=True)
        assert header.eval.task_id == info.task_id  # the name and the header agree
    assert len({read_eval_log(i.name, header_only=True).eval.eval_id for i in listed}) == 6


def test_a_logs_results_are_its_own_model_and_arms_overall_metrics_only() -> None:
    """Another model's row, another arm's, and the same metric per category must not stand in for the overall one."""
    from harness.runs.inspect_export import _results

    def row(model: str, arm: str, value: float, category: str = "all", metric: str = "continuity_accuracy") -> dict:
        return {"model": model, "arm": arm, "category": category, "metric": metric, "value": value, "n": 4}

    summary = {"verdict": {"status": "pass"}, "metrics": [
        row("m-a", "recall", 0.75), row("m-a", "recall", 0.1, "temporal"), row("m-b", "recall", 0.2),
        row("m-a", "history_only", 0.3), row("m-a", "recall", True, metric="flag"), row("m-a", "recall", 2, metric="n")]}
    results = _results(summary, "m-a", "recall", 4, 3)
    assert {k: m.value for k, m in results.scores[0].metrics.items()} == {"continuity_accuracy": 0.75, "n": 2.0}
    assert (results.total_samples, results.completed_samples, results.scores[0].scored_samples) == (4, 3, 3)
    assert results.metadata == {"verdict": "pass"}


def test_a_log_counts_only_finished_samples_as_completed(run_dir: Path, tmp_path: Path) -> None:
    """A sample that failed (its model call errored) is in the log but not among the completed ones, as inspect_ai
    counts a sample that raised: a run with failures must not read as complete in inspect's viewer."""
    import shutil

    from inspect_ai.log import read_eval_log

    failing = tmp_path / "run"
    shutil.copytree(run_dir, failing)
    lines = (failing / "results.jsonl").read_text(encoding="utf-8").splitlines()
    failed = next(i for i, line in enumerate(lines) if json.loads(line).get("arm") == "recall")
    record = json.loads(lines[failed])
    record.update(status="error", stop_reason="error", error={"type": "APIError", "message": "server error", "attempts": 3})
    lines[failed] = json.dumps(record)
    (failing / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["export", "inspect", str(failing), str(tmp_path / "logs")]) == 0
    recall = read_eval_log(str(_log(tmp_path / "logs", "recall")), header_only=True).results
    history = read_eval_log(str(_log(tmp_path / "logs", "history_only")), header_only=True).results
    assert recall.completed_samples == recall.total_samples - 1 and recall.scores[0].scored_samples == recall.completed_samples
    assert history.completed_samples == history.total_samples > 0


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


def test_a_logs_ids_and_file_name_are_unique_per_run_folder_model_and_arm_and_stable_for_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect_ai's viewer shows only the newest log of each ``task_id``: every part of a log's identity (run id,
    start time, suite hash, folder, model, arm) must change the ids, the same run must keep them (a folder named
    relatively or absolutely), and the file name must be inspect_ai's ``<timestamp>_<task>_<task_id>.eval``."""
    from types import SimpleNamespace

    from harness.runs.inspect_export import log_identity

    def run(**changes: str) -> SimpleNamespace:
        return SimpleNamespace(**{"run_id": "nightly", "started_at": "2026-12-04T20:35:01Z", "suite_hash": "ab" * 32,
                                  **changes})

    monkeypatch.chdir(tmp_path)
    task_id, eval_id, name = log_identity(run(), "offline/reference", "history_only", Path("runs/a"))
    assert len(task_id) == len(eval_id) == 22 and task_id != eval_id and int(task_id, 16) >= 0 and int(eval_id, 16) >= 0
    assert name == f"2026-12-04T20-35-01_nightly-offline-reference-history-only_{task_id}.eval"
    assert log_identity(run(), "offline/reference", "history_only", tmp_path / "runs" / "a") == (task_id, eval_id, name)
    others = [log_identity(run(run_id="other"), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(started_at="2026-12-04T20:35:02Z"), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(suite_hash="cd" * 32), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(), "offline/reference", "history_only", Path("runs/b")),
              log_identity(run(), "offline/reference", "history_only"),
              log_identity(run(), "offline/other", "history_only", Path("runs/a")),
              log_identity(run(), "offline/reference", "recall", Path("runs/a"))]
    assert len({i[0] for i in others} | {task_id}) == len({i[1] for i in others} | {eval_id}) == 8
    odd_id, _, odd = log_identity(run(run_id="x\ud800 y", started_at="not a time"), "m", "a_b")
    assert odd == f"1970-01-01T00-00-00_x-y-m-a-b_{odd_id}.eval"


def test_a_slug_keeps_letters_digits_dots_and_dashes_and_is_never_empty() -> None:
    from harness.runs.inspect_export import _slug

    assert _slug("--run 7/v1.2_b--") == "run-7-v1.2_b" and _slug("a  //  b") == "a-b" and _slug("!!") == "x"


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
        {"name": "abstained", "value": False, "passed": None, "reason": "an answer expected"},
        {"name": "unsupported_claims", "value": 2, "passed": False, "reason": "two invented"},
        {"name": "retrieval", "value": None, "passed": None, "reason": "no memory"},
        {"name": "error", "value": "boom", "passed": False, "reason": "the call failed"}]}
    scores = _scores(row, "Buildkite")
    assert {name: (s.value, s.answer, s.explanation, s.metadata) for name, s in scores.items()} == {
        "continuity": ("C", "Buildkite", "checks pass", {"passed": True, "outcome": "correct"}),
        "abstained": (False, None, "an answer expected", {"passed": None}),
        "unsupported_claims": (2, None, "two invented", {"passed": False})}
    for passed in (False, None):
        failed = _scores({"outcome": "wrong", "scores": [{"name": "continuity", "value": True, "passed": passed}]}, "")
        assert (failed["continuity"].value, failed["continuity"].explanation) == ("I", None)
    assert _scores({"scores": None}, "x") == {} and _scores({}, "x") == {}


def _doctored(run_dir: Path, tmp_path: Path, record: Any = None, manifest: Any = None) -> Path:
    """A copy of ``run_dir`` with ``record(dict)`` applied to each results line and ``manifest(dict)`` to run.json."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    if record is not None:
        lines = [json.loads(line) for line in (copy / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        for line in lines:
            record(line)
        (copy / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if manifest is not None:
        data = json.loads((copy / "run.json").read_text(encoding="utf-8"))
        manifest(data)
        (copy / "run.json").write_text(json.dumps(data), encoding="utf-8")
    return copy


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
        calls[1].update(prompt_tokens=13, completion_tokens=3, cost_usd=None, latency_s=2.5, finish_reason="length")
        selection = {**calls[0], "prompt_tokens": 1000, "completion_tokens": 10, "cost_usd": 0.5, "cached": False,
                     "finish_reason": "stop", "purpose": "selection"}
        record["model_calls"] = [selection, calls[0], calls[1]]  # no call for the answer
        record["tool_calls"][0].update(result_text="found it", elapsed_s=0.75)
        del record["tool_calls"][1]
        record["write_phase"] = {"sessions": [{"session_id": "s1", "stop_reason": "final_answer", "model_calls": [
            {**calls[0], "prompt_tokens": 100, "completion_tokens": 7, "cost_usd": 0.5}]}]}

    run = _doctored(run_dir, tmp_path, record=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    records = _records(run)
    log = read_eval_log(str(_log(tmp_path / "logs", "recall")))
    sample = next(s for s in log.samples if s.metadata["sample_id"] == _ANSWERED)
    assert [e.event for e in sample.events] == ["model", "tool", "model", "tool", "model"]
    models = [e for e in sample.events if e.event == "model"]
    answers = [i for i, m in enumerate(sample.messages) if m.role == "assistant"]
    assert [([m.id for m in e.input], e.output.choices[0].message.id, e.model) for e in models] == [
        ([m.id for m in sample.messages[:i]], sample.messages[i].id, "offline/reference") for i in answers]
    assert [(e.output.usage.input_tokens, e.output.usage.output_tokens, e.output.usage.total_tokens,
             e.output.usage.total_cost) if e.output.usage else None for e in models] == [(11, 2, 13, 0.25), (13, 3, 16, None), None]
    assert [(e.output.choices[0].stop_reason, e.cache, e.working_time) for e in models] == [
        ("tool_calls", "read", 1.5), ("max_tokens", None, 2.5), ("unknown", None, None)]
    tools = [(e.id, e.function, e.arguments, e.result, e.working_time) for e in sample.events if e.event == "tool"]
    assert tools == [("call_offline_2", "memory_search", json.loads(records[_ANSWERED]["tool_calls"][0]["arguments"]),
                      "found it", 0.75), ("call_offline_4", "memory_get", {"itemId": "it-ci-buildkite"}, "", None)]
    assert sample.output.stop_reason == "max_tokens"  # the last call's
    usage = sample.model_usage["offline/reference"]
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.total_cost) == (1124, 22, 1146, 1.25)
    other = next(s for s in log.samples if s.metadata["sample_id"] != _ANSWERED)
    calls = records[other.metadata["sample_id"]]["model_calls"]
    assert [(e.output.choices[0].stop_reason, e.cache) for e in other.events if e.event == "model"][-1] == ("stop", None)
    prompt, completion = sum(c["prompt_tokens"] for c in calls), sum(c["completion_tokens"] for c in calls)
    total = log.stats.model_usage["offline/reference"]
    assert (total.input_tokens, total.output_tokens, total.total_tokens, total.total_cost) == (
        1124 + prompt, 22 + completion, 1146 + prompt + completion, 1.25)


def test_a_logs_header_is_the_runs_suite_settings_plan_and_state(run_dir: Path, tmp_path: Path) -> None:
    """What inspect_ai's viewer shows of an eval: the suite as its dataset, the run's settings as its generate config
    and eval config (each from its own parameter), the whole parameters and the run's facts in the metadata, the arm
    as the solver and plan, and the run's state (an interrupted run is a cancelled eval, not a finished one)."""
    from inspect_ai.log import read_eval_log

    from harness import __version__

    settings = {"limit": 3, "sample_ids": ["smoke-02-ci-provider"], "api_base": "http://localhost:9/v1", "timeout_s": 30.5,
                "retries": 2, "max_concurrency": 3, "max_tool_rounds": 5, "temperature": 0.25, "max_tokens": 512}

    def doctor(manifest: dict[str, Any]) -> None:
        manifest["parameters"].update(settings)
        manifest.update(status="interrupted", finished_at=None)

    run = _doctored(run_dir, tmp_path, manifest=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for arm in ("history_only", "recall"):
        log = read_eval_log(str(_log(tmp_path / "logs", arm)), header_only=True)
        spec = log.eval
        started = dt.datetime.fromisoformat(manifest["started_at"])
        assert (log.status, dt.datetime.fromisoformat(log.stats.started_at), log.stats.completed_at) == (
            "cancelled", started, "")
        assert (dt.datetime.fromisoformat(spec.created), spec.task_version, spec.task_args, spec.solver) == (
            started, manifest["harness_version"], {"arm": arm}, arm)
        assert (spec.dataset.name, spec.dataset.location, spec.dataset.samples, spec.dataset.sample_ids) == (
            "smoke", ", ".join(manifest["scenario_paths"]), 2, manifest["scenario_ids"])
        generate = spec.model_generate_config
        assert (spec.model_base_url, generate.temperature, generate.max_tokens, generate.timeout, generate.max_retries) == (
            "http://localhost:9/v1", 0.25, 512, 30, 2)
        assert (spec.config.epochs, spec.config.limit, spec.config.sample_id, spec.config.max_samples) == (
            1, 3, ["smoke-02-ci-provider"], 3)
        assert spec.packages == {"recall-eval": __version__}
        assert spec.metadata == {"recall_eval": {
            "run_id": manifest["run_id"], "harness_version": manifest["harness_version"], "suite_hash": manifest["suite_hash"],
            "seed": manifest["seed"], "arms": ["history_only", "recall"], "models": ["offline/reference"],
            "status": "interrupted", "parameters": manifest["parameters"], "run_dir": str(run.resolve())}}
        assert log.plan.name == "recall-eval"
        assert [(s.solver, s.params) for s in log.plan.steps] == [(arm, {"max_tool_rounds": 5})]


def test_a_run_without_a_timeout_exports_none_and_a_finished_run_is_a_successful_eval(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    log = read_eval_log(str(_log(logs, "recall")), header_only=True)
    assert (log.status, dt.datetime.fromisoformat(log.stats.completed_at)) == (
        "success", dt.datetime.fromisoformat(manifest["finished_at"]))
    assert log.eval.model_generate_config.timeout == int(manifest["parameters"]["timeout_s"])
