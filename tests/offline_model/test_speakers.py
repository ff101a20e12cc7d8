"""The offline model on conversations between named people: a speaker's name alone never earns an answer."""

from __future__ import annotations

from typing import Any

from harness.offline_model import ABSTAIN_ANSWER, respond

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You answer questions about a conversation."},
    {"role": "user", "content": "[Earlier conversation s1, Monday, 8 May 2023, 13:56 UTC]\n"
                                "Caroline: I went to the LGBTQ support group yesterday.\n\nCaroline: I love pottery."},
    {"role": "assistant", "content": "Melanie: I painted a sunset last week.\n\nMelanie: My kids love the beach."},
]


def _ask(question: str, conversation: list[dict[str, Any]] = CONVERSATION) -> str:
    return respond([*conversation, {"role": "user", "content": question}])["content"]


def test_a_speaker_name_alone_does_not_earn_an_answer() -> None:
    """Bug planted: speaker labels kept in the scored statement (every line of Caroline's hit "Caroline")."""
    assert _ask("What did Caroline adopt?") == ABSTAIN_ANSWER
    assert _ask("Where does Melanie work?") == ABSTAIN_ANSWER


def test_the_named_speakers_statement_wins_a_tie_and_the_answer_names_the_speaker() -> None:
    """Bug planted: the name left out of the ranking (Melanie's later "love" line won on recency)."""
    assert _ask("What does Caroline love?") == 'Earlier Caroline said: "I love pottery."'
    assert _ask("What does Melanie love?") == 'Earlier in our conversation Melanie said: "My kids love the beach."'


def test_statements_answer_on_their_own_words_whoever_said_them() -> None:
    """The lexical baseline falls into the adversarial trap: Melanie's painting answers a question about Caroline."""
    assert _ask("When did Caroline go to the LGBTQ support group?") == \
        'Earlier Caroline said: "I went to the LGBTQ support group yesterday."'
    assert "sunset" in _ask("What did Caroline paint?")


def test_a_single_label_line_is_a_heading_not_a_speaker() -> None:
    """Bug planted: every ``Word: `` line start taken for a speaker (``Billing DB: Postgres 15`` lost its key)."""
    conversation = [{"role": "user", "content": "Billing DB: Postgres 15"}, {"role": "assistant", "content": "Noted."}]
    assert "Postgres 15" in _ask("What is the billing DB?", conversation)


def test_lowercase_line_starts_are_never_speakers() -> None:
    """Bug planted: lowercase labels taken for names (two ``todo: `` lines made "todo" a speaker and lost it)."""
    conversation = [{"role": "user", "content": "todo: rotate the keys\ntodo: renew the cert"}]
    assert "renew the cert" in _ask("What is on the todo list?", conversation)
