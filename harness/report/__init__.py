"""Build every report of a run folder from its results, never calling the agent model.

``build_report(run_dir)`` reads ``run.json`` and ``results.jsonl`` (leniently:
one record per sample id, bad lines named, records outside ``run.json``
refused; see :mod:`harness.report.inputs`), loads the scenarios the results
name (no other), scores each sample (optionally with a judge for rubric scenarios),
aggregates, decides the verdict, finds the headlines a reader must see first
(:mod:`harness.report.headlines`) and writes ``summary.json``,
``metrics.csv``, ``scores.jsonl``, ``junit.xml`` and ``index.html``.
``recall-eval report RUN_DIR`` is :func:`cli_report`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fnmatch
import gc
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.records import RESULTS_FILE, ResultsError, SampleRecord, read_manifest
from harness.scenarios.models import Scenario
from harness.analysis.verdict import RunHealth, VerdictConfig, exit_code, terminal_lines

SUMMARY_SCHEMA_VERSION = 1

__all__ = ["ReportError", "ReportOutcome", "VerdictConfig", "build_report", "cli_report", "build_summary",
           "exit_code", "terminal_lines"]


class ReportError(Exception):
    """A run folder cannot be reported on; the message names the file and what to do."""


@dataclass
class ReportOutcome:
    """What ``build_report`` decided and wrote."""

    verdict: str
    reasons: list[str]
    index_html: Path
    summary_json: Path
    paths: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: ``summary.json``'s headlines: ``{"code", "lead", "text"}``, leads first.
    headlines: list[dict[str, Any]] = field(default_factory=list)
    #: The error rate was above ``--max-error-rate``.
    too_many_errors: bool = False
    #: The summary written to ``summary.json`` (what the terminal table of ``run`` and ``report`` reads).
    summary: dict[str, Any] = field(default_factory=dict)


def _load_scenarios(manifest: Any) -> dict[str, Scenario]:
    """The scenarios ``manifest.scenario_ids`` names (a report passes only the ids its results hold)."""
    from harness.report.inputs import ScenarioLoadError, load_named_scenarios

    try:
        return load_named_scenarios(manifest, manifest.scenario_ids)
    except ScenarioLoadError as exc:
        raise ReportError(str(exc)) from None


def _hash_warnings(records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario]) -> list[str]:
    from harness.scenarios import scenario_hash

    seen: dict[str, str] = {}
    for record in records:
        seen.setdefault(record.scenario_id, record.scenario_hash)
    warnings = []
    for sid, h in sorted(seen.items()):
        if sid in scenarios and (now := scenario_hash(scenarios[sid])) != h:
            warnings.append(f"scenario {sid!r} changed since the run (hash {h[:12]} in results, {now[:12]} now)")
    return warnings


def _expected_dict(scenario: Scenario) -> dict[str, Any]:
    """The answer key shown in a sample's panel: the non-default ``expect`` fields plus ``abstain``."""
    return scenario.expect.model_dump(mode="json", exclude_defaults=True) | {"abstain": scenario.expect.abstain}


def _sample_dict(record: SampleRecord, scenario: Scenario, scores: Any,
                expected: dict[str, Any] | None = None) -> dict[str, Any]:
    """One entry of the ``samples`` list handed to the HTML renderer (see report_contract.md).

    ``expected`` is :func:`_expected_dict` of the scenario, passed in when the
    caller shares one dict between the samples of a scenario (read-only).
    """
    dumped = record.model_dump(include={"error", "tool_calls", "model_calls"})  # one serializer call for all
    return {
        "sample_id": record.sample_id, "scenario_id": record.scenario_id, "title": scenario.title,
        "category": record.category, "tags": list(scenario.tags), "arm": record.arm, "model": record.model,
        "epoch": record.epoch, "status": record.status, "error": dumped["error"],
        "outcome": scores.outcome, "final_answer": record.final_answer, "stop_reason": record.stop_reason,
        "messages": record.messages, "tool_calls": dumped["tool_calls"], "model_calls": dumped["model_calls"],
        "tools_offered": list(record.tools_offered), "seed": record.seed,
        "scores": scores.model_dump(include={"scores"})["scores"],
        "latency_s": record.wall_time_s, "prompt_tokens": scores.prompt_tokens,
        "completion_tokens": scores.completion_tokens, "tool_result_tokens": scores.tool_result_tokens,
        "cost_usd": scores.cost_usd, "cached": scores.cached,
        # The write phase (arms whose agent writes memory): its calls shown before the probe's, its costs apart.
        "write_calls": _write_calls(record), "write_model_calls": scores.write_model_calls,
        "write_tokens": scores.write_prompt_tokens + scores.write_completion_tokens,
        "unsupported_kinds": dict(Counter(c.kind for c in claims)) if (claims := scores.unsupported_claims) else {},
        "expected": expected if expected is not None else _expected_dict(scenario),
    }


