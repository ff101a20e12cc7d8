"""Forgetting as a measured property: what the user asked to forget, what the system did, and what came back.

A pure function of one finished record and its scenario, for every memory
system (built in or plug-in), from the write phase and the probe together:

- ``forget_requests``: user turns of the earlier sessions that ask to forget,
  declared, not guessed (:data:`harness.scenarios.forget_requests`: a turn
  that asks the assistant to forget, or any forget word where the scenario
  declares a forgotten fact; "I'll never forget it" asks nothing); the same
  in every arm;
- ``forget_calls``: forget calls of the write phase (a call its memory system
  declared a forget, as an MCP config names its forget tool; otherwise a
  write tool whose name says forget/delete/remove/erase); ``forgets_removed``: those that removed
  something (status ``ok``; ``not_found`` removed nothing);
- ``forgotten_facts``: the scenario's forgotten facts
  (:func:`harness.scenarios.forgotten_texts`);
- ``retained_after_forget``: forgotten facts that reached the model at the
  probe, in its own scope: a tool result (archived items of the probe's scope
  disclosed, a forgotten fact's text in a result: :func:`harness.score.disclosure.tool_findings`)
  or the prompt itself (``full_history`` pastes the raw transcript, a memory
  document is injected whole), so the ceiling's privacy cost is visible;
- ``answer_forgotten``: forgotten facts the final answer repeats (claimed
  as ``forgotten`` among the unsupported claims);
- ``forget_notes``: what went wrong, in words: a forget that removed nothing
  while the fact was stored under another name ("forgot 'home address'; the
  fact was stored as 'freelance invoices'"), a request with no forget call.

:func:`forgetting_table` sums them per model x arm (``summary.json``
``forgetting[]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.records import SampleRecord, ToolCallLog
from harness.scenarios import Scenario, forget_request_session_ids, forget_requests, forgotten_texts
from harness.score.matching import contains
from harness.score.models import RetainedFact
from harness.score.writes import call_arguments, is_forget, saved_text

_NAME_FIELDS = ("name", "title", "key", "topic", "subject", "label")
_LIST_FIELDS = ("keys", "tags", "terms", "keywords", "labels")
#: The roles of a probe transcript whose text the memory system put before the model (tool results are counted
#: per call instead): the system prompt (an injected memory document) and user turns (a pasted history).
_PROMPT_ROLES = ("system", "user")


def call_name(call: ToolCallLog) -> str | None:
    """The name a write call stored or forgot under: its name-like argument, else its keys joined; None without."""
    args = call_arguments(call)
    name = next((args[f] for f in _NAME_FIELDS if isinstance(args.get(f), str) and args[f].strip()), None)
    if name is not None:
        return name.strip()
    keys = next((args[f] for f in _LIST_FIELDS if isinstance(args.get(f), list) and args[f]), None)
    return ", ".join(str(k) for k in keys) if keys else None


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def _about(text: str, name: str | None, facts: Sequence[str]) -> bool:
    """Whether a saved ``text`` holds what a forget of ``name`` was about: a forgotten fact, or the name itself."""
    return any(contains(text, fact) for fact in facts) or (name is not None and contains(text, name))


def write_forgetting(record: SampleRecord, scenario: Scenario) -> dict[str, Any]:
    """``forget_calls``, ``forgets_removed`` and ``forget_notes`` of the write phase (0 and none without one)."""
    phase = record.write_phase
    fields: dict[str, Any] = {"forget_calls": 0, "forgets_removed": 0, "forget_notes": []}
    if phase is None:
        return fields
    facts = forgotten_texts(scenario)
    notes: list[str] = fields["forget_notes"]
    stored: dict[tuple[str | None, str], str] = {}  # (workspace, name) -> text, of saves not forgotten since
    asked = set(forget_request_session_ids(scenario))
    unanswered: list[str] = []  # sessions that asked to forget, with no forget call in them yet or after them
    for session in phase.sessions:
        forgot_here = False
        for call in session.tool_calls:
            name = call_name(call)
            if not is_forget(call):
                text = saved_text(call)
                if call.status == "ok" and text is not None and name is not None:
                    stored[(session.workspace, name)] = text
                continue
            fields["forget_calls"] += 1
            forgot_here = True
            if call.status == "ok":
                fields["forgets_removed"] += 1
                stored = {k: v for k, v in stored.items() if not (k[0] == session.workspace and _same(k[1], name))}
                continue
            elsewhere = [n for (ws, n), text in stored.items()
                         if ws in (None, session.workspace) and not _same(n, name) and _about(text, name, facts)]
            shown = repr(name) if name is not None else "without a name"
            if elsewhere:
                notes.append(f"forgot {shown}; the fact was stored as " + ", ".join(repr(n) for n in elsewhere))
            else:
                notes.append(f"forgot {shown}: {call.status}, nothing removed")
        if forgot_here:  # a later forget acts on an earlier request too (an MCP config forgets after the last session)
            unanswered.clear()
        if session.session_id in asked and not forgot_here:
            unanswered.append(session.session_id)
    notes += [f"session {session_id} asked to forget; no forget call was made" for session_id in unanswered]
    return fields


def prompt_retained(record: SampleRecord, scenario: Scenario) -> list[RetainedFact]:
    """Forgotten facts the probe's prompt itself held (a pasted transcript, an injected memory document).

    Validation keeps a ``forgotten`` canary out of the probe's own message and
    history, so a match here is memory the system put in the prompt.
    """
    facts = forgotten_texts(scenario)
    if not facts:
        return []
    text = "\n".join(str(m.get("content") or "") for m in record.messages if m.get("role") in _PROMPT_ROLES)
    return [RetainedFact(call_id=None, kind="forgotten_fact", detail=fact) for fact in facts if contains(text, fact)]


def score_forgetting(record: SampleRecord, scenario: Scenario, tool_retained: Sequence[RetainedFact]) -> dict[str, Any]:
    """The forgetting fields of :class:`harness.score.models.SampleScores` but ``answer_forgotten`` (see the module)."""
    return {
        "forget_requests": len(forget_requests(scenario)),
        "forgotten_facts": len(forgotten_texts(scenario)),
        "retained_after_forget": [*prompt_retained(record, scenario), *tool_retained],
        **write_forgetting(record, scenario),
    }


def retained_count(retained: Sequence[RetainedFact]) -> int:
    """Distinct forgotten facts (texts or archived item ids) that reached the model."""
    return len({(r.kind, r.detail) for r in retained})


def forgetting_reason(scores: Mapping[str, Any], answer_forgotten: Sequence[str]) -> str:
    """The ``forgetting`` score's reason: the counts, then each note."""
    retained = scores["retained_after_forget"]
    parts = [f"forget requests {scores['forget_requests']}, forget calls {scores['forget_calls']} "
             f"({scores['forgets_removed']} removed something), forgotten facts {scores['forgotten_facts']}: "
             f"{retained_count(retained)} still retrievable at the probe, {len(answer_forgotten)} in the answer"]
    if retained:
        parts.append("retained_after_forget: " + ", ".join(
            f"{r.detail!r} in {r.call_id or 'the prompt'}" for r in retained))
    parts += list(scores["forget_notes"])
    return "; ".join(parts)


