"""LoCoMo (``locomo10.json``) -> one conversation file per sample.

The published shape: a JSON list of samples, each with ``sample_id``,
``conversation`` (``speaker_a``, ``speaker_b``, ``session_N`` turn lists with
``speaker``, ``dia_id`` like ``D1:3``, ``text`` and optional ``img_url`` /
``blip_caption``, and ``session_N_date_time``), ``observation``
(``session_N_observation``: speaker -> ``[[fact, evidence], ...]``),
``session_summary``, ``event_summary`` and ``qa`` (``question``, ``answer``,
``evidence``, ``category``, ``adversarial_answer``).

What becomes what (docs/importers.md has the full table):

- a session -> ``session_N`` with its turns, ids kept (``D1:3``), speaker
  names on the turns (``speaker_a`` plays the user role, ``speaker_b`` the
  assistant role; a shared photo is appended as ``[shares a photo: caption]``);
- an observation fact -> an item citing the turns of its evidence ids,
  observed at its session's start, role ``distractor`` unless a probe makes it
  its ``answer``;
- a QA -> a probe ``qNNN`` after the last session, category by the paper's
  scorer numbering; category 5 (adversarial) abstains, with the adversarial
  answer as a ``someone_else`` canary, unless it has a real ``answer`` (two
  do, ``"No"``): then it is scored as that answer;
- a gold answer: its checks and rubric from the repaired gold (glued digits
  spaced, ``15April`` -> ``15 April``; glued words reported; a dict dropped:
  :func:`repaired_gold`), ``f1_reference`` the published gold verbatim (the
  papers' metrics score against it, trailing full stop and all);
- summaries are not imported (they would hand the agent a digest the
  benchmark does not give memory systems).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from harness.importers.answers import answer_check, gold_text, published_gold, unglue_dates, unusable_gold
from harness.importers.audit import vocabulary
from harness.importers.extract import MAX_ITEM_CHARS, fact_chunks, keys_for, storable
from harness.importers.faults import FaultLog
from harness.importers.gold_words import glued_words, misspellings, unglue_digits
from harness.importers.output import safe_id
from harness.importers.times import iso, parse_time

LICENCE = "CC BY-NC 4.0"
LICENCE_URL = "https://creativecommons.org/licenses/by-nc/4.0/"
DATASET_URL = "https://github.com/snap-research/locomo"

CATEGORIES: dict[int, str] = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
"""LoCoMo's QA category numbers as its evaluation code scores them (not the order the paper's text lists them)."""
CATEGORY_TEXT: dict[str, str] = {
    "single_hop": "LoCoMo category 4: the answer is stated in one session.",
    "multi_hop": "LoCoMo category 1: the answer combines facts from several sessions (often a list).",
    "temporal": "LoCoMo category 2: when something happened, relative to the session dates.",
    "open_domain": "LoCoMo category 3: the answer needs the conversation plus common-sense or world knowledge.",
    "adversarial": "LoCoMo category 5: a trap question about something the conversation never says of that person; "
                   "the agent should say it is not mentioned.",
}
SYSTEM_PROMPT = (
    "You answer questions about a long conversation between two people, held over several sessions on different "
    "dates. Earlier messages are shown with the speaker's name. The person asking you now is neither of them: "
    "answer about the two people by name, briefly (a short phrase, a date or a number), using only what the "
    "conversation or your memory shows. When it does not say, answer that it is not mentioned."
)
PROBE_DELAY = _dt.timedelta(days=1)
"""The probe runs this long after the last session starts (LoCoMo gives no question date)."""

_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_KEY = re.compile(r"^session_(\d+)_date_time$")
_OBSERVATION_KEY = re.compile(r"^session_(\d+)_observation$")


def parse_evidence(raw: Any, where: str, faults: FaultLog) -> list[str]:
    """Evidence ids in canonical form ``D<session>:<turn>``, repairing what can be repaired.

    Repairs (each logged): a stray colon (``D:11:26`` -> ``D11:26``), leading
    zeros (``D30:05`` -> ``D30:5``), spacing or case (``d1: 3``), several ids in
    one string (``D8:6; D9:17``). Dropped (logged): text with no id in it.

    Example:
        >>> parse_evidence(["D:11:26", "D30:05", "D8:6; D9:17"], "q1", FaultLog())
        ['D11:26', 'D30:5', 'D8:6', 'D9:17']
    """
    if raw is None or raw == "":
        return []
    if isinstance(raw, list):
        return [eid for entry in raw for eid in parse_evidence(entry, where, faults)]
    if not isinstance(raw, str):
        faults.drop("evidence that is not text", f"{where}: {raw!r}")
        return []
    text = raw.strip()
    matches = list(_EVIDENCE.finditer(text))
    if not matches:
        faults.drop("malformed evidence id (no D<session>:<turn> in it)", f"{where}: {raw!r}")
        return []
    ids = [f"D{int(m[1])}:{int(m[2])}" for m in matches]
    if len(ids) > 1:
        faults.repair("several evidence ids in one string, split", f"{where}: {raw!r} -> {', '.join(ids)}")
    elif ids[0] != text:
        if re.match(r"(?i)D\s*:", text):
            kind = "evidence id with a stray colon (D:11:26), repaired"
        elif re.search(r":0\d|D0\d", text, re.IGNORECASE):
            kind = "evidence id with leading zeros (D30:05), repaired"
        else:
            kind = "evidence id in a non-standard form, repaired"
        faults.repair(kind, f"{where}: {raw!r} -> {ids[0]!r}")
    return ids


def _numbered(mapping: dict[str, Any], pattern: re.Pattern[str]) -> dict[int, Any]:
    return {int(m[1]): value for key, value in mapping.items() if (m := pattern.match(key))}


def _turn_content(turn: dict[str, Any]) -> str:
    text = " ".join(str(turn.get("text") or "").split())
    caption = " ".join(str(turn.get("blip_caption") or "").split())
    if caption:
        text = f"{text} [shares a photo: {caption}]" if text else f"[shares a photo: {caption}]"
    return text


def _sessions(
    cid: str, conv: dict[str, Any], faults: FaultLog
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]], dict[int, _dt.datetime]]:
    """The sessions, the evidence lookup (dia id -> session id, turn id) and each kept session's start."""
    speaker_a, speaker_b = conv.get("speaker_a"), conv.get("speaker_b")
    turns_by_n = _numbered(conv, _SESSION_KEY)
    dates_by_n = _numbered(conv, _DATE_KEY)
    sessions: list[dict[str, Any]] = []
    lookup: dict[str, tuple[str, str]] = {}
    starts: dict[int, _dt.datetime] = {}
    previous: _dt.datetime | None = None
    for n in sorted(set(turns_by_n) | set(dates_by_n)):
        raw_turns, raw_date = turns_by_n.get(n), dates_by_n.get(n)
        if not isinstance(raw_turns, list) or not raw_turns:
            if raw_date is not None:
                faults.drop("date without a session", f"{cid} session_{n}_date_time {raw_date!r}")
            continue
        started = parse_time(raw_date)
        if started is None:
            if previous is None:
                faults.drop("session without a usable date and no earlier session", f"{cid} session_{n}: {raw_date!r}")
                continue
            started = previous + _dt.timedelta(hours=1)
            faults.repair("session without a usable date, placed 1 hour after the previous one",
                          f"{cid} session_{n}: {raw_date!r} -> {iso(started)}")
        session_id = f"session_{n}"
        turns: list[dict[str, Any]] = []
        used: set[str] = set()
        for position, turn in enumerate(raw_turns, start=1):
            where = f"{cid} {session_id} turn {position}"
            if not isinstance(turn, dict):
                faults.drop("turn that is not an object", f"{where}: {turn!r}"[:200])
                continue
            content = _turn_content(turn)
            if not content:
                faults.drop("turn without text or photo caption", f"{where} ({turn.get('dia_id')!r})")
                continue
            speaker = turn.get("speaker")
            if speaker == speaker_a:
                role = "user"
            elif speaker == speaker_b:
                role = "assistant"
            else:
                role = "user" if len(turns) % 2 == 0 else "assistant"
                faults.repair("turn speaker is neither speaker_a nor speaker_b, role by alternation",
                              f"{where}: {speaker!r} -> {role}")
            ids = parse_evidence(turn.get("dia_id"), where, faults)
            dia = ids[0] if len(ids) == 1 else f"D{n}:{position}"
            if len(ids) != 1:
                faults.repair("turn without a usable dia_id, numbered by position",
                              f"{where}: {turn.get('dia_id')!r} -> {dia!r}")
            if dia in used or dia in lookup:
                fresh = f"{dia}-{n}-{position}"
                faults.repair("duplicate dia_id, renamed", f"{where}: {dia!r} -> {fresh!r}")
                dia = fresh
            used.add(dia)
            lookup[dia] = (session_id, dia)
            entry: dict[str, Any] = {"id": dia, "role": role}
            if isinstance(speaker, str) and speaker.strip():
                entry["speaker"] = speaker.strip()
            entry["content"] = content
            turns.append(entry)
        if not turns:
            faults.drop("session without a usable turn", f"{cid} {session_id}")
            continue
        sessions.append({"id": session_id, "started_at": iso(started), "turns": turns})
        starts[n] = started
        previous = started
    return sessions, lookup, starts


