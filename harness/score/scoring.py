"""Scores of one finished sample: pure functions of a SampleRecord and its Scenario.

Nothing here calls a model. A judge verdict, when one exists, is passed in.

Conventions (also in ``docs/summary-json.md``):

* Text matching: both sides are NFKC-normalized, casefolded and whitespace
  collapsed, then compared as substrings, except short strings (3 characters
  or fewer, e.g. "no", "yes", "2") and lone numbers ("55432", "1,240"), which
  match word-bounded (:func:`contains`): "no" is not in "know", "2" is not in
  "12" or "2.5". Regexes run with IGNORECASE on the raw answer.
  ``must_contain_groups``: every group must match, in any order; a group
  matches when any one of its strings (synonyms) appears, by the same rule.
* Abstention: :func:`harness.score.abstention.is_abstention` on the final answer
  (sentence-level cues: a strong "I don't know / no record / you haven't told
  me" anywhere outside quotes, a hedge only in the lead sentence; traps and
  partial hedges excluded; see that module). An empty answer abstains. An
  answer with a cue still counts as *answered* on an answerable scenario when
  it states the expected fact outside its abstention clauses
  (:func:`states_expected_fact`: the positive checks, or the adherence ones
  when the top level has none, pass on
  :func:`harness.score.abstention.outside_abstention`): "I'm not sure, but I think
  it is 2 spaces" (a hedge keeps what it states) and "No, you never mentioned
  that" (gold "No") are answered; "I don't know — I have no record of that"
  (gold "No") and "I have 2 notes but no record of the date" (gold "2") are
  abstentions. An answered answer is scored on what it stated, canaries
  included.
* Token F1 (informational, :func:`token_f1`): when ``expect.f1_reference``
  is set, the answer's token F1 against it with LoCoMo's normalisation
  (lowercase, commas and ASCII punctuation removed, the words a/an/the/and
  removed, whitespace tokens; no stemming). Reported as ``token_f1`` beside
  the exact checks; it never enters correctness, outcome or the verdict.
* Continuity, answerable scenario: not abstained, every top-level check
  passes, no unsupported claim. A scenario with no top-level checks but an
  ``adherence`` block scores continuity by adherence (the remembered
  preference shaping the output *is* the continuity). Unanswerable scenario
  (``expect.abstain``): abstained, negative checks pass, no unsupported claim.
* Unsupported claims (each has a ``kind``, :data:`CLAIM_KINDS`): every answer
  to an unanswerable scenario that does not abstain (``answered_unanswerable``:
  nothing supports any answer, whatever it says); each specific the grounding
  judge lists when one ran (``ungrounded``, :mod:`harness.score.grounding`; only
  for answers that do not abstain); canaries in the answer (leakage, stale, invented), except
  a ``stale`` canary mentioned *as superseded* ("moved from eu-west-1 to
  eu-central-1", "not 5433 anymore"): every occurrence has a supersession cue
  bound to it in its sentence and the answer passes the scenario's positive
  checks (it states the current value). The rule is in
  :mod:`harness.score.superseded`; such mentions are not counted but named in the
  reasons ("stale value mentioned as superseded: ..."). Leakage, invented
  and someone_else canaries (a true fact about another person: the trap of an
  adversarial question) are always counted, however phrased, each as its own
  kind. Also unsupported: item ids
  cited in the answer that no scenario item has (``unknown_item_id``), or
  that exist but were never shown to the agent in this sample, neither by a
  tool nor in a non-assistant message (``undisclosed_item_id``). A string is
  id-shaped when it starts with one of the scenario's item-id prefixes (the
  leading letters plus separator of each item id, e.g. ``it-``). Stale values
  are only detected through ``stale`` canaries, never by fuzzy matching.
* Tool leakage (a Host defect, must be 0): ids disclosed by a tool that belong
  to another workspace's items or to archived items; any storage read or
  disclosure when the probe's policy denies reads (or incognito); leakage
  canaries inside any tool result text.
* Retrieval: the set of ``disclosed_item_ids`` against ``expect.relevant_items``.
  Both are None when the arm offered no tools. Precision is None when nothing
  was retrieved; recall is None when the scenario names no relevant items
  (and 0.0 when it does and nothing was retrieved).
* Error samples are never scored as wrong: every correctness field is None.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.score.abstention import find_abstention, outside_abstention
from harness.score.abstention import is_abstention as is_abstention  # re-exported: callers score with harness.score.scoring
from harness.memo import by_identity
from harness.records import SampleRecord
from harness.scenarios.models import AnswerCheck, ItemSpec, Scenario
from harness.score.superseded import is_superseded_mention, occurrences

if TYPE_CHECKING:
    from harness.score.grounding import GroundingVerdict
    from harness.score.judge import JudgeVerdict

Outcome = Literal["correct", "wrong", "abstained_correctly", "abstained_wrongly", "error"]
# Outcomes that count as right: an answer that passed, or an abstention where abstaining was expected.
CORRECT_OUTCOMES: frozenset[str] = frozenset({"correct", "abstained_correctly"})

_ID_PREFIX_RE = re.compile(r"^([A-Za-z]+[-_:.])[A-Za-z0-9]")
_WS_RE = re.compile(r"\s+")


class Score(BaseModel):
    """One named score with the reason a human reads."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: bool | float | int | None
    passed: bool | None = Field(None, description="None when the score is informational or not applicable")
    reason: str


