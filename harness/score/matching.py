"""Text matching: does an answer state a string, pass a check, state the expected fact?

Both sides are NFKC-normalized, casefolded and whitespace collapsed, then
compared as substrings, except short strings (3 characters or fewer, e.g.
"no", "yes", "2") and lone numbers ("55432", "1,240"), which match word-
bounded (:func:`contains`): "no" is not in "know", "2" is not in "12" or
"2.5". Regexes run with IGNORECASE on the raw answer.
Unicode format characters (category Cf: zero-width space, soft hyphen, bidi
marks) are dropped from both sides first, for strings and regexes alike, so
``North\u200bwind`` states "Northwind" (and leaks it).
``must_contain_groups``: every group must match, in any order; a group
matches when any one of its strings (synonyms) appears, by the same rule.
:func:`token_f1` is LoCoMo's informational token F1.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING

from harness.scenarios import AnswerCheck, Scenario
from harness.score.abstention import outside_abstention
from harness.score.superseded import occurrences
from memory_tools import strip_format_characters

if TYPE_CHECKING:
    pass




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


_NUMBER_RE = re.compile(r"[+-]?\d+(?:[.,:' ]\d+)*%?")
#: A letter or digit of a script that separates words with spaces (CJK characters are left out: no spaces there).
_WORDISH = r"[^\W_\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"


def is_short_needle(needle: str) -> bool:
    """True when ``needle`` (normalized) is matched word-bounded: 3 characters or fewer, or a lone number.

    Such strings occur inside unrelated words ("no" in "know", "2" in "12"),
    so a substring hit is no evidence that the answer states them.
    """
    return len(needle) <= 3 or _NUMBER_RE.fullmatch(needle) is not None


@lru_cache(maxsize=4096)
def _bounded_pattern(needle: str) -> re.Pattern[str]:
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
        before = f"(?<!{_WORDISH})"
    if tail.isdigit():
        after = r"(?!\d)(?![.,]\d)"
    elif tail.isalnum():
        after = f"(?!{_WORDISH})"
    return re.compile(before + re.escape(needle) + after)


def find_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Every (start, end) of ``needle`` in ``text`` (both normalized); short needles word-bounded."""
    if not needle:
        return []
    if is_short_needle(needle):
        # The plain substring test first: it is far faster than the bounded pattern's scan of a long text.
        return [m.span() for m in _bounded_pattern(needle).finditer(text)] if needle in text else []
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
        return folded in haystack and _bounded_pattern(folded).search(haystack) is not None
    return folded in haystack


def check_answer(answer: str, check: AnswerCheck) -> tuple[bool, list[str]]:
    """Run the six text checks; returns (all passed, reasons for each failure).

    ``must_contain_groups`` fails once per group none of whose strings appears.
    """
    failures: list[str] = []
    answer = strip_format_characters(answer)  # patterns, like strings, never see zero-width spaces or soft hyphens
    if check.must_contain_any and not any(contains(answer, s) for s in check.must_contain_any):
        failures.append(f"none of {check.must_contain_any!r} appears")
    failures += [f"no item of group {index} {group!r} appears"
                 for index, group in enumerate(check.must_contain_groups, start=1)
                 if group and not any(contains(answer, s) for s in group)]
    failures += [f"missing {s!r}" for s in check.must_contain_all if not contains(answer, s)]
    failures += [f"no match for /{p}/" for p in check.must_match if not re.search(strip_format_characters(p), answer, re.IGNORECASE)]
    failures += [f"contains forbidden {s!r}" for s in check.must_not_contain if contains(answer, s)]
    failures += [f"matches forbidden /{p}/" for p in check.must_not_match if re.search(strip_format_characters(p), answer, re.IGNORECASE)]
    return not failures, failures


_F1_DROPPED_WORDS_RE = re.compile(r"\b(?:a|an|the|and)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)
_DROP_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def f1_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation, as tokens: lowercase, punctuation and a/an/the/and removed, split on spaces.

    Punctuation is ASCII ``string.punctuation`` (as LoCoMo) plus every Unicode
    punctuation character (typographic quotes and dashes, which real models
    write). LoCoMo also Porter-stems each token: the score's F1 does
    (:func:`harness.score.paper_metrics.stemmed_tokens`); :func:`token_f1` here does not.

    Example:
        >>> f1_tokens("The dog, and a cat's toy!")
        ['dog', 'cats', 'toy']
    """
    lowered = text.replace(",", "").lower()
    if lowered.isascii():  # every ASCII punctuation character is in string.punctuation: one C-level pass
        kept = lowered.translate(_DROP_ASCII_PUNCTUATION)
    else:
        kept = "".join(ch for ch in lowered
                       if ch not in _ASCII_PUNCTUATION and not unicodedata.category(ch).startswith("P"))
    return _F1_DROPPED_WORDS_RE.sub(" ", kept).split()


def token_f1(answer: str, reference: str) -> float:
    """Token F1 of ``answer`` against ``reference`` (:func:`f1_tokens` of both, unstemmed).

    The sample's ``token_f1`` is LoCoMo's stemmed one (:func:`harness.score.paper_metrics.locomo_f1`).

    0.0 when either side has no token or none is shared. Informational: a long
    correct answer scores low on precision, a short wrong one can share words.

    Example:
        >>> round(token_f1("She adopted a dog named Max", "Max"), 3)
        0.333
    """
    return multiset_f1(f1_tokens(answer), f1_tokens(reference))


def multiset_f1(predicted: list[str], reference: list[str]) -> float:
    """F1 of two token multisets (SQuAD's and LoCoMo's token F1); 0.0 when either is empty or none is shared."""
    same = sum((Counter(predicted) & Counter(reference)).values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(reference)
    return 2 * precision * recall / (precision + recall)


def has_positive_check(check: AnswerCheck | None) -> bool:
    return check is not None and bool(check.must_contain_any or check.must_contain_all or check.must_match
                                      or any(check.must_contain_groups))


def has_any_check(check: AnswerCheck) -> bool:
    return has_positive_check(check) or bool(check.must_not_contain or check.must_not_match)


def positive_checks_pass(answer: str, check: AnswerCheck) -> bool:
    positive = AnswerCheck.model_construct(
        must_contain_any=check.must_contain_any, must_contain_all=check.must_contain_all, must_match=check.must_match,
        must_contain_groups=check.must_contain_groups, must_not_contain=[], must_not_match=[],
    )
    return check_answer(answer, positive)[0]


def lines_normalized(answer: str) -> str:
    """:func:`normalize_text` line by line, so line breaks still end sentences."""
    return "\n".join(normalize_text(line) for line in answer.split("\n"))


def states_expected_fact(answer: str, scenario: Scenario) -> bool:
    """Does the answer state the expected fact outside its abstention clauses?

    The scenario's positive checks (top level, else adherence) must pass on
    :func:`harness.score.abstention.outside_abstention` of the answer: "I don't know
    — I have no record of that" does not state the gold "No" (the "no" is
    the abstention's own word); "No, you never mentioned that" does.
    """
    expect = scenario.expect
    fact_check = expect if has_positive_check(expect) else expect.adherence
    if not has_positive_check(fact_check):
        return False
    return positive_checks_pass(outside_abstention(answer), fact_check)  # type: ignore[arg-type]
