"""Build every report of a run folder from its results, never calling the agent model.

``build_report(run_dir)`` reads ``run.json`` and ``results.jsonl``
(leniently: one record per sample id, bad lines named, records outside
``run.json`` refused; see :mod:`harness.report.inputs`), loads the scenarios
the results name (no other), scores each sample (optionally with a judge for
rubric scenarios), aggregates, decides the verdict, finds the headlines a
reader must see first (:mod:`harness.report.headlines`) and writes
``summary.json``, ``metrics.csv``, ``scores.jsonl``, ``junit.xml`` and
``index.html``.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import gc
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analysis import VerdictConfig
from harness.records import RESULTS_FILE, read_manifest
from harness.report.judges import JUDGES_FOLDER, record_judge, sensitivity
from harness.report.summary import build_summary, grounding_judge_for, hash_warnings, judge_for, pairwise_judge_for
from harness.scenarios import Scenario, ShelfView
from harness.score import judging


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


def load_run_scenarios(manifest: Any, *, fix: str = "pass --scenarios PATH, where they are now") -> Mapping[str, Scenario]:
    """The scenarios ``manifest.scenario_ids`` names (a report passes only the ids its results hold); ``fix`` is what
    the error says to do when the run's scenario paths are gone (the command's own way to name where they are)."""
    from harness.report.inputs import ScenarioLoadError, load_named_scenarios

    try:
        return load_named_scenarios(manifest, manifest.scenario_ids)
    except ScenarioLoadError as exc:
        missing = [p for p in manifest.scenario_paths if not Path(p).exists()]
        hint = f"; the run's scenarios are not at {', '.join(missing)} any more: {fix}" if missing else ""
        raise ReportError(f"{exc}{hint}") from None


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
                 include_foreign: bool = False, judge_preset: str | None = None,
                 judge_prompt: Path | None = None,
                 scenario_paths: Sequence[str | Path] | None = None,
                 pairwise_judge: bool = False, judge_budget: Any = None) -> ReportOutcome:
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
        judge_preset: ``locomo`` or ``longmemeval``: the rubric judge follows that benchmark's protocol.
        judge_prompt: a prompt file used verbatim by the rubric judge (recorded by SHA-256).
        scenario_paths: where the run's scenarios are now (``report --scenarios``: a run folder moved away
            from its suite, e.g. a CI artifact), instead of ``run.json``'s paths; a scenario whose text
            changed since the run is named in the warnings, as always.
        pairwise_judge: also judge the treatment's answers against the baseline's (and a logged reply) with
            ``judge_model``, both orders, a sign test over conversations (:mod:`harness.report.pairwise`).
        judge_budget: a :class:`harness.run.budget.Budget` every judge call is reserved against (``run
            --max-cost-usd``); a call that does not fit raises ``BudgetExceeded`` and nothing is written.

    Raises:
        ReportError, ResultsError: the folder or its files cannot be read, or records outside
            ``run.json`` were found; messages say which and why.
    """
    with _gc_paused() if not judge_model else contextlib.nullcontext():
        return _build_report(Path(run_dir), judge_model=judge_model, exclude=exclude, thresholds=thresholds,
                             scenarios=scenarios, judge_cache_dir=judge_cache_dir, judge_api_base=judge_api_base,
                             include_foreign=include_foreign, judge_preset=judge_preset, judge_prompt=judge_prompt,
                             scenario_paths=scenario_paths, pairwise_judge=pairwise_judge, judge_budget=judge_budget)


