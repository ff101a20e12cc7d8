"""``recall-eval compare A B --json OUT``: the whole comparison as one JSON file, for scripts and CI.

The terminal shows what decides (the regressions, the paired table of
category ``all``); this file holds every row: each metric of every model
(or model pair), arm and category with both runs' values and intervals, and,
where the metric has a per-sample form, the paired change B - A with the
exact test's fields (as a ``paired`` row of ``summary.json`` holds them), its
status (``worse``, ``better``, ``undecided``, ``same``) and the rule's sentence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["COMPARE_JSON_SCHEMA_VERSION", "ComparisonFile", "comparison_file", "write_comparison_json"]

#: Version of the file's shape; bumped when a field changes meaning or goes.
COMPARE_JSON_SCHEMA_VERSION = 1


class ComparisonFile(BaseModel):
    """The comparison as written by ``--json``."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = COMPARE_JSON_SCHEMA_VERSION
    a: dict[str, Any]
    b: dict[str, Any]
    #: A's models paired with B's (``--pair``, or one model each), with how; None: models compared by name.
    pairing: dict[str, Any] | None
    comparable: bool
    problems: list[str]
    #: What makes the numbers mean different things (with a pairing: only what breaks it).
    differences: list[dict[str, Any]]
    #: With a pairing: what differs with the paired models (listed, not refused).
    noted: list[dict[str, Any]]
    verdict_regression: bool
    regressions: int
    metrics: list[dict[str, Any]]
    scenarios: list[dict[str, Any]]
    only_in: dict[str, list[list[str]]]


def _run(run: Any, verdict: str) -> dict[str, Any]:
    m = run.manifest
    return {"path": str(run.path), "run_id": m.run_id, "models": list(m.models), "arms": list(m.arms),
            "scenarios": len(m.scenario_ids), "epochs": m.epochs, "verdict": verdict, "warnings": run.warnings}


def _difference(d: Any) -> dict[str, Any]:
    return {"name": d.name, "a": d.a, "b": d.b, "details": list(d.details)}


def _side(row: Any) -> dict[str, Any]:
    return {key: row.get(key) for key in ("value", "ci_low", "ci_high", "n")}


def _metric(change: Any) -> dict[str, Any]:
    from harness.analysis import evidence_fields

    paired = change.paired
    return {"model_a": change.model, "model_b": change.model_b or change.model, "arm": change.arm,
            "category": change.category, "metric": change.metric, "a": _side(change.a), "b": _side(change.b),
            "diff": change.diff, "regression": change.regression, "worse": change.worse,
            "not_gated": change.not_gated,
            "paired": None if paired is None else {**evidence_fields(paired.evidence), "status": paired.status,
                                                   "reason": paired.reason}}


def comparison_file(cmp: Any) -> ComparisonFile:
    """The record of ``cmp`` (a :class:`harness.runs.compare.Comparison`)."""
    pairing = cmp.pairing
    return ComparisonFile(
        a=_run(cmp.a, cmp.verdict_a), b=_run(cmp.b, cmp.verdict_b),
        pairing=None if pairing is None else {"pairs": [list(p) for p in pairing.pairs], "how": pairing.how},
        comparable=cmp.comparable, problems=list(cmp.problems),
        differences=[_difference(d) for d in cmp.differences], noted=[_difference(d) for d in cmp.noted],
        verdict_regression=cmp.verdict_regression, regressions=len(cmp.regressions),
        metrics=[_metric(c) for c in cmp.metrics], scenarios=list(cmp.scenarios),
        only_in={kind: [list(a), list(b)] for kind, (a, b) in cmp.only_in.items()},
    )


def write_comparison_json(cmp: Any, out: Path) -> Path:
    """Write the record atomically; raises OSError when ``out`` cannot be written."""
    from harness.report import write_output

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_output(out, comparison_file(cmp).model_dump_json(indent=1) + "\n")
