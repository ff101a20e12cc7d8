"""Time build_report on 10,000 synthetic samples with realistic transcripts; print the figures.

Usage: python benchmarks/report_bench.py [--scenarios 50] [--epochs 67] [--keep DIR]
Targets: build_report < 5 s, index.html < 15 MB.

Wall time and CPU time (``time.process_time``) are both printed: on a machine
shared with other jobs the wall time measures the neighbours as much as the
report, while the CPU time is what the report itself costs.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # as `recall-eval` sets them (harness.cli.single_threaded_blas)
    os.environ.setdefault(_name, "1")

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.records import ToolCallLog, read_manifest, write_manifest  # noqa: E402
from tests.score.scoring_factories import make_record, make_scenario, write_run  # noqa: E402

ARMS = ("history_only", "recall", "full_history")
CATEGORIES = ("project_fact", "preference", "decision", "knowledge_update", "abstention", "leakage", "temporal")


def _transcript(rng: random.Random, question: str, answer: str, calls: list[ToolCallLog]) -> list[dict]:
    history = [{"role": "system", "content": "You are a coding assistant. " * 40}]
    for turn in range(4):
        history.append({"role": "user" if turn % 2 == 0 else "assistant",
                        "content": " ".join(rng.choice(("deploy", "config", "port", "review", "schema", "merge"))
                                            for _ in range(60))})
    history.append({"role": "user", "content": question})
    for call in calls:
        history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]})
        history.append({"role": "tool", "tool_call_id": call.call_id, "content": call.result_text})
    history.append({"role": "assistant", "content": answer})
    return history


def synthesize(n_scenarios: int, epochs: int, seed: int = 0):
    rng = random.Random(seed)
    scenarios = {}
    for i in range(n_scenarios):
        category = CATEGORIES[i % len(CATEGORIES)]
        scenarios[f"sc-{i:03d}"] = make_scenario(f"sc-{i:03d}", abstain=category == "abstention", category=category)
    records = []
    for sc in scenarios.values():
        skill = rng.random()
        for arm in ARMS:
            for epoch in range(epochs):
                p = {"history_only": 0.3, "recall": 0.75, "full_history": 0.85}[arm] * (0.5 + skill)
                if sc.expect.abstain:
                    answer = "I don't have any record of that." if rng.random() < p else "Probably Postgres 16."
                else:
                    answer = "Billing runs Postgres 15." if rng.random() < p else "I'm not sure, maybe MySQL."
                calls = []
                if arm == "recall":
                    for k in range(rng.randint(1, 2)):
                        payload = json.dumps({"results": [{"itemId": "it-pg-version", "content": "Billing runs Postgres 15 " * 8,
                                                           "kind": "knowledge", "matchedKeys": ["postgres"]}] * 3})
                        calls.append(ToolCallLog(round=k, call_id=f"c{k}", name="memory_search",
                                                 arguments='{"query":"postgres version"}', status="ok",
                                                 result_text=payload, result_chars=len(payload),
                                                 result_tokens=len(payload) // 4, disclosed_item_ids=["it-pg-version"],
                                                 storage_read=True, elapsed_s=0.002))
                rec = make_record(sc, answer, arm=arm, epoch=epoch, calls=calls, error=rng.random() < 0.01,
                                  latency=rng.lognormvariate(0.3 if arm == "recall" else 0.0, 0.4),
                                  tokens=(rng.randint(800, 3000), rng.randint(20, 200)))
                if rec.status == "ok":
                    rec = rec.model_copy(update={"messages": _transcript(rng, sc.probe.message, answer, calls)})
                records.append(rec)
    return records, scenarios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=67)
    parser.add_argument("--keep", metavar="DIR")
    args = parser.parse_args()
    from harness.report import build_report

    t0 = time.perf_counter()
    records, scenarios = synthesize(args.scenarios, args.epochs)
    run_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp()) / "bench-run"
    write_run(run_dir, records, arms=ARMS)
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"epochs": args.epochs}))
    t1 = time.perf_counter()
    c1 = time.process_time()
    outcome = build_report(run_dir, scenarios=scenarios)
    t2, c2 = time.perf_counter(), time.process_time()
    sizes = {name: path.stat().st_size for name, path in outcome.paths.items()}
    print(f"samples: {len(records)} ({args.scenarios} scenarios x {len(ARMS)} arms x {args.epochs} epochs)")
    print(f"results.jsonl: {(run_dir / 'results.jsonl').stat().st_size / 1e6:.1f} MB (synthesized in {t1 - t0:.1f} s)")
    print(f"build_report (read, score, aggregate, verdict, all outputs; first call, lazy imports included): "
          f"wall {t2 - t1:.2f} s, CPU {c2 - c1:.2f} s  [target < 5 s]")
    for name, size in sizes.items():
        print(f"  {name:13} {size / 1e6:8.2f} MB")
    print(f"index.html: {sizes['index.html'] / 1e6:.2f} MB  [target < 15 MB]")
    print(f"verdict: {outcome.verdict}: {outcome.reasons[0]}")
    _phases(run_dir, scenarios)


def _phases(run_dir: Path, scenarios: dict) -> None:
    """Where the time goes (second pass: imports already paid; the GC paused as build_report does)."""
    from harness.analysis import VerdictConfig
    from harness.analysis.aggregate import AggregateConfig, aggregate
    from harness.records import iter_records
    from harness.report import build_summary, outputs
    from harness.report.build import _gc_paused
    from harness.report.html import render_html
    from harness.score.scoring import score_sample

    marks = [("start", time.perf_counter(), time.process_time())]

    def mark(name: str) -> None:
        marks.append((name, time.perf_counter(), time.process_time()))

    with _gc_paused():
        records = list(iter_records(run_dir / "results.jsonl"))
        mark("read+validate")
        scored = [score_sample(r, scenarios[r.scenario_id]) for r in records]
        mark("  of which scoring alone")
        aggregate(scored, config=AggregateConfig())
        mark("  of which aggregate alone")
        summary, samples = build_summary(read_manifest(run_dir), records, scenarios, config=VerdictConfig())
        mark("score+aggregate+verdict")
        outputs.write_summary_json(run_dir, summary)
        outputs.write_metrics_csv(run_dir, summary["metrics"])
        outputs.write_scores_jsonl(run_dir, samples)
        outputs.write_junit_xml(run_dir, summary["verdict"], samples)
        mark("json/csv/jsonl/xml")
        render_html(summary, samples)
        mark("render_html")
    print("phases (second pass), wall / CPU:")
    for (_, w0, c0), (name, w1, c1) in zip(marks, marks[1:]):
        print(f"  {name:26} {w1 - w0:5.2f} s / {c1 - c0:5.2f} s")


if __name__ == "__main__":
    main()
