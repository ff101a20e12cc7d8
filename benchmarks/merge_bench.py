"""Time ``recall-eval merge`` of 10 shards x 2,000 samples with realistic transcripts; print the figures.

Usage: python benchmarks/merge_bench.py [--shards 10] [--scenarios 100] [--epochs 67] [--keep DIR]
Target: merging (check the plan, read every shard leniently, write one record per sample and run.json) < 5 s.

The report of the merged run is timed separately (it is ``recall-eval report``'s cost,
measured by ``benchmarks/report_bench.py``). Wall and CPU time are both printed: on a shared
machine the wall time measures the neighbours too.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report_bench import ARMS, synthesize  # noqa: E402
from harness.records import RESULTS_FILE, ShardInfo, read_manifest, write_manifest  # noqa: E402
from harness.run.options import suite_hash  # noqa: E402
from harness.run.shards import Shard, shard_ids  # noqa: E402
from tests.score.scoring_factories import write_run  # noqa: E402


def write_shards(root: Path, shards: int, n_scenarios: int, epochs: int) -> tuple[list[Path], dict, int]:
    records, scenarios = synthesize(n_scenarios, epochs)
    weights = {sid: len(ARMS) * epochs for sid in scenarios}
    hashes = {sid: f"h{sid}" for sid in scenarios}
    folders = []
    for index in range(1, shards + 1):
        ids = shard_ids(weights, Shard(index, shards))
        folder = root / f"shard-{index}"
        write_run(folder, [r for r in records if r.scenario_id in set(ids)], arms=ARMS, scenario_ids=ids)
        info = ShardInfo(index=index, count=shards, suite_hash=suite_hash(hashes), scenario_count=len(scenarios),
                         sample_count=len(records))
        manifest = read_manifest(folder)
        write_manifest(folder, manifest.model_copy(update={"epochs": epochs, "shard": info, "suite_hash": f"{index}" * 64}))
        folders.append(folder)
    return folders, scenarios, len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--scenarios", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=67)
    parser.add_argument("--keep", metavar="DIR")
    args = parser.parse_args()
    from harness.report import build_report
    from harness.runs.merge import merge_runs

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp())
    t0 = time.perf_counter()
    folders, scenarios, total = write_shards(root, args.shards, args.scenarios, args.epochs)
    size = sum((f / RESULTS_FILE).stat().st_size for f in folders)
    t1, c1 = time.perf_counter(), time.process_time()
    outcome = merge_runs(root / "merged", folders)
    t2, c2 = time.perf_counter(), time.process_time()
    print(f"load average {os.getloadavg()[0]:.1f} (2 shared cores)")
    print(f"shards: {len(folders)} x ~{total // len(folders)} samples = {total} samples, {size / 1e6:.0f} MB of results "
          f"(synthesized in {t1 - t0:.1f} s)")
    print(f"merge (plan checks, scan every shard, write results.jsonl and run.json): wall {t2 - t1:.2f} s, "
          f"CPU {c2 - c1:.2f} s  [target < 5 s]; {outcome.samples} records written")
    t3, c3 = time.perf_counter(), time.process_time()
    build_report(outcome.run_dir, scenarios=scenarios)
    t4, c4 = time.perf_counter(), time.process_time()
    print(f"report of the merged run (as `recall-eval merge` then builds it): wall {t4 - t3:.2f} s, CPU {c4 - c3:.2f} s")


if __name__ == "__main__":
    main()
