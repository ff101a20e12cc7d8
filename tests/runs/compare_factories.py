"""Run folders with reports, built from hand-made records, for the compare tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.records import MANIFEST_FILE
from harness.report import build_report
from harness.run.options import suite_hash
from harness.scenarios import Scenario, scenario_hash
from tests.score.scoring_factories import MODEL, make_record, make_scenario, tool_call, write_run

# run.json parameters as `recall-eval run` writes them with its defaults.
PARAMETERS = {"filters": [], "max_tool_rounds": 4, "temperature": 0.0, "timeout_s": 120.0, "retries": 4,
              "retry_delay_s": 1.0, "max_concurrency": 8, "workers": 1, "api_base": None, "cache": True,
              "cache_dir": "/tmp/cache", "judge_model": None}


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Rewrite a JSON file through ``change``, which edits the loaded data in place."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def synthetic_run(path: Path, *, ids: list[str] | None = None, recall_right: int = 9, history_right: int = 2,
                  model: str = MODEL, arms: tuple[str, ...] = ("history_only", "recall"), epochs: int = 1,
                  parameters: dict[str, Any] | None = None, status: str = "complete", latency: float = 1.0,
                  cost: float | None = 0.001, category: str = "project_fact",
                  scenario_change: Callable[[int, Scenario], Scenario] | None = None,
                  thresholds: Any = None) -> Path:
    """A run folder with its report: the first ``recall_right`` scenarios right in recall, ``history_right`` in
    history_only; each sample's latency is ``latency`` plus 10 ms per scenario, its cost ``cost`` (unknown: None).
    ``scenario_change(i, scenario)``: the i-th scenario as the suite holds it (e.g. another category, a protocol);
    ``thresholds``: the report's :class:`harness.analysis.VerdictConfig` (None: the defaults)."""
    scenarios = {sid: make_scenario(sid, category=category) for sid in ids or [f"fact-{i:02d}" for i in range(10)]}
    if scenario_change is not None:
        scenarios = {sid: scenario_change(i, sc) for i, (sid, sc) in enumerate(scenarios.items())}
    records = []
    for i, sc in enumerate(scenarios.values()):
        for arm in arms:
            right = i < (recall_right if arm == "recall" else history_right)
            answer = "Billing runs Postgres 15." if right else "I don't know."
            for epoch in range(epochs):
                records.append(make_record(sc, answer, arm=arm, model=model, epoch=epoch,
                                           latency=latency + i * 0.01, cost=cost,
                                           calls=[tool_call(["it-pg-version"])] if arm == "recall" else None))
    run_dir = with_suite(write_run(path, records, arms=arms, models=(model,)), scenarios)
    edit_json(run_dir / MANIFEST_FILE, lambda data: data.update(parameters={**PARAMETERS, **(parameters or {})},
                                                                status=status, epochs=epochs))
    build_report(run_dir, scenarios=scenarios, thresholds=thresholds)
    return run_dir


def with_suite(run_dir: Path, scenarios: dict[str, Any]) -> Path:
    """``run_dir``'s scenarios written as files beside it and named in its run.json (with their suite hash), so
    ``compare`` can score its transcripts again and rebuild its report, as for a run ``recall-eval run`` made."""
    suite = run_dir.with_name(run_dir.name + "-suite")
    suite.mkdir(parents=True, exist_ok=True)
    for sid, sc in scenarios.items():
        (suite / f"{sid}.yaml").write_text(json.dumps(sc.model_dump(mode="json", exclude_defaults=True)), encoding="utf-8")
    edit_json(run_dir / MANIFEST_FILE, lambda data: data.update(
        suite_hash=suite_hash({sid: scenario_hash(sc) for sid, sc in scenarios.items()}), scenario_paths=[str(suite)]))
    return run_dir




def _gating_protocol(gates: bool) -> Callable[[int, Scenario], Scenario]:
    """LoCoMo's protocol with ``apart_gates`` set: the last 10 of 40 scenarios adversarial abstention probes
    (reported apart), the rest answerable single-hop questions (the headline)."""
    from harness.importers.locomo import CATEGORY_TEXT, PROTOCOL

    def change(i: int, scenario: Scenario) -> Scenario:
        data = scenario.model_dump(mode="json", exclude_defaults=True)
        adversarial = i >= 30
        if adversarial:
            data["expect"] = {**data["expect"], "abstain": True, "must_contain_any": [], "relevant_items": []}
        return Scenario.model_validate({**data, "protocol": {**PROTOCOL, "apart_gates": gates},
                                        "categories": CATEGORY_TEXT,
                                        "category": "adversarial" if adversarial else "single_hop"})
    return change


def claims_reported_apart(path: Path, *, gates: bool) -> Path:
    """A run whose only failing line is a group reported apart: 40 scenarios, recall answering every one (a gain
    over the 30 headline questions, 10 up, and an invented answer to each of the 10 adversarial probes),
    history_only the first 20, unsupported claims tolerated up to 0.2 (so 30 scenarios bound the headline's rise).
    With ``gates`` the adversarial line fails the verdict; without, it is shown and the run passes."""
    from harness.analysis import VerdictConfig

    return synthetic_run(path, ids=[f"fact-{i:03d}" for i in range(40)], recall_right=40, history_right=20,
                         scenario_change=_gating_protocol(gates), thresholds=VerdictConfig(unsupported_tolerance=0.2))

def edit_scores(run_dir: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    """``change`` each row of ``scores.jsonl`` (a forgery: compare scores the transcripts again), then make
    ``summary.json`` agree with the rows: its aggregate tables
    recomputed from them and its digest of them updated (a report built from those scores, as compare checks it)."""
    import hashlib

    from harness.analysis import VerdictConfig
    from harness.runs.table_check import recomputed_tables

    path = run_dir / "scores.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        change(row)
    text = "".join(json.dumps(row) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")

    def agree(summary: dict[str, Any]) -> None:
        summary.update(recomputed_tables(rows, VerdictConfig(**summary["verdict"]["config"])))
        summary["run"]["scores_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()

    edit_json(run_dir / "summary.json", agree)


def comparable_pair(root: Path) -> tuple[Path, Path]:
    """Two identical, comparable runs under ``root`` (B a copy of A) for a test to damage or change."""
    a = synthetic_run(root / "a")
    b = root / "b"
    shutil.copytree(a, b)
    return a, b
