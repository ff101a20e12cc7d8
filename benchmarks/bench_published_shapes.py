"""Issue 22's "full size on one machine": LongMemEval S and LoCoMo, generated in their published shapes; each figure against its target.

Generates (``benchmarks/published_shapes.py``; never the real data) a
``longmemeval_s``-shaped file (500 questions x 47.7 sessions, ~115k tokens
each, ~255 MB, sessions shared between questions: see
``benchmarks/longmemeval_s_shape.py``) and a ``locomo10``-shaped one (10
conversations, 5,882 turns, 1,986 questions), imports each, and measures,
each command its own process (wall and CPU time, peak RSS from ``wait4``, as
``/usr/bin/time -v``):

- LongMemEval S: the file's shape figures (with
  ``RECALL_EVAL_LONGMEMEVAL_S=path`` set, the real file's beside them; the
  real file is never copied anywhere), import (< 60 s CPU, < 300 MB),
  ``validate`` (< 20 s CPU, < 1 GB), ``run --filter`` of one question in
  three arms (< 15 s), and with ``--whole-lme`` the whole offline run in
  three arms: time to its first sample record (< 60 s), CPU (< 300 s), peak
  (< 1.5 GB), ``histories.jsonl`` and ``index.html`` (< 20 MB); then issue
  42's figures in one block (import, validate, before the first sample and
  whole-run CPU, peak, suite and ``histories.jsonl`` sizes): run it again
  with ``--harness`` on another checkout for the other column;
- LoCoMo: the whole suite offline in three arms, report included (< 3 min,
  < 1 GB), and the size of its ``results.jsonl`` (< 60 MB) with
  ``histories.jsonl`` beside it.

``--scale 0.1`` shrinks the question counts for a quick check (targets are
for 1.0). On a machine shared with other jobs, wall time measures the
neighbours too: CPU time is printed beside it.

Usage:
    python benchmarks/bench_published_shapes.py [--scale 1.0] [--only lme|locomo] [--whole-lme] [--keep DIR] [--harness DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import longmemeval_s_shape, published_shapes  # noqa: E402
from benchmarks.bench_suite_scale import _command  # noqa: E402

ARMS = ["history_only", "recall", "full_history"]
RUN = ["--model", "offline/reference", "--arms", *ARMS, "--no-progress", "--no-cache"]


def _row(name: str, figures: tuple[float, float, float, int, str], wall_target: float | None, mb_target: float | None,
         cpu_target: float | None = None) -> None:
    wall, cpu, rss, code, last = figures
    checks = []
    if wall_target is not None:
        checks.append(f"wall {'ok' if wall < wall_target else 'OVER'} < {wall_target:g} s")
    if cpu_target is not None:
        checks.append(f"CPU {'ok' if cpu < cpu_target else 'OVER'} < {cpu_target:g} s")
    if mb_target is not None:
        checks.append(f"peak {'ok' if rss < mb_target else 'OVER'} < {mb_target:g} MB")
    tail = f"  ({last[:70]})" if code not in (0, 1) else ""
    print(f"  {name:34} wall {wall:7.1f} s  CPU {cpu:7.1f} s  peak {rss:6.0f} MB  exit {code}  [{'; '.join(checks)}]{tail}", flush=True)


def _size(name: str, path: Path, target_mb: float | None = None) -> None:
    mb = path.stat().st_size / 1e6 if path.is_file() else 0.0
    check = f"  [{'ok' if mb < target_mb else 'OVER'} < {target_mb:g} MB]" if target_mb is not None else ""
    print(f"  {name:34} {mb:7.1f} MB{check}", flush=True)


def _shape(source: Path) -> None:
    """The generated file's shape figures, and the real file's beside them when ``RECALL_EVAL_LONGMEMEVAL_S`` names it."""
    made = longmemeval_s_shape.measure(source)
    real_path = os.environ.get("RECALL_EVAL_LONGMEMEVAL_S")
    real = longmemeval_s_shape.measure(Path(real_path)) if real_path and Path(real_path).is_file() else None
    if real_path and real is None:
        print(f"  RECALL_EVAL_LONGMEMEVAL_S={real_path}: no such file; generated figures only", flush=True)
    print(f"  {'shape':40} {'generated':>12}" + (f" {'real file':>12}" if real else ""), flush=True)
    for key, value in made.items():
        print(f"  {key:40} {value:12,.1f}" + (f" {real[key]:12,.1f}" if real else ""), flush=True)


def _children_cpu() -> float:
    """CPU seconds (user + system) so far of this process's children, from /proc (0.0 where there is none)."""
    total, tick, me = 0.0, os.sysconf("SC_CLK_TCK"), os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _until_first_record(
    results: Path, args: list[str], harness: Path | None
) -> tuple[tuple[float, float, float, int, str], tuple[float, float] | None]:
    """:func:`_command`, and the wall and CPU seconds until ``results`` held its first sample record (None: never).

    CPU is the run process's own: on a machine shared with other jobs the wall time measures the neighbours too.
    """
    first: list[tuple[float, float]] = []
    done = threading.Event()
    start = time.perf_counter()

    def watch() -> None:
        while not done.wait(0.05):
            if results.is_file() and results.stat().st_size > 0:
                first.append((time.perf_counter() - start, _children_cpu()))
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    figures = _command(args, harness)
    done.set()
    watcher.join()
    return figures, (first[0] if first else None)


