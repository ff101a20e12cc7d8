"""Lexical analysis for the offline model: search terms and overlap scoring.

Everything here is a pure function of the text it is given. A question is
turned into *concepts* (a salient unit such as a content word, a code
identifier or a CJK two-character window, each with a few surface forms) and
into an ordered list of search terms. A candidate text (an item's content and
matched keys, or one sentence of the conversation) is scored by how many of
the question's concepts it contains.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

MAX_TERMS = 32
"""The memory_search tool accepts at most this many terms."""

_STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any anything are aren as at be because been before being
    below between both but by can cannot could couldn d did didn do does doesn doing don done down during each either
    else ever every few for from further had hadn has hasn have haven having he her here hers herself him himself his
    how i if in into is isn it its itself just ll let lets m me mine more most much must my myself no nor not now of
    off on once only or other our ours ourselves out over own please re really remind reminded recall remember
    remembered s said same say says she should so some something somebody someone such t tell than that thats the
    their theirs them themselves then there these they this those through to too under until up us ve very was wasn
    we were weren what whats when where which while who whom whose why will with won would wouldn y yes you your
    yours yourself yourselves again know knew mention mentioned told think thought okay ok hi hello hey thanks thank
    already still currently again one ones
    """.split()
)
"""Compact English stopwords, including question words and conversational filler."""

_GENERIC = frozenset(
    """
    use uses using used prefer prefers preferred preference preferences like likes liked want wants wanted need needs
    name names named thing things stuff setting settings value values default usually always never favorite favourite
    choose chose chosen choice decide decided decision pick picked go going get got make made work works working set
    right new old current kind type way project projects user users info information detail details note notes memory
    """.split()
)
"""Words kept as search terms but too generic to make a match convincing on their own."""

_CJK_PARTICLES = frozenset("的了吗呢吧是么我你他她们在和与及或啊呀请问什哪怎谁个一下这那吗嘛呢のはをがにでともかへやねよ")
"""CJK characters that make a two-character window a function-word window, not a topic."""

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_LATIN_TOKEN = re.compile(r"[A-Za-z0-9_$]+(?:[.\-/:][A-Za-z0-9_$]+)*(?:_(?![A-Za-z0-9]))?")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SEGMENT_SPLIT = re.compile(r"[.\-/:_]+")
_SUFFIXES = (("ments", 5), ("ment", 5), ("ings", 4), ("ing", 4), ("ions", 5), ("ion", 5), ("ed", 4))
"""Suffixes stripped for a stem form, with the shortest stem allowed."""


@dataclass(frozen=True, slots=True)
class Concept:
    """One salient unit of a question.

    Attributes:
        label: the canonical lowercase form.
        forms: every lowercase surface form that counts as a hit.
        weight: how much a hit counts (identifiers count double).
        salient: whether a hit can make a match convincing.
        cjk: forms are matched as substrings (no word boundaries in CJK).
    """

    label: str
    forms: tuple[str, ...]
    weight: float = 1.0
    salient: bool = True
    cjk: bool = False


@dataclass(frozen=True, slots=True)
class QuestionTerms:
    """The analysis of one question: search terms and scoring concepts."""

    search_terms: tuple[str, ...]
    concepts: tuple[Concept, ...]
    pairs: tuple[str, ...] = field(default=())

    @property
    def salient_count(self) -> int:
        return sum(1 for c in self.concepts if c.salient)


@dataclass(frozen=True, slots=True)
class Overlap:
    """How a candidate text overlaps a question."""

    score: float
    salient_hits: frozenset[str]
    convincing: bool


def _is_identifier(token: str) -> bool:
    return (
        "_" in token
        or "." in token
        or "/" in token
        or "::" in token
        or bool(re.search(r"[a-z][A-Z]", token))
        or bool(re.search(r"[A-Z]{2,}[a-z]", token))
    )


def variants(word: str) -> list[str]:
    """Naive singular and stem forms of a lowercase word, longest first.

    >>> variants("policies")
    ['policy']
    >>> variants("deployments")
    ['deployment', 'deploy']
    """
    out: list[str] = []
    if len(word) >= 4 and word.endswith("ies"):
        out.append(word[:-3] + "y")
    elif len(word) >= 5 and word.endswith(("ches", "shes", "xes", "sses")):
        out.append(word[:-2])
    elif len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        out.append(word[:-1])
    base = out[0] if out else word
    for suffix, shortest in _SUFFIXES:
        if base.endswith(suffix) and len(base) - len(suffix) >= shortest:
            out.append(base[: -len(suffix)])
            break
    return [v for v in out if v != word]


def _cjk_windows(run: str) -> tuple[list[str], list[str]]:
    """Two-character windows of a CJK run, split into topical and function-word ones."""
    good: list[str] = []
    junk: list[str] = []
    for i in range(len(run) - 1):
        window = run[i : i + 2]
        (junk if window[0] in _CJK_PARTICLES or window[1] in _CJK_PARTICLES else good).append(window)
    return good, junk


