"""A generated file in the shape of LongMemEval S (``longmemeval_s.json``), and the same figures measured on any such file.

Never the real data: every word comes from a seeded generator. The shape
follows the published file, figure by figure (``measure`` prints the same
figures for the generated file and, with ``RECALL_EVAL_LONGMEMEVAL_S=path``,
for the real one beside it):

- **500 questions** in the paper's type split (70 single-session-user, 56
  single-session-assistant, 30 single-session-preference, 133 multi-session,
  133 temporal-reasoning, 78 knowledge-update; 30 of them ``_abs``):
  LongMemEval paper (Wu et al., ICLR 2025), Table 2. Issue 42 measured 498
  of the 500 S questions, 257 MB.
- **23,867 session occurrences**, 47.7 per question (38 to 62): counted on
  ``longmemeval_s_cleaned.json`` in LongMemEval's issue #54; the range is the
  sampler's ``enforce_json_length`` trimming ~115k tokens of history.
- **13 duplicate session ids**: 13 histories hold one filler session twice
  (same id, same content, another date); LongMemEval's issue #54 lists them,
  issue 42 found the same 13. The sampler draws each filler slot with
  ``random.choice`` (``data/custom_history/sample_haystack_and_timestamp.py``).
- **Sessions shared between questions**: fillers are drawn, with
  replacement, from one pool of user-simulated (half), ShareGPT and UltraChat
  (a quarter each) sessions, so one session recurs in several histories.
  About 19,194 distinct sessions (a third-party ingestion of the S file,
  mentedb PR #85; not our measurement): a pool of :data:`FILLER_POOL`
  sessions drawn uniformly gives that many, and its collision rate predicts
  the 13 duplicates (~11), so the two figures agree.
- **Turns per session** 10.35 (493.5 turns per question over 47.7 sessions:
  a third-party count, mnemoverse's LongMemEval card); **characters per
  turn** ~1,000 on average, from the file's size (257 MB over ~246k turns,
  less JSON framing). The split between roles (the user's turns short, the
  assistant's long, as in ShareGPT and UltraChat) is our assumption.
- **1,478 same-day sessions**: sessions dated later than their question on
  the question's own day (77 questions have them; the importer keeps them
  and moves the probe, docs/importers.md); issue 42's count on the real file.
- Evidence: each question's ``answer_*`` sessions (1 for single-session
  types, 2 for knowledge updates, 2-4 for multi-session and temporal), one
  user turn in each marked ``has_answer``; ids never shared between questions.

Questions are written one at a time; a filler's content is rebuilt from its
id's seed at each occurrence, so the generator holds one question, never the
pool (~260 MB written in ~100 MB).
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.bench_import_validate import VOCABULARY
from benchmarks.bench_suite_scale import FILLER, NAMES, PLACES, THINGS, VERBS

QUESTIONS = 500
TYPES = {"single-session-user": 70, "single-session-assistant": 56, "single-session-preference": 30,
         "multi-session": 133, "temporal-reasoning": 133, "knowledge-update": 78}
ABSTENTION = 30
SESSION_OCCURRENCES = 23_867
SESSIONS_RANGE = (38, 62)
DUPLICATE_IDS = 13
SAME_DAY_SESSIONS, SAME_DAY_QUESTIONS = 1_478, 77
FILLER_POOL = 48_000
TURNS_PER_SESSION = 10.35
USER_CHARS, ASSISTANT_CHARS = 360, 1_500  # with sentence ends, ~1,000 characters a turn
EVIDENCE = {"single-session-user": (1, 1), "single-session-assistant": (1, 1), "single-session-preference": (1, 1),
            "knowledge-update": (2, 2), "multi-session": (2, 4), "temporal-reasoning": (2, 4)}
_PSEUDO_WORDS = 0.1  # share of invented words: enough distinct keys for the extractor, English-like token counts


def _sentence_text(rng: random.Random, chars: int) -> str:
    sentences: list[str] = []
    size = 0
    while size < chars:
        words = " ".join(rng.choice(VOCABULARY) if rng.random() < _PSEUDO_WORDS else rng.choice(FILLER)
                         for _ in range(rng.randint(8, 18)))
        sentence = f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)}, {words}."
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


def _turns(rng: random.Random) -> int:
    """Turns in one session: user/assistant pairs, mean :data:`TURNS_PER_SESSION`, 2 to 40."""
    return 2 * min(20, max(1, round(rng.gammavariate(2.0, TURNS_PER_SESSION / 4.0))))


def _session(seed: str) -> list[dict[str, Any]]:
    """A session's turns, the same for every occurrence of ``seed`` (its id)."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    return [{"role": role, "content": _sentence_text(rng, max(20, round(rng.expovariate(1 / mean))))}
            for t in range(_turns(rng)) for role, mean in [("user" if t % 2 == 0 else "assistant",
                                                            USER_CHARS if t % 2 == 0 else ASSISTANT_CHARS)]]


