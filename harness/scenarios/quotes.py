"""Items that quote their source turn (scenario schema 2): a turn's text written once in a file, never again per item.

An imported LongMemEval S question holds ~490 turns and ~680 baseline items,
nearly every item a turn's whole text or a piece of it; writing the text
twice made a 254 MB source a 733 MB suite, and reading it back was most of
``validate`` and of the minute before a run's first sample. A file of
``schema_version: 2`` may therefore write such an item as::

    {"id": "s1.t2", "quote": [0, 412], "kind": "knowledge", "sources": [{"session": "s1", "turn": "t2"}], ...}

instead of giving ``content``: the item's content is characters ``start`` to
``end`` (Python slice offsets, in code points) of the text of its one source
turn, in the same file's ``sessions``. The loader puts that text in place
before anything validates the item, so a quoting item is, from then on, the
same item as one writing its content out: the same checks, the same seeding
and the same scenario hash (:mod:`harness.scenarios.hashing` hashes a schema 2
scenario as its schema 1 form). Schema 1 files read as they always did.

A quote that cannot be resolved (no such session or turn, offsets outside the
text, both ``content`` and ``quote``, not exactly one source, a schema 1 file)
is one problem naming the item and field, and the file is not loaded.
"""

from __future__ import annotations

from typing import Any

from harness.scenarios.documents import Document
from harness.scenarios.locating import locate
from harness.scenarios.problems import Finding, Problem

QUOTE = "quote"
"""The item field: ``[start, end]`` into its source turn's text."""
QUOTING_SCHEMA_VERSION = 2
"""The first scenario schema version whose items may quote."""


def _turn_texts(sessions: Any) -> dict[tuple[Any, Any], str]:
    """(session id, turn id) -> the turn's text, turn ids defaulting to ``t<position>`` as the models number them."""
    texts: dict[tuple[Any, Any], str] = {}
    for session in sessions if isinstance(sessions, list) else ():
        if not isinstance(session, dict) or not isinstance(session.get("turns"), list):
            continue
        sid = session.get("id")
        for position, turn in enumerate(session["turns"], start=1):
            if isinstance(turn, dict) and isinstance(turn.get("content"), str):
                tid = turn.get("id")
                texts.setdefault((sid, f"t{position}" if tid is None else tid), turn["content"])
    return texts


def _offsets(quote: Any, size: int) -> tuple[int, int] | None:
    """``quote`` as (start, end) when it is two integers with ``0 <= start < end <= size``, else None."""
    if not isinstance(quote, list) or len(quote) != 2 or not all(type(part) is int for part in quote):
        return None
    start, end = quote
    return (start, end) if 0 <= start < end <= size else None


def _quoted(item: dict[str, Any], texts: dict[tuple[Any, Any], str]) -> str | Finding:
    """The text ``item`` quotes, or what is wrong with its quote (a finding placed inside the item)."""
    if "content" in item:
        return Finding((QUOTE,), "an item gives its `content` or quotes its source turn, not both: remove one",
                       item[QUOTE])
    sources = item.get("sources")
    if not isinstance(sources, list) or len(sources) != 1 or not isinstance(sources[0], dict):
        return Finding(("sources",), "an item that quotes its source turn has exactly one source, the turn it quotes "
                       "(or write its `content` instead of `quote`)", sources)
    source = sources[0]
    text = texts.get((source.get("session"), source.get("turn")))
    if text is None:
        return Finding(("sources", 0), f"quotes turn {source.get('turn')!r} of session {source.get('session')!r}, "
                       "which this file's `sessions` do not hold (a quote reads a turn of its own file)", source)
    offsets = _offsets(item[QUOTE], len(text))
    if offsets is None:
        return Finding((QUOTE,), f"must be [start, end]: whole-number character offsets into the quoted turn's "
                       f"{len(text)}-character text, 0 <= start < end <= {len(text)}", item[QUOTE])
    start, end = offsets
    return text if (start, end) == (0, len(text)) else text[start:end]


def resolve_quotes(data: Any) -> list[Finding]:
    """Put each quoting item's text in its ``content`` (in place); findings for quotes that cannot be read.

    Items without ``quote`` are left untouched, so a file with none costs one
    pass over its items. An item whose quote fails keeps its ``quote`` (the
    caller refuses the file on any finding).
    """
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    quoting = [index for index, item in enumerate(items) if isinstance(item, dict) and QUOTE in item]
    if not quoting:
        return []
    version = data.get("schema_version", QUOTING_SCHEMA_VERSION)
    if type(version) is int and version < QUOTING_SCHEMA_VERSION:
        return [Finding(("schema_version",), f"items[{quoting[0]}] quotes its source turn (`quote`), which scenario "
                        f"schema_version {QUOTING_SCHEMA_VERSION} reads: set schema_version: {QUOTING_SCHEMA_VERSION}",
                        version)]
    texts = _turn_texts(data.get("sessions"))
    findings: list[Finding] = []
    for index in quoting:
        item = items[index]
        found = _quoted(item, texts)
        if isinstance(found, Finding):
            findings.append(Finding(("items", index, *found.loc), found.message, found.value))
            continue
        resolved = {key: value for key, value in item.items() if key != QUOTE}
        resolved["content"] = found
        items[index] = resolved
    return findings


def quote_problems(document: Document) -> list[Problem]:
    """:func:`resolve_quotes` on a parsed file's data, its findings placed at the file's lines."""
    return [locate(finding, document, ()) for finding in resolve_quotes(document.data)]