ClaimKind = Literal["leakage", "stale", "invented", "someone_else", "unknown_item_id", "undisclosed_item_id",
                   "answered_unanswerable", "ungrounded"]
#: Every kind of unsupported claim, in the order reports list them (see ``docs/summary-json.md``).
CLAIM_KINDS: tuple[str, ...] = ("leakage", "stale", "invented", "someone_else", "unknown_item_id",
                                "undisclosed_item_id", "answered_unanswerable", "ungrounded")
_CLAIM_EXCERPT = 200


class UnsupportedClaim(BaseModel):
    """One assertion nothing visible supports; ``kind`` says how it was found (reports split by it)."""

    model_config = ConfigDict(frozen=True)

    kind: ClaimKind
    text: str = Field(description="The canary, id or specific claimed; for answered_unanswerable the answer's start")


class ToolLeak(BaseModel):
    model_config = ConfigDict(frozen=True)

    call_id: str
    kind: Literal["out_of_scope_item", "archived_item", "policy_denied_read", "leakage_canary"]
    detail: str


class SampleScores(BaseModel):
    """Every score of one sample; aggregation reads only these."""

    model_config = ConfigDict(frozen=True)

    sample_id: str
    scenario_id: str
    category: str
    arm: str
    model: str
    epoch: int
    status: Literal["ok", "error"]
    outcome: Outcome
    should_abstain: bool
    abstained: bool | None = Field(None, description="None for error samples")
    continuity_correct: bool | None = Field(None, description="The deciding result (judge when used)")
    pattern_correct: bool | None = Field(None, description="The pattern result, kept when a judge decided")
    judge_verdict: Literal["pass", "fail"] | None = None
    judge_reason: str | None = None
    grounding: Literal["grounded", "ungrounded", "malformed"] | None = Field(
        None, description="The grounding judge's finding; None when it did not run (no judge, abstained, error)")
    adherence: bool | None = Field(None, description="None when the scenario sets no adherence checks")
    token_f1: float | None = Field(
        None, description="Informational token F1 against expect.f1_reference (never part of correctness); "
        "None without a reference or for error samples")
    unsupported_claims: list[UnsupportedClaim] = Field(default_factory=list)
    answer_leaks: list[str] = Field(default_factory=list, description="Leakage canaries in the final answer")
    tool_leaks: list[ToolLeak] = Field(default_factory=list)
    retrieved_items: list[str] = Field(default_factory=list)
    retrieved_precision: float | None = None
    retrieved_recall: float | None = None
    tool_calls: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_result_tokens: int = 0
    tool_result_chars: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = Field(False, description="Every model call was served from the response cache (latency is a replay)")
    tools_offered: int = Field(0, description="How many tools the arm offered the model at the probe")
    write_model_calls: int = Field(0, description="Model calls of the write phase (arms whose agent writes memory); not in model_calls")
    write_tool_calls: int = Field(0, description="Write calls the agent made before the probe")
    writes_ok: int = Field(0, description="Write calls that succeeded (status ok)")
    write_holds_answer: bool | None = Field(
        None, description="Some successful write states the expected fact; None without a write phase or expected strings")
    write_prompt_tokens: int = Field(0, description="Prompt tokens of the write phase; not in prompt_tokens")
    write_completion_tokens: int = Field(0, description="Completion tokens of the write phase; not in completion_tokens")
    # The write path's own scores (harness.score.writes): what was written, and where a failure happened.
    memories_written: int = Field(0, description="Save calls of the write phase that stored something")
    write_duplicates: int = Field(0, description="Save calls repeating a text already saved, or reported unchanged")
    writes_rejected: int = Field(0, description="Save calls the memory system refused (status not ok)")
    forgets_requested: int = Field(0, description="Earlier sessions in which the user asked to forget something")
    forgets_done: int = Field(0, description="Of those, sessions whose write run made a forget call that ran (ok or not_found)")
    written_holds_expected: bool | None = Field(None, description="The stored memory states the expected answer")
    retrieved_holds_expected: bool | None = Field(None, description="The probe's tool results state the expected answer")
    scores: list[Score] = Field(default_factory=list)

    @property
    def unsupported(self) -> bool:
        return bool(self.unsupported_claims)

    @property
    def answered(self) -> bool | None:
        return None if self.abstained is None else not self.abstained