def _build_report(run_dir: Path, *, judge_model: str | None, exclude: Sequence[str],
                  thresholds: VerdictConfig | None, scenarios: Mapping[str, Scenario] | None,
                  judge_cache_dir: Path | None, judge_api_base: str | None = None,
                  include_foreign: bool = False, judge_preset: str | None = None,
                  judge_prompt: Path | None = None,
                  scenario_paths: Sequence[str | Path] | None = None,
                  pairwise_judge: bool = False, judge_budget: Any = None) -> ReportOutcome:
    from harness.report import outputs
    from harness.report.html import render_page
    from harness.report.inputs import ForeignRecordsError, read_inputs

    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such folder; pass a run folder written by `recall-eval run`")
    if (judge_preset or judge_prompt) and not judge_model:
        raise ReportError("--judge-preset and --judge-prompt choose the judge's prompt; also pass --judge-model M")
    if pairwise_judge and not judge_model:
        raise ReportError("--pairwise-judge compares answers with --judge-model's model; also pass --judge-model M")
    from harness.score import JudgePromptError

    try:  # before anything is read, so a bad prompt file is the one error named
        judge = judge_for(judge_model, judge_cache_dir, preset=judge_preset, prompt_file=judge_prompt)
    except JudgePromptError as exc:
        raise ReportError(str(exc)) from None
    manifest = read_manifest(run_dir)
    if scenario_paths:
        manifest = _moved_scenarios(manifest, scenario_paths)
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
        scenarios = load_run_scenarios(named)
    if isinstance(scenarios, ShelfView):  # a shelf's view stays one, of what the results name: never unpacked at once
        scenarios = ShelfView(scenarios.shelf.subset({r.scenario_id for r in records}))
    else:
        scenarios = dict(scenarios)
    warnings = inputs.warnings()
    excluded = sorted({r.scenario_id for r in records if any(fnmatch.fnmatchcase(r.scenario_id, p) for p in exclude)})
    records = [r for r in records if r.scenario_id not in excluded]
    unknown = sorted({r.scenario_id for r in records} - scenarios.keys())
    if unknown:
        warnings.append(f"not scored: scenarios {unknown} are in the results but not in {manifest.scenario_paths}")
        records = [r for r in records if r.scenario_id in scenarios]
    config = thresholds or VerdictConfig()
    if judge is not None and judge_api_base:
        judge.api_base = judge_api_base
    if judge is not None:
        judge.budget = judge_budget  # shared by the grounding and pairwise judges
        judge.timeout_s, judge.retries = _judge_limits(manifest.parameters)
    grounding = grounding_judge_for(judge)
    pairwise = pairwise_judge_for(judge) if pairwise_judge and judge is not None else None
    # The scenario hashes are checked on a second thread while the samples are scored: SHA-256 of a benchmark
    # suite reads hundreds of MB (each probe's hash covers its conversation) and releases the GIL to do it.
    # Nothing in scoring reads the warnings; they are added once both are done, last as before.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scenario-hashes") as pool:
        hashing = pool.submit(hash_warnings, records, scenarios)
        with judging() if judge is not None else contextlib.nullcontext():  # a heartbeat line while judges are called
            summary, samples = build_summary(manifest, records, scenarios, config=config, judge=judge,
                                             excluded=excluded, warnings=warnings, grounding=grounding, inputs=inputs,
                                             pairwise=pairwise)
        changed = hashing.result()
    warnings += changed
    summary["run"]["warnings"] += changed
    audited = _gold_audit(manifest.scenario_paths, {r.scenario_id for r in records})
    if audited is not None:
        summary["run"]["gold_audit"] = audited
        if audited["flagged"]:
            summary["headlines"].append({"code": "gold_audit", "lead": False, "text": (
                f"gold audit: {audited['flagged']} of {audited['scored']} scored questions have a check that looks "
                "unpassable (the suite's SUITE.md lists them; `recall-eval audit SUITE`)")})
    try:  # each judge's grades are kept in the run folder, so the report can show how far judges disagree
        record_judge(run_dir, summary, samples)
    except OSError as exc:
        warnings.append(f"{run_dir / JUDGES_FOLDER}: this judge's grades not recorded ({exc.strerror or exc}); "
                        "judge sensitivity leaves it out")
        summary["run"]["warnings"].append(warnings[-1])
    found = sensitivity(run_dir, summary, samples)
    if found is not None:
        summary["judge_sensitivity"] = found
    # What the summary was built from: `compare` rebuilds (or refuses) a summary whose results or scores changed since.
    scores = outputs.scores_text(samples)
    summary["run"]["results_sha256"] = inputs.results_sha256
    summary["run"]["scores_sha256"] = outputs.text_sha256(scores)
    page = render_page(summary, samples)  # in pieces: a whole-suite page is never joined
    try:
        paths = {
            "summary.json": outputs.write_summary_json(run_dir, summary),
            "metrics.csv": outputs.write_metrics_csv(run_dir, summary["metrics"]),
            "scores.jsonl": outputs.write_scores_jsonl(run_dir, scores),
            "junit.xml": outputs.write_junit_xml(run_dir, summary["verdict"], samples),
            "index.html": outputs.write_index_html(run_dir, page),
        }
    except OSError as exc:  # read-only folder, full disk, a folder where a file should be
        where = exc.filename or run_dir
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            fix = (f"Make {run_dir} writable (or copy the run folder somewhere writable) and run "
                   "`recall-eval report` on it again")
        else:
            fix = "Fix the cause (free space, a folder or link where a file should be) and run `recall-eval report` again"
        raise ReportError(f"{where}: cannot write the report ({exc.strerror or exc}); the results are untouched. {fix}") from None
    error_rate = summary["run"]["error_rate"]
    return ReportOutcome(verdict=summary["verdict"]["status"], reasons=list(summary["verdict"]["reasons"]),
                         index_html=paths["index.html"], summary_json=paths["summary.json"], paths=paths,
                         warnings=warnings, headlines=list(summary["headlines"]),
                         too_many_errors=error_rate is not None and error_rate > config.max_error_rate,
                         summary=summary)