def _resolve(ids: list[str], lookup: dict[str, tuple[str, str]], where: str, faults: FaultLog) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for eid in ids:
        if eid not in lookup:
            faults.drop("evidence id pointing at no turn", f"{where}: {eid!r}")
        elif lookup[eid] not in found:
            found.append(lookup[eid])
    return found


def _items(cid: str, sample: dict[str, Any], lookup: dict[str, tuple[str, str]], starts: dict[int, _dt.datetime],
           speakers: tuple[str, ...], faults: FaultLog) -> list[dict[str, Any]]:
    observation = sample.get("observation") or {}
    session_start = {f"session_{n}": moment for n, moment in starts.items()}
    items: list[dict[str, Any]] = []
    for n, by_speaker in sorted(_numbered(observation, _OBSERVATION_KEY).items()):
        if not isinstance(by_speaker, dict):
            faults.drop("observation block that is not a speaker mapping", f"{cid} session_{n}_observation")
            continue
        count = 0
        for speaker, facts in by_speaker.items():
            if not isinstance(facts, list):
                faults.drop("observation facts of a speaker that are not a list",
                            f"{cid} session_{n}_observation {speaker}: {facts!r}"[:200])
                continue
            for k, entry in enumerate(facts, start=1):
                where = f"{cid} session_{n}_observation {speaker} #{k}"
                if isinstance(entry, str):
                    fact, evidence = entry, None
                elif isinstance(entry, list) and entry:
                    fact, evidence = entry[0], entry[1] if len(entry) > 1 else None
                else:
                    faults.drop("observation entry that is not [fact, evidence]", f"{where}: {entry!r}"[:200])
                    continue
                fact = " ".join(str(fact or "").split())
                if not fact or not storable(fact[:MAX_ITEM_CHARS]):
                    faults.drop("observation fact without text", where)
                    continue
                sources = _resolve(parse_evidence(evidence, where, faults), lookup, where, faults)
                if not sources:
                    faults.drop("observation fact with no evidence turn", f"{where}: {fact[:60]!r}")
                    continue
                if len(fact) > MAX_ITEM_CHARS:
                    faults.repair("observation fact too long for the store, cut", f"{where}: {len(fact)} characters")
                    fact = fact_chunks(fact)[0]
                moments = [session_start[s] for s, _ in sources]
                if n in starts:
                    moments.append(starts[n])
                count += 1
                names = tuple(s for s in (speaker, *speakers) if isinstance(s, str) and s and s in fact) or (
                    (speaker,) if isinstance(speaker, str) and speaker else ())
                items.append({
                    "id": f"obs-{n}-{count}",
                    "content": fact,
                    "kind": "context",
                    "observed_at": iso(max(moments)),
                    "keys": _keys(fact, names, where, faults),
                    "sources": [{"session": s, "turn": t} for s, t in sources],
                    "role": "distractor",
                })
    return items


