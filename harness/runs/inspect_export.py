"""``recall-eval export inspect RUN OUT``: a run folder as inspect_ai eval logs, one per model and arm.

So ``inspect view OUT`` and inspect_ai's dataframes (``evals_df``,
``samples_df``, ``messages_df``) open recall-eval runs. The logs are built
with inspect_ai's own types and written by its own writer
(``inspect_ai.log.write_eval_log``), an optional extra
(``pip install 'recall-eval[inspect]'``): it is large (about 40 packages)
and slow to import (seconds), so nothing else imports it.

Mapping. One log per (model, arm): the task is ``recall-eval/<arm>``, the
model the run's model, the dataset the suite (its scenario ids), the
configuration and generate settings the run's parameters (``run.json``'s
parameters are kept whole in the eval's metadata under ``recall_eval``).
Each sample is one record: id the scenario id, epoch counted from 1 as
inspect_ai counts (recall-eval's epoch is in the metadata), input the
messages before the first answer, messages the whole transcript with its
tool calls and tool results, output the final answer, target the texts a
right answer must hold, and the scores the report gave it: ``continuity``
(``C``/``I``, inspect_ai's convention, with the report's reason), and
``unsupported_claims``, ``tool_leakage``, ``abstained``, ``adherence`` as
scored. The eval's results are the report's metrics of that model and arm.

Each log is its own eval to inspect_ai. Its viewer groups a folder's logs by
``task_id`` and shows only the newest of each group (the rest are "retried"),
reading the ``task_id`` from a file name of its own pattern
(``<timestamp>_<task>_<id>.eval``) or else from the log's header. So the
``task_id`` (and ``eval_id``) is a digest of the run (its id, start time and
suite hash), model and arm, and the file is named in inspect_ai's pattern with
that id last (:func:`log_identity`): two runs exported to one folder, even two
runs whose folders share a name, are six distinct evals, not three retried.

Lone surrogates (``\ud800``: records keep them, as JSON escapes, when a model
sent them) are no text inspect_ai's log can hold as such; each is written as
U+FFFD, and the log says so: ``replaced_surrogates`` in the sample's metadata
and the eval's ``recall_eval`` metadata, and a ``note:`` line on the terminal.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

INSTALL = "pip install 'recall-eval[inspect]'"
#: run.json status -> inspect_ai's eval status.
_STATUS = {"complete": "success", "interrupted": "cancelled", "failed": "error", "running": "started"}
_STOP = {"stop": "stop", "length": "max_tokens", "tool_calls": "tool_calls", "content_filter": "content_filter"}


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(value: Any) -> tuple[Any, int]:
    """``value`` (JSON-like: strings, lists, dicts) with each lone surrogate as U+FFFD, and how many were replaced.

    Example:
        >>> valid_text({"content": "x\ud800y", "calls": ["\udfff"]})
        ({'content': 'x�y', 'calls': ['�']}, 2)
    """
    if isinstance(value, str):
        return _SURROGATE.subn("\ufffd", value) if not value.isascii() else (value, 0)
    if isinstance(value, list | tuple):
        pairs = [valid_text(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        entries = [(valid_text(k), valid_text(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in entries}, sum(a + b for (_, a), (_, b) in entries)
    return value, 0


def _valid_record(record: Any, row: dict[str, Any]) -> tuple[Any, dict[str, Any], int]:
    """The record and its scores row with lone surrogates as U+FFFD (the same objects when there is none)."""
    dumped, in_record = valid_text(record.model_dump())
    row, in_row = valid_text(row)
    return (type(record).model_validate(dumped) if in_record else record), row, in_record + in_row


class ExportError(Exception):
    """The run cannot be exported (not a run folder, no inspect_ai, a folder that cannot be written)."""


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise ExportError(f"inspect_ai is missing: {INSTALL}") from None
    return log


def _messages(raw: list[dict[str, Any]], prefix: str) -> list[Any]:
    """OpenAI-format messages (as the records keep them) as inspect_ai chat messages, ids ``<prefix>#<n>`` (stable)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    names: dict[str, str] = {}
    out: list[Any] = []
    for message in raw:
        role, content = message.get("role"), message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id", "")] = function.get("name", "")
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                    error = None
                except ValueError as exc:
                    arguments, error = {}, f"arguments are not JSON: {exc}"
                calls.append(ToolCall(id=call.get("id", ""), function=function.get("name", ""),
                                      arguments=arguments if isinstance(arguments, dict) else {"value": arguments},
                                      parse_error=error))
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            out.append(ChatMessageTool(content=content, tool_call_id=call_id, function=names.get(call_id)))
    for index, message in enumerate(out):
        message.id = f"{prefix}#{index}"
    return out


