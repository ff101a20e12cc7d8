"""How much memory one retrieval may show: the one rule every system's budget counts by.

A retrieval budget of ``chars`` counts the characters (code points) of the
memory text a retrieval discloses: each item's own text (an item's
``content``, a named memory's ``text``, a product's memory string), never
the JSON around it or its metadata (ids, keys, times, scores). Counting the
whole result text instead charged a system for its wire format: the Host's
``memory_search`` spends about three quarters of its text on fields around
the content, a product's bare list far less, so equal characters were not
equal memory. Items are shown whole, best first, while their texts together
fit; at most ``top_k`` of them. ``memory_get`` shows at most ``chars`` of
an item's content (:func:`budgeted_content`). Times can be shown in ISO
8601 beside their epoch milliseconds (:func:`with_iso_times`).

Example:
    >>> fit_disclosure(["port 5173", "uses pnpm", "a" * 1000], top_k=10, chars=30)
    2
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any


def fit_disclosure(texts: Sequence[str], *, top_k: int, chars: int) -> int:
    """How many of ``texts`` (ranked memory texts, best first) one retrieval shows: a prefix, whole items only."""
    used = shown = 0
    for text in texts[:top_k]:
        if used + len(text) > chars:
            break
        used += len(text)
        shown += 1
    return shown


def budgeted_content(content: str, budget: int | None) -> dict[str, Any]:
    """``memory_get``'s content within the content budget: cut at the budget, and said so (nothing when it fits)."""
    if budget is None or len(content) <= budget:
        return {}
    return {"content": content[:budget], "contentTruncated": True, "omittedContentChars": len(content) - budget}


#: The wire format's times (epoch milliseconds) that get an ISO form beside them.
TIME_FIELDS = ("eventStartedAt", "eventEndedAt", "observedAt", "createdAt", "updatedAt")


def with_iso_times(fields: dict[str, Any], iso: bool) -> dict[str, Any]:
    """``fields`` with each time's ISO 8601 UTC form right after it (``observedAtIso``), when ``iso``.

    Beside, not instead: readers of the epoch milliseconds (the offline model's recency) keep working.
    """
    if not iso:
        return fields
    out: dict[str, Any] = {}
    for key, value in fields.items():
        out[key] = value
        if key in TIME_FIELDS and isinstance(value, int) and not isinstance(value, bool):
            out[f"{key}Iso"] = iso_utc(value)
    return out


def iso_utc(millis: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC to the second (``2026-03-02T10:00:00Z``); the number itself if out of range."""
    try:
        return datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return str(millis)