def _keys(fact: str, names: tuple[str, ...], where: str, faults: FaultLog) -> list[str | dict[str, str]]:
    """The fact's keys, each key the store would refuse left out and logged (never written)."""
    refused: list[str] = []
    keys = keys_for(fact, entities=names, refused=refused)
    for key in refused:
        faults.drop("key the memory store would refuse (over 256 code points or unprintable), left out",
                    f"{where}: {len(key)} characters {key[:40]!r}...")
    return keys


def _category(raw: Any) -> int | None:
    try:
        number = int(raw)
    except (TypeError, ValueError):
        return None
    return number if number in CATEGORIES and str(raw).strip() == str(number) else None


def repaired_gold(raw: Any, words: set[str], where: str, faults: FaultLog) -> str | None:
    """The gold answer as text with glued digits repaired, or None (logged) when it cannot be a gold.

    ``15April, 2022`` -> ``15 April, 2022`` and ``3dogs`` -> ``3 dogs`` (a number
    glued to a word of the conversation) are repaired; a glued pair of words
    (``watchingmovies``) and a misspelling (``Janury``, with the spelling an
    answer would use) are kept and reported: no rule repairs them safely
    (:mod:`harness.importers.gold_words`; an English word such as ``filmmaker`` is neither).
    """
    why = unusable_gold(raw)
    if why is not None:
        faults.drop("question whose answer is not text or a number", f"{where}: {why} {str(raw)[:60]!r}")
        return None
    gold = gold_text(raw)
    fixed = unglue_digits(unglue_dates(gold), words)
    if fixed != gold:
        faults.repair("gold with a number glued to a word, spaced", f"{where}: {gold!r} -> {fixed!r}")
    for token, spelled in misspellings(fixed, words):
        faults.report("misspelled gold, kept (its check is unpassable as written)",
                      f"{where}: {token!r} (an answer would write {spelled!r})")
    for token, split in glued_words(fixed, words):
        faults.report("gold with glued words, kept (its check may be unpassable)", f"{where}: {token!r} ({split}?)")
    return fixed


