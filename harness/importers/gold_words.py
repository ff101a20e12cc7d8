"""Gold words no answer would write: two words glued, or a misspelling; decided with an English word list.

A word of a gold answer that the conversation never writes is one of three
things, and only two of them make its check unpassable:

- an ordinary English word (``filmmaker``, ``sunday``, ``corkboard``,
  ``perform``): an answer may write it as the gold does, so it is no
  finding, even though it splits into two words of the conversation
  (``film maker``, ``per form``). "Ordinary" is decided by a real word list,
  wordfreq's English one (:func:`english_word`), never by a list kept here;
- two words glued (``watchingmovies``, ``hisvideo``, ``15April``): not a
  word of the list and splitting into two words of the conversation, or a
  capital inside the word where two capitalised words meet
  (``StreetFighter``, whatever the list says of ``streetfighter``);
- a misspelling (``Janury``, ``Januarty``): not a word of the list nor two
  words of the conversation glued (``andhow`` is ``and how``, not a
  misspelled ``anyhow``), one edit
  (a letter added, dropped, changed or two swapped) from a word of the list
  that the conversation writes, a month, or a common English word: the
  spelling an answer would use (:func:`misspellings`).

The word list loads once per process, on the first gold word of five
letters or more (about a second and 40 MB); it is asked before the
conversation, because a dict lookup is far cheaper than the audit's search
of a conversation's text (LoCoMo's import: 3.2 s CPU with it, 3.8 s before).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Container, Iterator
from functools import lru_cache

from harness.importers.answers import MONTHS

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_DIGIT_GLUE = re.compile(r"\b(\d+)([A-Za-z]{3,})\b")
_INNER_CAPITAL = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])")
_ORDINAL_OR_UNIT = frozenset({"st", "nd", "rd", "th", "am", "pm", "s", "km", "kg", "mph", "mins", "min", "hrs"})
_ENDINGS = (("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: A correction that is not a word of the conversation must be at least this common (wordfreq's Zipf scale:
#: 3 is once per million words), so a rare word one edit away is never offered as what the gold meant.
COMMON_ZIPF = 3.0
#: A glued word's parts are words of the conversation at least this long (``he`` + ``knows``).
MIN_PART = 2
#: Words this short are left alone: one edit from a short word is another word too often to call it a misspelling.
MIN_MISSPELLED = 5


class WordListError(Exception):
    """The English word list is missing; the message says what to install."""


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    """wordfreq's English list as ``{word: frequency}`` (one dict lookup per word; its own lookup tokenizes first)."""
    try:
        from wordfreq import get_frequency_dict
    except ImportError:
        raise WordListError("the gold audit needs the English word list of wordfreq: pip install 'wordfreq>=3.1' "
                            "(a core dependency of recall-eval; reinstall it)") from None
    return get_frequency_dict("en")


def zipf(word: str) -> float:
    """How common ``word`` is in English on wordfreq's Zipf scale (0 when it is not in the list, 7 for "the").

    Example:
        >>> round(zipf("filmmaker"), 1), zipf("watchingmovies")
        (3.6, 0.0)
    """
    frequency = _frequencies().get(word.lower(), 0.0)
    return math.log10(frequency) + 9 if frequency > 0 else 0.0


def english_word(word: str) -> bool:
    """Is ``word`` in wordfreq's English word list (case aside)?

    Example:
        >>> english_word("corkboard"), english_word("watchingmovies")
        (True, False)
    """
    return zipf(word) > 0


def normalize(text: str) -> str:
    """The scorer's normalisation (``harness.score.matching.normalize_text``): NFKC, casefold, ``'``, spaces.

    Here because gold words are folded with it; the audit, which folds whole conversations, imports it.
    """
    if text.isascii():  # NFKC leaves ASCII alone and casefold is lower there: the common case, 10x faster
        return " ".join(text.lower().split())
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(folded.split())  # the same whitespace as the scorer's \s+, split in C (500 kB a conversation)


def inflected(word: str, words: Container[str]) -> bool:
    """Is ``word`` a plural or past form of a word the conversation uses (``sunflowers`` of ``sunflower``)?"""
    return any(word.endswith(end) and word[: -len(end)] + add in words for end, add in _ENDINGS)


def _unknown(folded: str, words: Container[str]) -> bool:
    """A word the conversation never writes, in none of its forms, and not in the English word list."""
    # the word list first: a dict lookup, where asking the conversation searches its text
    return not english_word(folded) and folded not in words and not inflected(folded, words)