def _write_calls(record: SampleRecord) -> list[dict[str, Any]]:
    """Every write call of the sample's write phase, named after its session for the transcript view."""
    if record.write_phase is None:
        return []
    return [
        {**call.model_dump(), "name": f"[write phase, session {session.session_id}] {call.name}"}
        for session in record.write_phase.sessions
        for call in session.tool_calls
    ]


def _judge_for(judge_model: str | None, judge_cache_dir: Path | None) -> Any:
    if not judge_model:
        return None
    from harness.score.judge import DEFAULT_CACHE_DIR, Judge

    return Judge(model=judge_model, cache_dir=judge_cache_dir or DEFAULT_CACHE_DIR)


def _grounding_for(judge: Any) -> Any:
    """The grounding judge: the rubric judge's model, cache folder, endpoint and completer, its own prompt."""
    if judge is None:
        return None
    from harness.score.grounding import GroundingJudge

    return GroundingJudge(model=judge.model, cache_dir=judge.cache_dir, complete=judge.complete,
                          api_base=judge.api_base)


def _judge_block(judge: Any, grounding: Any, judged: int, ungrounded: int) -> dict[str, Any] | None:
    """``summary.json``'s ``judge``: each judge's run counts, then its calibration (whose calls are not counted)."""
    if judge is None and grounding is None:
        return None
    from harness.score import grounding as grounding_module
    from harness.score.judge import calibrate

    block: dict[str, Any] = {}
    if judge is not None:
        block = {"model": judge.model, "calls": judge.calls, "cached": judge.cached}
        block["calibration"] = calibrate(judge).as_dict()
    if grounding is not None:
        counts = {**grounding.summary(), "judged": judged, "ungrounded": ungrounded}
        block["grounding"] = {**counts, "calibration": grounding_module.calibrate(grounding).as_dict()}
    return block