@functools.lru_cache(maxsize=4096)
def analyze_question(text: str) -> QuestionTerms:
    """Split a question into prioritized search terms and scoring concepts.

    Memoized (the result is frozen): every call of a turn, and every epoch,
    asks about the same question.

    Priority of search terms: code identifiers (whole), CJK runs and their
    topical two-character windows, content words, adjacent content-word pairs,
    identifier segments and parts, singular/stem variants, generic words,
    function-word CJK windows. Duplicates (case-insensitive) are dropped and
    the list is cut at :data:`MAX_TERMS`.

    Example:
        >>> analyze_question("Which editor theme do I prefer?").search_terms[:3]
        ('editor', 'theme', 'editor theme')
    """
    text = _POSSESSIVE.sub("", text)
    identifiers: list[str] = []
    cjk_terms: list[str] = []
    words: list[str] = []
    pairs: list[str] = []
    parts: list[str] = []
    var_terms: list[str] = []
    generic: list[str] = []
    junk_cjk: list[str] = []
    concepts: list[Concept] = []

    for run in _CJK_RUN.findall(text):
        good, junk = _cjk_windows(run)
        if len(run) >= 2:
            cjk_terms.append(run)
        cjk_terms.extend(good)
        junk_cjk.extend(junk)
        if len(run) == 1 and run not in _CJK_PARTICLES:
            cjk_terms.append(run)
            concepts.append(Concept(run, (run,), cjk=True))
        concepts.extend(Concept(w, (w,), cjk=True) for w in good)

    previous: str | None = None
    for match in _LATIN_TOKEN.finditer(_CJK_RUN.sub(" ", text)):
        token = match.group(0)
        lower = token.lower()
        if _is_identifier(token):
            identifiers.append(token)
            segments = [s for s in _SEGMENT_SPLIT.split(token) if s]
            forms = [lower] + [
                s.lower() for s in segments if len(s) >= 3 and s.lower() not in _STOPWORDS | _GENERIC
            ]
            concepts.append(Concept(lower, tuple(dict.fromkeys(forms)), weight=2.0))
            for seg in segments:
                if len(segments) > 1:
                    parts.append(seg)
                for piece in _CAMEL_PART.findall(seg):
                    if piece.lower() not in _STOPWORDS and len(piece) >= 3 and piece.lower() != seg.lower():
                        parts.append(piece.lower())
            previous = None
            continue
        pieces = [lower] + ([p for p in lower.split("-") if p] if "-" in lower else [])
        for piece in pieces:
            if piece in _STOPWORDS or piece.isdigit() and len(piece) < 3:
                continue
            extra = variants(piece)
            if piece in _GENERIC:
                generic.append(piece)
                concepts.append(Concept(piece, (piece, *extra), salient=False))
            else:
                words.append(piece)
                concepts.append(Concept(piece, (piece, *extra)))
            var_terms.extend(extra)
        if lower in _STOPWORDS or "-" in lower:
            previous = None
        else:
            if previous is not None:
                pairs.append(f"{previous} {lower}")
            previous = lower

    ordered = identifiers + cjk_terms + words + pairs + parts + var_terms + generic + junk_cjk
    terms: list[str] = []
    seen: set[str] = set()
    for term in ordered:
        term = term.strip()
        if term and term.lower() not in seen:
            seen.add(term.lower())
            terms.append(term)
    merged: dict[str, Concept] = {}
    for concept in concepts:
        merged.setdefault(concept.label, concept)
    return QuestionTerms(tuple(terms[:MAX_TERMS]), tuple(merged.values()), tuple(dict.fromkeys(pairs)))


@functools.lru_cache(maxsize=8192)
def _word_pattern(form: str) -> re.Pattern[str]:
    """A word starting with ``form`` (four or more characters) or equal to it (shorter)."""
    tail = "" if len(form) >= 4 else r"(?![a-z0-9])"
    return re.compile(r"(?<![a-z0-9])" + re.escape(form) + tail)


def _form_hits(form: str, haystack: str, cjk: bool) -> bool:
    if form not in haystack:
        return False
    if cjk or not form.isalnum():
        return True
    return _word_pattern(form).search(haystack) is not None


def overlap(question: QuestionTerms, text: str) -> Overlap:
    """Score ``text`` against a question's concepts.

    A latin form of four or more characters hits a word that starts with it
    (the prefix rule of the search tool); shorter forms must equal a word; CJK
    forms and identifiers hit as substrings. The overlap is convincing when
    it hits at least one salient concept, or two when the question has three
    or more salient concepts (one suffices if it is an identifier).
    """
    haystack = text.lower()
    score = 0.0
    salient: set[str] = set()
    strong = False
    for concept in question.concepts:
        if any(_form_hits(form, haystack, concept.cjk) for form in concept.forms):
            score += concept.weight if concept.salient else 0.5
            if concept.salient:
                salient.add(concept.label)
                strong = strong or concept.weight > 1.0
    score += sum(1.0 for pair in question.pairs if pair in haystack)
    needed = 1 if question.salient_count <= 2 or strong else 2
    return Overlap(score, frozenset(salient), len(salient) >= needed)
