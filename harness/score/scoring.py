"""Scores of one finished sample: pure functions of a SampleRecord and its Scenario.

Nothing here calls a model. A judge verdict, when one exists, is passed in.

Conventions (also in ``docs/summary-json.md``):

* Text matching: both sides are NFKC-normalized, casefolded and whitespace
collapsed, then compared as substrings, except short strings (3 characters
or fewer, e.g. "no", "yes", "2") and lone numbers ("55432", "1,240"), which
match word-bounded (:func:`contains`): "no" is not in "know", "2" is not in
"12" or "2.5". Regexes run with IGNORECASE on the raw answer.
``must_contain_groups``: every group must match, in any order; a group
matches when any one of its strings (synonyms) appears, by the same rule. *
Abstention: :func:`harness.score.abstention.is_abstention` on the final
answer   (sentence-level cues: a strong "I don't know / no record / you
haven't told   me" anywhere outside quotes, a hedge only in the lead
sentence; traps and   partial hedges excluded; see that module). An empty
answer abstains. An   answer with a cue still counts as *answered* on an
answerable scenario when   it states the expected fact outside its
abstention clauses   (:func:`states_expected_fact`: the positive checks, or
the adherence ones   when the top level has none, pass on
:func:`harness.score.abstention.outside_abstention`): "I'm not sure, but I
think   it is 2 spaces" (a hedge keeps what it states) and "No, you never
mentioned   that" (gold "No") are answered; "I don't know — I have no record
of that"   (gold "No") and "I have 2 notes but no record of the date" (gold
"2") are   abstentions. An answered answer is scored on what it stated,
canaries   included. * Token F1 and BLEU-1 (informational, the papers'
metrics: :mod:`harness.score.paper_metrics`): when ``expect.f1_reference``
is set, the answer's token F1 against it as LoCoMo computes it (its
normalisation, Porter-stemmed tokens, ``multi_hop`` per sub-answer) and its
BLEU-1. Reported as ``token_f1`` and ``bleu1`` beside the exact checks, with
LongMemEval's session-level retrieval (``session_retrieval`` on LongMemEval's
population, ``ours_session_retrieval`` on ours); none of them
enters correctness, outcome or the verdict. * Continuity, answerable scenario: not abstained,
every top-level check   passes, no unsupported claim. A scenario with no
top-level checks but an   ``adherence`` block scores continuity by adherence
(the remembered   preference shaping the output *is* the continuity).
Unanswerable scenario   (``expect.abstain``): abstained, negative checks
pass, no unsupported claim. * Unsupported claims (each has a ``kind``,
:data:`CLAIM_KINDS`): every answer   to an unanswerable scenario that does
not abstain (``answered_unanswerable``:   nothing supports any answer,
whatever it says); each specific the grounding   judge lists when one ran
(``ungrounded``, :mod:`harness.score.grounding`; only   for answers that do
not abstain); canaries in the answer (leakage, stale, invented), except   a
``stale`` canary mentioned *as superseded* ("moved from eu-west-1 to   eu-
central-1", "not 5433 anymore"): every occurrence has a supersession cue
bound to it in its sentence and the answer passes the scenario's positive
checks (it states the current value). The rule is in
:mod:`harness.score.superseded`; such mentions are not counted but named in
the   reasons ("stale value mentioned as superseded: ..."). Leakage,
invented   and someone_else canaries (a true fact about another person: the
trap of an   adversarial question) are always counted, however phrased, each
as its own   kind. Also unsupported: item ids   cited in the answer that no
scenario item has (``unknown_item_id``), or   that exist but were never
shown to the agent in this sample, neither by a   tool nor in a non-
assistant message (``undisclosed_item_id``). A string is   id-shaped when it
starts with one of the scenario's item-id prefixes (the   leading letters
plus separator of each item id, e.g. ``it-``). Stale values   are only
detected through ``stale`` canaries, never by fuzzy matching. * Tool leakage
(a Host defect, must be 0: what crosses scope or policy): ids disclosed by a
tool that belong to another workspace's items; any storage read or
disclosure when the probe's policy denies reads (or incognito); leakage
canaries inside any tool result text. * Retained after forget (the memory
system kept, in the probe's own scope, what the user asked to forget;
:mod:`harness.score.forgetting`): archived items of the probe's scope
disclosed, forgotten facts in a tool result or in the prompt (a pasted
transcript, an injected document), and in the answer (claimed as
``forgotten``, never ``leakage``). * Retrieval: the set of ``disclosed_item_ids``
against ``expect.relevant_items``.   Both are None when the arm offered no
tools. Precision is None when nothing   was retrieved; recall is None when
the scenario names no relevant items   (and 0.0 when it does and nothing was
retrieved). * Error samples are never scored as wrong: every correctness
field is None. * Unlabelled probes (``expect.unlabelled``: logged traffic
without gold) are neither right nor wrong: ``continuity_correct`` and
``pattern_correct`` are None and the outcome is ``unlabelled``; abstention,
unsupported claims (the grounding judge's among them), leakage and costs are
scored as for any answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from harness.records import SampleRecord
from harness.scenarios import Scenario
from harness.score.abstention import find_abstention
from harness.score.claims import canary_findings, cited_id_claims, excerpt, grounding_claims
from harness.score.credit import credit
from harness.score.disclosure import out_of_scope_attempts, retrieval, tool_findings
from harness.score.forgetting import forgetting_reason, score_forgetting
from harness.score.matching import check_answer, contains, has_any_check, states_expected_fact
from harness.score.models import Outcome, SampleScores, Score, UnsupportedClaim
from harness.score.paper_metrics import bleu1, locomo_f1, ours_session_retrieval, session_retrieval

if TYPE_CHECKING:
    from harness.score.grounding import GroundingVerdict
    from harness.score.judge import JudgeVerdict


def _cost_fields(record: SampleRecord) -> dict[str, int | float | None]:
    costs = [call.cost_usd for call in record.model_calls]
    priced = [c for c in costs if c is not None]
    return {
        "tool_calls": len(record.tool_calls),
        "model_calls": len(record.model_calls),
        "prompt_tokens": sum(c.prompt_tokens for c in record.model_calls),
        "completion_tokens": sum(c.completion_tokens for c in record.model_calls),
        "tool_result_tokens": sum(c.result_tokens for c in record.tool_calls),
        "tool_result_chars": sum(c.result_chars for c in record.tool_calls),
        "cost_usd": sum(priced) if costs and len(priced) == len(costs) else None,
        "latency_s": _sample_latency_s(record),
        "tool_latency_s": sum(call.elapsed_s for call in record.tool_calls),
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
    leaks, tool_retained = tool_findings(record, scenario)
    forgetting = score_forgetting(record, scenario, tool_retained)
    retrieved, precision, recall = retrieval(record, scenario)
    common = {**base, **_cost_fields(record), **_write_fields(record, scenario), "tool_leaks": leaks, **forgetting,
              "out_of_scope_attempts": out_of_scope_attempts(record, scenario), "retrieved_items": retrieved,
              "uncredited_items": credit(record, scenario).uncredited,
              "retrieved_precision": precision, "retrieved_recall": recall, **score_writes(record, scenario),
              "session_retrieval": session_retrieval(record, scenario),
              "ours_session_retrieval": ours_session_retrieval(record, scenario)}
    if record.status == "error":
        message = f"{record.error.type}: {record.error.message}" if record.error else "error"
        return SampleScores(status="error", outcome="error", **common,  # type: ignore[arg-type]
                            scores=[Score(name="error", value=None, passed=None, reason=f"not scored: {message}")])
    expect = scenario.expect
    answer = record.final_answer or ""
    canary_claims, superseded = canary_findings(answer, scenario)
    claims = cited_id_claims(answer, record, scenario, canary_claims)
    answer_leaks = [c.text for c in claims if c.kind == "leakage"]
    answer_forgotten = [c.text for c in claims if c.kind == "forgotten"]
    top_ok, top_failures = check_answer(answer, expect)
    adherence: bool | None = None
    adherence_failures: list[str] = []
    if expect.adherence is not None:
        adherence, adherence_failures = check_answer(answer, expect.adherence)
    f1 = None if expect.f1_reference is None else locomo_f1(answer, expect.f1_reference, scenario.category)
    bleu = None if expect.f1_reference is None else bleu1(answer, expect.f1_reference)
    cue = find_abstention(answer)
    abstained = not answer.strip() or (
        cue is not None and (expect.abstain or not states_expected_fact(answer, scenario)))
    if expect.abstain and not abstained:
        claims.append(UnsupportedClaim(kind="answered_unanswerable", text=excerpt(answer)))
    grounding_finding = None
    if grounding is not None and not abstained:
        claims += grounding_claims(grounding)
        grounding_finding = ("malformed" if grounding.status != "ok"
                             else "ungrounded" if grounding.unsupported else "grounded")
    if expect.abstain:
        forbidden = [f for f in top_failures if f.startswith(("contains forbidden", "matches forbidden"))]
        pattern_correct = abstained and not forbidden and not claims
        # The forbidden matches are named: "abstained" alone would not tell a reader why it is wrong.
        why = "; ".join(["abstained" if abstained else "answered although nothing supports an answer", *forbidden])
    elif not has_any_check(expect) and adherence is not None:
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
    if expect.unlabelled:  # no gold: whatever the patterns say (they check nothing) is not a result
        correct = pattern_correct = None  # type: ignore[assignment]
        why = "unlabelled probe (logged traffic, no gold): continuity n/a, counted apart" + (
            "; unsupported: " + ", ".join(f"{c.kind} {c.text!r}" for c in named) if named else "")
        outcome: Outcome = "unlabelled"
    elif expect.abstain:
        outcome = "abstained_correctly" if correct else "wrong"
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
    if any(forgetting[k] for k in ("forget_requests", "forgotten_facts", "forget_calls", "retained_after_forget")):
        kept = bool(forgetting["retained_after_forget"] or answer_forgotten)
        scores.append(Score(name="retained_after_forget", value=len(answer_forgotten), passed=not kept,
                            reason=forgetting_reason(forgetting, answer_forgotten)))
    if grounding_finding is not None:
        found = [c.text for c in claims if c.kind == "ungrounded"]
        scores.append(Score(name="grounding", value=len(found), passed=None if grounding_finding == "malformed"
                            else not found, reason=_grounding_reason(grounding, found)))  # type: ignore[arg-type]
    if adherence is not None:
        scores.append(Score(name="adherence", value=adherence, passed=adherence,
                            reason="checks pass" if adherence else "; ".join(adherence_failures)))
    if f1 is not None:
        scores.append(Score(name="token_f1", value=round(f1, 4), passed=None,
                            reason=f"informational, not part of correctness: LoCoMo's stemmed token F1 "
                            f"{f1:.2f} against {expect.f1_reference!r}"))
    if bleu is not None:
        scores.append(Score(name="bleu1", value=round(bleu, 4), passed=None,
                            reason=f"informational, not part of correctness: the mem0 paper's LoCoMo metric, "
                            f"BLEU-1 {bleu:.2f} against {expect.f1_reference!r}"))
    if precision is not None or recall is not None:
        scores.append(Score(name="retrieval", value=precision, passed=None,
                            reason=f"retrieved {retrieved or 'nothing'}; relevant {expect.relevant_items}; "
                            f"precision {_fmt(precision)}, recall {_fmt(recall)}"))
    return SampleScores(
        status="ok", outcome=outcome, abstained=abstained, continuity_correct=correct,
        pattern_correct=pattern_correct, judge_verdict=judge_verdict, judge_reason=judge_reason,
        grounding=grounding_finding,
        adherence=adherence, token_f1=f1, bleu1=bleu, unsupported_claims=claims, answer_leaks=answer_leaks,
        answer_forgotten=answer_forgotten, scores=scores,
        **common,  # type: ignore[arg-type]
    )


#: How the grounding score's reason begins when the judge's reply could not be read; the reply's error follows (a
#: rescore reads the error back from it: :mod:`harness.runs.rescore`).
GROUNDING_UNREADABLE = "grounding judge reply unreadable, not counted: "


def _grounding_reason(grounding: GroundingVerdict, found: list[str]) -> str:
    if grounding.status != "ok":
        return f"{GROUNDING_UNREADABLE}{grounding.error}"
    if not found:
        return "grounding judge: every specific is supported by what the sample saw"
    return "grounding judge: unsupported " + "; ".join(repr(text) for text in found)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