def _figures(figures: dict[str, str]) -> None:
    """Issue 42's before/after figures in one block (a Markdown table's column), to set beside another checkout's."""
    print("  issue 42's figures (this checkout):", flush=True)
    for name, value in figures.items():
        print(f"  | {name:34} | {value:>16} |", flush=True)


def longmemeval(work: Path, scale: float, whole: bool, harness: Path | None) -> None:
    source, suite = work / "longmemeval_s.json", work / "lme-suite"
    made = published_shapes.longmemeval_s(source, scale)
    print(f"LongMemEval S shape: {made['questions']} questions, {made['bytes'] / 1e6:.0f} MB of source", flush=True)
    _shape(source)
    figures: dict[str, str] = {}
    imported = _command(["import", "longmemeval", str(source), str(suite)], harness)
    _row("import longmemeval", imported, None, 300, 60)
    suite_mb = sum(p.stat().st_size for p in suite.glob('*.yaml')) / 1e6
    print(f"  suite: {suite_mb:.0f} MB of conversation files", flush=True)
    validated = _command(["validate", str(suite)], harness)
    _row("validate", validated, None, 1000, 20)
    figures.update({"import CPU": f"{imported[1]:.1f} s", "validate CPU": f"{validated[1]:.1f} s", "suite size": f"{suite_mb:.0f} MB"})
    questions = sorted(p.stem for p in suite.glob("*.yaml") if not p.name.startswith("_"))
    one = questions[len(questions) // 2]
    _row(
        f"run --filter {one}/q (3 arms)",
        _command(
            ["run", "--scenarios", str(suite), "--filter", f"{one}/*", "--out", str(work / "lme-one"), *RUN], harness
        ),
        15,
        None,
    )
    if whole:
        run = work / "lme-all"
        whole_run, first = _until_first_record(run / "results.jsonl", ["run", "--scenarios", str(suite), "--out", str(run), *RUN], harness)
        _row("run, whole suite (3 arms)", whole_run, None, 1500, 300)
        print(f"  {'before the first sample record':34} " + (f"wall {first[0]:7.1f} s  CPU {first[1]:7.1f} s  [CPU "
                                                             f"{'ok' if first[1] < 60 else 'OVER'} < 60 s]"
                                                              if first is not None else "none written"), flush=True)
        _size("results.jsonl", run / "results.jsonl")
        _size("histories.jsonl", run / "histories.jsonl")
        _size("index.html", run / "index.html", 20)
        histories = run / "histories.jsonl"
        figures.update({
            "before the first sample CPU": f"{first[1]:.1f} s" if first is not None else "none written",
            "whole run CPU (3 arms, report)": f"{whole_run[1]:.1f} s",
            "whole run peak RSS": f"{whole_run[2]:.0f} MB",
            "histories.jsonl": f"{histories.stat().st_size / 1e6:.1f} MB" if histories.is_file() else "none",
        })
    _figures(figures)


def locomo(work: Path, scale: float, harness: Path | None) -> None:
    source, suite, run = work / "locomo10.json", work / "locomo-suite", work / "locomo-all"
    made = published_shapes.locomo(source, scale)
    print(f"LoCoMo shape: {made['conversations']} conversations, {made['turns']:,} turns, {made['questions']:,} questions, "
          f"{made['bytes'] / 1e6:.1f} MB of source", flush=True)
    _row("import locomo", _command(["import", "locomo", str(source), str(suite)], harness), None, None)
    _row("run, whole suite (3 arms, report)", _command(["run", "--scenarios", str(suite), "--out", str(run), *RUN], harness), 180, 1000)
    _size("results.jsonl", run / "results.jsonl", 60)
    _size("histories.jsonl", run / "histories.jsonl")
    _row("report (again)", _command(["report", str(run)], harness), None, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the published question counts (targets are for 1.0)")
    parser.add_argument("--only", choices=["lme", "locomo"], help="one benchmark only")
    parser.add_argument("--whole-lme", action="store_true", help="also run the whole LongMemEval S suite in three arms (long)")
    parser.add_argument("--keep", type=Path, help="write here and keep it, instead of a temporary folder")
    parser.add_argument("--harness", type=Path, help="another checkout to measure instead (e.g. /work/main: the figures before)")
    args = parser.parse_args()
    work = (args.keep or Path(tempfile.mkdtemp(prefix="published-shapes-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.only in (None, "locomo"):
            locomo(work, args.scale, args.harness)
        if args.only in (None, "lme"):
            longmemeval(work, args.scale, args.whole_lme, args.harness)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