def _events(record: Any, messages: list[Any]) -> list[Any]:
    """A model event per model call (its input, the answer it gave, its usage) and a tool event per tool call,
    as inspect_ai records them: its transcript view and ``messages_df`` read these."""
    from inspect_ai.event import ModelEvent, ToolEvent
    from inspect_ai.model import ChatCompletionChoice, GenerateConfig, ModelOutput, ModelUsage

    events: list[Any] = []
    calls = iter([c for c in record.model_calls if c.purpose is None])  # a selection call answers no message
    tools = {call.call_id: call for call in record.tool_calls}
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        call = next(calls, None)
        usage = None
        if call is not None:
            prompt, completion = call.prompt_tokens or 0, call.completion_tokens or 0
            usage = ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion,
                               total_cost=call.cost_usd)
        stop = _STOP.get((call.finish_reason if call else None) or "", "unknown")
        output = ModelOutput(model=record.model, usage=usage,
                             choices=[ChatCompletionChoice(message=message, stop_reason=stop)])  # type: ignore[arg-type]
        events.append(ModelEvent(model=record.model, input=messages[:index], tools=[], tool_choice="auto",
                                 config=GenerateConfig(), output=output, cache="read" if call is not None and call.cached else None,
                                 working_time=call.latency_s if call is not None else None))
        for tool_call in message.tool_calls or []:
            done = tools.get(tool_call.id)
            events.append(ToolEvent(id=tool_call.id, function=tool_call.function, arguments=tool_call.arguments,
                                    result=done.result_text if done is not None else "",
                                    working_time=done.elapsed_s if done is not None else None))
    return events


def _target(scenario: Any) -> list[str]:
    if scenario is None:
        return []
    expect = scenario.expect
    if expect.abstain:
        return ["(abstain: the answer is not in memory)"]
    return [*expect.must_contain_all, *expect.must_contain_any, *(" | ".join(g) for g in expect.must_contain_groups)]


def _scores(row: dict[str, Any], answer: str) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    out = {}
    for score in row.get("scores") or []:
        name, value, passed = score.get("name"), score.get("value"), score.get("passed")
        if name == "continuity":
            value = "C" if passed else "I"
        elif name == "error" or value is None:
            continue
        out[name] = Score(value=value, answer=answer if name == "continuity" else None, explanation=score.get("reason"),
                          metadata={"passed": passed, **({"outcome": row.get("outcome")} if name == "continuity" else {})})
    return out


def _usage(record: Any) -> Any:
    from inspect_ai.model import ModelUsage

    calls = list(record.model_calls)
    if record.write_phase is not None:
        calls += list(record.write_phase.model_calls)
    prompt, completion = sum(c.prompt_tokens or 0 for c in calls), sum(c.completion_tokens or 0 for c in calls)
    cost = sum(c.cost_usd or 0.0 for c in calls)
    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion, total_cost=cost)


def _sample(record: Any, row: dict[str, Any], scenario: Any) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput

    record, row, replaced = _valid_record(record, row)

    messages = _messages(record.messages, record.sample_id)
    first_answer = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    answer = record.final_answer or ""
    last_finish = record.model_calls[-1].finish_reason if record.model_calls else None
    output = ModelOutput.from_content(record.model, answer, stop_reason=_STOP.get(last_finish or "", "unknown"),  # type: ignore[arg-type]
                                      error=f"{record.error.type}: {record.error.message}" if record.error else None)
    error = None
    if record.error is not None:
        from inspect_ai.log import EvalError

        error = EvalError(message=f"{record.error.type}: {record.error.message}", traceback="", traceback_ansi="")
    return EvalSample(
        id=record.scenario_id, epoch=record.epoch + 1, input=messages[:first_answer] or "", target=_target(scenario),
        messages=messages, output=output, scores=_scores(row, answer) or None, error=error, events=_events(record, messages),
        metadata={"sample_id": record.sample_id, "scenario_id": record.scenario_id, "category": record.category,
                  "arm": record.arm, "recall_eval_epoch": record.epoch, "seed": record.seed, "status": record.status,
                  "outcome": row.get("outcome"), "stop_reason": record.stop_reason, "scenario_hash": record.scenario_hash,
                  "tools_offered": list(record.tools_offered), "title": row.get("title"),
                  **({"replaced_surrogates": replaced} if replaced else {})},
        model_usage={record.model: _usage(record)}, started_at=record.started_at, total_time=record.wall_time_s,
    )