def _probes(cid: str, sample: dict[str, Any], lookup: dict[str, tuple[str, str]], items: list[dict[str, Any]],
            probe_at: _dt.datetime, words: set[str], faults: FaultLog) -> list[dict[str, Any]]:
    items_of_turn: dict[tuple[str, str], list[str]] = {}
    for item in items:
        for source in item["sources"]:
            items_of_turn.setdefault((source["session"], source["turn"]), []).append(item["id"])
    probes: list[dict[str, Any]] = []
    for index, qa in enumerate(sample.get("qa") or [], start=1):
        pid = f"q{index:03d}"
        where = f"{cid} qa[{index - 1}] ({pid})"
        if not isinstance(qa, dict):
            faults.drop("QA entry that is not an object", where)
            continue
        question = " ".join(str(qa.get("question") or "").split())
        if not question:
            faults.drop("question without text", where)
            continue
        number = _category(qa.get("category"))
        if number is None:
            faults.drop("question with an unknown category", f"{where}: {qa.get('category')!r}")
            continue
        turns = _resolve(parse_evidence(qa.get("evidence"), where, faults), lookup, where, faults)
        relevant = list(dict.fromkeys(i for turn in turns for i in items_of_turn.get(turn, [])))
        expect: dict[str, Any]
        probe: dict[str, Any] = {"id": pid, "category": CATEGORIES[number]}
        real = repaired_gold(qa.get("answer"), words, where, faults) if number == 5 and qa.get("answer") else None
        if real:
            faults.repair("adversarial question with a real gold answer, scored as that answer (not as abstention)",
                          f"{where}: answer {real!r}, adversarial_answer {gold_text(qa.get('adversarial_answer'))!r}")
            probe["tags"] = ["adversarial-with-answer"]
        if number == 5 and not real:
            trap = gold_text(qa.get("adversarial_answer"))
            expect = {"abstain": True}
            if trap:
                expect["canaries"] = [{"text": trap, "kind": "someone_else"}]
            else:
                faults.drop("adversarial question without adversarial_answer (kept, no canary)", where)
            expect["rubric"] = ("A trap question: the conversation never says this of the person asked about"
                                + (f" (it says {trap!r} of someone else)" if trap else "")
                                + ". A correct answer says it is not mentioned.")
        else:
            gold = real or repaired_gold(qa.get("answer"), words, where, faults)
            if gold is None:
                continue
            if not gold:
                faults.drop("question without an answer", where)
                continue
            expect = {**answer_check(gold, list_answer=number == 1), "f1_reference": published_gold(qa["answer"]),
                      "rubric": f"The gold answer is {gold!r}; a correct answer states it (paraphrase allowed)."}
            if relevant:
                probe["item_roles"] = {item_id: "answer" for item_id in relevant}
        if relevant:
            expect["relevant_items"] = relevant
        probe["probe"] = {"started_at": iso(probe_at), "message": question}
        probe["expect"] = expect
        probes.append(probe)
    return probes


