"""The baseline extractor: memory items and keys from conversation text, deterministic and documented.

LongMemEval publishes conversations but no extracted memories, so its
importer builds them here (``docs/importers.md`` says so, and every imported
suite records that retrieval runs over this baseline extraction). LoCoMo's
observation facts use :func:`keys_for` only.

Rules:

- one item per turn (user and assistant; the assistant's turns hold the
  answers to LongMemEval's single-session-assistant questions); a turn longer
  than :data:`MAX_ITEM_CHARS` is cut at sentence ends into several items
  ("fact sentences"), each citing the same turn;
- keys (at most :data:`MAX_KEYS`): first the entities (runs of capitalized
  words; a lone word opening a sentence only when it is capitalized
  elsewhere in the text too, and never a stop word) as ``entity`` keys, then the
  most frequent content words (not stop words, 4 letters or more; ties by
  first appearance) as ``concept`` keys, all ``deterministic``; a text with
  neither gets its first word; a key the store would refuse (over its
  256-code-point limit, e.g. a run of repeated syllables, or with a
  zero-width character) is never written: words over :data:`MAX_KEY_CHARS`
  are left out, other keys are checked by the store's own rule, and the
  caller is told how many were left out;
- each item is observed at its session's start.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from harness.importers.answers import STOP_WORDS
from memory_tools import MemoryValidationError, normalize_content, normalize_search_term

MAX_ITEM_CHARS = 1800
"""Below the store's 2,000 code-point content limit, with room for normalization."""
MAX_KEYS = 12
MAX_ENTITIES = 5
MAX_KEY_CHARS = 120

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# ``\b[A-Z]`` written as ``[A-Z](?<!\w[A-Z])`` (a capital no word character precedes): the same matches, but
# starting on a character class lets the regex engine skip ahead to the next capital (a third faster).
_ENTITY = re.compile(r"[A-Z](?<!\w[A-Z])[A-Za-z0-9'’&-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][A-Za-z0-9'’&-]*)*")
# Content words of 4 letters or more: the matches of ``[a-z][a-z'-]*[a-z]`` that long (a shorter match's
# suffixes are shorter still, so leaving them out moves no other match), without counting the short ones.
_WORD = re.compile(r"[a-z][a-z'-]{2,}[a-z]")


def fact_chunks(text: str, limit: int = MAX_ITEM_CHARS) -> list[str]:
    """``text`` cut at sentence ends into pieces of at most ``limit`` characters (a longer sentence is cut hard).

    Example:
        >>> fact_chunks("One. Two.", limit=5)
        ['One.', 'Two.']
    """
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    chunks: list[str] = []
    current = ""
    for sentence in (s.strip() for s in _SENTENCE_END.split(text)):
        if not sentence:
            continue
        while len(sentence) > limit:
            if current:
                chunks.append(current)
                current = ""
            chunks.append(sentence[:limit])
            sentence = sentence[limit:].strip()
        if current and len(current) + 1 + len(sentence) > limit:
            chunks.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        chunks.append(current)
    return chunks


def quoted_pieces(text: str, limit: int = MAX_ITEM_CHARS) -> list[tuple[str, list[int] | None]]:
    """:func:`fact_chunks` of ``text``, each with its ``[start, end]`` in ``text`` (None for a piece not found as written).

    A schema 2 suite writes an item that is a turn's text, or a piece of it, as
    that quote rather than the text again (:mod:`harness.scenarios.quotes`).
    A piece joined across collapsed whitespace is not a slice of the text and
    keeps its content.

    Example:
        >>> quoted_pieces("One. Two.")
        [('One. Two.', [0, 9])]
    """
    found: list[tuple[str, list[int] | None]] = []
    cursor = 0
    for piece in fact_chunks(text, limit):
        start = text.find(piece, cursor)
        if start < 0:
            found.append((piece, None))
            continue
        cursor = start + len(piece)
        found.append((piece, [start, cursor]))
    return found


