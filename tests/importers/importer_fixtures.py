"""Shared pieces of the importer tests: the small benchmark files in the published shapes, and imports of them.

``tests/fixtures/importers/locomo_mini.json`` and ``longmemeval_mini.json`` are
written for these tests (no benchmark data): every field of the published
shapes and every known data fault appears in them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from harness.importers import run_import
from harness.scenarios import AnswerCheck
from harness.score.matching import check_answer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
LOCOMO = FIXTURES / "locomo_mini.json"
LONGMEMEVAL = FIXTURES / "longmemeval_mini.json"


def imported(kind: str, tmp_path: Path, source: Path | None = None) -> tuple[Path, list[str]]:
    """Import a fixture into ``tmp_path/<kind>``; returns the folder and the printed lines."""
    lines: list[str] = []
    out = tmp_path / kind
    run_import(kind, source or (LOCOMO if kind == "locomo" else LONGMEMEVAL), out, echo=lines.append)
    return out, lines


def read_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def probe(conversation: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in conversation["probes"] if p["id"] == pid)


def source(path: Path) -> list[Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def passes(answer: str, expect: dict[str, Any]) -> bool:
    """The positive text checks an importer wrote, scored by the harness's own ``check_answer`` (word-bounded short golds)."""
    check = AnswerCheck(**{k: expect[k] for k in ("must_contain_any", "must_contain_groups") if k in expect})
    return check_answer(answer, check)[0]


def write_source(tmp_path: Path, name: str, elements: list[Any]) -> Path:
    """A benchmark file of ``elements`` (samples or questions) in the published shape: a JSON list."""
    path = tmp_path / name
    path.write_text(json.dumps(elements), encoding="utf-8")
    return path


def locomo_sample(qa: list[dict[str, Any]], *, sample_id: str = "conv-9",
                  texts: tuple[str, ...] = ()) -> dict[str, Any]:
    """One LoCoMo sample as ``locomo10.json`` writes it: two sessions of turns, one observation each, and ``qa``.

    ``texts`` are extra turns of session 2 (the conversation's words that golds may quote).
    """
    first = [{"speaker": "Ana", "dia_id": "D1:1", "text": "I visited Sweden on 9 April, 2023 and loved it."},
             {"speaker": "Ben", "dia_id": "D1:2", "text": "I paid $25,000 for my car; I love watching movies."}]
    second = [{"speaker": "Ana" if i % 2 == 0 else "Ben", "dia_id": f"D2:{i + 1}", "text": text}
              for i, text in enumerate(("Yes, my teammates won the cup in Canada.", *texts))]
    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                         "session_1_date_time": "1:00 pm on 8 May, 2023", "session_1": first,
                         "session_2_date_time": "2:00 pm on 20 December, 2023", "session_2": second},
        "observation": {"session_1_observation": {"Ana": [["Ana visited Sweden on 9 April 2023.", "D1:1"]]},
                        "session_2_observation": {"Ben": [["Ben's teammates won the cup.", "D2:1"]]}},
        "session_summary": {}, "event_summary": {},
        "qa": qa,
    }


def longmemeval_question(qid: str = "q-1", *, answer: Any = "Lake Tahoe", question_date: str = "2023/05/30 (Tue) 10:00",
                         dates: tuple[str, ...] = ("2023/05/20 (Sat) 09:00", "2023/05/30 (Tue) 15:00"),
                         answer_session: int = 2, qtype: str = "single-session-user",
                         contents: tuple[str, ...] = ()) -> dict[str, Any]:
    """One LongMemEval question as the published files write it; session ``answer_session`` (from 1) holds the answer."""
    sessions = []
    for n, _ in enumerate(dates, start=1):
        text = "I went to Lake Tahoe with my sister." if n == answer_session else f"Let us talk about recipe {n}."
        turns = [{"role": "user", "content": text, **({"has_answer": True} if n == answer_session else {})},
                 {"role": "assistant", "content": "That sounds lovely."}]
        turns += [{"role": "user", "content": c} for c in (contents if n == 1 else ())]
        sessions.append(turns)
    return {"question_id": qid, "question_type": qtype, "question": "Where did I go with my sister?",
            "answer": answer, "question_date": question_date,
            "haystack_session_ids": [f"sess_{n}" for n in range(1, len(dates) + 1)],
            "haystack_dates": list(dates), "haystack_sessions": sessions,
            "answer_session_ids": [f"sess_{answer_session}"]}


