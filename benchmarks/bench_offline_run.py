"""Offline runs at small sizes: the recall arm's cost per sample, and ``run --filter`` of one probe of a LoCoMo-sized suite.

1. Recall arm, in this process: the starter suite's recall samples on
   ``offline/reference`` through :func:`harness.run.execute` (the run's own
   loop: store copy, Host, agent loop, model calls, token counting, records),
   one sample at a time, after a warm-up pass; CPU and wall ms per sample,
   with the model calls and tool calls per sample. ``--profile`` prints the
   top functions of one pass (cProfile, cumulative).
2. ``run --filter`` of one probe of the LoCoMo-shaped suite
   (``benchmarks/published_shapes.py``, 10 conversations, 5,882 turns) in the
   three arms, a whole process measured with ``wait4`` (target: under 4 s CPU),
   and whether it imported litellm (``-X importtime``).

On a machine shared with other jobs wall time measures the neighbours too:
CPU time is the figure to read.

Measured 2026-12-02 on 2 shared cores (load average 12-14): recall arm 4.24
ms CPU per sample (median of 5 passes, min 3.40; 2.52 model calls and 1.52
tool calls each; ~8 ms before, issue 26); ``run --filter`` of one LoCoMo probe
in three arms 1.6-2.0 s CPU, peak 107 MiB, litellm not imported (5.9 s before).

Usage::

    python benchmarks/bench_offline_run.py                 # both
    python benchmarks/bench_offline_run.py --only recall --passes 5 --profile
    python benchmarks/bench_offline_run.py --only filter --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SUITE = ROOT / "scenarios" / "starter"


def _recall_pass(specs: list, ctx, records: list) -> None:
    from harness.run import execute

    asyncio.run(execute(specs, ctx, records.append))


def recall_arm(passes: int, profile: bool) -> None:
    """CPU ms per recall sample of the starter suite, in-process, one sample at a time."""
    import argparse as _argparse

    from harness.cli import build_parser
    from harness.run import ctx_for, plan_samples, resolve_options

    with tempfile.TemporaryDirectory() as tmp:
        args = build_parser().parse_args(["run", "--scenarios", str(SUITE), "--arms", "recall", "--no-cache", "--no-progress",
                                          "--max-concurrency", "1", "--out", str(Path(tmp) / "run")])
        assert isinstance(args, _argparse.Namespace)
        options, scenarios, hashes, _ = resolve_options(args)
        specs = plan_samples(scenarios, options.arms, options.models, 1, options.seed)
        ctx = ctx_for(options, scenarios, hashes)
        records: list = []
        _recall_pass(specs, ctx, records)  # warm-up: imports, first store templates, tokenizer
        cpu, wall = [], []
        from harness.offline_model._terms import analyze_question
        from harness.run.model_client import _local_count

        for _ in range(passes):
            records.clear()
            analyze_question.cache_clear()  # each pass asks its questions and counts its tool results afresh,
            _local_count.cache_clear()  # as the first epoch of a run does
            c0, w0 = time.process_time(), time.perf_counter()
            _recall_pass(specs, ctx, records)
            cpu.append((time.process_time() - c0) / len(specs) * 1000)
            wall.append((time.perf_counter() - w0) / len(specs) * 1000)
        calls = sum(len(r.model_calls) for r in records) / len(records)
        tools = sum(len(r.tool_calls) for r in records) / len(records)
        errors = sum(r.error is not None for r in records)
        print(f"recall arm, {len(specs)} starter samples x {passes} passes (one at a time, warm): CPU {statistics.median(cpu):.2f} ms/sample "
              f"(min {min(cpu):.2f}), wall {statistics.median(wall):.2f} ms/sample; {calls:.2f} model calls and {tools:.2f} tool calls "
              f"per sample; {errors} errors; litellm imported: {'litellm' in sys.modules}  [target < 5 ms]", flush=True)
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            _recall_pass(specs, ctx, [])
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def run_filter(repeats: int, scale: float) -> None:
    """``run --filter`` of one probe of the LoCoMo-shaped suite in three arms, whole processes."""
    from benchmarks import published_shapes
    from benchmarks.bench_suite_scale import _command

    with tempfile.TemporaryDirectory(prefix="bench-offline-filter-") as tmp:
        work = Path(tmp)
        source, suite = work / "locomo10.json", work / "locomo-suite"
        made = published_shapes.locomo(source, scale)
        wall, cpu, rss, code, last = _command(["import", "locomo", str(source), str(suite)])
        if code != 0:
            raise SystemExit(f"import locomo failed: {last}")
        print(f"LoCoMo shape: {made['conversations']} conversations, {made['turns']:,} turns, {made['questions']:,} questions", flush=True)
        probe = _one_probe(suite)
        for round_ in range(repeats):
            args = ["run", "--scenarios", str(suite), "--filter", probe, "--arms", "history_only", "recall", "full_history",
                    "--no-cache", "--no-progress", "--out", str(work / f"one-{round_}")]
            wall, cpu, rss, code, last = _command(args)
            print(f"  run --filter {probe} (3 arms)  round {round_ + 1}: wall {wall:.2f} s  CPU {cpu:.2f} s  peak {rss:.0f} MiB  exit {code}  "
                  f"[{'ok' if cpu < 4 else 'OVER'} < 4 s CPU]", flush=True)
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT))
        found = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness.cli", *args[:-1], str(work / "one-imports")],
                               capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
        litellm = any(line.rstrip().endswith("| litellm") for line in found.stderr.splitlines())
        print(f"  litellm imported by run --filter: {litellm}", flush=True)


def _one_probe(suite: Path) -> str:
    """One probe's scenario id, the middle of the sorted suite."""
    from harness.scenarios import load_scenarios

    ids = sorted(s.id for s in load_scenarios([suite]))
    return ids[len(ids) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["recall", "filter"])
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the recall samples")
    parser.add_argument("--repeats", type=int, default=3, help="run --filter processes")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of LoCoMo's question count")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if args.only in (None, "recall"):
        recall_arm(args.passes, args.profile)
    if args.only in (None, "filter"):
        run_filter(args.repeats, args.scale)


if __name__ == "__main__":
    main()
