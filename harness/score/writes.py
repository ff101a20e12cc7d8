"""Scoring the write path: what the agent wrote, and whether a failure was extraction's or retrieval's.

A pure function of the finished sample record and its scenario, like the
rest of :mod:`harness.score.scoring`; it works for any memory system, built-in or
plug-in, because it reads only the recorded write calls (name, arguments,
status, result) and the probe's tool results:

- a **save** is a write call whose tool name does not say forget/delete/
  remove/erase; its text is the first of the arguments ``text``, ``content``,
  ``memory``, ``note``, ``fact``, ``value``, ``body``, ``entry``;
- ``memories_written``: saves that stored something (status ``ok``, result
  not ``"event":"unchanged"``); ``write_duplicates``: saves whose text
  (normalized) was already saved earlier in the sample, or that the system
  reported ``unchanged``; ``writes_rejected``: saves the system refused;
- ``forgets_requested``: earlier sessions in which the user asked to forget
  something; ``forgets_done``: of those, the sessions whose write run made a
  forget call that ran (status ``ok``, or ``not_found``: nothing was stored);
- ``written_holds_expected``: whether what was saved (all saved texts
  together) states the scenario's expected strings that the probe does not
  already show (:func:`memory_check`): the specific fact rather than vague
  advice. For a seeded arm the "written" memory is the scenario's own items
  that the probe's scope may see (the oracle); None when the scenario needs
  no stored string (unanswerable, or every expected string is in view);
- ``retrieved_holds_expected``: whether the probe's successful tool results
  state it; None when no tool was offered at the probe.

:func:`failure_stage` then names where an answerable sample was lost:
``extraction`` (the fact never reached memory), ``retrieval`` (stored but the
probe's tools did not return it), ``answer`` (returned but not used), or
``correct``. :func:`write_path_blocks` builds the ``write_path`` and
``oracle_vs_extracted`` blocks of ``summary.json``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from harness.memo import by_identity
from harness.records import SampleRecord, ToolCallLog
from harness.scenarios import AnswerCheck, ItemSpec, Scenario, forget_request_session_ids
from harness.score.matching import check_answer, contains

Stage = Literal["correct", "extraction", "retrieval", "answer"]
STAGES: tuple[Stage, ...] = ("correct", "extraction", "retrieval", "answer")
ORACLE_PAIRS: dict[str, str] = {"recall_extracted": "recall", "memory_document_extracted": "memory_document"}
"""Agent-written arm -> the arm reading the same store filled with the scenario's hand-extracted items."""

_FORGET_TOOL = re.compile(r"forget|delete|remove|erase", re.IGNORECASE)
_TEXT_FIELDS = ("text", "content", "memory", "note", "fact", "value", "body", "entry")
_FORGET_DONE = ("ok", "not_found")
"""A forget call that ran: it deleted the memory, or there was none to delete (nothing was saved)."""
_UNCHANGED = re.compile(r'"event"\s*:\s*"unchanged"')


def call_arguments(call: ToolCallLog) -> dict[str, Any]:
    """A write call's arguments as a JSON object ({} when empty, malformed or not an object)."""
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def saved_text(call: ToolCallLog) -> str | None:
    """The text a save call asked to store (first text-like argument), or None."""
    args = call_arguments(call)
    return next((args[f] for f in _TEXT_FIELDS if isinstance(args.get(f), str)), None)


def is_forget(call: ToolCallLog) -> bool:
    """Whether a write call forgets: as its memory system declared (an MCP config's forget tool), else by its name."""
    if call.forget is not None:
        return call.forget
    return _FORGET_TOOL.search(call.name) is not None


