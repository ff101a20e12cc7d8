"""The offline model's choice among listed options: a schema array of enum strings, each option described in the message.

A request may ask the model to pick from labelled options (a memory document's
entries for a question, by id): the JSON schema asks for an array whose items
are an ``enum`` of option labels, and the last user message lists each option on
its own line, ``[<label>] <description>``. The model earns its choice from the
message alone, lexically:

- the **question** is the message without the option lines;
- each option's line is scored by :func:`harness.offline_model._terms.overlap`
  against the question's terms; an option whose overlap is not convincing (no
  salient question word, or too few) is not chosen;
- the chosen options come best first (ties: the order they were listed), at most
  ``maxItems``.

Options the message does not describe are never chosen (the model cannot judge what
it was not shown), and nothing outside the request is read.
"""

from __future__ import annotations

import re
from typing import Any

from harness.offline_model._terms import analyze_question, overlap

_OPTION_LINE = re.compile(r"^\s*\[([^\]\n]{1,64})\]\s*(.*)$")


def option_lines(text: str) -> tuple[dict[str, str], str]:
    """(label -> its description line, the rest of ``text``: the question) of a message listing options."""
    described: dict[str, str] = {}
    rest: list[str] = []
    for line in text.splitlines():
        match = _OPTION_LINE.match(line)
        if match and match.group(1) not in described:
            described[match.group(1)] = match.group(2)
        else:
            rest.append(line)
    return described, "\n".join(rest)


def choose_options(text: str, options: list[Any], limit: int | None, about: str | None = None) -> list[str] | None:
    """The options ``text`` makes a case for, best first; None when ``text`` describes none of ``options``.

    Args:
        text: The request's last user message.
        options: The schema's enum values (only strings can be described).
        limit: ``maxItems`` of the array (None: no limit).
        about: What the options are chosen for, when not the message's own question (a statement of the
            message that the array belongs to: the entries it updates).
    """
    described, question = option_lines(text)
    question = about if about is not None else question
    listed = [o for o in options if isinstance(o, str) and o in described]
    if not listed:
        return None
    terms = analyze_question(question)
    scored = []
    for position, option in enumerate(listed):
        found = overlap(terms, described[option])
        if found.convincing and found.score > 0:
            scored.append((-found.score, position, option))
    chosen = [option for _, _, option in sorted(scored)]
    return chosen[:limit] if limit is not None and limit >= 0 else chosen
