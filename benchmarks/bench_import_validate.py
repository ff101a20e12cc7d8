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

from benchmarks.bench_suite_scale import FILLER, NAMES, PLACES, THINGS, VERBS, _command  # noqa: E402

MINI = ROOT / "tests" / "fixtures" / "importers" / "longmemeval_mini.json"


def _vocabulary(size: int = 4000, seed: int = 7) -> list[str]:
    """Pseudo-words of 2-4 syllables: a chat's spread of content words (the keys an extractor finds), never a 256-character run."""
    rng = random.Random(seed)
    onsets, vowels = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "br", "st", "tr", "pl"], ["a", "e", "i", "o", "u", "ai"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCABULARY = _vocabulary()


def _turn(rng: random.Random, role: str, chars: int = 0) -> dict[str, Any]:
    """One chat turn; ``chars`` > 0 makes it about that long, in sentences of names, places and varied content words."""
    if not chars:
        filler = " ".join(rng.sample(FILLER, rng.randint(20, 40)))
        return {"role": role, "content": f"I {rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)}, {filler}. " * 2}
    sentences: list[str] = []
    size = 0
    while size < chars:
        words = " ".join(rng.choice(VOCABULARY) if rng.random() < 0.6 else rng.choice(FILLER) for _ in range(rng.randint(8, 18)))
        sentence = f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)}, {words}."
        sentences.append(sentence)
        size += len(sentence) + 1
    return {"role": role, "content": " ".join(sentences)}


def generate(path: Path, questions: int, sessions: int, turns: int, seed: int = 0, turn_chars: int = 0) -> int:
    """Write the scaled file; returns its size in bytes.

    Questions are written one at a time (the file is never held whole), so
    the full S shape (~260 MB) is generated in a few hundred MB.
    """
    rng = random.Random(seed)
    originals = [  # the fixture's well-formed questions (it also holds the data faults the importer repairs)
        q for q in json.loads(MINI.read_text(encoding="utf-8"))
        if q.get("haystack_sessions") and len(q.get("haystack_session_ids", ())) == len(q.get("haystack_dates", ())) == len(q["haystack_sessions"])
    ]
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for n in range(questions):
            if n:
                out.write(", ")
            out.write(json.dumps(_question(rng, originals, n, sessions, turns, turn_chars)))
        out.write("]")
    return path.stat().st_size


def _question(rng: random.Random, originals: list[dict[str, Any]], n: int, sessions: int, turns: int, turn_chars: int) -> dict[str, Any]:
    """Question ``n``: a fixture question (its own evidence sessions) with filler sessions before it."""
    base = dict(originals[n % len(originals)])
    base["question_id"] = f"{base['question_id']}_{n}" + ("_abs" if base["question_id"].endswith("_abs") else "")
    own = len(base["haystack_sessions"])
    start = dt.datetime(2021, 1, 1, 9, 0) + dt.timedelta(minutes=n)  # before every fixture session and question date
    extra = max(0, sessions - own)
    dates = [(start + dt.timedelta(days=3 * i)).strftime("%Y/%m/%d (%a) %H:%M") for i in range(extra)]
    base["haystack_session_ids"] = [f"filler_{n}_{i}" for i in range(extra)] + list(base["haystack_session_ids"])
    base["haystack_dates"] = dates + list(base["haystack_dates"])
    base["haystack_sessions"] = [
        [_turn(rng, "user" if t % 2 == 0 else "assistant", turn_chars) for t in range(turns)] for _ in range(extra)
    ] + list(base["haystack_sessions"])
    return base


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
