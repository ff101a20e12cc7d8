"""Whether a ``summary.json``'s aggregate tables are the ones its ``scores.jsonl`` gives, aggregated again.

A verdict decided again from the summary's own tables (:mod:`harness.runs.verdict_check`) catches an edited
``verdict``, but not an edited table edited with it: raise continuity's paired difference and set the verdict
to ``pass``, and both agree. ``scores.jsonl`` (row format 2) holds each sample's whole
:class:`harness.score.SampleScores` and its place in the suite's protocol, so
:func:`recomputed_tables` runs the report's own :func:`harness.analysis.aggregate` on it, and
:func:`table_disagreement` names the first field of the summary that differs from what the samples give. A
summary whose tables disagree is treated like a stale one: ``compare`` rebuilds it (or refuses, naming the
command, when a judge scored it), and decides on the tables of the samples, never on the file's.

``scores.jsonl`` is only as trustworthy as its digest in the summary ties it to the report that wrote it; a
forger who rewrites the samples too is caught only by scoring ``results.jsonl`` again (``recall-eval report``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TABLES", "recomputed_tables", "scores_format_problem", "table_disagreement"]

#: The blocks of ``summary.json`` that :func:`harness.analysis.aggregate` writes, each compared whole.
TABLES = ("metrics", "paired", "mcnemar", "flips", "latency", "added_latency", "min_detectable_effect")
#: The fields naming a table row in a message (``model m / arm recall / category all / metric ...``).
_ROW_NAMES = ("model", "arm", "baseline", "treatment", "category", "metric")


def scores_format_problem(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Why ``scores.jsonl``'s rows cannot be aggregated again (an older report's format, a damaged row), or None."""
    from pydantic import ValidationError

    from harness.report import SCORES_READABLE_VERSIONS
    from harness.score import SampleScores

    for number, row in enumerate(rows, start=1):
        if row.get("schema_version") not in SCORES_READABLE_VERSIONS:
            return (f"scores.jsonl row {number} has schema_version {row.get('schema_version')!r}, not "
                    f"{' or '.join(map(str, SCORES_READABLE_VERSIONS))}: it holds no whole sample scores to check the "
                    "summary's tables against (written by an older report)")
        try:
            SampleScores.model_validate({k: row[k] for k in SampleScores.model_fields if k in row})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return f"scores.jsonl row {number}: {where}: {first['msg']}"
    return None


def recomputed_tables(rows: Sequence[Mapping[str, Any]], config: Any) -> dict[str, list[dict[str, Any]]]:
    """The aggregate tables of the samples ``rows`` hold, as the report computed them (``config``: its
    :class:`harness.analysis.VerdictConfig`, for the arms compared and alpha). Rows must have passed
    :func:`scores_format_problem`."""
    from harness.analysis import AggregateConfig, aggregate
    from harness.score import SampleScores

    scored = [SampleScores.model_validate({k: row[k] for k in SampleScores.model_fields if k in row}) for row in rows]
    titles = {str(row["scenario_id"]): str(row.get("title") or "") for row in rows}
    has_protocol = any(row.get("headline") is not None for row in rows)
    headline = {str(row["scenario_id"]) for row in rows if row.get("headline")} if has_protocol else None
    apart: dict[str, set[str]] = {}
    for row in rows:
        for group in row.get("apart") or ():
            apart.setdefault(str(group), set()).add(str(row["scenario_id"]))
    cfg = AggregateConfig(treatment_arm=config.treatment_arm, baseline_arm=config.baseline_arm, alpha=config.alpha)
    return aggregate(scored, titles=titles, config=cfg, headline=headline, apart=apart or None)


def _row_name(row: Any) -> str:
    if not isinstance(row, Mapping):
        return ""
    named = [f"{key} {row[key]}" for key in _ROW_NAMES if isinstance(row.get(key), str)]
    return f" ({', '.join(named)})" if named else ""


def _first_difference(path: str, theirs: Any, mine: Any, row: Any = None) -> tuple[str, Any, Any, Any] | None:
    """The path of the first value in ``theirs`` that is not ``mine`` (with both values and the row it is in)."""
    if isinstance(mine, Mapping) and isinstance(theirs, Mapping):
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            found = _first_difference(f"{path}.{key}", theirs.get(key, "(missing)"), mine.get(key, "(missing)"),
                                      mine if row is None else row)
            if found is not None:
                return found
        return None
    if isinstance(mine, list) and isinstance(theirs, list):
        for index in range(max(len(mine), len(theirs))):
            if index >= len(mine) or index >= len(theirs):
                return (f"{path}[{index}]", theirs[index] if index < len(theirs) else "(missing)",
                        mine[index] if index < len(mine) else "(missing)", row)
            found = _first_difference(f"{path}[{index}]", theirs[index], mine[index], row)
            if found is not None:
                return found
        return None
    same = theirs == mine and type(theirs) is type(mine) or (
        isinstance(theirs, int | float) and isinstance(mine, int | float) and not isinstance(theirs, bool)
        and not isinstance(mine, bool) and theirs == mine)
    return None if same else (path, theirs, mine, row)


def table_disagreement(summary: Mapping[str, Any], tables: Mapping[str, Any]) -> str | None:
    """The first field of ``summary``'s aggregate tables that is not what ``tables`` (the samples') hold, or None."""
    for name in TABLES:
        found = _first_difference(name, summary.get(name, "(missing)"), tables.get(name, []))
        if found is not None:
            path, theirs, mine, row = found
            if isinstance(theirs, list | dict):
                theirs = "a table"
            return (f"its {path}{_row_name(row)} is {theirs!r}, but the samples of scores.jsonl give {mine!r} (the "
                    "file was edited, or built by another harness version)")
    return None
