"""The conversation's statements are split once per distinct conversation and only those holding a question form are scored in full."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.offline_model import _candidates
from harness.offline_model._terms import analyze_question

WORDS = ["Caroline", "Melanie", "adopted", "a", "dog", "pottery", "class", "in", "Lisbon", "Boston", "yesterday", "the", "lake",
         "house", "I", "don't", "know", "why?", "marathon", "painting", "C++", "v2.1", "café", "東京", "に行きました"]


def _conversation(rng: random.Random, turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You answer questions."}]
    for t in range(turns):
        speaker = rng.choice(["Caroline", "Melanie", ""])
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) + rng.choice([".", "?", "!", ""]) for _ in range(rng.randint(1, 3))]
        text = "\n".join(f"{speaker}: {line}" if speaker else line for line in lines)
        messages.append({"role": "user" if t % 2 == 0 else "assistant", "content": text})
    return messages


def _every_statement_scored(question: Any, messages: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as patch:
        patch.setattr(_candidates, "_may_overlap", lambda question, history: None)
        return _candidates.history_candidates(question, messages)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), question=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_prefiltered_candidates_are_exactly_those_of_scoring_every_statement(seed: int, question: list[str]) -> None:
    """Skipping a statement that holds no question form as a substring never changes a candidate's fit."""
    messages = _conversation(random.Random(seed), 12)
    terms = analyze_question("What did " + " ".join(question) + "?")
    with pytest.MonkeyPatch.context() as patch:
        expected = _every_statement_scored(terms, messages, patch)
    assert _candidates.history_candidates(terms, messages) == expected


def test_a_conversation_is_split_once_for_all_its_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = _conversation(random.Random(1), 30)
    splits = []
    original = _candidates._SENTENCE_SPLIT
    monkeypatch.setattr(_candidates, "_SENTENCE_SPLIT", type("Spy", (), {"split": lambda self, line: splits.append(line) or original.split(line)})())
    _candidates._HISTORY_TEXTS.clear()
    _candidates.history_candidates(analyze_question("Where did Caroline adopt a dog?"), [dict(m) for m in messages])
    once = len(splits)
    for question in ("What did Melanie paint?", "When was the marathon?"):
        _candidates.history_candidates(analyze_question(question), [dict(m) for m in messages])  # copies, as each sample makes
    assert once > 0 and len(splits) == once
    _candidates.history_candidates(analyze_question("Who went to Lisbon?"), [*messages[:-1], {**messages[-1], "content": "New."}])
    assert len(splits) > once  # another conversation is split anew