def forgetting_table(scores: Sequence[Any], mechanisms: Mapping[str, str] | None = None,
                     arms: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``forgetting[]`` of ``summary.json``: per model x arm, over ok samples of scenarios that ask to forget.

    Rows go by model, then in ``arms`` order (the run's), other arms after by name.

    A sample counts when its scenario has a forget request or a forgotten
    fact, or when it retained one anyway (an archived item of its scope
    disclosed); a run without any gets no rows. ``forget_requests`` counts
    each request once: the probes of one conversation (``conv/probe`` ids)
    share its sessions and epochs repeat them, so it is the sum over
    conversations of the most any of their samples saw (not sessions x
    probes). ``forget_calls`` and ``forgets_removed`` are None for an arm
    without a write phase (the system never saw a request to act on); a
    write phase of template calls and no model call (an MCP config's write
    and forget tools) is one.
    """
    mechanisms = mechanisms or {}
    groups: dict[tuple[str, str], list[Any]] = {}
    for s in scores:
        groups.setdefault((s.model, s.arm), [])
        if s.status == "ok" and (s.forget_requests or s.forgotten_facts or s.retained_after_forget):
            groups[(s.model, s.arm)].append(s)
    if not any(groups.values()):
        return []
    order = {arm: i for i, arm in enumerate(arms)}
    rows = []
    for (model, arm), group in sorted(groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order)), kv[0][1])):
        writes = any(s.write_model_calls or s.write_tool_calls for s in group)  # a template write (MCP) has no model
        rows.append({
            "model": model, "arm": arm, "mechanism": mechanisms.get(arm, "not declared"), "samples": len(group),
            "forget_requests": _requests_once(group),
            "forget_calls": sum(s.forget_calls for s in group) if writes else None,
            "forgets_removed": sum(s.forgets_removed for s in group) if writes else None,
            "forgotten_facts": sum(s.forgotten_facts for s in group),
            "retrievable": sum(retained_count(s.retained_after_forget) for s in group),
            "disclosed": sum(len(s.answer_forgotten) for s in group),
            "notes": sum(len(s.forget_notes) for s in group),
        })  # fmt: skip
    return rows


def _requests_once(group: Sequence[Any]) -> int:
    """Forget requests counted once each: per conversation, the most any of its samples' sessions held."""
    most: dict[str, int] = {}
    for s in group:
        conversation = s.scenario_id.split("/", 1)[0]
        most[conversation] = max(most.get(conversation, 0), s.forget_requests)
    return sum(most.values())
