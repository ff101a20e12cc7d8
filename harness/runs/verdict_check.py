"""Whether a ``summary.json``'s verdict follows from what compare verified: its tables and the run's records.

``summary.json`` is an editable file: its digests tie it to ``results.jsonl``
and ``scores.jsonl``, but nothing ties its ``verdict`` block to them. A hand
edit of ``verdict.status`` from ``fail`` to ``pass`` (results and digests
unchanged) used to reach ``compare``'s verdict line as ``A fail -> B pass``.
:func:`verdict_disagreement` decides the verdict again with the harness's own
:func:`harness.analysis.decide` (the rules are not repeated here) from the
summary's aggregate tables, the thresholds it records, and the run's health
as the verified records give it: the plan in ``run.json``, the usable lines of
``results.jsonl`` and the error samples of ``scores.jsonl``. A verdict that
does not follow is treated like a stale summary: compare rebuilds the report
from the results (or refuses, naming the command, where it cannot). The tables
themselves are first checked against the samples of ``scores.jsonl``
(:mod:`harness.runs.table_check`), and the verdict is decided on the samples':
on the headline rows when the samples carry a protocol's headline flags,
whatever the summary's ``protocol`` block says, and with a line for each
group reported apart that the samples are in, gating as their rows'
``apart_gates`` says (row format 3). Rows of format 2 predate that flag: their
verdict is accepted only when it follows whether or not those groups gate;
otherwise the message says the run predates the flag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.records import ResultsScan, RunManifest

__all__ = ["verdict_disagreement"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _apart_gating(scores: Sequence[Mapping[str, Any]]) -> tuple[list[str], tuple[bool, ...]] | str:
    """The groups reported apart that the samples are in (first seen first), and whether they gate the verdict.

    The second item is what the rows record, ``(True,)`` or ``(False,)``; ``(False, True)`` when the rows in those
    groups predate ``apart_gates`` (format 2: either may be so). A string: why the rows cannot say (one run has one
    protocol, so rows that disagree, or hold something else than true or false, were edited).
    """
    from harness.report import SCORES_ADDED_IN

    groups: dict[str, None] = {}
    recorded: dict[bool, int] = {}
    for number, row in enumerate(scores, start=1):
        apart = row.get("apart") or ()
        for group in apart:
            groups.setdefault(str(group), None)
        if not apart or row["schema_version"] < SCORES_ADDED_IN["apart_gates"]:
            continue
        gates = row.get("apart_gates")
        if not isinstance(gates, bool):
            return (f"scores.jsonl row {number} is in a group reported apart, but its apart_gates is {gates!r}, not "
                    "true or false: the file was edited, or written by another harness version")
        recorded.setdefault(gates, number)
    if len(recorded) > 1:
        return (f"scores.jsonl rows {recorded[True]} and {recorded[False]} disagree on apart_gates (true, false); a "
                "run has one protocol: the file was edited")
    return list(groups), tuple(recorded) or ((False, True) if groups else (False,))


def _statuses(decided: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    return decided["status"], {model: entry["status"] for model, entry in decided["per_model"].items()}


def verdict_disagreement(summary: Mapping[str, Any], manifest: RunManifest, scan: ResultsScan, foreign: Sequence[str],
                         scores: Sequence[Mapping[str, Any]]) -> str | None:
    """Why ``summary``'s verdict (the run's status and each model's) does not follow from its tables and the records.

    Args:
        summary: a ``summary.json`` checked for shape (a verdict object with a status, metric rows).
        manifest, scan, foreign: ``run.json``, the scan of ``results.jsonl``, and its records outside ``run.json``.
        scores: the rows of ``scores.jsonl`` (one per scored sample; excluded scenarios are not there).

    Returns:
        None when deciding again gives the same statuses; else the reason, naming both statuses.
    """
    from harness.analysis import RunHealth, VerdictConfig, decide
    from harness.report import SCORES_ADDED_IN, ReportInputs, planned_samples
    from harness.runs.table_check import recomputed_tables, scores_format_problem, table_disagreement

    verdict = _dict(summary.get("verdict"))
    try:
        config = VerdictConfig(**_dict(verdict.get("config")))
    except (TypeError, ValueError) as exc:
        return f"its verdict.config cannot be read ({str(exc).splitlines()[0]})"
    problem = scores_format_problem(scores)
    if problem is not None:
        return problem
    tables = recomputed_tables(scores, config)  # decided on the samples' tables, never on the file's
    problem = table_disagreement(summary, tables)
    if problem is not None:
        return problem
    inputs = ReportInputs(records=scan.records, planned=planned_samples(manifest),
                          present=len(scan.records) - len(foreign), run_status=manifest.status,
                          problems=list(scan.problems), torn_last_line=scan.torn_last_line)
    health = RunHealth(planned=inputs.planned, present=inputs.present, run_status=inputs.run_status,
                       why=tuple(inputs.why_short()), errors=sum(row.get("status") == "error" for row in scores),
                       samples=len(scores))
    # Whether a protocol decides on its headline is the samples' word (their headline flags, as the tables were
    # rebuilt), not the summary's: a `protocol` block deleted with the verdict would move the decision to `all`.
    protocol = any(row.get("headline") is not None for row in scores)
    headline = str(_dict(summary.get("protocol")).get("description") or "the suite's protocol") if protocol else None
    gating = _apart_gating(scores)
    if isinstance(gating, str):
        return gating
    groups, options = gating
    models = {str(row.get("model")) for row in scores}
    def decided_if(gates: bool) -> dict[str, Any]:
        return decide(tables, models, config, health=health, headline=headline, apart=[(g, gates) for g in groups])

    decided = decided_if(options[0])
    if len(options) > 1 and _statuses(decided) != _statuses(other := decided_if(options[-1])):
        return (f"scores.jsonl predates recording whether its groups reported apart ({', '.join(groups)}) gate the "
                f"verdict (row format 2; format {SCORES_ADDED_IN['apart_gates']} records apart_gates), and the "
                f"verdict depends on it: {other['status']!r} if they gate, {decided['status']!r} if not (written by "
                "an older report)")
    claimed = verdict.get("status")
    if decided["status"] != claimed:
        return (f"its verdict.status {claimed!r} does not follow from its metrics and the run's records, which "
                f"decide {decided['status']!r} (the file was edited, or decided by another harness version)")
    recorded = _dict(verdict.get("per_model"))
    for model, mine in sorted(decided["per_model"].items()):
        theirs = _dict(recorded.get(model)).get("status")
        if theirs != mine["status"]:
            return (f"its verdict.per_model[{model!r}].status {theirs!r} does not follow from its metrics and the "
                    f"run's records, which decide {mine['status']!r}")
    return None