def _results(summary: dict[str, Any], model: str, arm: str, samples: int, completed: int) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    metrics = {
        str(r["metric"]): EvalMetric(name=str(r["metric"]), value=float(r["value"]),
                                     metadata={"ci_low": r.get("ci_low"), "ci_high": r.get("ci_high"), "n": r.get("n")})
        for r in summary.get("metrics") or []
        if r.get("model") == model and r.get("arm") == arm and r.get("category", "all") == "all"
        and isinstance(r.get("value"), int | float) and not isinstance(r.get("value"), bool)
    }
    scores = [EvalScore(name="continuity", scorer="recall-eval", scored_samples=completed, metrics=metrics)]
    return EvalResults(total_samples=samples, completed_samples=completed, scores=scores,
                       metadata={"verdict": (summary.get("verdict") or {}).get("status")})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def log_identity(manifest: Any, model: str, arm: str, run_dir: Path | None = None) -> tuple[str, str, str]:
    """(task_id, eval_id, file name) of the log of ``model`` x ``arm`` of a run; unique per run, model and arm.

    The ids are digests of the run's id, start time, suite hash and folder (two runs of one folder name started in
    the same second differ by where they lie) with the model and arm (no ``-`` or ``_``, as
    inspect_ai's own ids), and the file name follows inspect_ai's ``<timestamp>_<task>_<task_id>.eval``, so its
    listing, which parses the name before it reads a header, finds the same ``task_id`` as the header holds.

    Example:
        >>> from types import SimpleNamespace
        >>> run = SimpleNamespace(run_id="nightly", started_at="2026-12-04T20:35:01Z", suite_hash="ab" * 32)
        >>> log_identity(run, "offline/reference", "history_only")[2][:60]
        '2026-12-04T20-35-01_nightly-offline-reference-history-only_'
    """
    import datetime as dt
    import hashlib

    where = "" if run_dir is None else str(Path(run_dir).resolve())
    key = "\0".join((manifest.run_id, manifest.started_at, manifest.suite_hash, where, model, arm))
    task_id = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:22]
    eval_id = hashlib.sha256(f"eval\0{key}".encode("utf-8", "surrogatepass")).hexdigest()[:22]
    try:
        stamp = dt.datetime.fromisoformat(manifest.started_at).strftime("%Y-%m-%dT%H-%M-%S")
    except (TypeError, ValueError):
        stamp = "1970-01-01T00-00-00"  # no readable start time: still inspect_ai's pattern, still unique by id
    task = _slug(f"{manifest.run_id}-{model}-{arm}").replace("_", "-")
    return task_id, eval_id, f"{stamp}_{task}_{task_id}.eval"


