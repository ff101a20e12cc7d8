"""LongMemEval (``longmemeval_s``/``_m``/``_oracle``, original or 2025 cleaned) -> one conversation file per question.

The published shape: a JSON list of questions, each with ``question_id``,
``question_type``, ``question``, ``answer``, ``question_date``,
``haystack_session_ids``, ``haystack_dates``, ``haystack_sessions`` (lists of
``{role, content, has_answer?}`` turns) and ``answer_session_ids``; an id
ending in ``_abs`` is an abstention question. The 2025 cleaned release
(``*_cleaned.json``) keeps these fields and removes haystack sessions that
contradicted the answers; both are read the same way, tolerating variants
seen in copies of the data: a numeric or list ``answer``, missing
``haystack_session_ids`` (sessions are then numbered), ``has_answer`` given as
a string, turns with other roles (dropped), and extra fields (ignored).

No memory items are published, so the baseline extractor
(:mod:`harness.importers.extract`) makes one item per turn, cut at sentence
ends when long, each written as a quote of its turn (scenario schema 2, so a
turn's text is on disk once); turns marked ``has_answer`` give the probe's relevant items
(when a question has none, every item of its ``answer_session_ids``).

A session dated later on the question's own day is kept and the probe moves
after it; a question whose evidence session had to be dropped is dropped
(counted), never scored as answerable. A gold naming other acceptable answers
becomes its alternatives; a dict gold drops its question.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from harness.importers.answers import alternatives, answer_check, gold_text, unglue_dates, unusable_gold
from harness.importers.extract import keys_for, quoted_pieces, storable
from harness.importers.faults import FaultLog
from harness.importers.output import safe_id
from harness.importers.times import iso, parse_time

LICENCE = "MIT"
LICENCE_URL = "https://opensource.org/license/mit"
DATASET_URL = "https://github.com/xiaowu0162/LongMemEval"

QUESTION_TYPES: dict[str, str] = {
    "single-session-user": "single_session_user",
    "single-session-assistant": "single_session_assistant",
    "single-session-preference": "single_session_preference",
    "multi-session": "multi_session",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
}
CATEGORY_TEXT: dict[str, str] = {
    "single_session_user": "LongMemEval single-session-user: a fact the user stated in one session.",
    "single_session_assistant": "LongMemEval single-session-assistant: something the assistant said in one session.",
    "single_session_preference": "LongMemEval single-session-preference: a reply that uses the user's preference "
                                 "(rubric only: graded by a judge; without --judge-model it is not judged).",
    "multi_session": "LongMemEval multi-session: facts from several sessions combined (counts, totals, lists).",
    "temporal": "LongMemEval temporal-reasoning: dates, durations and order of events.",
    "knowledge_update": "LongMemEval knowledge-update: the latest of values that changed over time.",
    "other": "LongMemEval question of a type this importer does not know.",
}
EXTRACTION_NOTE = (
    "LongMemEval publishes no memory items: retrieval runs over this importer's baseline extraction "
    "(one item per turn, cut at sentence ends when long; keys from entities and content words; observed at the "
    "session date), not over a memory system's own extraction. See docs/importers.md."
)
PROBE_DELAY = _dt.timedelta(days=1)
SAME_DAY_GAP = _dt.timedelta(minutes=1)
"""A probe moved after a session dated later on the question's day runs this long after that session starts."""


def _has_answer(turn: dict[str, Any]) -> bool:
    value = turn.get("has_answer")
    return value is True or (isinstance(value, str) and value.strip().lower() == "true") or value == 1


def _marked(raw: Any) -> bool:
    return isinstance(raw, list) and any(isinstance(turn, dict) and _has_answer(turn) for turn in raw)


