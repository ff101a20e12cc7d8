"""``recall-eval import longmemeval`` and ``validate`` on a synthetic LongMemEval-shaped file; print CPU time and peak RSS.

Scales ``tests/fixtures/importers/longmemeval_mini.json`` up to ``--questions``
questions, each with a haystack of ``--sessions`` sessions (its own evidence
sessions plus filler sessions of ``--turns`` turns), imports it into a
temporary folder (JSON-syntax conversation files, one per question) and
validates the imported suite. Each command is its own process; CPU (user +
system) and peak RSS come from ``wait4``, the numbers ``/usr/bin/time -v``
prints. ``--harness DIR`` runs ``validate`` with another checkout too (e.g.
``/work/main``: the figures before the JSON fast path of issue 11).

Usage:
    python benchmarks/bench_import_validate.py [--questions 60] [--sessions 48] [--turns 12] [--harness /work/main]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_suite_scale import FILLER, PLACES, THINGS, VERBS, _command  # noqa: E402

MINI = ROOT / "tests" / "fixtures" / "importers" / "longmemeval_mini.json"


def _turn(rng: random.Random, role: str) -> dict[str, Any]:
    filler = " ".join(rng.sample(FILLER, rng.randint(20, 40)))
    return {"role": role, "content": f"I {rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)}, {filler}. " * 2}


def generate(path: Path, questions: int, sessions: int, turns: int, seed: int = 0) -> int:
    """Write the scaled file; returns its size in bytes."""
    rng = random.Random(seed)
    originals = [  # the fixture's well-formed questions (it also holds the data faults the importer repairs)
        q for q in json.loads(MINI.read_text(encoding="utf-8"))
        if q.get("haystack_sessions") and len(q.get("haystack_session_ids", ())) == len(q.get("haystack_dates", ())) == len(q["haystack_sessions"])
    ]
    out = []
    for n in range(questions):
        base = dict(originals[n % len(originals)])
        base["question_id"] = f"{base['question_id']}_{n}" + ("_abs" if base["question_id"].endswith("_abs") else "")
        own = len(base["haystack_sessions"])
        start = dt.datetime(2022, 1, 1, 9, 0) + dt.timedelta(days=n)
        extra = max(0, sessions - own)
        dates = [(start + dt.timedelta(days=3 * i)).strftime("%Y/%m/%d (%a) %H:%M") for i in range(extra)]
        base["haystack_session_ids"] = [f"filler_{n}_{i}" for i in range(extra)] + list(base["haystack_session_ids"])
        base["haystack_dates"] = dates + list(base["haystack_dates"])
        base["haystack_sessions"] = [
            [_turn(rng, "user" if t % 2 == 0 else "assistant") for t in range(turns)] for _ in range(extra)
        ] + list(base["haystack_sessions"])
        out.append(base)
    path.write_text(json.dumps(out), encoding="utf-8")
    return path.stat().st_size


def _row(name: str, wall: float, cpu: float, rss: float, code: int, last: str) -> None:
    print(f"{name:<38} {wall:7.1f} s wall {cpu:7.1f} s CPU {rss:7.0f} MB peak  exit {code}  {last[:70]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--sessions", type=int, default=48)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--harness", type=Path, help="another checkout to run validate with too (the figures before)")
    parser.add_argument("--keep", type=Path, help="write here and keep it, instead of a temporary folder")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-import-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        source, suite = work / "longmemeval_synthetic.json", work / "suite"
        shutil.rmtree(suite, ignore_errors=True)
        size = generate(source, args.questions, args.sessions, args.turns)
        print(f"{args.questions} questions x {args.sessions} sessions x {args.turns} turns: {size / 1e6:.1f} MB of source")
        _row("import longmemeval", *_command(["import", "longmemeval", str(source), str(suite)]))
        written = sum(p.stat().st_size for p in suite.rglob("*.yaml"))
        print(f"suite: {written / 1e6:.1f} MB of conversation files")
        _row("validate (this checkout)", *_command(["validate", str(suite)]))
        if args.harness is not None:
            _row(f"validate ({args.harness})", *_command(["validate", str(suite)], args.harness))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