def glued_words(text: str, words: Container[str]) -> list[tuple[str, str]]:
    """Words of ``text`` that are two words glued (module docstring), as ``(word, "left right")`` pairs.

    Also a number glued to a word (``15April``; ordinals and units such as
    ``2nd``, ``3pm`` are not glued, and a misspelled word glued to a number
    is a misspelling: :func:`misspellings`).

    Example:
        >>> glued_words("Yesteammates, watchingmovies, filmmaker", {"yes", "teammates", "watching", "movies",
        ...                                                        "film", "maker"})
        [('Yesteammates', 'Yes teammates'), ('watchingmovies', 'watching movies')]
    """
    out: list[tuple[str, str]] = []
    for match in _DIGIT_GLUE.finditer(text):
        letters = match[2].lower()
        if letters in _ORDINAL_OR_UNIT or normalize(match[0]) in words:
            continue
        if letters in words or english_word(letters) or _correction(letters, words) is None:
            out.append((match[0], f"{match[1]} {match[2]}"))
    for token in _TOKEN.findall(text):
        folded = normalize(token)
        if len(folded) < 6 or not folded.isalpha() or folded in words:
            continue
        parts = _INNER_CAPITAL.split(token)
        if len(parts) == 2 and all(normalize(p) in words for p in parts):
            out.append((token, " ".join(parts)))
            continue
        cut = _split(folded, words) if _unknown(folded, words) else None
        if cut is not None:
            out.append((token, f"{token[:cut]} {token[cut:]}"))
    return out


def _split(folded: str, words: Container[str]) -> int | None:
    """Where ``folded`` splits into two words of the conversation of two letters or more (``heknows``), or None."""
    return next((cut for cut in range(MIN_PART, len(folded) - MIN_PART + 1)
                 if folded[:cut] in words and folded[cut:] in words), None)


def _edits(word: str) -> Iterator[str]:
    """Every string one edit from ``word``: a letter dropped, two neighbours swapped, a letter changed or added."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    for left, right in splits:
        if right:
            yield left + right[1:]
            if len(right) > 1:
                yield left + right[1] + right[0] + right[2:]
            for letter in _LETTERS:
                yield left + letter + right[1:]
        for letter in _LETTERS:
            yield left + letter + right


def _correction(folded: str, words: Container[str]) -> str | None:
    """The word one edit from ``folded`` an answer would write: the conversation's first, else the commonest."""
    if len(folded) < MIN_MISSPELLED or not folded.isalpha() or not _unknown(folded, words):
        return None
    if _split(folded, words) is not None:
        return None  # two words glued (``andhow``) are glued, not a misspelling of ``anyhow``
    # Only words of the list (or months) are candidates: the conversation is asked about those few alone,
    # since asking it about all ~500 edits costs a scan of its text each in the audit.
    candidates = {c for c in _edits(folded) if c != folded and (c in MONTHS or zipf(c) > 0)}
    ours = sorted(c for c in candidates if c in MONTHS or c in words)
    if ours:
        return max(ours, key=lambda c: (zipf(c), c))
    common = [c for c in candidates if zipf(c) >= COMMON_ZIPF]
    return max(common, key=lambda c: (zipf(c), c)) if common else None


def misspellings(text: str, words: Container[str]) -> list[tuple[str, str]]:
    """Misspelled words of ``text`` as ``(as written, as an answer would write it)``, glued numbers spaced.

    Example:
        >>> misspellings("21Janury, 2022; Januarty 5; Sweden", {"sweden", "2022"})
        [('21Janury', '21 January'), ('Januarty', 'January')]
    """
    out: list[tuple[str, str]] = []
    for token in _TOKEN.findall(text):
        glued = _DIGIT_GLUE.fullmatch(token)
        number, letters = (glued[1], glued[2]) if glued else ("", token)
        fixed = _correction(normalize(letters), words)
        if fixed is not None:
            spelled = fixed.capitalize() if letters[:1].isupper() else fixed
            out.append((token, f"{number} {spelled}" if number else spelled))
    return out


def unglue_digits(text: str, words: Container[str]) -> str:
    """A number glued to a word the conversation writes, spaced: ``3dogs`` -> ``3 dogs`` (``2nd``, ``3pm`` stay).

    Example:
        >>> unglue_digits("3dogs and 2nd place at 3pm", {"dogs", "place"})
        '3 dogs and 2nd place at 3pm'
    """
    def split(match: re.Match[str]) -> str:
        letters = match[2]
        if letters.lower() in _ORDINAL_OR_UNIT or normalize(letters) not in words or normalize(match[0]) in words:
            return match[0]
        return f"{match[1]} {letters}"

    return _DIGIT_GLUE.sub(split, text)