def _filler_id(rng: random.Random) -> str:
    """A pool member's id in the published styles: user-simulated (half), ShareGPT, UltraChat."""
    n = rng.randrange(FILLER_POOL)
    if n < FILLER_POOL // 2:
        return f"{hashlib.sha256(str(n).encode()).hexdigest()[:8]}_{n % 3 + 1}"
    if n < 3 * FILLER_POOL // 4:
        return f"sharegpt_{hashlib.sha256(str(n).encode()).hexdigest()[:7]}_{n % 4}"
    return f"ultrachat_{100_000 + n}"


def _spread(total: int, parts: int, low: int, high: int, rng: random.Random) -> list[int]:
    """``parts`` integers in [low, high] summing to ``total`` (as close as the bounds allow), varied around the mean."""
    mean = total / parts
    counts = [min(high, max(low, round(rng.triangular(low, high, mean)))) for _ in range(parts)]
    while sum(counts) != total:
        i = rng.randrange(parts)
        step = 1 if sum(counts) < total else -1
        if low <= counts[i] + step <= high:
            counts[i] += step
    return counts


def _plan(questions: int, rng: random.Random) -> list[dict[str, Any]]:
    """Per question: type, abstention, session count, whether it duplicates a filler and holds same-day sessions."""
    share = questions / QUESTIONS
    types = [t for t, n in TYPES.items() for _ in range(max(1, round(n * share)))][:questions]
    types += ["multi-session"] * (questions - len(types))
    rng.shuffle(types)
    counts = _spread(max(questions * SESSIONS_RANGE[0], round(SESSION_OCCURRENCES * share)), questions, *SESSIONS_RANGE, rng)
    order = list(range(questions))
    rng.shuffle(order)
    dup = set(order[:max(1, round(DUPLICATE_IDS * share))])
    same_day_q = order[-max(1, round(SAME_DAY_QUESTIONS * share)):]
    same_day = dict(zip(same_day_q, _spread(max(len(same_day_q), round(SAME_DAY_SESSIONS * share)), len(same_day_q), 1, 30, rng)))
    abstaining = set(rng.sample([i for i, t in enumerate(types) if t != "single-session-preference"],
                                min(questions, max(1, round(ABSTENTION * share)))))
    return [{"type": types[i], "abs": i in abstaining, "sessions": counts[i], "dup": i in dup, "same_day": same_day.get(i, 0)}
            for i in range(questions)]


