"""Where a short string counts as stated: the word boundary the scorer and the gold audit share.

A short string (3 characters or fewer: "no", "yes", "2") or a lone number
("55432", "1,240") occurs inside unrelated words, so it is matched
word-bounded; a longer one as a substring. Scripts that write no spaces
between words (CJK) never block a match: "周三" is in "每周三上午".
:mod:`harness.score.needles` matches answers with it, and
:mod:`harness.importers.audit` asks whether a gold could be found in a
conversation the same way, so the audit never calls a check passable that
the scorer would fail.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["WORDISH", "bounded_pattern", "is_short_needle"]

_NUMBER_RE = re.compile(r"[+-]?\d+(?:[.,:' ]\d+)*%?")
#: A letter or digit of a script that separates words with spaces (CJK characters are left out: no spaces there).
WORDISH = r"[^\W_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"


def is_short_needle(needle: str) -> bool:
    """True when ``needle`` (normalized) is matched word-bounded: 3 characters or fewer, or a lone number.

    Such strings occur inside unrelated words ("no" in "know", "2" in "12"),
    so a substring hit is no evidence that the answer states them.
    """
    return len(needle) <= 3 or _NUMBER_RE.fullmatch(needle) is not None


@lru_cache(maxsize=4096)
def bounded_pattern(needle: str) -> re.Pattern[str]:
    """``needle`` with a boundary at each edge that is a letter or digit.

    A digit edge may not touch another digit or continue as a decimal ("2" is
    not in "12", "2.5" or "1,240"; it is in "2nd" and "python3.12" holds
    "3.12"); a letter edge may not touch a letter or digit ("no" is not in
    "know" or "not"). CJK neighbours never block a match.
    """
    head, tail = needle[0], needle[-1]
    before = after = ""
    if head.isdigit():
        before = r"(?<!\d)(?<!\d[.,])"
    elif head.isalnum():
        before = f"(?<!{WORDISH})"
    if tail.isdigit():
        after = r"(?!\d)(?![.,]\d)"
    elif tail.isalnum():
        after = f"(?!{WORDISH})"
    return re.compile(before + re.escape(needle) + after)
