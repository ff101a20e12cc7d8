"""Small hand-made ``summary.json`` and ``run.json`` contents for the history tests: no run is built or scored.

A history point reads only a run's summary and manifest, so these make exactly the rows the page reads (the
overall paired continuity and unsupported-claim differences, continuity per arm) in milliseconds, where a scored
run folder (``tests.runs.compare_factories.synthetic_run``) takes most of a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.runs.history import RunPoint

MODEL = "offline/reference"
Triple = tuple[float | None, float | None, float | None]


def _paired(model: str, metric: str, triple: Triple, **extra: Any) -> dict[str, Any]:
    diff, low, high = triple
    return {"model": model, "arm_a": "history_only", "arm_b": "recall", "category": "all", "metric": metric,
            "diff": diff, "ci_low": low, "ci_high": high, **extra}


def summary(run_id: str = "run-1", started_at: str = "2026-03-01T02:00:00Z", *, model: str = MODEL,
            continuity: Triple = (0.25, 0.05, 0.45), unsupported: Triple = (0.0, -0.1, 0.1),
            arms: dict[str, Triple] | None = None, status: str = "pass", tolerance: float | None = 0.02,
            **run: Any) -> dict[str, Any]:
    """A summary of one model's run with its overall rows: ``continuity`` and ``unsupported`` as
    ``(diff, ci_low, ci_high)`` of recall - history_only, ``arms`` as ``{arm: (value, ci_low, ci_high)}``."""
    arms = arms if arms is not None else {"history_only": (0.2, 0.0, 0.5), "recall": (0.45, 0.2, 0.7)}
    config: dict[str, Any] = {"treatment_arm": "recall", "baseline_arm": "history_only"}
    if tolerance is not None:
        config["unsupported_tolerance"] = tolerance
    return {
        "generated_at": "2026-12-05T00:00:00Z",
        "verdict": {"status": status, "config": config},
        "run": {"run_id": run_id, "started_at": started_at, "models": [model], "arms": sorted(arms), "epochs": 1,
                "seed": 0, "suite_hash": "a" * 64, "samples": 20, "errors": 0, "status": "complete",
                "excluded_scenarios": [], "parameters": {"max_tool_rounds": 4, "temperature": 0.0}, **run},
        "paired": [_paired(model, "continuity_accuracy", continuity),
                   _paired(model, "unsupported_claim_rate", unsupported)],
        "metrics": [{"model": model, "arm": arm, "category": "all", "metric": "continuity_accuracy", "value": v,
                     "ci_low": lo, "ci_high": hi} for arm, (v, lo, hi) in arms.items()],
    }


def point(data: dict[str, Any], path: Path = Path("/r/run"), manifest: dict[str, Any] | None = None) -> RunPoint:
    """The point :func:`harness.runs.history.read_points` makes of a run with summary ``data`` (in memory)."""
    info, verdict = data.get("run") or {}, data.get("verdict") or {}
    config = verdict.get("config") or {}
    return RunPoint(path=path, run_id=str(info.get("run_id") or path.name), started_at=str(info.get("started_at")),
                    verdict=str(verdict.get("status") or "none"), treatment=str(config.get("treatment_arm")),
                    baseline=str(config.get("baseline_arm")), summary=data, manifest=manifest or {})


def run_folder(root: Path, name: str, data: dict[str, Any] | None = None, **manifest: Any) -> Path:
    """``root/name`` holding ``run.json`` (``manifest``) and, unless ``data`` is None, ``summary.json``."""
    run = root / name
    run.mkdir(parents=True, exist_ok=True)
    (run / "run.json").write_text(json.dumps({"run_id": name, **manifest}), encoding="utf-8")
    if data is not None:
        (run / "summary.json").write_text(json.dumps(data), encoding="utf-8")
    return run
