"""The offline agent's use of search tools other than ``memory_search`` (plug-in and other memory systems).

When ``memory_search`` is not offered but another tool searches memory (its
name or description says search, recall, find, lookup or query, and it takes
one string such as ``query``, ``text``, ``topic`` or a ``terms`` array), the
agent calls it with the question's search terms (a string: the terms
joined by spaces); when that returns no entry, it narrows the query to one
salient term at a time (:func:`narrower_terms`; a product may match a query
as one phrase), within its tool rounds. It reads the results returned: a
JSON list under ``results``, ``memories``, ``notes``, ``items`` or
``entries``, else the first field holding a list of objects (a graph's
``entities``), else the result itself; each entry's text from
``content``/``text``/``value``/``body``, else its lists of strings joined (a
graph node's observations), and its name from ``name``/``title``/``key``
(used like matched keys). Entries then compete exactly like ``memory_search`` items.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SEARCH_WORDS = ("search", "recall", "find", "lookup", "look up", "query", "retrieve")
_QUERY_FIELDS = ("query", "text", "topic", "q", "question", "name")
_LIST_KEYS = ("results", "memories", "notes", "items", "entries", "matches")
_TEXT_KEYS = ("content", "text", "value", "body", "memory", "note")
_NAME_KEYS = ("name", "title", "key")


def generic_search_tool(offered: dict[str, dict[str, Any]], descriptions: dict[str, str]) -> str | None:
    """The first offered tool that searches memory by a query, other than ``memory_search``."""
    for name, params in offered.items():
        text = f"{name} {descriptions.get(name, '').split('.')[0]}".lower()
        if not any(re.search(rf"(^|[^a-z]){w}", text) for w in _SEARCH_WORDS):
            continue
        props = _v if isinstance(_v := params.get("properties"), dict) else {}
        if any(f in props for f in _QUERY_FIELDS) or "terms" in props:
            return name
    return None


def search_arguments(params: dict[str, Any], terms: tuple[str, ...]) -> dict[str, Any] | None:
    props = _v if isinstance(_v := params.get("properties"), dict) else {}
    if "terms" in props:
        return {"terms": list(terms[:32])}
    field = next((f for f in _QUERY_FIELDS if f in props), None)
    if field is None or not terms:
        return None
    args: dict[str, Any] = {field: " ".join(terms[:16])}
    required = _v if isinstance(_v := params.get("required"), list) else []
    return args if all(r in args for r in required) else None


def entries(result: Any) -> list[dict[str, Any]]:
    """(itemId, content, matchedKeys, observedAt) dicts in memory_search's shape, from any result."""
    if isinstance(result, dict):
        listed = next((result[k] for k in _LIST_KEYS if isinstance(result.get(k), list)), None)
        if listed is None:
            listed = next((v for v in result.values() if isinstance(v, list) and v and all(isinstance(e, dict) for e in v)), None)
        if listed is None:
            listed = [result] if any(isinstance(result.get(k), str) for k in _TEXT_KEYS) else []
    elif isinstance(result, list):
        listed = result
    else:
        listed = []
    out = []
    for index, entry in enumerate(listed):
        if not isinstance(entry, dict):
            continue
        text = next((entry[k] for k in _TEXT_KEYS if isinstance(entry.get(k), str)), None)
        if text is None:
            lines = [s for v in entry.values() if isinstance(v, list) for s in v if isinstance(s, str) and s.strip()]
            text = " ".join(lines) if lines else None
        name = next((entry[k] for k in _NAME_KEYS if isinstance(entry.get(k), str)), None)
        if text is None:
            continue
        item_id = entry.get("itemId") or entry.get("id") or name or f"entry-{index}"
        observed = next((entry[k] for k in ("observedAt", "updatedAt", "createdAt") if isinstance(entry.get(k), int)), 0)
        out.append({"itemId": str(item_id), "content": text, "matchedKeys": [name] if name else [], "observedAt": observed})
    return out


def narrower_terms(question: Any) -> list[str]:
    """The question's terms one at a time for a narrower query: salient concepts' terms first, longest first."""
    salient = {c.label.lower() for c in question.concepts if c.salient}
    terms = [t for t in question.search_terms if len(t) >= 3]
    return sorted(terms, key=lambda t: (t.lower() not in salient, -len(t)))


def loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None
