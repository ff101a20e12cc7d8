"""Comparing two run folders that should hold the same answers (a merge of shards and an unsharded run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.records import RESULTS_FILE


def without_clock(run_dir: Path, *, attempts: bool = False) -> None:
    """Zero the wall-clock fields no two runs share (latency, tool time, ingest time, start times), and with ``attempts`` the
    tries each call took (a rate-limiting proxy turns some away); nothing else is touched."""
    path = run_dir / RESULTS_FILE
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["wall_time_s"], record["started_at"] = 0.0, "2026-01-01T00:00:00Z"
        for call in record["model_calls"]:
            call["latency_s"] = 0.0
            if attempts:
                call["attempts"] = 1
        for call in record["tool_calls"]:
            call["elapsed_s"] = 0.0
        if record.get("ingest"):  # seconds spent building the system's memory
            record["ingest"].update(open_s=0.0, write_s=0.0, embedding_s=0.0)
        out.append(json.dumps(record))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def comparable_summary(run_dir: Path) -> dict[str, Any]:
    """``summary.json`` without what differs by run: its id, times, and the digests of its files' bytes."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    summary.pop("generated_at")
    # the digests: a merge writes the shards' records (and so their scores) in another order: the same rows, other bytes
    for key in ("run_id", "started_at", "finished_at", "results_sha256", "scores_sha256"):
        summary["run"].pop(key)
    return summary


def scores_by_id(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``scores.jsonl`` rows by sample id (each id once)."""
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {row["sample_id"]: row for row in rows}
    assert len(by_id) == len(rows)
    return by_id