@lru_cache(maxsize=8192)
def normalize_text(text: str) -> str:
    """NFKC, casefold, typographic apostrophes to ``'``, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'").replace("\u2018", "'")
    return _WS_RE.sub(" ", folded).strip()


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
    if check.must_contain_any and not any(contains(answer, s) for s in check.must_contain_any):
        failures.append(f"none of {check.must_contain_any!r} appears")
    failures += [f"no item of group {index} {group!r} appears"
                 for index, group in enumerate(check.must_contain_groups, start=1)
                 if group and not any(contains(answer, s) for s in group)]
    failures += [f"missing {s!r}" for s in check.must_contain_all if not contains(answer, s)]
    failures += [f"no match for /{p}/" for p in check.must_match if not re.search(p, answer, re.IGNORECASE)]
    failures += [f"contains forbidden {s!r}" for s in check.must_not_contain if contains(answer, s)]
    failures += [f"matches forbidden /{p}/" for p in check.must_not_match if re.search(p, answer, re.IGNORECASE)]
    return not failures, failures


_F1_DROPPED_WORDS_RE = re.compile(r"\b(?:a|an|the|and)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)
_DROP_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def f1_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation, as tokens: lowercase, punctuation and a/an/the/and removed, split on spaces.

    Punctuation is ASCII ``string.punctuation`` (as LoCoMo) plus every Unicode
    punctuation character (typographic quotes and dashes, which real models
    write). LoCoMo also Porter-stems each token; we do not (no NLTK), so
    "painted" and "paint" stay different tokens.

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
    """Token F1 of ``answer`` against ``reference`` (:func:`f1_tokens` of both), as LoCoMo scores answers.

    0.0 when either side has no token or none is shared. Informational: a long
    correct answer scores low on precision, a short wrong one can share words.

    Example:
        >>> round(token_f1("She adopted a dog named Max", "Max"), 3)
        0.333
    """
    predicted, gold = f1_tokens(answer), f1_tokens(reference)
    same = sum((Counter(predicted) & Counter(gold)).values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _has_positive(check: AnswerCheck | None) -> bool:
    return check is not None and bool(check.must_contain_any or check.must_contain_all or check.must_match
                                      or any(check.must_contain_groups))


def _has_any(check: AnswerCheck) -> bool:
    return _has_positive(check) or bool(check.must_not_contain or check.must_not_match)


def _positive_pass(answer: str, check: AnswerCheck) -> bool:
    positive = AnswerCheck.model_construct(
        must_contain_any=check.must_contain_any, must_contain_all=check.must_contain_all, must_match=check.must_match,
        must_contain_groups=check.must_contain_groups, must_not_contain=[], must_not_match=[],
    )
    return check_answer(answer, positive)[0]


def _ids_of(items: Sequence[ItemSpec]) -> frozenset[str]:
    return frozenset(item.id for item in items)


def _id_prefixes_of(items: Sequence[ItemSpec]) -> frozenset[str]:
    return frozenset(m.group(1) for item in items if (m := _ID_PREFIX_RE.match(item.id)))


def _by_id(items: Sequence[ItemSpec]) -> Mapping[str, ItemSpec]:
    return MappingProxyType({item.id: item for item in items})


# Derived from a scenario's item list alone, once per list: every arm and epoch of a scenario, and every
# probe of a conversation, share one (see harness.memo).
_item_ids = by_identity(_ids_of)
_item_id_prefixes = by_identity(_id_prefixes_of)
_items_by_id = by_identity(_by_id)


@lru_cache(maxsize=1024)
def _id_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9._:-])" + re.escape(prefix) + r"[A-Za-z0-9][A-Za-z0-9._:-]*")


def _cited_ids(answer: str, prefixes: Iterable[str]) -> list[str]:
    found: list[str] = []
    for prefix in sorted(prefixes):
        for match in _id_pattern(prefix).finditer(answer):
            token = match.group(0).rstrip(".:-_")
            if token not in found:
                found.append(token)
    return found


def _visible_text(record: SampleRecord) -> str:
    parts = [str(m.get("content") or "") for m in record.messages if m.get("role") != "assistant"]
    return "\n".join(parts + [call.result_text for call in record.tool_calls])


def _lines_normalized(answer: str) -> str:
    """:func:`normalize_text` line by line, so line breaks still end sentences."""
    return "\n".join(normalize_text(line) for line in answer.split("\n"))


def _stale_as_superseded(answer: str, text: str, scenario: Scenario) -> bool:
    """True when every occurrence of stale ``text`` is mentioned as superseded (see :mod:`harness.score.superseded`).

    Requires the answer to state the current value: the scenario's positive
    checks (top level, else adherence) pass. Without positive checks (an
    abstention scenario) a stale value is never excused.
    """
    expect = scenario.expect
    fact_check = expect if _has_positive(expect) else expect.adherence
    if not _has_positive(fact_check) or not _positive_pass(answer, fact_check):  # type: ignore[arg-type]
        return False
    folded = _lines_normalized(answer)
    spans = find_spans(folded, normalize_text(text))
    return bool(spans) and all(is_superseded_mention(folded, start, end) for start, end in spans)


def _canary_findings(answer: str, scenario: Scenario) -> tuple[list[UnsupportedClaim], list[str]]:
    """(canaries claimed, stale canaries mentioned only as superseded)."""
    claims: list[UnsupportedClaim] = []
    superseded: list[str] = []
    for canary in scenario.expect.canaries:
        if not contains(answer, canary.text):
            continue
        if canary.kind == "stale" and _stale_as_superseded(answer, canary.text, scenario):
            superseded.append(canary.text)
        else:
            claims.append(UnsupportedClaim(kind=canary.kind, text=canary.text))
    return claims, superseded


def _unsupported_claims(answer: str, record: SampleRecord, scenario: Scenario,
                        canary_claims: list[UnsupportedClaim]) -> list[UnsupportedClaim]:
    """``canary_claims`` (of :func:`_canary_findings`) and every cited item id nothing shown supports."""
    claims = list(canary_claims)
    item_ids = _item_ids(scenario.items)
    disclosed = {i for call in record.tool_calls for i in call.disclosed_item_ids}
    visible: str | None = None
    for cited in _cited_ids(answer, _item_id_prefixes(scenario.items)):
        if cited not in item_ids:
            claims.append(UnsupportedClaim(kind="unknown_item_id", text=cited))
            continue
        if cited in disclosed:
            continue
        visible = _visible_text(record) if visible is None else visible
        if cited not in visible:
            claims.append(UnsupportedClaim(kind="undisclosed_item_id", text=cited))
    return claims


def tool_leaks(record: SampleRecord, scenario: Scenario) -> list[ToolLeak]:
    """Leaks at the tool level: what the Host should never have returned."""
    probe = scenario.probe
    denied = probe.incognito or not probe.policy.enabled or not probe.policy.agent_read_enabled
    items = _items_by_id(scenario.items)
    leak_canaries = [c.text for c in scenario.expect.canaries if c.kind == "leakage"]
    leaks: list[ToolLeak] = []
    for call in record.tool_calls:
        if denied and (call.storage_read or call.disclosed_item_ids):
            leaks.append(ToolLeak(call_id=call.call_id, kind="policy_denied_read", detail=f"{call.name} read storage"))
        for item_id in call.disclosed_item_ids:
            item = items.get(item_id)
            if item is None:
                continue
            if item.state.value == "archived":
                leaks.append(ToolLeak(call_id=call.call_id, kind="archived_item", detail=item_id))
            elif item.workspace is not None and item.workspace != probe.workspace:
                leaks.append(ToolLeak(call_id=call.call_id, kind="out_of_scope_item", detail=item_id))
        leaks += [
            ToolLeak(call_id=call.call_id, kind="leakage_canary", detail=text)
            for text in leak_canaries
            if contains(call.result_text, text)
        ]
    return leaks


def retrieval(record: SampleRecord, scenario: Scenario) -> tuple[list[str], float | None, float | None]:
    """(retrieved ids in first-seen order, precision, recall); see the module conventions."""
    retrieved: list[str] = []
    for call in record.tool_calls:
        retrieved += [i for i in call.disclosed_item_ids if i not in retrieved]
    if not record.tools_offered or record.write_phase is not None:
        # An agent-written memory holds its own records, not the scenario's items: ids are not comparable.
        return retrieved, None, None
    relevant = set(scenario.expect.relevant_items)
    hits = len(relevant.intersection(retrieved))
    precision = hits / len(retrieved) if retrieved else None
    recall = hits / len(relevant) if relevant else None
    return retrieved, precision, recall


def _cost_fields(record: SampleRecord) -> dict[str, int | float | None]:
    costs = [call.cost_usd for call in record.model_calls]
    return {
        "tool_calls": len(record.tool_calls),
        "model_calls": len(record.model_calls),
        "prompt_tokens": sum(c.prompt_tokens for c in record.model_calls),
        "completion_tokens": sum(c.completion_tokens for c in record.model_calls),
        "tool_result_tokens": sum(c.result_tokens for c in record.tool_calls),
        "tool_result_chars": sum(c.result_chars for c in record.tool_calls),
        "cost_usd": sum(costs) if costs and all(c is not None for c in costs) else None,  # type: ignore[misc]
        "latency_s": _sample_latency_s(record),
        "cached": bool(record.model_calls) and all(call.cached for call in record.model_calls) and all(
            call.cached for call in (record.write_phase.model_calls if record.write_phase else ())
        ),
        "tools_offered": len(record.tools_offered),
    }


def _write_fields(record: SampleRecord, scenario: Scenario) -> dict[str, int | bool | None]:
    """The write phase's costs, counted apart from the probe's (all 0 for arms without one), and what it wrote.

    ``write_holds_answer`` tells extraction failures from retrieval failures
    for agent-written memory: did some successful write state the scenario's
    expected fact (its ``must_contain_any`` / ``must_contain_all`` strings,
    matched like an answer) rather than vague advice? None without a write
    phase and for scenarios without such strings (abstention, adherence-only).
    """
    phase = record.write_phase
    calls = phase.model_calls if phase is not None else []
    writes = phase.tool_calls if phase is not None else []
    written = [_argument_text(call.arguments) for call in writes if call.status == "ok"]
    expect = scenario.expect
    holds: bool | None = None
    if phase is not None and not expect.abstain and (expect.must_contain_any or expect.must_contain_all):
        text = "\n".join(written)
        holds = (not expect.must_contain_any or any(contains(text, s) for s in expect.must_contain_any)) and all(
            contains(text, s) for s in expect.must_contain_all
        )
    return {
        "write_model_calls": len(calls),
        "write_tool_calls": len(writes),
        "writes_ok": len(written),
        "write_prompt_tokens": sum(c.prompt_tokens for c in calls),
        "write_completion_tokens": sum(c.completion_tokens for c in calls),
        "write_holds_answer": holds,
    }


def _argument_text(arguments: str) -> str:
    """Every string value of a tool call's JSON arguments (escapes decoded), or the raw text when it is not JSON."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    strings: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return "\n".join(strings)