def storable(content: str) -> bool:
    """Does the memory store accept ``content`` as an item's content (not empty after normalization, not too long)?"""
    try:
        normalize_content(content)
    except MemoryValidationError:
        return False
    return True


# Where a word opens the text or a sentence: after the start or one of .!?:"'( and any whitespace (a match's end).
# The start's alternative (``\A\s*``) is matched on its own: an alternation first makes the engine try every place.
_SENTENCE_OPEN = re.compile(r"[.!?:\"'(]\s*")
_LEADING_SPACE = re.compile(r"\s*")


def _entities(text: str) -> list[str]:
    """Runs of capitalized words; a lone word opening a sentence counts only if it is capitalized elsewhere too."""
    opens = {match.end() for match in _SENTENCE_OPEN.finditer(text)}
    opens.add(_LEADING_SPACE.match(text).end())  # type: ignore[union-attr]  # \s* always matches
    matches = [(match[0].split(), match.start() in opens) for match in _ENTITY.finditer(text)]
    inside = {words[0] for words, initial in matches if len(words) == 1 and not initial}
    found: list[str] = []
    seen: set[str] = set()
    for words, initial in matches:
        if len(words) == 1:
            name = words[0]
            if name.lower() in STOP_WORDS or len(name) < 2 or (initial and name not in inside):
                continue
        else:
            name = " ".join(words[1:] if words[0].lower() in STOP_WORDS else words)
        name = name[:MAX_KEY_CHARS].strip()
        if name and name not in seen:
            seen.add(name)
            found.append(name)
    return found


@functools.lru_cache(maxsize=65_536)
def storable_key(key: str) -> bool:
    """Does the memory store accept ``key`` as a key (not empty, at most 256 code points, no control character)?

    Remembered (the answer depends on the text alone): a suite's names repeat item after item.
    """
    try:
        normalize_search_term(key)
    except MemoryValidationError:
        return False
    return True


def keys_for(text: str, *, entities: tuple[str, ...] = (),
             refused: list[str] | None = None) -> list[str | dict[str, str]]:
    """Keys for an item holding ``text``: given ``entities`` first, then found entities, then content words.

    Returns YAML-ready keys: an entity is ``{key, type: entity, origin:
    deterministic}``, a content word ``{key, origin: deterministic}`` (``concept``
    is the default type; leaving it out keeps a LongMemEval suite a fifth smaller).
    Keys the store would refuse are left out and appended to ``refused``.

    Example:
        >>> [k["key"] for k in keys_for("I met Caroline at the LGBTQ support group.")]
        ['Caroline', 'LGBTQ', 'support', 'group']
    """
    names: list[str] = []
    folded: set[str] = set()
    for name in (*entities, *_entities(text)):
        if name.casefold() not in folded:
            folded.add(name.casefold())
            names.append(name)
    left_out = [n for n in names if not storable_key(n)]
    names = [n for n in names if n not in left_out][:MAX_ENTITIES]
    taken = {n.casefold() for n in names}
    # Counter counts in C and keeps first appearances in order; _WORD starts and ends on a letter (nothing to strip)
    counts = Counter(_WORD.findall(text.lower()))
    left_out += [word for word in counts if len(word) > MAX_KEY_CHARS]
    counted = [word for word in counts if word not in STOP_WORDS and word not in taken and len(word) <= MAX_KEY_CHARS]
    ranked = sorted(counted, key=counts.__getitem__, reverse=True)[: MAX_KEYS - len(names)]  # stable: ties by first appearance
    keys: list[str | dict[str, str]] = [{"key": n, "type": "entity", "origin": "deterministic"} for n in names]
    keys += [{"key": w, "origin": "deterministic"} for w in ranked]
    if not keys:
        first = (text.split() or ["conversation"])[0][:MAX_KEY_CHARS]
        keys.append({"key": first if storable_key(first) else "conversation", "origin": "deterministic"})
    if refused is not None:
        refused += list(dict.fromkeys(left_out))
    return keys
