"""Generated files in the published shapes of LoCoMo (``locomo10.json``) and LongMemEval S, at their published sizes.

Never the real data: every word is drawn from a seeded generator, so the
benchmarks can run anywhere. The sizes follow the papers' files:

- LoCoMo: 10 conversations, 5,882 turns (19-32 sessions each), 1,986 QA in
  LoCoMo's category split (282 multi-hop, 321 temporal, 96 open-domain, 841
  single-hop, 446 adversarial), observations per session and speaker citing
  their turns, ~25k tokens of conversation each;
- LongMemEval S: 500 questions, each a haystack of 38 to 62 sessions (47.7
  on average, ~115k tokens, ~255 MB in all), fillers shared between
  questions, 13 duplicate session ids, 1,478 same-day sessions: written by
  :mod:`benchmarks.longmemeval_s_shape`, whose docstring says where each
  figure comes from.

``scale`` (0 < scale <= 1) shrinks the question count for a quick check.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from benchmarks import longmemeval_s_shape
from benchmarks.bench_import_validate import VOCABULARY
from benchmarks.bench_suite_scale import FILLER, NAMES, PLACES, THINGS, VERBS

LOCOMO_CONVERSATIONS = 10
LOCOMO_TURNS = 5_882
LOCOMO_QA = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}  # 1,986 questions by LoCoMo category number
LOCOMO_TURN_CHARS = 170  # ~25k tokens per conversation of ~588 turns


def _text(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(VOCABULARY) if rng.random() < 0.5 else rng.choice(FILLER)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def _locomo_conversation(rng: random.Random, index: int, turns: int, questions: dict[int, int]) -> dict[str, Any]:
    a, b = NAMES[(2 * index) % len(NAMES)], NAMES[(2 * index + 1) % len(NAMES)]
    sessions = rng.randint(19, 32)
    per = [turns // sessions + (1 if s < turns % sessions else 0) for s in range(sessions)]
    conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    observation: dict[str, Any] = {}
    summaries: dict[str, Any] = {}
    facts: list[tuple[str, str, str, str, dt.datetime]] = []  # (dia id, speaker, thing, place, date)
    day = dt.datetime(2023, 1, 5, 13, 0) + dt.timedelta(days=index)
    for s in range(1, sessions + 1):
        day += dt.timedelta(days=rng.randint(3, 20), minutes=rng.randint(0, 600))
        conversation[f"session_{s}_date_time"] = f"{day:%-I:%M %p} on {day.day} {day:%B}, {day.year}".replace("AM", "am").replace("PM", "pm")
        dialogue = []
        notes: dict[str, list[list[str]]] = {a: [], b: []}
        for t in range(1, per[s - 1] + 1):
            speaker = a if t % 2 else b
            thing, place, verb = rng.choice(THINGS), rng.choice(PLACES), rng.choice(VERBS)
            text = f"I {verb} {thing} in {place}, {_text(rng, LOCOMO_TURN_CHARS - 40)}."
            turn: dict[str, Any] = {"speaker": speaker, "dia_id": f"D{s}:{t}", "text": text}
            if rng.random() < 0.05:
                turn.update(img_url=["https://example.invalid/photo.jpg"], blip_caption=f"a photo of {thing}", query=thing)
            dialogue.append(turn)
            if rng.random() < 0.35:
                notes[speaker].append([f"{speaker} {verb} {thing} in {place}.", f"D{s}:{t}"])
                facts.append((f"D{s}:{t}", speaker, thing, place, day))
        conversation[f"session_{s}"] = dialogue
        observation[f"session_{s}_observation"] = notes
        summaries[f"session_{s}_summary"] = f"{a} and {b} talked about {rng.choice(THINGS)}."
    qa = []
    for category, count in questions.items():
        for _ in range(count):
            dia, speaker, thing, place, day = rng.choice(facts)
            other = b if speaker == a else a
            if category == 5:
                qa.append({"question": f"Where did {other} {rng.choice(VERBS)} {thing}?", "adversarial_answer": place,
                           "evidence": [dia], "category": 5})
            elif category == 2:
                qa.append({"question": f"When did {speaker} talk about {thing}?", "answer": f"{day.day} {day:%B} {day.year}",
                           "evidence": [dia], "category": 2})
            elif category == 1:
                dia2, _, _, place2, _ = rng.choice(facts)
                qa.append({"question": f"Which places has {speaker} mentioned?", "answer": f"{place}, {place2}",
                           "evidence": [dia, dia2], "category": 1})
            else:
                qa.append({"question": f"Where did {speaker} mention {thing}?", "answer": place, "evidence": [dia], "category": category})
    rng.shuffle(qa)
    return {"sample_id": f"conv-{index + 1}", "conversation": conversation, "observation": observation,
            "session_summary": summaries, "event_summary": {}, "qa": qa}


def _share(total: int, index: int) -> int:
    """Conversation ``index``'s part of ``total`` (parts differ by at most one and sum to ``total``)."""
    return total // LOCOMO_CONVERSATIONS + (1 if index < total % LOCOMO_CONVERSATIONS else 0)


def locomo(path: Path, scale: float = 1.0, seed: int = 0) -> dict[str, int]:
    """Write a ``locomo10.json``-shaped file; returns its counts (conversations, turns, questions, bytes)."""
    rng = random.Random(seed)
    data = [_locomo_conversation(rng, i, _share(LOCOMO_TURNS, i), {c: _share(max(1, round(n * scale)), i) for c, n in LOCOMO_QA.items()})
            for i in range(LOCOMO_CONVERSATIONS)]
    path.write_text(json.dumps(data), encoding="utf-8")
    turns = sum(len(v) for c in data for k, v in c["conversation"].items() if k.startswith("session_") and isinstance(v, list))
    return {"conversations": len(data), "turns": turns, "questions": sum(len(c["qa"]) for c in data), "bytes": path.stat().st_size}


def longmemeval_s(path: Path, scale: float = 1.0, seed: int = 0) -> dict[str, int]:
    """Write a ``longmemeval_s.json``-shaped file (:func:`benchmarks.longmemeval_s_shape.generate`); returns its counts."""
    return longmemeval_s_shape.generate(path, scale, seed)