def _sessions(cid: str, question: dict[str, Any], probe_at: _dt.datetime | None, faults: FaultLog,
              lost: list[tuple[str, bool]]) -> list[tuple[str, _dt.datetime, list[dict[str, Any]], list[bool]]]:
    """Kept sessions as (id, start, turns, has_answer per turn); each dropped one goes into ``lost``.

    ``lost`` gets (id, whether a turn of it is marked ``has_answer``): evidence
    is a session of ``answer_session_ids`` or one holding a marked turn.

    A session dated later on the question's own day is kept (the published
    data has many: the question's time of day is not meant to precede them);
    the caller moves the probe after it. A session on a later day is dropped.
    """
    raw_sessions = question.get("haystack_sessions")
    if not isinstance(raw_sessions, list):
        raw_sessions = []
    dates = _v if isinstance(_v := question.get("haystack_dates"), list) else []
    ids = _v if isinstance(_v := question.get("haystack_session_ids"), list) else None
    if ids is None and raw_sessions:
        faults.repair("question without haystack_session_ids, sessions numbered", cid)
    if len(dates) > len(raw_sessions):
        for extra in dates[len(raw_sessions):]:
            faults.drop("date without a session", f"{cid}: {extra!r}")
    kept: list[tuple[str, _dt.datetime, list[dict[str, Any]], list[bool]]] = []
    used: set[str] = set()
    for position, raw in enumerate(raw_sessions, start=1):
        raw_id = ids[position - 1] if ids is not None and position <= len(ids) else None
        sid = safe_id(str(raw_id), f"s{position}") if raw_id is not None else f"s{position}"
        where = f"{cid} session {position} ({sid})"
        if sid in used:
            fresh = f"{sid}-{position}"
            faults.repair("duplicate haystack session id, renamed", f"{where} -> {fresh!r}")
            sid = fresh
        started = parse_time(dates[position - 1]) if position <= len(dates) else None
        if started is None:
            raw_date = dates[position - 1] if position <= len(dates) else None
            faults.drop("session without a usable date", f"{where}: {raw_date!r}")
            lost.append((sid, _marked(raw)))
            continue
        if probe_at is not None and started >= probe_at:
            if started.date() != probe_at.date():
                faults.drop("session dated on a day after the question", f"{where}: {iso(started)} > {iso(probe_at)}")
                lost.append((sid, _marked(raw)))
                continue
            faults.repair("session dated later on the question's day, kept (the probe follows it)",
                          f"{where}: {iso(started)} >= {iso(probe_at)}")
        turns: list[dict[str, Any]] = []
        marks: list[bool] = []
        for t, turn in enumerate(raw if isinstance(raw, list) else [], start=1):
            role = turn.get("role") if isinstance(turn, dict) else None
            content = str(turn.get("content") or "").strip() if isinstance(turn, dict) else ""
            if role not in ("user", "assistant"):
                faults.drop("turn with a role other than user or assistant", f"{where} turn {t}: {role!r}")
                continue
            if not content:
                faults.drop("turn without content", f"{where} turn {t}")
                continue
            turns.append({"role": role, "content": content})
            marks.append(_has_answer(turn))
        if not turns:
            faults.drop("session without a usable turn", where)
            lost.append((sid, _marked(raw)))
            continue
        used.add(sid)
        kept.append((sid, started, turns, marks))
    return kept


def _keys(text: str, where: str, faults: FaultLog) -> list[str | dict[str, str]]:
    """The extractor's keys, each key the store would refuse left out and logged (never written)."""
    refused: list[str] = []
    keys = keys_for(text, refused=refused)
    for key in refused:
        faults.drop("key the memory store would refuse (over 256 code points or unprintable), left out",
                    f"{where}: {len(key)} characters {key[:40]!r}...")
    return keys


