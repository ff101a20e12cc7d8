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


_PETS = ["Pixel", "Biscuit", "Mochi", "Juniper", "Pepper", "Tofu", "Waffle", "Nimbus"]
_THINGS = ["kitten", "puppy", "parrot", "tortoise", "sailboat", "motorbike", "hamster", "bonsai"]
_CITIES = ["Lisbon", "Oslo", "Kyoto", "Quito", "Tallinn", "Hobart", "Bergen", "Cusco"]
_HOBBIES = ["pottery", "climbing", "archery", "fencing", "sailing", "knitting", "chess", "rowing"]
_DATES = ["8 May, 2023", "27 June, 2023", "20 July, 2023", "14 August, 2023", "2 September, 2023",
          "19 October, 2023", "5 November, 2023", "11 December, 2023"]


def locomo_sample(index: int, sessions: int = 6, *, cite: bool = True) -> dict[str, Any]:
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
    path.write_text(json.dumps([locomo_sample(i, sessions, cite=cite) for i in range(samples)]), encoding="utf-8")
    return path
