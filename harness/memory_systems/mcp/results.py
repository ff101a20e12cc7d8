"""What an MCP tool result shows the model, and which of the sample's stored units it discloses.

A product's result is its own format (a knowledge graph's entities, a list of
notes, prose). Two rules make it count like every other system's:

- **budget** (:func:`fit_result`): when the result is JSON, each list in it
  (at the top, or a top-level field's) keeps whole entries, in the product's
  order, while their memory text (the strings inside, never the keys) fits the
  run's ``chars``, at most ``top_k`` entries in all (``fit_disclosure``, the
  rule of every system); other text is cut at ``chars`` and marked;
- **attribution** (:func:`attribute`): a stored unit is disclosed when its text,
  or a label the write gave it that names its id (a note titled
  ``local database (it-pay-local-db)``), appears in what the model was shown
  (after JSON decoding, Unicode NFKC, case and whitespace folding): a product
  that lists another workspace's note by its title alone has shown that note. A unit is an item (write unit ``item``: its id) or
  a session turn (unit ``session``: the items sourced from that turn, else
  ``turn:<session>/<turn>``). A server that returns another workspace's memory
  therefore discloses that workspace's items: a scope leak in the metrics,
  whatever the product calls its records.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from memory_tools import fit_disclosure

CUT_MARK = " […cut to the run's retrieval budget]"


@dataclass(frozen=True)
class Unit:
    """One stored unit: the ids it discloses, its text, and labels naming its id; any of them in a result shows it."""

    ids: tuple[str, ...]
    text: str
    labels: tuple[str, ...] = ()


def fold(text: str) -> str:
    """Text as attribution compares it: NFKC, case folded, whitespace runs as one space."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def result_text(result: Any) -> str:
    """The text a ``CallToolResult`` gives the model: its text blocks joined; else its structured content as JSON."""
    texts = [block.text for block in getattr(result, "content", None) or [] if getattr(block, "type", "") == "text"]
    others = [getattr(block, "type", "?") for block in getattr(result, "content", None) or [] if getattr(block, "type", "") != "text"]
    if not texts and getattr(result, "structured_content", None) is not None:
        texts = [json.dumps(result.structured_content, ensure_ascii=False)]
    texts += [f"[{kind} content not shown]" for kind in others]
    return "\n".join(texts)


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value (values only, never object keys), in document order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for inner in value.values() for s in strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in strings(inner)]
    return []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def fit_result(text: str, *, top_k: int, chars: int) -> tuple[str, bool]:
    """(the text shown within the budget, whether anything was left out); see the module docstring."""
    value = _loads(text)
    if isinstance(value, (list, dict)):
        room = {"chars": chars, "entries": top_k}
        fitted, cut = _fit(value, room)
        if not cut:
            return text, False
        return json.dumps(fitted, ensure_ascii=False), True
    if len(text) <= chars:
        return text, False
    return text[:chars] + CUT_MARK, True


def _fit(value: Any, room: dict[str, int]) -> tuple[Any, bool]:
    """Lists fitted whole-entry by whole-entry from the shared ``room``; a dict's other fields kept as they are."""
    if isinstance(value, list):
        texts = [" ".join(strings(entry)) for entry in value]
        shown = fit_disclosure(texts, top_k=max(room["entries"], 0), chars=max(room["chars"], 0))
        room["chars"] -= sum(len(t) for t in texts[:shown])
        room["entries"] -= shown
        return value[:shown], shown < len(value)
    fitted: dict[str, Any] = {}
    cut = False
    for key, inner in value.items():
        if isinstance(inner, list):
            fitted[key], was_cut = _fit(inner, room)
            cut = cut or was_cut
        elif isinstance(inner, str) and len(inner) > room["chars"]:
            fitted[key], cut = inner[: max(room["chars"], 0)] + CUT_MARK, True
            room["chars"] = 0
        else:
            fitted[key] = inner
            room["chars"] -= sum(len(s) for s in strings(inner))
    return fitted, cut


def attribute(shown: str, units: list[Unit], top_k: int) -> tuple[str, ...]:
    """Ids of the units whose text the model was shown, in order of first appearance, at most ``top_k``."""
    value = _loads(shown)
    haystack = fold("\n".join(strings(value)) if isinstance(value, (list, dict)) else shown)
    found: list[tuple[int, int, str]] = []
    for order, unit in enumerate(units):
        places = [haystack.find(needle) for needle in (fold(t) for t in (unit.text, *unit.labels)) if needle]
        shown_at = [p for p in places if p >= 0]
        if shown_at:
            found += [(min(shown_at), order, item_id) for item_id in unit.ids]
    ids: list[str] = []
    for _, _, item_id in sorted(found):
        if item_id not in ids:
            ids.append(item_id)
    return tuple(ids[:top_k])
