"""Judge sensitivity: every judge that graded a run, its per-arm accuracy, and how far the judges disagree.

Each ``report --judge-model M`` (with the strict prompt, a ``--judge-preset``
or a ``--judge-prompt FILE``) records what it decided in the run folder, as
``judges/<id>.json`` (``id``: SHA-256 of the model and the prompt's hash, 16
hex digits): the model, the prompt (name, version, SHA-256, file), the
scenarios left out, every sample's outcome and each model x arm's continuity
accuracy. Re-grading never calls the agent: the report reads the records,
and the judge's verdicts are cached per model, prompt version and messages
(:mod:`harness.score.judge`), so grading again with a prompt already used
costs no call.

:func:`sensitivity` reads every judge file of the folder (the one just
written included) and gives ``summary.json``'s ``judge_sensitivity``: the
judges, each with its accuracy per model x arm, and per model x arm the
lowest, the highest and the spread (max - min) over the judges. Only judges
recorded over the same samples (same scenarios left out and same sample ids)
as this report are compared; the others are counted in ``not_comparable``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.report.outputs import write_output

JUDGES_FOLDER = "judges"
JUDGE_FILE_SCHEMA_VERSION = 1


def judge_id(model: str, prompt_sha256: str) -> str:
    """The file name stem of one judge: the same model and prompt always land in the same file."""
    return hashlib.sha256(f"{model}\n{prompt_sha256}".encode()).hexdigest()[:16]


def _accuracy(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"model": r["model"], "arm": r["arm"], "value": r["value"], "n": r["n"]}
            for r in summary.get("metrics") or []
            if r.get("metric") == "continuity_accuracy" and r.get("category") == "all"]


def record_judge(run_dir: Path, summary: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> Path | None:
    """Write this report's judge file (None when no judge graded it); the grades are the samples' outcomes."""
    judge = summary.get("judge") or {}
    prompt = judge.get("prompt") if isinstance(judge, Mapping) else None
    if not judge or not prompt:
        return None
    data = {
        "schema_version": JUDGE_FILE_SCHEMA_VERSION,
        "model": judge["model"],
        "prompt": prompt,
        "excluded_scenarios": list((summary.get("run") or {}).get("excluded_scenarios") or []),
        "accuracy": _accuracy(summary),
        "outcomes": {str(s["sample_id"]): s.get("outcome") for s in samples},
    }
    folder = Path(run_dir) / JUDGES_FOLDER
    folder.mkdir(exist_ok=True)
    path = folder / f"{judge_id(str(judge['model']), str(prompt.get('sha256')))}.json"
    return write_output(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != JUDGE_FILE_SCHEMA_VERSION:
        return None
    return data


def sensitivity(run_dir: Path, summary: Mapping[str, Any],
                samples: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``summary.json``'s ``judge_sensitivity`` from the run folder's judge files; None when there are none."""
    folder = Path(run_dir) / JUDGES_FOLDER
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return None
    excluded = sorted((summary.get("run") or {}).get("excluded_scenarios") or [])
    ids = {str(s["sample_id"]) for s in samples}
    judges: list[dict[str, Any]] = []
    unusable = 0
    for path in paths:
        data = _read(path)
        if data is None or sorted(data.get("excluded_scenarios") or []) != excluded or set(data.get("outcomes") or {}) != ids:
            unusable += 1
            continue
        judges.append({"id": path.stem, "model": data.get("model"), "prompt": data.get("prompt"),
                       "accuracy": data.get("accuracy") or []})
    judges.sort(key=lambda j: (str(j["model"]), str((j["prompt"] or {}).get("name")), j["id"]))
    values: dict[tuple[str, str], list[float]] = {}
    for judge in judges:
        for row in judge["accuracy"]:
            if row.get("value") is not None:
                values.setdefault((str(row["model"]), str(row["arm"])), []).append(float(row["value"]))
    spread = [{"model": model, "arm": arm, "judges": len(found), "min": min(found), "max": max(found),
               "spread": round(max(found) - min(found), 6)}
              for (model, arm), found in sorted(values.items())]
    return {"judges": judges, "spread": spread, "not_comparable": unusable}
