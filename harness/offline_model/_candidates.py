"""What the offline agent could answer with: statements of retrieved items, of a memory document in its prompt, and
of the visible conversation, each scored by its overlap with the question.

:func:`pick` keeps the best of them (by fit, then recency where it matters),
so an answer is never a statement that shares no salient word with the
question.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from harness.offline_model._terms import Overlap, QuestionTerms, overlap
from harness.offline_model._turn import GET_TOOL, SEARCH_TOOL, Call, content_text, error_of

_NEARLY_AS_GOOD = 0.6


HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|(?<=[\u3002\uff01\uff1f])|\n+")
_DOCUMENT_BLOCK = re.compile(r"<memory_document>\n(.*?)\n</memory_document>", re.DOTALL)
_ROLE_LABEL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:user|assistant|you|me)\s*:\s*", re.IGNORECASE)
#: ``Name: `` opening a line: one to three words, the first not lowercase (the harness's speaker prefix).
_SPEAKER_LABEL = re.compile(r"\s*([^\W\d_][\w'\u2019.-]*(?: [^\W\d_][\w'\u2019.-]*){0,2}):[ \t]+(?=\S)")
_SPEAKER_MIN_LINES = 2


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    fit: Overlap
    keys: frozenset[str]
    observed_at: int
    order: int
    item_id: str = ""
    from_user: bool = False
    speaker: str = ""
    """The speaker label the statement's line opened with ("" when none)."""
    salient_keys: frozenset[str] = frozenset()
    """Matched keys that themselves hit a salient question concept."""


def as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "\u3002", "\uff01", "\uff1f")) else text + "."


def item_candidates(question: QuestionTerms, calls: list[Call]) -> list[_Candidate]:
    """Every item returned by a successful search, scored against the question."""
    got: dict[str, str] = {}
    for call in calls:
        if call.name == GET_TOOL and error_of(call.result) is None:
            record = call.result.get("item") if isinstance(call.result.get("item"), dict) else call.result
            if isinstance(record.get("itemId"), str) and isinstance(record.get("content"), str):
                got[record["itemId"]] = record["content"]
    candidates: dict[str, _Candidate] = {}
    for call in calls:
        if call.name != SEARCH_TOOL or error_of(call.result) is not None:
            continue
        results = call.result.get("results")
        for result in results if isinstance(results, list) else []:
            if not isinstance(result, dict) or not isinstance(result.get("itemId"), str):
                continue
            item_id = result["itemId"]
            content = got.get(item_id, result.get("content"))
            if item_id in candidates or not isinstance(content, str) or not content.strip():
                continue
            keys = [k for k in result.get("matchedKeys") or [] if isinstance(k, str)]
            observed = result.get("observedAt")
            fit = overlap(question, content + "\n" + "\n".join(keys))
            candidates[item_id] = _Candidate(
                content,
                fit,
                frozenset(k.lower() for k in keys),
                observed if isinstance(observed, int) else 0,
                len(candidates),
                item_id=item_id,
                salient_keys=frozenset(k.lower() for k in keys if overlap(question, k).salient_hits),
            )
    return list(candidates.values())


def document_candidates(question: QuestionTerms, messages: list[dict[str, Any]]) -> list[_Candidate]:
    """Entries of a ``<memory_document>`` section of the system prompt, scored like search results.

    Each ``## `` entry is a note; an optional ``_updated <time>; tags: a, b_``
    line gives its keys. Like a key search, a tagged entry counts only when a
    tag overlaps the question, and its overlapping tags act as matched keys
    (an untagged entry is scored on its title and text); candidates are
    ranked by fit as search results are. Entries are listed newest first, so
    the rank of their distinct ``updated`` times stands in for ``observedAt``.
    """
    notes: list[tuple[str, Overlap, list[str], str]] = []
    for message in messages:
        if message.get("role") != "system":
            continue
        for block in _DOCUMENT_BLOCK.findall(content_text(message.get("content"))):
            for section in re.split(r"(?m)^## ", block)[1:]:
                title, _, body = section.partition("\n")
                lines = [line for line in body.splitlines() if not line.startswith("[memory document truncated")]
                meta = lines.pop(0) if lines and len(lines[0]) > 1 and lines[0][0] == lines[0][-1] == "_" else ""
                updated, _, tag_text = meta.strip("_").partition("tags: ")
                tags = [t.strip() for t in tag_text.split(",") if t.strip()]
                matched = [t for t in tags if overlap(question, t).score > 0]
                content = "\n".join(lines).strip()
                if content and (matched or not tags):
                    fit = overlap(question, "\n".join([content, *matched] if tags else [content, title]))
                    notes.append((content, fit, matched, updated.strip(" ;")))
    times = list(dict.fromkeys(updated for *_, updated in notes if updated))
    notes.sort(key=lambda note: (-note[1].score, -len(note[2])))
    return [
        _Candidate(
            content,
            fit,
            frozenset(k.lower() for k in matched),
            len(times) - times.index(updated) if updated else 0,
            order,
            salient_keys=frozenset(k.lower() for k in matched if overlap(question, k).salient_hits),
        )
        for order, (content, fit, matched, updated) in enumerate(notes)
    ]


def _label(line: str) -> re.Match[str] | None:
    match = _SPEAKER_LABEL.match(line)
    return match if match is not None and not match.group(1)[0].islower() else None


@dataclass(frozen=True, slots=True)
class _HistoryText:
    """A conversation's statements, split once: (sentence, speaker, from_user) each, and their lowercase text joined."""

    statements: tuple[tuple[str, str, bool], ...]
    joined: str
    """Each statement's ``str.lower()``, joined by NUL (no question form holds one)."""
    starts: tuple[int, ...]
    """Where each statement starts in ``joined``."""