def export_inspect(run_dir: Path, out: Path, notes: list[str] | None = None) -> list[Path]:
    """Write one ``.eval`` log per model and arm of ``run_dir`` into ``out``; returns their paths.

    ``notes`` receives a line for each log that had lone surrogates written as U+FFFD.

    Raises:
        ExportError: inspect_ai is missing, ``run_dir`` is not a readable run folder, or ``out`` cannot be written.
    """
    from harness import __version__
    from harness.records import ResultsError
    from harness.report import ReportError, load_run_scenarios
    from harness.runs.comparability import CompareError, load_run

    log = _inspect()
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalPlanStep, EvalSpec, EvalStats
    from inspect_ai.model import GenerateConfig

    run_dir = Path(run_dir)
    if not (run_dir / "run.json").is_file():
        raise ExportError(f"{run_dir}: not a run folder (no run.json); pass a folder written by `recall-eval run`")
    try:
        data = load_run(run_dir)
        try:
            scenarios = load_run_scenarios(data.manifest)
        except ReportError:
            scenarios = {}  # moved away from its suite: the logs go without targets
    except (CompareError, ReportError, ResultsError, OSError) as exc:
        raise ExportError(str(exc)) from None
    manifest, summary, params = data.manifest, data.summary, dict(data.manifest.parameters)
    rows = {row["sample_id"]: row for row in data.samples if isinstance(row.get("sample_id"), str)}
    records = [r for r in data.scan.records if r.sample_id in rows]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{out}: cannot create the folder ({exc.strerror or exc})") from None
    suite = ", ".join(Path(p).name for p in manifest.scenario_paths)
    written = []
    for model in manifest.models:
        for arm in manifest.arms:
            mine = [r for r in records if r.model == model and r.arm == arm]
            task_id, eval_id, file_name = log_identity(manifest, model, arm, run_dir)
            samples = [_sample(r, rows[r.sample_id], scenarios.get(r.scenario_id)) for r in mine]
            spec = EvalSpec(
                run_id=manifest.run_id, eval_id=eval_id, created=manifest.started_at,
                task=f"recall-eval/{arm}", task_id=task_id, task_version=manifest.harness_version,
                task_args={"arm": arm}, solver=arm,
                dataset=EvalDataset(name=suite, location=", ".join(manifest.scenario_paths), samples=len(manifest.scenario_ids),
                                    sample_ids=list(manifest.scenario_ids)),
                model=model, model_base_url=params.get("api_base"),
                model_generate_config=GenerateConfig(temperature=params.get("temperature"), max_tokens=params.get("max_tokens"),
                                                     timeout=int(params["timeout_s"]) if params.get("timeout_s") else None,
                                                     max_retries=params.get("retries")),
                config=EvalConfig(epochs=manifest.epochs, limit=params.get("limit"), sample_id=params.get("sample_ids"),
                                  max_samples=params.get("max_concurrency")),
                packages={"recall-eval": __version__},
                metadata={"recall_eval": {"run_id": manifest.run_id, "harness_version": manifest.harness_version,
                                          "suite_hash": manifest.suite_hash, "seed": manifest.seed, "arms": manifest.arms,
                                          "models": manifest.models, "status": manifest.status,
                                          "parameters": params, "run_dir": str(run_dir.resolve())}},
            )
            replaced = sum((s.metadata or {}).get("replaced_surrogates", 0) for s in samples)
            if replaced and spec.metadata is not None:  # set just above
                spec.metadata["recall_eval"]["replaced_surrogates"] = replaced
            completed = sum(1 for r in mine if r.status == "ok")
            usage: dict[str, Any] = {}
            for sample in samples:
                for name, used in sample.model_usage.items():
                    usage[name] = used if name not in usage else usage[name] + used
            eval_log = EvalLog(
                status=_STATUS.get(manifest.status, "started"), eval=spec,  # type: ignore[arg-type]
                plan=EvalPlan(name="recall-eval", steps=[EvalPlanStep(solver=arm, params={"max_tool_rounds": params.get("max_tool_rounds")})]),
                results=_results(summary, model, arm, len(samples), completed),
                stats=EvalStats(started_at=manifest.started_at, completed_at=manifest.finished_at or "", model_usage=usage),
                samples=samples,
            )
            path = out / file_name
            try:
                log.write_eval_log(eval_log, str(path), format="eval")
            except OSError as exc:
                raise ExportError(f"{path}: cannot write the log ({exc.strerror or exc})") from None
            written.append(path)
            if replaced and notes is not None:
                notes.append(f"note: {path.name}: {replaced} lone surrogate(s) (\\ud800-\\udfff, no character) written "
                             "as U+FFFD; the log's metadata counts them (replaced_surrogates)")
    return written


def cli_export(args: Any) -> int:
    """``recall-eval export inspect RUN OUT``: 0 written, 2 when it cannot be (each reason named)."""
    notes: list[str] = []
    try:
        paths = export_inspect(Path(args.run), Path(args.out), notes)
    except ExportError as exc:
        print(f"recall-eval export: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(note, file=sys.stderr)
    from harness.wrapping import say_path

    for path in paths:
        say_path("wrote", path)
    print("open them with:")
    print(f"  inspect view --log-dir {args.out}")
    return 0