def _question(n: int, plan: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Question ``n``: its evidence sessions among fillers, dated in order; same-day fillers after the question's time."""
    import datetime as dt

    low, high = EVIDENCE[plan["type"]]
    evidence = rng.randint(low, high)
    fillers = plan["sessions"] - evidence - plan["dup"]
    ids: list[str] = []
    while len(ids) < fillers:
        sid = _filler_id(rng)
        if sid not in ids:
            ids.append(sid)
    if plan["dup"]:
        ids.append(rng.choice(ids))
    qid = hashlib.sha256(f"q{n}".encode()).hexdigest()[:8] + ("_abs" if plan["abs"] else "")
    thing, place = rng.choice(THINGS), rng.choice(PLACES)
    answer_ids = [f"answer_{qid.removesuffix('_abs')}_{i + 1}" for i in range(evidence)]
    answer_sessions = []
    for i in range(evidence):
        turns = _session(answer_ids[i])
        turns[0] = {"role": "user", "content": f"I {VERBS[i % len(VERBS)]} {thing} in {place}. {turns[0]['content']}",
                    "has_answer": True}
        answer_sessions.append(turns)
    before = [*ids[:len(ids) - plan["same_day"]], *answer_ids]
    rng.shuffle(before)
    order = before + ids[len(ids) - plan["same_day"]:]
    asked = dt.datetime(2023, 5, 20) + dt.timedelta(days=rng.randint(0, 40), hours=rng.randint(8, 12), minutes=rng.randint(0, 59))
    dates = sorted(asked - dt.timedelta(minutes=rng.randint(30, 60 * 24 * 30)) for _ in range(len(order) - plan["same_day"]))
    dates += sorted(asked + dt.timedelta(minutes=rng.randint(1, 60 * 10)) for _ in range(plan["same_day"]))
    by_answer = dict(zip(answer_ids, answer_sessions))
    return {
        "question_id": qid, "question_type": plan["type"],
        "question": f"Where did I go for {thing}?", "answer": place,
        "question_date": f"{asked:%Y/%m/%d (%a) %H:%M}",
        "haystack_session_ids": order,
        "haystack_dates": [f"{d:%Y/%m/%d (%a) %H:%M}" for d in dates],
        "haystack_sessions": [by_answer[s] if s in by_answer else _session(s) for s in order],
        "answer_session_ids": answer_ids,
    }


def generate(path: Path, scale: float = 1.0, seed: int = 0) -> dict[str, int]:
    """Write the file (``scale`` of the 500 questions); returns its question count and size in bytes."""
    rng = random.Random(seed)
    questions = max(1, round(QUESTIONS * scale))
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for n, plan in enumerate(_plan(questions, rng)):
            out.write(", " if n else "")
            out.write(json.dumps(_question(n, plan, rng)))
        out.write("]")
    return {"questions": questions, "bytes": path.stat().st_size}


def _questions(path: Path) -> Iterator[dict[str, Any]]:
    from harness.importers.jsonstream import iter_array

    yield from iter_array(path)


def measure(path: Path, token_every: int = 25) -> dict[str, float]:
    """The shape figures of a LongMemEval S-shaped file, read one question at a time.

    Tokens are counted with tiktoken's ``cl100k_base`` on every ``token_every``-th
    question (the paper counts with Llama 3's tokenizer; they differ by a few per cent).
    """
    from harness.run.model_tables import _encoding

    encoding = _encoding("cl100k_base")  # the copy litellm ships: no download
    seen: Counter[str] = Counter()
    per_question, turns, chars, dup_ids, same_day, same_day_q, tokens = [], [], [], 0, 0, 0, []
    for n, q in enumerate(_questions(path)):
        ids, dates, sessions = q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]
        per_question.append(len(sessions))
        dup_ids += len(ids) - len(set(ids))
        seen.update(set(ids))
        later = sum(1 for d in dates if d[:10] == q["question_date"][:10] and d > q["question_date"])
        same_day, same_day_q = same_day + later, same_day_q + (later > 0)
        for s in sessions:
            turns.append(len(s))
            chars.extend(len(t["content"]) for t in s)
        if n % token_every == 0:
            tokens.append(sum(len(encoding.encode(t["content"], disallowed_special=())) for s in sessions for t in s))
    return {
        "questions": len(per_question), "bytes": path.stat().st_size,
        "session occurrences": sum(per_question), "sessions per question": statistics.fmean(per_question),
        "fewest sessions": min(per_question), "most sessions": max(per_question),
        "distinct sessions": len(seen), "sessions in 2+ questions": sum(1 for c in seen.values() if c > 1),
        "duplicate ids in a history": dup_ids, "same-day sessions after the question": same_day,
        "questions with same-day sessions": same_day_q,
        "turns per session": statistics.fmean(turns), "characters per turn": statistics.fmean(chars),
        "tokens per question (cl100k)": statistics.fmean(tokens),
    }
