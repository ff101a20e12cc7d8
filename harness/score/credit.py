"""Which of the ids a tool call reported it is credited with: at most ``top_k`` per call, and only items it showed.

Retrieval's recall@k and precision (:func:`harness.score.disclosure.retrieval`)
and the session-level figures (:mod:`harness.score.paper_metrics`) read the
ids each call says it disclosed (``disclosed_item_ids``). The Host reports
exactly what its results hold, but a plug-in reports its own, and one that
over-credits would inflate recall@k: more ids than the run's budget lets one
retrieval show (mem0 once credited every item citing a stored turn, up to
15 at k = 10), or an item the result never showed. So the harness checks
every system the same way:

- **at k**: at most ``top_k`` ids per call, the first ones in the order the
  call reported them (``top_k`` from the record's ``retrieval_budget``; a
  record written before it was recorded is not capped);
- **shown**: a scenario item is credited only when the call's result text
  shows it: its id (as a whole token), its content, or the content of a turn
  it cites (a system that stores raw turns shows the turn, not the prepared
  item), compared on the result's decoded JSON strings as
  :func:`~harness.score.matching.contains` compares (NFKC, case, spaces). An
  id that is no scenario item (a product's own memory id) is kept: it can
  only lower precision.

Every id left out is listed in ``uncredited_items`` (``id: beyond top_k=10``,
``id: not shown``), so a report can say which system over-credited. The
leak checks (:func:`harness.score.disclosure.tool_findings`) still read every
id a call reported: claiming an out-of-scope item is a leak whether or not it
is credited. An answer's cited ids (:func:`harness.score.claims.cited_id_claims`)
are supported by credited ids only, never by a bare report.

Example:
    >>> shows_id('{"itemId":"it-1"}', "it-1"), shows_id('{"itemId":"it-10"}', "it-1")
    (True, False)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.score.matching import contains

if TYPE_CHECKING:
    from harness.records import SampleRecord
    from harness.scenarios import Scenario

#: Why an id was not credited.
BEYOND_K, NOT_SHOWN = "beyond top_k={k}", "not shown"


@dataclass(frozen=True)
class Credit:
    """The ids each tool call is credited with (one list per call, in call order) and why others were not."""

    calls: list[list[str]] = field(default_factory=list)
    uncredited: list[str] = field(default_factory=list)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def shown_text(result_text: str) -> str:
    """What a result shows a reader: its JSON's strings decoded (``\\"`` as ``"``, ``\\u00e9`` as ``é``), one a line,
    after the text as sent; the text alone when it is not JSON."""
    try:
        decoded = json.loads(result_text)
    except (ValueError, TypeError, RecursionError):
        return result_text
    return "\n".join([result_text, *_strings(decoded)])


def shows_id(text: str, item_id: str) -> bool:
    """Whether ``text`` names ``item_id`` as a whole token (``it-1`` is not in ``it-10``)."""
    return re.search(rf"(?<![\w.-]){re.escape(item_id)}(?![\w-]|\.\w)", text) is not None


def _shows(text: str, item: Any, turns: dict[tuple[str, str | None], str]) -> bool:
    """Whether ``text`` shows ``item``: its id, its content, or a turn it cites."""
    if shows_id(text, item.id) or contains(text, item.content):
        return True
    cited = (turns.get((source.session, source.turn)) for source in item.sources)
    return any(content and contains(text, content) for content in cited)


def top_k_of(record: SampleRecord) -> int | None:
    """The most ids one call may be credited with: the record's budget's ``top_k`` (None: not recorded, no cap)."""
    budget = record.retrieval_budget or {}
    top_k = budget.get("top_k")
    return top_k if isinstance(top_k, int) and top_k > 0 else None


def credit(record: SampleRecord, scenario: Scenario) -> Credit:
    """Each tool call's credited ids (see the module conventions) and the ids left out, with why."""
    items = {item.id: item for item in scenario.items}
    turns = {(session.id, turn.id): turn.content for session in scenario.sessions for turn in session.turns}
    k = top_k_of(record)
    out = Credit()
    for call in record.tool_calls:
        reported = list(dict.fromkeys(call.disclosed_item_ids))  # an id twice in one call counts once
        text = shown_text(call.result_text) if any(i in items for i in reported) else ""
        kept: list[str] = []
        for item_id in reported:
            item = items.get(item_id)
            if k is not None and len(kept) == k:
                out.uncredited.append(f"{item_id}: {BEYOND_K.format(k=k)}")
            elif item is None or _shows(text, item, turns):
                kept.append(item_id)
            else:
                out.uncredited.append(f"{item_id}: {NOT_SHOWN}")
        out.calls.append(kept)
    return out


def credited_ids(record: SampleRecord, scenario: Scenario) -> list[list[str]]:
    """The ids each tool call is credited with, in call order (:func:`credit`)."""
    return credit(record, scenario).calls
