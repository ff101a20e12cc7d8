"""The gold audit's counts on generated LoCoMo- and LongMemEval-shaped files, with the published files' gold faults.

Writes two synthetic files in the published shapes (never the real data):
LoCoMo-shaped (10 conversations, 1,986 questions in LoCoMo's category split)
with the gold faults issue 22 found in ``locomo10.json`` planted at their
counts (36 dates with a comma inside a phrase, 18 glued golds in one
conversation, 2 adversarial questions with a real "No"), and
LongMemEval-oracle-shaped (500 questions in its type split) with 77 evidence
sessions dated later on the question's day, 36 "also acceptable" golds, 11
numbers with thousands separators and one dict answer. Imports both with this
checkout and, with ``--before DIR``, with another checkout's importer too
(e.g. ``/work/main``), then audits each imported suite with this checkout's
audit and prints the findings per kind and the import's counts.

Usage:
    python benchmarks/gold_audit_counts.py [--before /work/main]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.importers import audit_suite  # noqa: E402

PLACES = ["Sweden", "Canada", "Peru", "Norway", "Kenya", "Japan", "Chile", "Portugal", "Iceland", "Vietnam"]
HOBBIES = [("watching", "movies"), ("baking", "bread"), ("playing", "chess"), ("reading", "novels"),
           ("painting", "landscapes"), ("hiking", "trails")]
LOCOMO_SPLIT = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
LME_SPLIT = {"single-session-user": 70, "single-session-assistant": 56, "single-session-preference": 30,
             "multi-session": 133, "temporal-reasoning": 133, "knowledge-update": 78}


def _locomo_date(moment: dt.datetime) -> str:
    return moment.strftime("%-I:%M %p on %-d %B, %Y").replace("AM", "am").replace("PM", "pm")


def locomo_file(path: Path, seed: int = 0) -> None:
    """Ten LoCoMo-shaped samples, 1,986 questions, the published gold faults planted."""
    rng = random.Random(seed)
    categories = [c for c, n in LOCOMO_SPLIT.items() for _ in range(n)]
    rng.shuffle(categories)
    per_sample = [categories[i::10] for i in range(10)]
    split_dates, glued, real_no = 36, 18, 2
    samples = []
    for s in range(10):
        start = dt.datetime(2023, 1, 2, 13, 56) + dt.timedelta(days=40 * s)
        conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
        facts = []
        for n in range(1, 20):
            moment = start + dt.timedelta(days=7 * n)
            conv[f"session_{n}_date_time"] = _locomo_date(moment)
            turns = []
            for t in range(1, 21):
                place = PLACES[(n + t) % len(PLACES)]
                verb, thing = HOBBIES[(n * t) % len(HOBBIES)]
                text = f"I went to {place} on {moment.day} {moment:%B}, {moment.year} and I love {verb} {thing}."
                turns.append({"speaker": "Ana" if t % 2 else "Ben", "dia_id": f"D{n}:{t}", "text": text})
                facts.append((f"D{n}:{t}", place, moment, f"{verb}{thing}"))
            conv[f"session_{n}"] = turns
        qa = []
        for k, category in enumerate(per_sample[s]):
            eid, place, moment, glue = facts[(k * 7) % len(facts)]
            item: dict[str, Any] = {"question": f"Question {k} about {place}?", "evidence": [eid], "category": category}
            if category == 5:
                if real_no and s == 1:
                    item.update(answer="No", adversarial_answer="Yes")
                    real_no -= 1
                else:
                    item["adversarial_answer"] = place
            elif category == 2:
                if split_dates:
                    item["answer"] = (f"on {moment.day} {moment:%B}, {moment.year}" if split_dates % 2
                                      else f"Thursday before {moment:%B} {moment.day}, {moment.year}")
                    split_dates -= 1
                else:
                    item["answer"] = f"{moment.day} {moment:%B} {moment.year}"
            elif category == 4 and s == 0 and glued:
                item["answer"] = glue
                glued -= 1
            elif category == 1:
                item["answer"] = f"{place}, {PLACES[(k + 3) % len(PLACES)]}"
            elif category == 3:
                item["answer"] = "Likely yes, since she enjoys travelling abroad"
            else:
                item["answer"] = place
            qa.append(item)
        samples.append({"sample_id": f"conv-{s + 1}", "conversation": conv, "observation": {},
                        "session_summary": {}, "event_summary": {}, "qa": qa})
    path.write_text(json.dumps(samples), encoding="utf-8")


def longmemeval_file(path: Path, seed: int = 0) -> None:
    """500 LongMemEval-oracle-shaped questions with the published gold and date faults planted."""
    rng = random.Random(seed)
    types = [t for t, n in LME_SPLIT.items() for _ in range(n)]
    rng.shuffle(types)
    same_day, also, grouped, dicts = 77, 36, 11, 1
    questions = []
    for q, qtype in enumerate(types):
        asked = dt.datetime(2023, 1, 1, 10, 0) + dt.timedelta(days=q)
        place = PLACES[q % len(PLACES)]
        answer: Any = place
        if qtype != "single-session-preference":
            if also:
                answer = f"{q % 20 + 3} days. {q % 20 + 4} days (including the last day) is also acceptable."
                also -= 1
            elif grouped:
                answer, grouped = f"${q + 1},500", grouped - 1
            elif dicts:
                answer, dicts = {"a": 1}, dicts - 1
        dates = [asked - dt.timedelta(days=9), asked - dt.timedelta(days=3)]
        if same_day:
            dates[1] = asked + dt.timedelta(hours=5)  # evidence later on the question's own day
            same_day -= 1
        said = answer if isinstance(answer, str) else "an odd answer"
        sessions = [
            [{"role": "user", "content": f"Let us plan a trip; I like {place}."},
             {"role": "assistant", "content": "Sure, that sounds lovely."}],
            [{"role": "user", "content": f"It cost {said} and took {q % 20 + 3} days in {place}.", "has_answer": True},
             {"role": "assistant", "content": "Noted."}],
        ]
        suffix = "_abs" if q % 17 == 0 else ""
        questions.append({
            "question_id": f"lme{q:04d}{suffix}", "question_type": qtype, "question": f"What about {place}?",
            "answer": answer, "question_date": asked.strftime("%Y/%m/%d (%a) %H:%M"),
            "haystack_session_ids": [f"s{q}_1", f"answer_{q}_2"],
            "haystack_dates": [d.strftime("%Y/%m/%d (%a) %H:%M") for d in dates],
            "haystack_sessions": sessions, "answer_session_ids": [f"answer_{q}_2"],
        })
    path.write_text(json.dumps(questions), encoding="utf-8")


def _import(kind: str, source: Path, out: Path, checkout: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    code = ("import sys; from pathlib import Path; from harness.importers import run_import; "
            f"run_import({kind!r}, Path({str(source)!r}), Path({str(out)!r}), echo=lambda line: None)")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tempfile.gettempdir())
    return json.loads((out / "_suite.json").read_text(encoding="utf-8"))


def _print(label: str, record: dict[str, Any], out: Path) -> None:
    result = audit_suite([out])
    counts = result.counts()
    by_kind = {kind: sum(by_category.values()) for kind, by_category in counts.items()}
    print(f"  {label}: {record['counts']['probes']} probes, {len(result.flagged())} flagged; "
          f"findings by kind {by_kind}")
    for kind, by_category in counts.items():
        print(f"      {kind}: {by_category}")
    for block in ("repairs", "drops", "reports"):
        for fault, entry in (record.get(block) or {}).items():
            print(f"      {block[:-1]}: {entry['count']:>4}  {fault}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", help="another checkout whose importer to compare (e.g. /work/main)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gold-audit-") as tmp:
        folder = Path(tmp)
        for kind, make in (("locomo", locomo_file), ("longmemeval", longmemeval_file)):
            source = folder / f"{kind}.json"
            make(source)
            print(f"{kind}-shaped file ({source.stat().st_size / 1e6:.1f} MB):")
            runs = [(f"before ({args.before})", Path(args.before))] if args.before else []
            for label, checkout in [*runs, ("this checkout", ROOT)]:
                out = folder / f"{kind}-{'before' if checkout != ROOT else 'after'}"
                _print(label, _import(kind, source, out, checkout), out)


if __name__ == "__main__":
    main()