def convert_sample(sample: Any, index: int, faults: FaultLog, taken: set[str]) -> dict[str, Any] | None:
    """One LoCoMo sample as a conversation file's data, or None (logged) when nothing usable is left.

    Args:
        sample: One element of ``locomo10.json``.
        index: Its position (names it when ``sample_id`` is missing).
        faults: Where repairs and drops are logged.
        taken: Conversation ids already written (a duplicate is renamed).
    """
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        faults.drop("sample without a conversation object", f"sample {index}")
        return None
    raw_id = sample.get("sample_id")
    cid = safe_id(str(raw_id or ""), f"sample-{index}")
    if not raw_id:
        faults.repair("sample without sample_id, named by position", f"sample {index} -> {cid!r}")
    if cid in taken:
        fresh = f"{cid}-{index}"
        faults.repair("duplicate sample_id, renamed", f"{cid!r} -> {fresh!r}")
        cid = fresh
    conv = sample["conversation"]
    speakers = tuple(s for s in (conv.get("speaker_a"), conv.get("speaker_b")) if isinstance(s, str) and s)
    sessions, lookup, starts = _sessions(cid, conv, faults)
    if not sessions:
        faults.drop("sample without a usable session", cid)
        return None
    items = _items(cid, sample, lookup, starts, speakers, faults)
    probe_at = max(starts.values()) + PROBE_DELAY
    words = vocabulary([t["content"] for session in sessions for t in session["turns"]]
                       + [item["content"] for item in items])
    probes = _probes(cid, sample, lookup, items, probe_at, words, faults)
    if not probes:
        faults.drop("sample without a usable question", cid)
        return None
    names = " and ".join(speakers) or "two people"
    taken.add(cid)
    return {
        "schema_version": 1,
        "id": cid,
        "title": f"LoCoMo {cid}: {names}",
        "description": f"A conversation between {names} over {len(sessions)} sessions; "
                       "the LoCoMo benchmark's questions about it.",
        "tags": ["locomo"],
        "sessions": sessions,
        "items": items,
        "probes": probes,
    }


PROTOCOL: dict[str, Any] = {
    "name": "LoCoMo as mem0 reports it",
    "headline": ["single_hop", "multi_hop", "temporal", "open_domain"],
    "reported_apart": ["adversarial"],
    "recent_history": {"kind": "last_sessions", "count": 1},
    "category_order": ["single_hop", "multi_hop", "temporal", "open_domain", "adversarial"],
}
"""The published protocol: mem0's LoCoMo evaluation scores categories 1-4 and leaves the adversarial one out;
the probe follows the last session, which is its recent history; the paper's order of the categories."""


def defaults() -> dict[str, Any]:
    """The suite's ``_defaults.yaml``: the system prompt, the declared categories and the published protocol."""
    return {"system_prompt": SYSTEM_PROMPT, "categories": dict(CATEGORY_TEXT), "protocol": PROTOCOL}
