"""Whether ``scores.jsonl`` is what the run's transcripts score: each sample scored again from ``results.jsonl``.

``summary.json`` records the SHA-256 of ``scores.jsonl``, and compare aggregates the rows again
(:mod:`harness.runs.table_check`), but the digest sits inside the summary: a forger who rewrites a failing
sample's row as correct, then the tables and the digest to match, leaves every file agreeing with the others.
What no one can rewrite without making another run is the transcript. :func:`rescore_disagreement` scores every
record of ``results.jsonl`` again against the run's scenarios with the report's own scorers
(:func:`harness.report.summary.final_scores`, the protocol of :func:`harness.report.protocol.run_protocol`), and
names the first row of ``scores.jsonl`` that is not what its transcript scores, a sample the rows leave out, or a
row no transcript stands behind. ``compare`` refuses such a run in one line, naming ``recall-eval report``.

What is taken on trust: a judge's words. Compare calls no model, so for a judged sample the rubric judge's verdict
and reason, and the grounding judge's findings, are read from the row and everything else is scored again around
them (``recall-eval report RUN --judge-model M`` grades again; its cache makes known verdicts free). And a forger
who rewrites the transcripts themselves has made a different run: the records are the evidence, and what they say
is what compare scores (``docs/summary-json.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.records import ResultsScan, RunManifest

__all__ = ["RescoreError", "rescore_disagreement", "rescore_refusal"]

#: Row fields that are not the sample's scores: the format's version (checked before) and what was added beside it.
_NOT_SCORES = frozenset({"schema_version"})


class RescoreError(Exception):
    """The samples cannot be scored again (the run's scenarios do not load); the message says why."""


def _judges_words(row: Mapping[str, Any], scenario: Any, judged: bool) -> tuple[Any, Any]:
    """The rubric judge's verdict and the grounding judge's findings as the row records them (None: not asked).

    A run ``summary.json`` names no judge for had none: a row's judge words there are not trusted but scored as absent.
    """
    from harness.score import GROUNDING_UNREADABLE, GroundingVerdict, JudgeVerdict

    if not judged:
        return None, None
    verdict = None
    if row.get("judge_verdict") in ("pass", "fail") and scenario.expect.rubric:
        verdict = JudgeVerdict(verdict=row["judge_verdict"], reason=str(row.get("judge_reason") or ""), raw="",
                               model="")
    found = None
    if row.get("grounding") in ("grounded", "ungrounded"):
        claims = row.get("unsupported_claims") or []
        found = GroundingVerdict(status="ok", raw="", model="", unsupported=[
            str(c.get("text")) for c in claims if isinstance(c, Mapping) and c.get("kind") == "ungrounded"])
    elif row.get("grounding") == "malformed":
        reasons = [str(s.get("reason") or "") for s in row.get("scores") or []
                   if isinstance(s, Mapping) and s.get("name") == "grounding"]
        error = reasons[0].removeprefix(GROUNDING_UNREADABLE) if reasons else ""
        found = GroundingVerdict(status="malformed", raw="", model="", error=error)
    return verdict, found


def _first_difference(row: Mapping[str, Any], expected: Mapping[str, Any]) -> tuple[str, Any, Any] | None:
    for key, mine in expected.items():
        theirs = row.get(key, "(missing)")
        if theirs != mine or type(theirs) is not type(mine) and not (
                isinstance(theirs, int | float) and isinstance(mine, int | float)
                and not isinstance(theirs, bool) and not isinstance(mine, bool)):
            return key, theirs, mine
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def rescore_disagreement(manifest: RunManifest, scan: ResultsScan, rows: Sequence[Mapping[str, Any]],
                         summary: Mapping[str, Any]) -> str | None:
    """Why ``rows`` (``scores.jsonl``, format 2 or 3) are not what ``scan``'s transcripts score, or None when they are.

    Args:
        manifest: ``run.json`` (where the scenarios are, the run's store and redaction).
        scan: the records of ``results.jsonl``.
        rows: the rows of ``scores.jsonl``, checked for format (:func:`harness.runs.table_check.scores_format_problem`).
        summary: ``summary.json`` (the judge it names, the scenarios it excluded).

    Raises:
        RescoreError: the scenarios the records name do not load.
    """
    from harness.report import (
        SCORES_ADDED_IN,
        ReportError,
        final_scores,
        load_run_scenarios,
        protocol_place,
        run_protocol,
    )

    run = _v if isinstance(_v := summary.get("run"), Mapping) else {}
    excluded = {str(s) for s in run.get("excluded_scenarios") or []}
    judged = isinstance(summary.get("judge"), Mapping) and bool(summary["judge"].get("model"))
    records = {r.sample_id: r for r in scan.records if r.scenario_id not in excluded}
    wanted = sorted({r.scenario_id for r in records.values()} | {str(row["scenario_id"]) for row in rows})
    try:
        scenarios = load_run_scenarios(manifest.model_copy(update={"scenario_ids": wanted}),
                                       fix="compare the run where its suite is (compare has no --scenarios)")
    except ReportError as exc:
        raise RescoreError(str(exc)) from None
    for number, row in enumerate(rows, start=1):
        if row["scenario_id"] in excluded:
            return (f"row {number} scores sample {row['sample_id']!r} of scenario {row['scenario_id']!r}, which "
                    "summary.json's run.excluded_scenarios leaves out")
        if row["sample_id"] not in records:
            return f"row {number} scores sample {row['sample_id']!r}, which results.jsonl has no record of"
        if row["scenario_id"] not in scenarios:
            return f"row {number} scores scenario {row['scenario_id']!r}, which the run's scenarios lack"
    scored_ids = {row["sample_id"] for row in rows}
    missing = [sid for sid, r in records.items() if sid not in scored_ids and r.scenario_id in scenarios]
    if missing:
        return (f"results.jsonl's sample {missing[0]!r} has no row in scores.jsonl"
                + (f" ({len(missing) - 1} more missing)" if len(missing) > 1 else ""))
    rescored = []
    for row in rows:
        record, scenario = records[row["sample_id"]], scenarios[row["scenario_id"]]
        verdict, found = _judges_words(row, scenario, judged)
        rescored.append(final_scores(record, scenario, verdict=verdict, found=found, judged=judged))
    protocol = run_protocol(rescored, scenarios, judged=judged)
    for number, (row, mine) in enumerate(zip(rows, rescored, strict=True), start=1):
        scenario = scenarios[row["scenario_id"]]
        expected = {**mine.model_dump(mode="json"), "title": scenario.title, **protocol_place(protocol, mine.scenario_id)}
        skip = _NOT_SCORES | {k for k, version in SCORES_ADDED_IN.items() if row["schema_version"] < version}
        found_difference = _first_difference(row, {k: v for k, v in expected.items() if k not in skip})
        if found_difference is None:
            continue
        key, theirs, value = found_difference
        record = records[row["sample_id"]]
        changed = ""
        # the record's own scenario only: a row moved to another scenario is named by its scenario_id above
        if record.scenario_hash and record.scenario_id == scenario.id and (now := _hash(scenarios, scenario)) != \
                record.scenario_hash:
            changed = f"; scenario {scenario.id!r} changed since the run (hash {record.scenario_hash[:12]}, now {now[:12]})"
        return (f"row {number} (sample {row['sample_id']}) has {key} {_shown(theirs)}, but its transcript "
                f"in results.jsonl scores {_shown(value)}{changed}")
    return None


def _hash(scenarios: Mapping[str, Any], scenario: Any) -> str:
    from harness.scenarios import known_hash, scenario_hash

    return known_hash(scenarios, scenario.id) or scenario_hash(scenario)


def rescore_refusal(scores_path: Path, summary: Mapping[str, Any], manifest: RunManifest, scan: ResultsScan,
                    rows: Sequence[Mapping[str, Any]], fix: str) -> str | None:
    """compare's one line refusing a run whose ``scores.jsonl`` is not what its transcripts score, or None.

    Rows of an older format hold no whole scores to check; :mod:`harness.runs.verdict_check` has the report rebuilt
    for them. ``fix`` is the ``recall-eval report`` command that scores the run again (with its judge's options).
    """
    from harness import __version__
    from harness.runs.table_check import scores_format_problem

    if scores_format_problem(rows) is not None:
        return None
    try:
        why = rescore_disagreement(manifest, scan, rows, summary)
    except RescoreError as exc:
        return (f"{scores_path}: cannot be checked against the transcripts it scores ({exc}); compare scores every "
                "sample of results.jsonl again with the run's scenarios")
    if why is None:
        return None
    version = summary.get("harness_version")
    other = "" if version in (None, __version__) else f" ({version}; this is {__version__})"
    return (f"{scores_path}: {why}: the file was edited, or scored by another harness version{other}; rebuild the "
            f"report from the transcripts with `{fix}`")