def _memory_check(scenario: Scenario) -> AnswerCheck | None:
    """The strings stored memory must hold to support the expected answer; None when there are none.

    The expected strings minus those the probe itself shows (its message and
    recent history: "write the 2.3.0 entry" gives "2.3.0", memory need not).
    Regexes (``must_match``) describe the answer's form, not a stored fact, and
    are left out. An unanswerable scenario (``abstain``) has no such strings,
    and neither has one whose own items (the oracle, in the probe's scope) do
    not state them: its answer is composed from what is stored (a branch name
    built from a convention), so a string test cannot tell extraction from
    retrieval there.
    """
    expect = scenario.expect
    if expect.abstain:
        return None
    shown = "\n".join([scenario.probe.message, *(turn.content for turn in scenario.probe.history)])
    needed_any = [s for s in expect.must_contain_any if not contains(shown, s)]
    needed_all = [s for s in expect.must_contain_all if not contains(shown, s)]
    if expect.must_contain_any and len(needed_any) < len(expect.must_contain_any):
        needed_any = []  # one of the alternatives is already in view: memory is not needed for this check
    if not (needed_any or needed_all):
        return None
    check = AnswerCheck(must_contain_any=needed_any, must_contain_all=needed_all)
    return check if _holds(_oracle_texts(scenario), check) else None


def _holds(texts: Iterable[str], check: AnswerCheck | None) -> bool | None:
    joined = "\n".join(texts)
    if check is None or not joined.strip():
        return None if check is None else False
    return check_answer(joined, check)[0]


def _contents_by_scope(items: Sequence[ItemSpec]) -> dict[str | None, tuple[str, ...]]:
    """The active items' contents a probe in each workspace the items name may see (None: global items only)."""
    return {
        workspace: tuple(
            item.content for item in items if item.state == "active" and (item.workspace is None or item.workspace == workspace)
        )
        for workspace in {item.workspace for item in items} | {None}
    }


def _oracle_texts(scenario: Scenario) -> tuple[str, ...]:
    """The scenario's items the probe's scope may see (active, global or the probe's workspace).

    A workspace no item names sees the global items only, as a probe in no workspace does.
    """
    by_scope = _scope_contents(scenario.items)
    return by_scope.get(scenario.probe.workspace, by_scope[None])


def _scenario_oracle_holds(scenario: Scenario) -> bool | None:
    """Whether the oracle texts hold :func:`memory_check`'s strings; None when there are none."""
    check = memory_check(scenario)
    return _holds(_oracle_texts(scenario), check) if check is not None else None


# Functions of the scenario alone, computed once per scenario object: a report scores each scenario's
# samples (every arm, model and epoch) against the same one, and a benchmark conversation's items are many.
memory_check = by_identity(_memory_check)
_oracle_holds = by_identity(_scenario_oracle_holds)
_scope_contents = by_identity(_contents_by_scope)  # per item list: a conversation's probes share theirs


def score_writes(record: SampleRecord, scenario: Scenario) -> dict[str, Any]:
    """The write-path fields of :class:`harness.score.scoring.SampleScores` for one sample (see the module docstring)."""
    check = memory_check(scenario)
    fields: dict[str, Any] = {
        "memories_written": 0, "write_duplicates": 0, "writes_rejected": 0,
        "forgets_requested": 0, "forgets_done": 0,
    }  # fmt: skip
    written: list[str] = []
    if record.write_phase is not None:
        seen: set[str] = set()
        for session in record.write_phase.sessions:
            for call in session.tool_calls:
                if is_forget(call):
                    continue
                if call.status != "ok":
                    fields["writes_rejected"] += 1
                    continue
                text = saved_text(call)
                key = " ".join((text or "").casefold().split())
                if _UNCHANGED.search(call.result_text) or (key and key in seen):
                    fields["write_duplicates"] += 1
                if _UNCHANGED.search(call.result_text):
                    continue
                fields["memories_written"] += 1
                if text is not None:
                    written.append(text)
                    seen.add(key)
        forgot = {
            s.session_id for s in record.write_phase.sessions if any(c.status in _FORGET_DONE and is_forget(c) for c in s.tool_calls)
        }
        asked = set(forget_request_session_ids(scenario))
        fields["forgets_requested"], fields["forgets_done"] = len(asked), len(asked & forgot)
        fields["written_holds_expected"] = _holds(written, check) if check is not None else None
    elif record.tools_offered or record.arm in ORACLE_PAIRS.values():
        fields["written_holds_expected"] = _oracle_holds(scenario)
    else:
        fields["written_holds_expected"] = None
    results = [c.result_text for c in record.tool_calls if c.status == "ok"]
    fields["retrieved_holds_expected"] = (
        _holds(results, check) if record.tools_offered and check is not None else None
    )
    return fields