def _judge_limits(parameters: Mapping[str, Any]) -> tuple[float | None, int]:
    """The run's ``--timeout`` and ``--retries`` (``run.json``; the defaults for a run that did not record them), which
    every judge call of its report keeps to (:mod:`harness.score.judge_watch`)."""
    from harness.defaults import RUN_DEFAULTS

    timeout, retries = parameters.get("timeout_s", RUN_DEFAULTS.get("timeout_s")), parameters.get("retries", RUN_DEFAULTS.get("retries"))
    timeout = float(timeout) if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0 else None
    retries = int(retries) if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0 else 0
    return timeout, retries


def _gold_audit(paths: Sequence[str], scored: set[str]) -> dict[str, int] | None:
    """How many scored questions the import's gold audit flagged, or None for a suite without an audit."""
    from harness.importers import flagged_in_suites

    flagged = flagged_in_suites(paths)
    return None if flagged is None else {"flagged": len(flagged & scored), "scored": len(scored)}


def _moved_scenarios(manifest: Any, paths: Sequence[str | Path]) -> Any:
    """``manifest`` reading its scenarios from ``paths`` (made absolute); a missing path is a :class:`ReportError`."""
    for path in paths:
        if not Path(path).exists():
            raise ReportError(f"--scenarios {path}: no such file or folder (working directory {Path.cwd()})")
    return manifest.model_copy(update={"scenario_paths": [str(Path(p).expanduser().resolve()) for p in paths]})


def _check_exclude(exclude: Sequence[str], ids: Sequence[str]) -> None:
    """An ``--exclude`` pattern matching no scenario id in the results is an error, as a ``run --filter``
    id glob matching nothing is: a typo would otherwise leave the known-bad scenario in the numbers."""
    import difflib

    for pattern in exclude:
        if not any(fnmatch.fnmatchcase(i, pattern) for i in ids):
            close = difflib.get_close_matches(pattern, list(ids), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ReportError(f"--exclude {pattern!r} matches no scenario id in the results{hint}; fix or drop it")