def build_summary(manifest: Any, records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario], *,
                  config: VerdictConfig, judge: Any = None, excluded: Sequence[str] = (),
                  warnings: Sequence[str] = (), grounding: Any = None,
                  inputs: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Score, aggregate and decide; returns ``(summary, samples)`` (pure apart from judge calls).

    ``judge`` grades rubric scenarios; ``grounding`` (:class:`harness.score.grounding.GroundingJudge`)
    looks for unsupported specifics in every answered sample. ``inputs`` is the
    :class:`harness.report.inputs.ReportInputs` the records came from (completeness, bad lines,
    duplicates); None treats ``records`` as the whole, clean run.
    """
    from harness.analysis.aggregate import AggregateConfig, aggregate
    from harness.score.grounding import visible_context
    from harness.score.judge import expected_facts
    from harness.report.headlines import headlines, tool_use, unsupported_by_kind
    from harness.report.inputs import ReportInputs
    from harness.score.scoring import score_sample
    from harness.analysis.verdict import decide
    from harness.score.writes import write_path_blocks

    if inputs is None:
        inputs = ReportInputs(records=list(records), planned=len(records), present=len(records), run_status="complete")
    scored, samples = [], []
    expected: dict[str, dict[str, Any]] = {}
    unjudged: set[str] = set()
    for record in records:
        scenario = scenarios[record.scenario_id]
        if record.scenario_id not in expected:
            expected[record.scenario_id] = _expected_dict(scenario)
        verdict = None
        if scenario.expect.rubric and record.status == "ok":
            if judge is None:
                unjudged.add(record.scenario_id)
            else:
                facts = expected_facts(scenario.expect, scenario.expect.adherence)
                verdict = judge(scenario.probe.message, scenario.expect.rubric, facts, record.final_answer or "")
        scores = score_sample(record, scenario, judge=verdict)
        if grounding is not None and scores.status == "ok" and scores.answered:
            found = grounding(visible_context(record.messages), record.final_answer or "")
            scores = score_sample(record, scenario, judge=verdict, grounding=found)
        scored.append(scores)
        samples.append(_sample_dict(record, scenario, scores, expected[record.scenario_id]))
    agg_cfg = AggregateConfig(treatment_arm=config.treatment_arm, baseline_arm=config.baseline_arm, alpha=config.alpha)
    tables = aggregate(scored, titles={sid: s.title for sid, s in scenarios.items()}, config=agg_cfg)
    errors = sum(r.status == "error" for r in records)
    health = RunHealth(planned=inputs.planned, present=inputs.present, run_status=inputs.run_status,
                       why=tuple(inputs.why_short()), errors=errors, samples=len(records))
    verdict_block = decide(tables, {s.model for s in scored}, config, health=health)
    judge_block = _judge_block(judge, grounding, sum(s.grounding is not None for s in scored),
                               sum(s.grounding == "ungrounded" for s in scored))
    summary = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "harness_version": __version__,
        "verdict": verdict_block,
        "headlines": [],
        "run": {
            "run_id": manifest.run_id, "models": list(manifest.models), "arms": list(manifest.arms),
            "epochs": manifest.epochs, "seed": manifest.seed, "suite_hash": manifest.suite_hash,
            "samples": len(records), "errors": errors, "error_rate": _rate(errors, len(records)),
            "cached_samples": sum(s.cached for s in scored),
            "planned_samples": inputs.planned, "present_samples": inputs.present, "complete": health.complete,
            "unusable_lines": len(inputs.problems), "torn_last_line": inputs.torn_last_line,
            "duplicates_dropped": inputs.duplicates, "foreign_records": len(inputs.foreign_ids),
            "excluded_scenarios": sorted(excluded), "started_at": manifest.started_at,
            "finished_at": manifest.finished_at, "status": manifest.status, "warnings": list(warnings),
            "parameters": _shown_parameters(manifest.parameters),
        },
        **tables,
        "tool_use": tool_use(scored, tables.get("metrics") or []),
        "unsupported_by_kind": unsupported_by_kind(scored),
        "categories": _categories(scored, scenarios),
        "judge": judge_block,
        **write_path_blocks(scored),
    }
    summary["headlines"] = headlines(summary, health=health, inputs=inputs, config=config,
                                     unjudged_rubric=len(unjudged))
    return summary, samples


def _categories(scored: Sequence[Any], scenarios: Mapping[str, Scenario]) -> list[dict[str, Any]]:
    """``summary.json``'s ``categories``: every category scored, with the suite's description and its scenario count.

    The description is the one a scenario's ``categories`` declares for the
    name (a suite's ``_defaults.yaml``); null for a built-in category nobody declared.
    """
    ids: dict[str, set[str]] = {}
    for s in scored:
        ids.setdefault(str(s.category), set()).add(s.scenario_id)
    described: dict[str, str] = {}
    for sid in sorted({sid for members in ids.values() for sid in members}):
        scenario = scenarios.get(sid)
        for name, text in (scenario.categories if scenario is not None else {}).items():
            described.setdefault(name, text)
    return [{"name": name, "description": described.get(name), "scenarios": len(ids[name])} for name in sorted(ids)]


#: run.json parameters copied to ``summary.run.parameters``: what a reader of a report, a comparison or a
#: history needs to know was asked of the model (never paths of this machine such as ``cache_dir``).
SHOWN_PARAMETERS = ("filters", "max_tool_rounds", "max_tokens", "temperature", "timeout_s", "retries", "api_base",
                    "cache", "judge_model")


def _shown_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {k: parameters[k] for k in SHOWN_PARAMETERS if k in parameters}


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector, restoring its previous state afterwards.

    A report holds every transcript of the run in memory (millions of dicts and
    lists, none of them in reference cycles); with the collector on, each of its
    automatic passes walks them all again, which cost about 40% of the CPU time
    of a 10,000-sample report. Reference counting still frees everything.
    ``build_report`` keeps the collector on when a judge model is called: HTTP
    clients do make cycles, and network time dwarfs the collector's then.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_report(run_dir: Path, *, judge_model: str | None = None, exclude: Sequence[str] = (),
                 thresholds: VerdictConfig | None = None, scenarios: Mapping[str, Scenario] | None = None,
                 judge_cache_dir: Path | None = None, judge_api_base: str | None = None,
                 include_foreign: bool = False) -> ReportOutcome:
    """Rebuild all outputs of ``run_dir`` from its results.

    Args:
        run_dir: a run folder (``run.json`` + ``results.jsonl``).
        judge_model: litellm model for rubric scenarios and the grounding judge; None scores by patterns only.
        exclude: scenario ids (globs) to leave out, e.g. a known-bad answer key.
        thresholds: verdict thresholds; defaults to :class:`VerdictConfig`.
        scenarios: id -> Scenario, instead of loading the manifest's paths (tests, tools).
        judge_cache_dir: where judge verdicts are cached (default ``.recall-eval-cache/judge``).
        judge_api_base: endpoint of an OpenAI-compatible server for the judge model.
        include_foreign: score records whose model, arm, scenario or epoch ``run.json`` does not
            list (with a warning) instead of refusing the report.

    Raises:
        ReportError, ResultsError: the folder or its files cannot be read, or records outside
            ``run.json`` were found; messages say which and why.
    """
    with _gc_paused() if not judge_model else contextlib.nullcontext():
        return _build_report(Path(run_dir), judge_model=judge_model, exclude=exclude, thresholds=thresholds,
                             scenarios=scenarios, judge_cache_dir=judge_cache_dir, judge_api_base=judge_api_base,
                             include_foreign=include_foreign)


def _build_report(run_dir: Path, *, judge_model: str | None, exclude: Sequence[str],
                  thresholds: VerdictConfig | None, scenarios: Mapping[str, Scenario] | None,
                  judge_cache_dir: Path | None, judge_api_base: str | None = None,
                  include_foreign: bool = False) -> ReportOutcome:
    from harness.report import outputs
    from harness.report.html import render_html
    from harness.report.inputs import ForeignRecordsError, read_inputs

    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such folder; pass a run folder written by `recall-eval run`")
    manifest = read_manifest(run_dir)
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        raise ReportError(f"{results}: missing; the run wrote no results (run it again or use --resume)")
    try:
        inputs = read_inputs(run_dir, manifest, include_foreign=include_foreign)
    except ForeignRecordsError as exc:
        raise ReportError(str(exc)) from None
    records = inputs.records
    _check_exclude(exclude, sorted({r.scenario_id for r in records}))
    if scenarios is None:  # only the scenarios the results name are loaded (and validated), not the suite
        named = manifest.model_copy(update={"scenario_ids": sorted({r.scenario_id for r in records})})
        scenarios = _load_scenarios(named)
    scenarios = dict(scenarios)
    warnings = inputs.warnings()
    excluded = sorted({r.scenario_id for r in records if any(fnmatch.fnmatchcase(r.scenario_id, p) for p in exclude)})
    records = [r for r in records if r.scenario_id not in excluded]
    unknown = sorted({r.scenario_id for r in records} - scenarios.keys())
    if unknown:
        warnings.append(f"not scored: scenarios {unknown} are in the results but not in {manifest.scenario_paths}")
        records = [r for r in records if r.scenario_id in scenarios]
    config = thresholds or VerdictConfig()
    judge = _judge_for(judge_model, judge_cache_dir)
    if judge is not None and judge_api_base:
        judge.api_base = judge_api_base
    grounding = _grounding_for(judge)
    # The scenario hashes are checked on a second thread while the samples are scored: SHA-256 of a benchmark
    # suite reads hundreds of MB (each probe's hash covers its conversation) and releases the GIL to do it.
    # Nothing in scoring reads the warnings; they are added once both are done, last as before.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scenario-hashes") as pool:
        hashing = pool.submit(_hash_warnings, records, scenarios)
        summary, samples = build_summary(manifest, records, scenarios, config=config, judge=judge, excluded=excluded,
                                         warnings=warnings, grounding=grounding, inputs=inputs)
        changed = hashing.result()
    warnings += changed
    summary["run"]["warnings"] += changed
    page = render_html(summary, samples)
    try:
        paths = {
            "summary.json": outputs.write_summary_json(run_dir, summary),
            "metrics.csv": outputs.write_metrics_csv(run_dir, summary["metrics"]),
            "scores.jsonl": outputs.write_scores_jsonl(run_dir, samples),
            "junit.xml": outputs.write_junit_xml(run_dir, summary["verdict"], samples),
            "index.html": outputs.write_index_html(run_dir, page),
        }
    except OSError as exc:  # read-only folder, full disk, a folder where a file should be
        where = exc.filename or run_dir
        raise ReportError(f"{where}: cannot write the report ({exc.strerror or exc}); the results are untouched. "
                          f"Make {run_dir} writable (or copy the run folder somewhere writable) and run "
                          f"`recall-eval report` on it again") from None
    error_rate = summary["run"]["error_rate"]
    return ReportOutcome(verdict=summary["verdict"]["status"], reasons=list(summary["verdict"]["reasons"]),
                         index_html=paths["index.html"], summary_json=paths["summary.json"], paths=paths,
                         warnings=warnings, headlines=list(summary["headlines"]),
                         too_many_errors=error_rate is not None and error_rate > config.max_error_rate,
                         summary=summary)


def _check_exclude(exclude: Sequence[str], ids: Sequence[str]) -> None:
    """An ``--exclude`` pattern matching no scenario id in the results is an error, as a ``run --filter``
    id glob matching nothing is: a typo would otherwise leave the known-bad scenario in the numbers."""
    import difflib

    for pattern in exclude:
        if not any(fnmatch.fnmatchcase(i, pattern) for i in ids):
            close = difflib.get_close_matches(pattern, list(ids), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ReportError(f"--exclude {pattern!r} matches no scenario id in the results{hint}; fix or drop it")


def _thresholds_from_args(args: Any) -> VerdictConfig:
    """``--min-gain``, ``--unsupported-tolerance``, ``--max-error-rate`` (when given) as a VerdictConfig."""
    values = {}
    if getattr(args, "min_gain", None) is not None:
        values["min_continuity_gain"] = args.min_gain
    if getattr(args, "unsupported_tolerance", None) is not None:
        values["unsupported_tolerance"] = args.unsupported_tolerance
    if getattr(args, "max_error_rate", None) is not None:
        values["max_error_rate"] = args.max_error_rate
    return VerdictConfig(**values)


def cli_report(args: Any) -> int:
    """``recall-eval report RUN_DIR``: leads and verdict first, then the paths.

    Exit 1 when the error rate is above ``--max-error-rate``, or with ``--gate``
    unless the verdict is pass (an incomplete run included); 2 on bad input.
    """
    from pydantic import ValidationError

    from harness.score.judge import JudgeError
    from harness.scenarios import ScenarioError

    try:
        try:
            thresholds = _thresholds_from_args(args)
        except ValidationError as exc:
            raise ReportError(f"bad threshold: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None
        outcome = build_report(Path(args.run_dir), judge_model=getattr(args, "judge_model", None),
                               exclude=getattr(args, "exclude", None) or (), thresholds=thresholds,
                               judge_api_base=getattr(args, "judge_api_base", None),
                               include_foreign=bool(getattr(args, "include_foreign", False)))
    except (ReportError, ResultsError, JudgeError, ScenarioError) as exc:
        print(f"recall-eval report: {exc}", file=sys.stderr)
        return 2
    from harness.report.terminal import report_lines

    out, err = report_lines(outcome)  # the same words as the end of `recall-eval run`
    for line in out:
        print(line)
    for line in err:
        print(line, file=sys.stderr)
    for name, path in outcome.paths.items():
        print(f"{name:13} {path}")
    return exit_code(outcome, gate=bool(getattr(args, "gate", False)))
