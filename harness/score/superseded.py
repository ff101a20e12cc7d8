"""When a stale value in an answer is mentioned *as superseded*, not claimed.

A correct answer often names the old value while saying it changed: "payments
moved from eu-west-1 to eu-central-1", "use 5432, not 5433 anymore", "Aisha took
over from Marco". Counting that as an unsupported claim would penalize the arms
that see more history for being informative. This module decides, for one
occurrence of a ``stale`` canary, whether the answer marks it as superseded.

The rule is deliberately conservative and deterministic (see
:func:`is_superseded_mention`). An occurrence counts as superseded only when

1. the answer also states the expected current value (the caller checks this:
   the scenario's positive checks pass), and
2. a supersession cue is bound to the occurrence *in the same sentence*:

   * right before it, with at most two filler words in between
     (:data:`BEFORE_CUES`: "previously", "used to be", "instead of", "not",
     "no longer", "old", "formerly", "up from", a parenthesis "(was", ...:
     "instead of the old eu-west-1", "300 euros (was 280)"; a bare "was" is a claim);
   * "from" right before it (at most two filler words) **and** a change verb in
     the sentence (:data:`CHANGE_VERBS`: "moved from X", "raised from X to Y",
     "took over from X", "rolled back from X"); a bare "deploy from eu-west-1" is not a cue;
   * within three words after it (:data:`AFTER_CUES`: "X previously", "X is no
     longer used", "X was replaced", "X was removed", "X was cancelled", "X
     was reverted", "X anymore", "X -> Y");
   * or, for Chinese text, anywhere in the sentence (:data:`CJK_CUES`:
     之前, 原来, 改为, 不再, ...).

Sentences end at ``.``/``!``/``?`` followed by a space or the end, at CJK
sentence marks, semicolons and line breaks (so "3.10" or a hostname never split
a sentence). Leakage and invented canaries never go through this rule: another
workspace's secret is a leak however it is phrased.

All patterns are compiled once at import; matching is linear in the sentence.
"""

from __future__ import annotations

import re

#: Words that may sit between a cue and the stale value ("not the old port 5433").
FILLER_WORDS: tuple[str, ...] = (
    "the", "a", "an", "old", "previous", "former", "original", "earlier", "port", "host", "hostname", "region",
    "value", "version", "python", "node", "postgres", "postgresql", "pg", "on", "in", "at", "be", "being",
    "using", "with", "localhost", "of", "it", "its", "that", "was", "is", "endpoint", "limit", "lead",
    "through", "via", "go", "goes", "sent", "provisional", "initial", "planned", "estimated", "interim",
    "temporary",
)
#: Cues that mark the value right after them as superseded.
BEFORE_CUES: tuple[str, ...] = (
    "previously", "formerly", "originally", "used to be", "used to", "instead of", "rather than", "not",
    "no longer", "old", "older", "previous", "former", "earlier", "replaced", "replacing", "superseded",
    "retired", "decommissioned", "deprecated", "outdated", "obsolete", "was changed from", "changed from",
    "up from", "down from", "(was",
)
#: With "from" right before the value, one of these must appear in the sentence.
CHANGE_VERBS: tuple[str, ...] = (
    "moved", "move", "migrated", "migration", "changed", "change", "switched", "switch", "upgraded", "upgrade",
    "bumped", "raised", "increased", "lowered", "reduced", "went", "transitioned", "updated", "renamed",
    "replaced", "cut over", "cutover", "took over", "taken over", "takes over", "handed over", "shifted",
    "relocated", "pushed", "postponed", "rescheduled", "delayed", "moving", "reverted", "reverting", "rolled back",
    "corrected",
)
#: Cues within three words after the value ("5433 is no longer used", "eu-west-1 previously").
AFTER_CUES: tuple[str, ...] = (
    "previously", "before", "formerly", "earlier", "originally", "anymore", "any more", "any longer",
    "no longer", "is gone", "was replaced", "has been replaced", "got replaced", "were replaced",
    "was retired", "is retired", "was decommissioned", "is decommissioned", "has been decommissioned",
    "is deprecated", "was changed", "has changed", "was superseded", "is superseded", "is outdated",
    "is obsolete", "was moved", "was the old", "was removed", "were removed", "has been removed", "have been removed",
    "got removed", "was dropped", "were dropped", "has been dropped", "was cancelled", "were cancelled",
    "has been cancelled", "was canceled", "were canceled", "has been canceled", "was discontinued",
    "was reverted", "were reverted", "has been reverted", "got reverted", "was rolled back", "were rolled back",
    "has been rolled back", "was corrected", "has been corrected", "was a typo",
    "->", "\u2192", "=>",
)
#: Chinese supersession cues, accepted anywhere in the sentence.
CJK_CUES: tuple[str, ...] = ("之前", "原来", "原先", "以前", "改为", "改成", "不再", "旧的", "换成", "已改", "迁移到")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_FILLER = rf"(?:(?:{_alternation(FILLER_WORDS)})\W+){{0,2}}"
_BEFORE_RE = re.compile(rf"(?<![\w-])(?:{_alternation(BEFORE_CUES)})\W+{_FILLER}$", re.IGNORECASE)
_FROM_RE = re.compile(rf"(?<![\w-])from\W+{_FILLER}$", re.IGNORECASE)
_CHANGE_RE = re.compile(rf"(?<![\w-])(?:{_alternation(CHANGE_VERBS)})(?![\w-])", re.IGNORECASE)
_AFTER_RE = re.compile(
    rf"^\W*(?:[\w.:/-]+\W+){{0,3}}?(?:{_alternation(tuple(c for c in AFTER_CUES if c[0].isalpha()))})(?![\w-])"
    rf"|^\W{{0,3}}(?:->|\u2192|=>)",
    re.IGNORECASE,
)
_CJK_RE = re.compile("|".join(re.escape(c) for c in CJK_CUES))
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|[\n;\u3002\uff01\uff1f\uff1b]")


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = 0
    for match in _SENTENCE_END_RE.finditer(text, 0, start):
        left = match.end()
    right_match = _SENTENCE_END_RE.search(text, end)
    return left, right_match.start() if right_match else len(text)


def is_superseded_mention(text: str, start: int, end: int) -> bool:
    """True when the occurrence ``text[start:end]`` is marked as superseded (see the module rule).

    Args:
        text: the (normalized) answer.
        start: index of the occurrence's first character.
        end: index just past its last character.

    Returns:
        Whether a supersession cue is bound to this occurrence in its sentence.
        The caller must still require the current value to appear in the answer.

    Example:
        >>> t = "it moved from eu-west-1 to eu-central-1"
        >>> is_superseded_mention(t, t.index("eu-west-1"), t.index("eu-west-1") + 9)
        True
        >>> t = "deploy from eu-west-1"
        >>> is_superseded_mention(t, t.index("eu-west-1"), len(t))
        False
    """
    left, right = _sentence_bounds(text, start, end)
    sentence = text[left:right]
    before, after = text[left:start], text[end:right]
    if _CJK_RE.search(sentence):
        return True
    if _BEFORE_RE.search(before) or _AFTER_RE.search(after):
        return True
    return bool(_FROM_RE.search(before) and _CHANGE_RE.search(sentence))


def occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    """Every (start, end) of ``needle`` in ``text`` (both already normalized), overlapping allowed."""
    found: list[tuple[int, int]] = []
    index = text.find(needle)
    while index != -1 and needle:
        found.append((index, index + len(needle)))
        index = text.find(needle, index + 1)
    return found