_NO_OVERLAP = Overlap(0.0, frozenset(), False)
_NO_KEYS: frozenset[str] = frozenset()
_HISTORY_TEXTS: OrderedDict[tuple[tuple[Any, str], ...], _HistoryText] = OrderedDict()
_HISTORY_TEXTS_KEPT = 16  # conversations in flight at once; a LoCoMo conversation's ~200 probes share one


def _history_text(messages: list[dict[str, Any]]) -> _HistoryText:
    """The statements of the conversation's user and assistant messages, split once per distinct conversation.

    ``full_history`` pastes the same ~25k-token conversation into each of its
    probes' prompts; splitting it into sentences again for every probe was
    most of the offline model's time on LoCoMo.
    """
    turns = tuple((m.get("role"), content_text(m.get("content"))) for m in messages if m.get("role") in ("user", "assistant"))
    known = _HISTORY_TEXTS.get(turns)
    if known is not None:
        _HISTORY_TEXTS.move_to_end(turns)
        return known
    counts: Counter[str] = Counter()
    for _, text in turns:
        counts.update(m.group(1) for line in text.split("\n") if (m := _label(line)) is not None)
    speakers = frozenset(name for name, n in counts.items() if n >= _SPEAKER_MIN_LINES)
    statements: list[tuple[str, str, bool]] = []
    for role, text in turns:
        for line in text.split("\n"):
            speaker = ""
            if (match := _label(line)) is not None and match.group(1) in speakers:
                speaker, line = match.group(1), line[match.end():]
            for raw in _SENTENCE_SPLIT.split(line):
                sentence = _ROLE_LABEL.sub("", raw or "").strip()
                if not sentence or sentence.endswith(("?", "\uff1f")) or "i don't know" in sentence.lower():
                    continue
                statements.append((sentence, speaker, role == "user"))
    starts, offset = [], 0
    for sentence, _, _ in statements:
        starts.append(offset)
        offset += len(sentence.lower()) + 1
    made = _HistoryText(tuple(statements), "\0".join(sentence.lower() for sentence, _, _ in statements), tuple(starts))
    _HISTORY_TEXTS[turns] = made
    while len(_HISTORY_TEXTS) > _HISTORY_TEXTS_KEPT:
        _HISTORY_TEXTS.popitem(last=False)
    return made


def _may_overlap(question: QuestionTerms, history: _HistoryText) -> set[int] | None:
    """The statements holding some form or pair of the question as a substring (None: assume all).

    A statement holding none scores exactly :data:`_NO_OVERLAP` (every hit
    starts with a substring test), so only these are scored in full.
    """
    needles = {form for concept in question.concepts for form in concept.forms} | set(question.pairs)
    if any(not needle or "\0" in needle for needle in needles):
        return None
    joined, starts, found = history.joined, history.starts, set()
    for needle in needles:
        at = joined.find(needle)
        while at != -1:
            index = bisect.bisect_right(starts, at) - 1
            found.add(index)
            at = joined.find(needle, starts[index + 1]) if index + 1 < len(starts) else -1
    return found


def history_candidates(question: QuestionTerms, messages: list[dict[str, Any]]) -> list[_Candidate]:
    """Statements (not questions, not abstentions) of the conversation before the question.

    A statement's speaker name (a name opening two or more lines) does not make it convincing:
    every line of a speaker carries the name, so "What did Caroline adopt?"
    would otherwise be answered by any line of Caroline's. The name only ranks
    among statements convincing on their own words.
    """
    history = _history_text(messages)
    scored = _may_overlap(question, history)
    out: list[_Candidate] = []
    for order, (sentence, speaker, from_user) in enumerate(history.statements):
        if scored is not None and order not in scored:
            fit = _NO_OVERLAP
        else:
            fit = overlap(question, sentence)
            if speaker and fit.convincing:
                fit = Overlap(overlap(question, f"{speaker} {sentence}").score, fit.salient_hits, True)
        out.append(_Candidate(sentence, fit, _NO_KEYS, 0, order, from_user=from_user, speaker=speaker))
    return out


def pick(candidates: list[_Candidate], recency: bool) -> list[_Candidate]:
    """The best convincing candidate, plus a second one covering other question concepts on other keys.

    Candidates that hit a salient concept the top one hits and either share a
    salient matched key with it or score nearly as well are the same fact
    told twice; the newest (``observedAt``, or conversation order) wins.
    """
    convincing = [c for c in candidates if c.fit.convincing]
    if recency:  # conversation: user statements first, then later ones
        convincing.sort(key=lambda c: (-c.fit.score, not c.from_user, -c.order))
    else:  # items: more matched keys, then newer
        convincing.sort(key=lambda c: (-c.fit.score, -len(c.keys), -c.observed_at, c.order))
    if not convincing:
        return []
    top = convincing[0]

    def same_topic(a: _Candidate, b: _Candidate) -> bool:
        return bool(a.fit.salient_hits & b.fit.salient_hits)

    group = [
        c
        for c in convincing
        if same_topic(c, top) and (c.salient_keys & top.salient_keys or c.fit.score >= _NEARLY_AS_GOOD * top.fit.score)
    ]
    if recency and any(c.from_user for c in group):
        group = [c for c in group if c.from_user]
    chosen = max(group, key=lambda c: (c.order if recency else c.observed_at, -c.order))
    picked = [chosen]
    for other in convincing:
        if other is chosen or other in group or other.fit.score < _NEARLY_AS_GOOD * chosen.fit.score:
            continue
        if not same_topic(other, chosen) and not other.keys & chosen.keys:
            picked.append(other)
            break
    return picked
