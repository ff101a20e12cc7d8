"""Does a text state a string, by its code points: the needle matching every check and leak test starts from.

Both sides are NFKC-normalized, casefolded and whitespace collapsed, with
Unicode format characters (category Cf: zero-width space, soft hyphen, bidi
marks) dropped, then compared as substrings, except short strings (3
characters or fewer, e.g. "no", "yes", "2") and lone numbers ("55432",
"1,240"), which match word-bounded (:func:`contains`): "no" is not in
"know", "2" is not in "12" or "2.5" (the boundary is :mod:`harness.word_bounds`, which the gold
audit shares). :mod:`harness.score.matching` builds the
answer checks on it, and :mod:`harness.score.visible` the matching of what a
reader sees (ignorables, markup and homoglyphs folded), which leaks and
forbidden strings use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from harness.score.superseded import occurrences
from harness.word_bounds import bounded_pattern, is_short_needle
from memory_tools import strip_format_characters

_WS_RE = re.compile(r"\s+")


def _normalized(text: str) -> str:
    folded = unicodedata.normalize("NFKC", strip_format_characters(text)).casefold().replace("\u2019", "'").replace("\u2018", "'")
    return _WS_RE.sub(" ", folded).strip()


#: Texts longer than this many characters (an answer pasted whole, every oracle item of a question joined)
#: are remembered only a few at a time: 8,192 of them held ~180 MB through a LongMemEval S report.
LONG_TEXT = 4096
_normalized_short = lru_cache(maxsize=8192)(_normalized)
_normalized_long = lru_cache(maxsize=8)(_normalized)  # one check asks for its answer once per string it needs


def normalize_text(text: str) -> str:
    """Format characters (Cf: zero-width, soft hyphen) dropped, NFKC, casefold, typographic apostrophes to ``'``, whitespace collapsed."""
    return (_normalized_short if len(text) <= LONG_TEXT else _normalized_long)(text)


def find_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Every (start, end) of ``needle`` in ``text`` (both normalized); short needles word-bounded."""
    if not needle:
        return []
    if is_short_needle(needle):
        # The plain substring test first: it is far faster than the bounded pattern's scan of a long text.
        return [m.span() for m in bounded_pattern(needle).finditer(text)] if needle in text else []
    return occurrences(text, needle)


def contains(answer: str, needle: str) -> bool:
    """Does ``answer`` state ``needle``? Both sides :func:`normalize_text`-ed; see :func:`is_short_needle`.

    Example:
        >>> contains("I don't know.", "No"), contains("No, you never mentioned it.", "no")
        (False, True)
    """
    folded, haystack = normalize_text(needle), normalize_text(answer)
    if not folded:
        return True
    if is_short_needle(folded):  # the substring test first, as in find_spans
        return folded in haystack and bounded_pattern(folded).search(haystack) is not None
    return folded in haystack