def _sample_latency_s(record: SampleRecord) -> float:
    """The latency a user of the agent would feel: model calls plus tool calls.

    Cached model calls carry the latency measured when they were made, so a
    rerun served from the cache reports the same latency instead of ~0; the
    harness's own work (seeding a store, writing records) is not the product's
    latency and is left out. A record without model calls falls back to its
    wall time.
    """
    if not record.model_calls:
        return record.wall_time_s
    return sum(call.latency_s for call in record.model_calls) + sum(call.elapsed_s for call in record.tool_calls)


def _base(record: SampleRecord, scenario: Scenario) -> dict[str, object]:
    return {
        "sample_id": record.sample_id,
        "scenario_id": record.scenario_id,
        "category": record.category,
        "arm": record.arm,
        "model": record.model,
        "epoch": record.epoch,
        "should_abstain": scenario.expect.abstain,
    }


def states_expected_fact(answer: str, scenario: Scenario) -> bool:
    """Does the answer state the expected fact outside its abstention clauses?

    The scenario's positive checks (top level, else adherence) must pass on
    :func:`harness.score.abstention.outside_abstention` of the answer: "I don't know
    — I have no record of that" does not state the gold "No" (the "no" is
    the abstention's own word); "No, you never mentioned that" does.
    """
    expect = scenario.expect
    fact_check = expect if _has_positive(expect) else expect.adherence
    if not _has_positive(fact_check):
        return False
    return _positive_pass(outside_abstention(answer), fact_check)  # type: ignore[arg-type]


