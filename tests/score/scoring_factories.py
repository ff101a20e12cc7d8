"""Hand-built scenarios, sample records and run folders for the scoring/report tests and benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.records import (
    MANIFEST_FILE,
    RESULTS_FILE,
    ModelCallLog,
    RunManifest,
    SampleError,
    SampleRecord,
    ToolCallLog,
    sample_id,
)
from harness.scenarios import scenario_hash
from harness.scenarios.models import Scenario

MODEL = "offline/reference"


def make_scenario(sid: str = "fact-01", *, abstain: bool = False, category: str = "project_fact",
                  expect: dict[str, Any] | None = None, policy: dict[str, Any] | None = None,
                  workspace: str | None = "ws-a") -> Scenario:
    """A small scenario: an answer item, a stale item, another workspace's canary, an archived item."""
    base_expect: dict[str, Any] = {
        "must_contain_any": [] if abstain else ["Postgres 15"],
        "abstain": abstain,
        "relevant_items": [] if abstain else ["it-pg-version"],
        "canaries": [{"text": "Postgres 13", "kind": "stale"}, {"text": "Falcon-7 launch code", "kind": "leakage"},
                     {"text": "Postgres 16", "kind": "invented"}],
    }
    base_expect.update(expect or {})
    return Scenario.model_validate({
        "id": sid, "title": f"Title of {sid}", "category": category, "description": "test scenario",
        "sessions": [{"id": "s1", "workspace": "ws-a", "started_at": 1000,
                      "turns": [{"role": "user", "content": "we moved billing to Postgres 15"}]}],
        "items": [
            {"id": "it-pg-version", "content": "Billing runs Postgres 15", "kind": "knowledge", "workspace": "ws-a",
             "keys": ["postgres"], "sources": [{"session": "s1", "turn": "t1"}], "role": "answer"},
            {"id": "it-pg-old", "content": "Billing runs Postgres 13", "kind": "knowledge", "workspace": "ws-a",
             "state": "archived", "keys": ["postgres"], "sources": [{"session": "s1", "turn": "t1"}],
             "role": "stale"},
            {"id": "it-other-ws", "content": "Falcon-7 launch code", "kind": "note", "workspace": "ws-b",
             "keys": ["postgres"], "sources": [{"session": "s1", "turn": "t1"}], "role": "canary"},
            {"id": "it-global", "content": "User likes short answers", "kind": "preference",
             "keys": ["style"], "sources": [{"session": "s1", "turn": "t1"}], "role": "distractor"},
        ],
        "probe": {"workspace": workspace, "started_at": 5000, "message": "Which Postgres does billing run?",
                  "policy": policy or {}},
        "expect": base_expect,
    })


def tool_call(disclosed: list[str], text: str = "", *, call_id: str = "c1", name: str = "memory_search",
              storage_read: bool = True) -> ToolCallLog:
    result = text or json.dumps({"results": [{"itemId": i} for i in disclosed]})
    return ToolCallLog(round=0, call_id=call_id, name=name, arguments='{"query": "postgres"}', status="ok",
                       result_text=result, result_chars=len(result), result_tokens=len(result) // 4,
                       disclosed_item_ids=disclosed, storage_read=storage_read, elapsed_s=0.001)


def make_record(scenario: Scenario | str = "fact-01", answer: str | None = "Billing runs Postgres 15.", *,
                arm: str = "recall", epoch: int = 0, model: str = MODEL, calls: list[ToolCallLog] | None = None,
                error: bool = False, latency: float = 1.0, tokens: tuple[int, int] = (100, 20),
                category: str = "project_fact", cost: float | None = 0.001) -> SampleRecord:
    sid = scenario.id if isinstance(scenario, Scenario) else scenario
    calls = calls or []
    digest = scenario_hash(scenario) if isinstance(scenario, Scenario) else "0" * 64
    return SampleRecord(
        sample_id=sample_id(sid, arm, model, epoch), scenario_id=sid, scenario_hash=digest,
        category=scenario.category if isinstance(scenario, Scenario) else category, arm=arm, model=model,
        epoch=epoch, seed=epoch, status="error" if error else "ok",
        error=SampleError(type="Timeout", message="provider timed out") if error else None,
        final_answer=None if error else answer, stop_reason="error" if error else "final_answer",
        tools_offered=["memory_search", "memory_get"] if arm == "recall" else [],
        messages=[{"role": "user", "content": "Which Postgres does billing run?"},
                  {"role": "assistant", "content": answer or ""}],
        model_calls=[ModelCallLog(round=0, latency_s=latency, prompt_tokens=tokens[0], completion_tokens=tokens[1],
                                  usage_source="response", cost_usd=cost)],
        tool_calls=calls, started_at="2026-03-01T00:00:00Z", wall_time_s=latency,
    )


def write_run(run_dir: Path, records: list[SampleRecord], *, arms: tuple[str, ...] = ("history_only", "recall"),
              scenario_ids: list[str] | None = None, models: tuple[str, ...] = (MODEL,)) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = RunManifest(run_id=run_dir.name, harness_version="0.1.0", status="complete",
                           started_at="2026-03-01T00:00:00Z", finished_at="2026-03-01T00:10:00Z",
                           models=list(models), arms=list(arms), epochs=max((r.epoch for r in records), default=0) + 1,
                           seed=0, scenario_paths=["unused"],
                           scenario_ids=scenario_ids or sorted({r.scenario_id for r in records}), suite_hash="x" * 64,
                           sample_count=len(records))
    (run_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    with (run_dir / RESULTS_FILE).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
    return run_dir


def paired_run(n: int = 10, *, recall_right: int = 10, history_right: int = 2, epochs: int = 1,
               unsupported_in_recall: int = 0) -> tuple[list[SampleRecord], dict[str, Scenario]]:
    """n scenarios x 2 arms x epochs: recall right on the first ``recall_right``, history on the first ``history_right``."""
    scenarios = {f"fact-{i:02d}": make_scenario(f"fact-{i:02d}") for i in range(n)}
    records = []
    for i, sc in enumerate(scenarios.values()):
        for epoch in range(epochs):
            rec_answer = "Billing runs Postgres 15." if i < recall_right else "Billing runs MySQL."
            if i < unsupported_in_recall:
                rec_answer = "Billing runs Postgres 15; the replica runs Postgres 13."  # stale asserted
            hist_answer = "Billing runs Postgres 15." if i < history_right else "I don't know."
            records.append(make_record(sc, rec_answer, arm="recall", epoch=epoch, latency=2.0 + i * 0.01,
                                       calls=[tool_call(["it-pg-version"])]))
            records.append(make_record(sc, hist_answer, arm="history_only", epoch=epoch, latency=1.0))
    return records, scenarios
