"""The generated LongMemEval S file has the real file's shape: shared fillers, duplicate ids, same-day sessions."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import longmemeval_s_shape as shape


def test_generated_s_file_shares_fillers_repeats_ids_and_dates_sessions_after_the_question(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    made = shape.generate(source, scale=0.04)
    figures = shape.measure(source, token_every=10)
    assert made["questions"] == figures["questions"] == 20
    assert figures["session occurrences"] == round(shape.SESSION_OCCURRENCES * 0.04)
    assert shape.SESSIONS_RANGE[0] <= figures["fewest sessions"] <= figures["most sessions"] <= shape.SESSIONS_RANGE[1]
    assert figures["duplicate ids in a history"] == 1  # 13 at full size
    assert figures["same-day sessions after the question"] == round(shape.SAME_DAY_SESSIONS * 0.04)
    assert figures["questions with same-day sessions"] == round(shape.SAME_DAY_QUESTIONS * 0.04)
    assert 9.0 < figures["turns per session"] < 12.0
    assert 850 < figures["characters per turn"] < 1150


def test_a_filler_recurring_in_two_questions_has_the_same_turns_and_evidence_never_recurs(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    shape.generate(source, scale=0.2)
    contents: dict[str, list[str]] = {}
    shared = 0
    for question in json.loads(source.read_text(encoding="utf-8")):
        for sid, turns in zip(question["haystack_session_ids"], question["haystack_sessions"]):
            text = [t["content"] for t in turns]
            if sid in contents:
                assert contents[sid] == text, sid
                shared += 1
                assert not sid.startswith("answer_"), sid
            contents[sid] = text
        assert question["answer_session_ids"] and all(s in question["haystack_session_ids"] for s in question["answer_session_ids"])
    assert shared > 0