def _excerpt(answer: str) -> str:
    text = " ".join(answer.split())
    return text if len(text) <= _CLAIM_EXCERPT else text[: _CLAIM_EXCERPT - 1] + "…"


def _grounding_claims(grounding: GroundingVerdict | None) -> list[UnsupportedClaim]:
    if grounding is None or grounding.status != "ok":
        return []
    return [UnsupportedClaim(kind="ungrounded", text=_excerpt(claim)) for claim in grounding.unsupported]


def score_writes(record: SampleRecord, scenario: Scenario) -> dict[str, Any]:
    """The write-path fields (:mod:`harness.score.writes`)."""
    from harness.score.writes import score_writes as score

    return score(record, scenario)


def score_sample(record: SampleRecord, scenario: Scenario, *, judge: JudgeVerdict | None = None,
                 grounding: GroundingVerdict | None = None) -> SampleScores:
    """Score one sample against its scenario.

    Args:
        record: the finished sample.
        scenario: the scenario it ran (same id).
        judge: the judge's verdict on this answer; used only when the scenario
            has a rubric, and then it decides continuity instead of the patterns.
        grounding: the grounding judge's verdict on this answer (see
            :mod:`harness.score.grounding`); each unsupported specific it lists is an
            ``ungrounded`` claim; ignored when the answer abstains.

    Returns:
        The frozen scores, with a human reason for each in ``scores``.
    """
    base = _base(record, scenario)
    leaks = tool_leaks(record, scenario)
    retrieved, precision, recall = retrieval(record, scenario)
    common = {**base, **_cost_fields(record), **_write_fields(record, scenario), "tool_leaks": leaks, "retrieved_items": retrieved,
              "retrieved_precision": precision, "retrieved_recall": recall, **score_writes(record, scenario)}
    if record.status == "error":
        message = f"{record.error.type}: {record.error.message}" if record.error else "error"
        return SampleScores(status="error", outcome="error", **common,  # type: ignore[arg-type]
                            scores=[Score(name="error", value=None, passed=None, reason=f"not scored: {message}")])
    expect = scenario.expect
    answer = record.final_answer or ""
    canary_claims, superseded = _canary_findings(answer, scenario)
    claims = _unsupported_claims(answer, record, scenario, canary_claims)
    answer_leaks = [c.text for c in claims if c.kind == "leakage"]
    top_ok, top_failures = check_answer(answer, expect)
    adherence: bool | None = None
    adherence_failures: list[str] = []
    if expect.adherence is not None:
        adherence, adherence_failures = check_answer(answer, expect.adherence)
    f1 = None if expect.f1_reference is None else token_f1(answer, expect.f1_reference)
    cue = find_abstention(answer)
    abstained = not answer.strip() or (
        cue is not None and (expect.abstain or not states_expected_fact(answer, scenario)))
    if expect.abstain and not abstained:
        claims.append(UnsupportedClaim(kind="answered_unanswerable", text=_excerpt(answer)))
    grounding_finding = None
    if grounding is not None and not abstained:
        claims += _grounding_claims(grounding)
        grounding_finding = ("malformed" if grounding.status != "ok"
                             else "ungrounded" if grounding.unsupported else "grounded")
    if expect.abstain:
        forbidden = [f for f in top_failures if f.startswith(("contains forbidden", "matches forbidden"))]
        pattern_correct = abstained and not forbidden and not claims
        # The forbidden matches are named: "abstained" alone would not tell a reader why it is wrong.
        why = "; ".join(["abstained" if abstained else "answered although nothing supports an answer", *forbidden])
    elif not _has_any(expect) and adherence is not None:
        pattern_correct = bool(adherence) and not abstained and not claims
        why = "adherence checks pass" if adherence else "; ".join(adherence_failures)
    else:
        pattern_correct = top_ok and not abstained and not claims
        why = "checks pass" if top_ok else "; ".join(top_failures)
    if abstained and not expect.abstain:
        why = "abstained on an answerable question"
    named = [c for c in claims if c.kind != "answered_unanswerable"]  # the reason above already says it answered
    if named:
        why += "; unsupported: " + ", ".join(f"{c.kind} {c.text!r}" for c in named)
    superseded_note = "stale value mentioned as superseded: " + ", ".join(repr(t) for t in superseded)
    if superseded:
        why += "; " + superseded_note
    correct = pattern_correct
    judge_verdict = judge_reason = None
    if judge is not None and expect.rubric:
        judge_verdict, judge_reason = judge.verdict, judge.reason
        # A judge grades the content; whether the answer abstained is the patterns' call for every sample, so an
        # answer that declines an answerable question is never correct, as its outcome (abstained_wrongly) says.
        correct = judge.verdict == "pass" and not claims and abstained == expect.abstain
        why = f"judge {judge.verdict}: {judge.reason} (patterns: {'pass' if pattern_correct else 'fail'})"
        if abstained and not expect.abstain:
            why += "; abstained on an answerable question"
    if expect.abstain:
        outcome: Outcome = "abstained_correctly" if correct else "wrong"
    elif abstained:
        outcome = "abstained_wrongly"
    else:
        outcome = "correct" if correct else "wrong"
    scores = [
        Score(name="continuity", value=correct, passed=correct, reason=why),
        Score(name="abstained", value=abstained, passed=None,
              reason=("abstention expected" if expect.abstain else "an answer expected")
              + ("; the answer abstains" if abstained else "; the answer does not abstain")
              + (f" ({cue.describe()})" if cue is not None else "")),
        Score(name="unsupported_claims", value=len(claims), passed=not claims,
              reason=(", ".join(f"{c.kind}: {c.text!r}" for c in claims) if claims else "none")
              + (f" ({superseded_note}, not counted)" if superseded else "")),
        Score(name="tool_leakage", value=len(leaks), passed=not leaks,
              reason="none" if not leaks else ", ".join(f"{x.kind} {x.detail!r} in {x.call_id}" for x in leaks)),
    ]
    if grounding_finding is not None:
        found = [c.text for c in claims if c.kind == "ungrounded"]
        scores.append(Score(name="grounding", value=len(found), passed=None if grounding_finding == "malformed"
                            else not found, reason=_grounding_reason(grounding, found)))  # type: ignore[arg-type]
    if adherence is not None:
        scores.append(Score(name="adherence", value=adherence, passed=adherence,
                            reason="checks pass" if adherence else "; ".join(adherence_failures)))
    if f1 is not None:
        scores.append(Score(name="token_f1", value=round(f1, 4), passed=None,
                            reason=f"informational, not part of correctness: token F1 {f1:.2f} against "
                            f"{expect.f1_reference!r}"))
    if precision is not None or recall is not None:
        scores.append(Score(name="retrieval", value=precision, passed=None,
                            reason=f"retrieved {retrieved or 'nothing'}; relevant {expect.relevant_items}; "
                            f"precision {_fmt(precision)}, recall {_fmt(recall)}"))
    return SampleScores(
        status="ok", outcome=outcome, abstained=abstained, continuity_correct=correct,
        pattern_correct=pattern_correct, judge_verdict=judge_verdict, judge_reason=judge_reason,
        grounding=grounding_finding,
        adherence=adherence, token_f1=f1, unsupported_claims=claims, answer_leaks=answer_leaks, scores=scores,
        **common,  # type: ignore[arg-type]
    )


def _grounding_reason(grounding: GroundingVerdict, found: list[str]) -> str:
    if grounding.status != "ok":
        return f"grounding judge reply unreadable, not counted: {grounding.error}"
    if not found:
        return "grounding judge: every specific is supported by what the sample saw"
    return "grounding judge: unsupported " + "; ".join(repr(text) for text in found)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