def failure_stage(scores: Any) -> Stage | None:
    """Where an ok, answerable sample of a memory arm was lost; None when the split does not apply.

    Applies when the sample was scored, should not abstain, and the system
    stored memory (``written_holds_expected`` is not None).
    """
    if scores.status != "ok" or scores.should_abstain or scores.continuity_correct is None:
        return None
    if scores.written_holds_expected is None:
        return None
    if scores.continuity_correct:
        return "correct"
    if not scores.written_holds_expected:
        return "extraction"
    if scores.retrieved_holds_expected is False:
        return "retrieval"
    return "answer"


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def write_path_blocks(scores: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """``write_path`` (per model x arm with stored memory) and ``oracle_vs_extracted`` (per pair in :data:`ORACLE_PAIRS`)."""
    memory_arms = {
        (s.model, s.arm) for s in scores if s.write_model_calls or s.tools_offered or s.arm in ORACLE_PAIRS.values()
    }
    groups: dict[tuple[str, str], list[Any]] = {key: [] for key in memory_arms}
    for s in scores:
        if s.status == "ok" and (s.model, s.arm) in memory_arms:
            groups[(s.model, s.arm)].append(s)
    write_path = []
    for (model, arm), rows in sorted(groups.items()):
        stages = Counter(stage for stage in map(failure_stage, rows) if stage is not None)
        holds = [float(r.written_holds_expected) for r in rows if r.written_holds_expected is not None]
        retrieved = [float(r.retrieved_holds_expected) for r in rows if r.retrieved_holds_expected is not None]
        write_path.append({
            "model": model, "arm": arm, "samples": len(rows),
            "memories_written": sum(r.memories_written for r in rows),
            "write_duplicates": sum(r.write_duplicates for r in rows),
            "writes_rejected": sum(r.writes_rejected for r in rows),
            "forgets_requested": sum(r.forgets_requested for r in rows),
            "forgets_done": sum(r.forgets_done for r in rows),
            "written_holds_expected_rate": _mean(holds), "retrieved_holds_expected_rate": _mean(retrieved),
            "stages": {stage: stages.get(stage, 0) for stage in STAGES},
        })  # fmt: skip
    pairs = []
    by_key: dict[tuple[str, str, str], list[Any]] = {}
    for s in scores:
        by_key.setdefault((s.model, s.arm, s.scenario_id), []).append(s)
    models = sorted({s.model for s in scores})
    for model in models:
        for extracted_arm, oracle_arm in ORACLE_PAIRS.items():
            counts: Counter[str] = Counter()
            n = 0
            for (m, arm, scenario_id), rows in sorted(by_key.items()):
                if m != model or arm != extracted_arm or (model, oracle_arm, scenario_id) not in by_key:
                    continue
                oracle = [failure_stage(r) for r in by_key[(model, oracle_arm, scenario_id)]]
                extracted = [failure_stage(r) for r in rows]
                if not any(oracle) or not any(extracted):
                    continue
                n += 1
                # One epoch per scenario decides: the first sample with a stage in each arm.
                o, e = next(x for x in oracle if x), next(x for x in extracted if x)
                counts[_pair_kind(o, e)] += 1
            if n:
                pairs.append({"model": model, "oracle_arm": oracle_arm, "extracted_arm": extracted_arm, "n_scenarios": n,
                              **{k: counts.get(k, 0) for k in _PAIR_KINDS}})
    return {"write_path": write_path, "oracle_vs_extracted": pairs}


_PAIR_KINDS = ("both_correct", "extraction_failures", "retrieval_failures", "answer_failures", "oracle_failed_too", "extracted_only_correct")


def _pair_kind(oracle: Stage, extracted: Stage) -> str:
    """How one scenario splits: the extracted arm's loss named by its stage, when the oracle succeeded."""
    if oracle == "correct":
        return "both_correct" if extracted == "correct" else f"{extracted}_failures"
    return "extracted_only_correct" if extracted == "correct" else "oracle_failed_too"


def stage_counts(scores: Iterable[Any]) -> Mapping[str, int]:
    """Counts of :func:`failure_stage` over ``scores`` (stages that apply only)."""
    return Counter(stage for stage in map(failure_stage, scores) if stage is not None)