_PETS = ["Pixel", "Biscuit", "Mochi", "Juniper", "Pepper", "Tofu", "Waffle", "Nimbus"]
_THINGS = ["kitten", "puppy", "parrot", "tortoise", "sailboat", "motorbike", "hamster", "bonsai"]
_CITIES = ["Lisbon", "Oslo", "Kyoto", "Quito", "Tallinn", "Hobart", "Bergen", "Cusco"]
_HOBBIES = ["pottery", "climbing", "archery", "fencing", "sailing", "knitting", "chess", "rowing"]
_DATES = ["8 May, 2023", "27 June, 2023", "20 July, 2023", "14 August, 2023", "2 September, 2023",
          "19 October, 2023", "5 November, 2023", "11 December, 2023"]


def generated_locomo_sample(index: int, sessions: int = 6, *, cite: bool = True) -> dict[str, Any]:
    """One LoCoMo sample in the published shape: ``sessions`` sessions, each stating three facts, and its QA.

    Session k has Maya get a thing (a kitten, a sailboat) and name it, visit a
    city and take up a hobby; Tom answers. Each session gives four questions:
    single-hop (the thing's name, category 4),
    temporal (when she went to the city, category 2), multi-hop (the hobby and
    the city, category 1), open-domain (category 3), plus one adversarial
    question per session (category 5: Tom's thing, which the conversation never
    names) with Maya's name for hers as ``adversarial_answer``. ``cite=False`` leaves the
    hobby facts out of the observations, so their questions have no relevant item.
    """
    conv: dict[str, Any] = {"speaker_a": "Maya", "speaker_b": "Tom"}
    observation: dict[str, Any] = {}
    qa: list[dict[str, Any]] = []
    for k in range(1, sessions + 1):
        j = (index * 3 + k) % len(_PETS)
        pet, city, hobby, thing = _PETS[j], _CITIES[j], _HOBBIES[j], _THINGS[j]
        conv[f"session_{k}_date_time"] = f"1:56 pm on {_DATES[(k - 1) % len(_DATES)]}"
        conv[f"session_{k}"] = [
            {"speaker": "Maya", "dia_id": f"D{k}:1", "text": f"I got a {thing} and named it {pet}!"},
            {"speaker": "Tom", "dia_id": f"D{k}:2", "text": "Congratulations, that is lovely news."},
            {"speaker": "Maya", "dia_id": f"D{k}:3", "text": f"Last weekend I flew to {city} for a short trip."},
            {"speaker": "Tom", "dia_id": f"D{k}:4", "text": "Sounds like a wonderful break."},
            {"speaker": "Maya", "dia_id": f"D{k}:5", "text": f"In {city} I started {hobby} lessons with a local club."},
        ]
        when = _DATES[(k - 1) % len(_DATES)].split(",")[0]
        facts = [[f"Maya named her {thing} {pet}.", f"D{k}:1"], [f"Maya flew to {city} on {when}.", f"D{k}:3"]]
        if cite:
            facts.append([f"Maya started {hobby} lessons in {city}.", f"D{k}:5"])
        observation[f"session_{k}_observation"] = {"Maya": facts}
        qa += [
            {"question": f"What did Maya name her {thing}?", "answer": pet,
             "evidence": [f"D{k}:1"], "category": 4},
            {"question": f"When did Maya fly to {city}?", "answer": when,
             "evidence": [f"D{k}:3"], "category": 2},
            {"question": f"Which lessons did Maya start in {city}?", "answer": hobby,
             "evidence": [f"D{k}:3", f"D{k}:5"], "category": 1},
            {"question": f"Would Maya enjoy a club for {hobby}?", "answer": f"Yes, she started {hobby} lessons",
             "evidence": [f"D{k}:5"], "category": 3},
            {"question": f"What did Tom name his {thing}?", "adversarial_answer": pet,
             "evidence": [f"D{k}:1"], "category": 5},
        ]
    return {"sample_id": f"conv-{index + 1}", "conversation": conv, "observation": observation,
            "session_summary": {}, "event_summary": {}, "qa": qa}


def write_locomo(path: Path, samples: int = 2, sessions: int = 6, *, cite: bool = True) -> Path:
    """A ``locomo10.json``-shaped file of :func:`locomo_sample` samples (generated; no benchmark data)."""
    path.write_text(json.dumps([generated_locomo_sample(i, sessions, cite=cite) for i in range(samples)]), encoding="utf-8")
    return path
