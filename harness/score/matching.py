"""Text matching: does an answer state a string, pass a check, state the expected fact?

Both sides are NFKC-normalized, casefolded and whitespace collapsed, then
compared as substrings, except short strings (3 characters or fewer, e.g.
"no", "yes", "2") and lone numbers ("55432", "1,240"), which match word-
bounded (:func:`contains`): "no" is not in "know", "2" is not in "12" or
"2.5". Regexes run with IGNORECASE on the raw answer.
Unicode format characters (category Cf: zero-width space, soft hyphen, bidi
marks) are dropped from both sides first, for strings and regexes alike, so
``North\u200bwind`` states "Northwind" (and leaks it). The code-point
matching itself is :mod:`harness.score.needles`. A ``must_not_contain``
string is also found as a reader sees it (:func:`harness.score.visible.shows`:
default-ignorables, rendered markup and homoglyphs folded), so an answer
cannot hide a forbidden string with a joiner or a Cyrillic letter; the
positive checks stay on code points (``2O1O`` does not state ``2010``).
``must_contain_groups``: every group must match, in any order; a group
matches when any one of its strings (synonyms) appears, by the same rule.
:func:`token_f1` is LoCoMo's informational token F1.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

from harness.scenarios import AnswerCheck, Expect, Scenario
from harness.score.abstention import outside_abstention
from harness.score.needles import contains, find_spans, is_short_needle, normalize_text
from harness.score.visible import shows
from memory_tools import strip_format_characters

__all__ = ["check_answer", "contains", "find_spans", "is_short_needle", "normalize_text", "states_expected_fact",
           "token_f1"]


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
    # a forbidden string hidden from the code points (ignorables, markup, homoglyphs) is still stated: harness.score.visible
    failures += [f"contains forbidden {s!r}" for s in check.must_not_contain if shows(answer, s)]
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


def fact_check(expect: Expect) -> AnswerCheck | None:
    """The checks that say an answer states the expected fact: the top-level positive ones, else the adherence ones
    (a preference is checked through what it shapes); None when neither has a positive check."""
    chosen = expect if has_positive_check(expect) else expect.adherence
    return chosen if has_positive_check(chosen) else None


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
    check = fact_check(scenario.expect)
    return check is not None and positive_checks_pass(outside_abstention(answer), check)