def convert_question(question: Any, index: int, faults: FaultLog, taken: set[str]) -> dict[str, Any] | None:
    """One LongMemEval question as a conversation file's data (one probe), or None (logged)."""
    if not isinstance(question, dict):
        faults.drop("question that is not an object", f"element {index}")
        return None
    raw_id = question.get("question_id")
    cid = safe_id(str(raw_id or ""), f"question-{index}")
    if not raw_id:
        faults.repair("question without question_id, named by position", f"element {index} -> {cid!r}")
    if cid in taken:
        fresh = f"{cid}-{index}"
        faults.repair("duplicate question_id, renamed", f"{cid!r} -> {fresh!r}")
        cid = fresh
    text = " ".join(str(question.get("question") or "").split())
    if not text:
        faults.drop("question without text", cid)
        return None
    abstain = str(raw_id or "").endswith("_abs")
    qtype = str(question.get("question_type") or "")
    category = QUESTION_TYPES.get(qtype)
    if category is None:
        faults.repair("unknown question_type, category other", f"{cid}: {qtype!r}")
        category = "other"
    why = unusable_gold(question.get("answer"))
    if why is not None:
        faults.drop("question whose answer is not text or a number",
                    f"{cid}: {why} {str(question.get('answer'))[:60]!r}")
        return None
    gold = gold_text(question.get("answer"))
    if unglue_dates(gold) != gold:
        faults.repair("gold with a number glued to a month, spaced", f"{cid}: {gold!r} -> {unglue_dates(gold)!r}")
        gold = unglue_dates(gold)
    if not gold and not abstain:
        faults.drop("question without an answer", cid)
        return None
    probe_at = parse_time(question.get("question_date"))
    lost: list[tuple[str, bool]] = []
    sessions = _sessions(cid, question, probe_at, faults, lost)
    if not sessions:
        faults.drop("question without a usable haystack session", cid)
        return None
    answer_sessions = {safe_id(str(s), "") for s in question.get("answer_session_ids") or [] if s is not None}
    lost_evidence = [sid for sid, marked in lost if marked or sid in answer_sessions]
    if lost_evidence and not abstain:
        faults.drop("question whose evidence session was dropped (not scored as answerable)",
                    f"{cid}: {', '.join(lost_evidence)}")
        return None
    latest = max(start for _, start, _, _ in sessions)
    if probe_at is None:
        probe_at = latest + PROBE_DELAY
        faults.repair("question without a usable question_date, set 1 day after the last session",
                      f"{cid}: {question.get('question_date')!r} -> {iso(probe_at)}")
    elif latest >= probe_at:
        day_end = latest.replace(hour=23, minute=59, second=59, microsecond=0)
        moved = min(latest + SAME_DAY_GAP, day_end) if latest < day_end else latest + _dt.timedelta(seconds=1)
        faults.repair("question asked before a session of its own day, probe moved after that session",
                      f"{cid}: {iso(probe_at)} -> {iso(moved)}")
        probe_at = moved
    items: list[dict[str, Any]] = []
    marked: list[str] = []
    of_answer_sessions: list[str] = []
    out_sessions: list[dict[str, Any]] = []
    for sid, started, turns, marks in sessions:
        observed = iso(started)  # once per session: formatting it per item was ~4% of an import
        out_sessions.append({"id": sid, "started_at": observed, "turns": turns})
        for t, (turn, mark) in enumerate(zip(turns, marks), start=1):
            pieces = [(piece, quote) for piece, quote in quoted_pieces(turn["content"]) if storable(piece)]
            if not pieces:
                faults.drop("turn the memory store refuses as item content (no item)", f"{cid} {sid} t{t}")
            for p, (piece, quote) in enumerate(pieces, start=1):
                item_id = f"{sid}.t{t}" + (f".{p}" if len(pieces) > 1 else "")
                items.append({
                    "id": item_id,
                    **({"quote": quote} if quote is not None else {"content": piece}),
                    "kind": "context" if turn["role"] == "user" else "knowledge",
                    "observed_at": observed,
                    "keys": _keys(piece, f"{cid} {item_id}", faults),
                    "sources": [{"session": sid, "turn": f"t{t}"}],
                    "role": "distractor",
                })
                if mark:
                    marked.append(item_id)
                if sid in answer_sessions:
                    of_answer_sessions.append(item_id)
    relevant = marked
    if not relevant and of_answer_sessions and not abstain:
        relevant = of_answer_sessions
        faults.repair("no has_answer turn: relevant items are the answer sessions' items", cid)
    if not abstain:
        chosen = set(relevant)
        for item in items:
            if item["id"] in chosen:
                item["role"] = "answer"
    expect: dict[str, Any]
    if abstain:
        expect = {"abstain": True, "rubric": f"Nothing in the history answers this; a correct answer says so. "
                                              f"Reference: {gold or 'not answerable'}"}
    elif category == "single_session_preference":
        expect = {"rubric": f"A good answer uses the user's stated preferences: {gold}"}
    else:
        options = alternatives(gold)
        if len(options) > 1:
            faults.repair("gold naming other acceptable answers, parsed into alternatives",
                          f"{cid}: {gold!r} -> {' | '.join(options)}")
        expect = {**answer_check(gold), "f1_reference": options[0],
                  "rubric": f"The gold answer is {gold!r}; a correct answer states it (paraphrase allowed)."}
    if relevant and not abstain:
        expect["relevant_items"] = relevant
    tags = ["longmemeval", qtype or "unknown-type"] + (["abstention"] if abstain else [])
    taken.add(cid)
    return {
        "schema_version": 2,  # items quote their turns (harness.scenarios.quotes): each turn's text is written once
        "id": cid,
        "title": f"LongMemEval {cid}",
        "description": f"A LongMemEval {qtype or 'question'} over a haystack of {len(out_sessions)} sessions; "
                       "memory items are the importer's baseline extraction.",
        "tags": tags,
        "sessions": out_sessions,
        "items": items,
        "probes": [{"id": "q", "category": category,
                    "probe": {"started_at": iso(probe_at), "message": text}, "expect": expect}],
    }


PROTOCOL: dict[str, Any] = {
    "name": "LongMemEval as its paper reports it",
    "abstention_apart": True,
    "judge_only": ["single_session_preference"],
    "recent_history": {"kind": "last_sessions", "count": 1},
    "category_order": ["single_session_user", "single_session_assistant", "single_session_preference",
                       "multi_session", "knowledge_update", "temporal", "other"],
}
"""The published protocol: accuracy per question type in the paper's order, the ``_abs`` questions scored apart
as abstention, preference questions graded by a judge only (their gold is a description of a good reply); the
question follows the last haystack session, its recent history."""


def defaults() -> dict[str, Any]:
    """The suite's ``_defaults.yaml``: the declared categories and the published protocol (the base system
    prompt fits a user-assistant chat)."""
    return {"categories": dict(CATEGORY_TEXT), "protocol": PROTOCOL}
