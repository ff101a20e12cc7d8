"""Conversation files for tests: a small two-person conversation with any number of probes, as YAML text."""

from __future__ import annotations

from pathlib import Path

SHARED = """\
# yaml-language-server: $schema=../scenario.schema.json
id: {conv_id}
title: Caroline and Melanie
description: Two friends catch up over several sessions.
category: {category}
tags: [conv]
sessions:
  - id: s1
    started_at: 2026-01-05T10:00:00Z
    turns:
      - role: user
        speaker: Caroline
        content: I adopted a dog called Biscuit last week.
      - role: assistant
        speaker: Melanie
        content: Biscuit is a lovely name!
  - id: s2
    started_at: 2026-01-12T10:00:00Z
    turns:
      - role: user
        speaker: Caroline
        content: I am moving to Lisbon in March.
      - role: assistant
        speaker: Melanie
        content: Lisbon is beautiful in spring.
items:
  - id: it-dog
    content: Caroline adopted a dog called Biscuit.
    kind: context
    keys: [dog, {{key: biscuit, type: entity}}]
    sources: [{{session: s1, turn: t1}}]
    role: answer
  - id: it-move
    content: Caroline is moving to Lisbon in March.
    kind: context
    keys: [move, {{key: lisbon, type: entity}}]
    sources: [{{session: s2, turn: t1}}]
  - id: it-spring
    content: Melanie finds Lisbon beautiful in spring.
    kind: context
    keys: [lisbon, spring]
    sources: [{{session: s2, turn: t2}}]
    role: distractor
"""

PROBE = """\
  - id: q{n}
    probe:
      started_at: 2026-02-01T09:00:00Z
      message: What is the name of Caroline's dog? ({n})
    expect:
      must_contain_any: [Biscuit]
      relevant_items: [it-dog]
"""


def conversation_text(probes: int = 3, *, conv_id: str = "conv-1", category: str = "project_fact", folder: bool = False) -> str:
    """A conversation file with ``probes`` probes ``q1``..``qN`` (the shared part only when ``folder``)."""
    text = SHARED.format(conv_id=conv_id, category=category)
    if folder:
        return text
    return text + "probes:\n" + "".join(PROBE.format(n=n) for n in range(1, probes + 1))


def probes_text(numbers: range) -> str:
    """A probe file of a conversation folder holding probes ``q<n>`` for ``n`` in ``numbers``."""
    return "probes:\n" + "".join(PROBE.format(n=n) for n in numbers)


def write_conversation(folder: Path, probes: int = 3, *, name: str = "conv-1.yaml", **kwargs: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(conversation_text(probes, **kwargs), encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line of ``path`` containing ``needle``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
