"""How much memory one retrieval may show: the one rule every system's budget counts by.

A retrieval budget of ``chars`` counts the characters (code points) of the
memory text a retrieval discloses: each item's own text (an item's
``content``, a named memory's ``text``, a product's memory string), never
the JSON around it or its metadata (ids, keys, times, scores). Counting the
whole result text instead charged a system for its wire format: the Host's
``memory_search`` spends about three quarters of its text on fields around
the content, a product's bare list far less, so equal characters were not
equal memory. Items are shown whole, best first, while their texts together
fit; at most ``top_k`` of them.

Example:
    >>> fit_disclosure(["port 5173", "uses pnpm", "a" * 1000], top_k=10, chars=30)
    2
"""

from __future__ import annotations

from collections.abc import Sequence


def fit_disclosure(texts: Sequence[str], *, top_k: int, chars: int) -> int:
    """How many of ``texts`` (ranked memory texts, best first) one retrieval shows: a prefix, whole items only."""
    used = shown = 0
    for text in texts[:top_k]:
        if used + len(text) > chars:
            break
        used += len(text)
        shown += 1
    return shown


def memory_chars(texts: Sequence[str]) -> int:
    """The characters of memory text ``texts`` disclose (what the budget counts)."""
    return sum(len(text) for text in texts)
