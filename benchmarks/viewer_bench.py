"""Time ``recall-eval view`` over 2,000 small run folders: start, then ``/_runs.json`` cold, warm and after one change.

Usage: python benchmarks/viewer_bench.py [--runs 2000] [--polls 3] [--repo CHECKOUT] [--keep DIR]
Target: an open tab costs nothing when nothing changed: a warm ``/_runs.json`` well under a second at 2,000 runs.

Each run folder is a real finished run's ``run.json`` and ``summary.json`` (46 kB), its first two records,
``scores.jsonl`` and a small ``index.html`` (about 70 kB a folder). The viewer is a real process
(``python -m harness.cli view DIR --port 0``) of ``--repo`` (default: this checkout; pass another
checkout, e.g. ``git worktree add /tmp/before main``, for the figures before a change), asked over HTTP.
Printed: seconds from the process's start to its serving line, then per ``/_runs.json`` the wall time and the
viewer's CPU time (on a shared machine the wall time measures the neighbours too).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.runs.compare_factories import synthetic_run  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]


def make_runs(root: Path, count: int) -> None:
    """``count`` run folders below ``root/nightly``, each a copy of one real run with its own id and start time."""
    model = synthetic_run(root / "_model")
    manifest = json.loads((model / "run.json").read_text(encoding="utf-8"))
    summary = (model / "summary.json").read_text(encoding="utf-8")
    records = "".join((model / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:2])
    scores = (model / "scores.jsonl").read_text(encoding="utf-8")
    for i in range(count):
        run = root / "nightly" / f"run-{i:05d}"
        run.mkdir(parents=True)
        manifest.update(run_id=f"run-{i:05d}", started_at=f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z")
        (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
        (run / "summary.json").write_text(summary, encoding="utf-8")
        (run / "results.jsonl").write_text(records, encoding="utf-8")
        (run / "scores.jsonl").write_text(scores, encoding="utf-8")
        (run / "index.html").write_text("<!doctype html><title>report</title>", encoding="utf-8")
    shutil.rmtree(root / "_model")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``): the viewer's own work, not its neighbours'."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_get(url: str, pid: int) -> str:
    """``/_runs.json`` once: its wall time and the viewer's CPU time for it, printed."""
    start, cpu = time.perf_counter(), cpu_seconds(pid)
    with urllib.request.urlopen(url, timeout=600) as response:  # noqa: S310 - the local viewer
        rows = len(json.loads(response.read())["runs"])
    return f"{time.perf_counter() - start:.3f} s wall, {cpu_seconds(pid) - cpu:.2f} s CPU ({rows} rows)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--polls", type=int, default=3, help="warm /_runs.json requests after the first")
    parser.add_argument("--repo", type=Path, default=CHECKOUT, help="the checkout whose viewer is timed")
    parser.add_argument("--keep", type=Path, help="build the run folders here (reused when present) and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="viewer-bench-"))
    try:
        if not (root / "nightly").is_dir():
            start = time.perf_counter()
            make_runs(root, args.runs)
            print(f"made {args.runs} run folders in {time.perf_counter() - start:.1f} s: {root}")
        env = {**os.environ, "PYTHONPATH": str(args.repo.resolve())}
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "view", str(root), "--port", "0"],
                                cwd=args.repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            select.select([proc.stdout], [], [], 600)
            line = proc.stdout.readline()
            print(f"start (process to serving line): {time.perf_counter() - start:.2f} s wall, "
                  f"{cpu_seconds(proc.pid):.2f} s CPU  [{line.strip()}]")
            url = line.split(" at ")[1].split()[0] + "_runs.json"
            print(f"/_runs.json first: {timed_get(url, proc.pid)}")
            for poll in range(args.polls):
                print(f"/_runs.json warm #{poll + 1}: {timed_get(url, proc.pid)}")
            changed = root / "nightly" / "run-00000" / "summary.json"
            changed.write_text(changed.read_text(encoding="utf-8").replace('"pass"', '"fail"', 1), encoding="utf-8")
            print(f"/_runs.json after one summary changed: {timed_get(url, proc.pid)}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
