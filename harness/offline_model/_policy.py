"""The offline reference agent's policy: one pure function from a request to a reply.

:func:`respond` reads only the messages and tool specs of the request. Within
the current turn (everything after the last user message) it searches memory
once, retries once after a correctable error, reads the best item once, then
answers from memory, from the visible conversation, or abstains.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from harness.offline_model._terms import Overlap, QuestionTerms, analyze_question, overlap
from harness.offline_model._reader import entries, generic_search_tool, search_arguments
from harness.offline_model._writer import write_reply

ABSTAIN_ANSWER = "I don't know — I have no record of that in memory or in our conversation."
"""The one abstention reply; scorers detect abstention by its "I don't know"."""

MAX_TOOL_ROUNDS = 3
"""Tool rounds within one turn after which the agent answers with what it has."""

SEARCH_TOOL = "memory_search"
GET_TOOL = "memory_get"
_SEARCH_LIMIT = 10
_RETRY_TERMS = 8
_RETRY_TERM_CHARS = 64
_NEARLY_AS_GOOD = 0.6
_NO_RETRY_CODES = frozenset({"policy_denied", "unknown_tool", "not_found", "unreadable"})
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|(?<=[\u3002\uff01\uff1f])|\n+")
_DOCUMENT_BLOCK = re.compile(r"<memory_document>\n(.*?)\n</memory_document>", re.DOTALL)
_ROLE_LABEL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:user|assistant|you|me)\s*:\s*", re.IGNORECASE)
#: ``Name: `` opening a line: one to three words, the first not lowercase (the harness's speaker prefix).
_SPEAKER_LABEL = re.compile(r"\s*([^\W\d_][\w'\u2019.-]*(?: [^\W\d_][\w'\u2019.-]*){0,2}):[ \t]+(?=\S)")
_SPEAKER_MIN_LINES = 2


@dataclass(slots=True)
class _Call:
    """One tool call of the current turn and, once it arrived, its parsed result."""

    name: str
    arguments: dict[str, Any] | None
    result: Any = None
    answered: bool = False


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


def _as_dict(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        data = dump()
        return data if isinstance(data, dict) else None
    return None


def _text(content: Any) -> str:
    """The text of a message content: a string or a list of OpenAI content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _offered_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """Map each offered function name to its JSON-schema parameters."""
    offered: dict[str, dict[str, Any]] = {}
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function", tool)
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            params = function.get("parameters")
            offered[function["name"]] = params if isinstance(params, dict) else {}
    return offered


def _descriptions(tools: Any) -> dict[str, str]:
    """Each offered function name's description."""
    out: dict[str, str] = {}
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = str(function.get("description") or "")
    return out


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def _read_turn(messages: list[dict[str, Any]]) -> tuple[int, list[_Call]]:
    """Tool rounds and tool calls (with their results) after the last user message."""
    rounds = 0
    calls: list[_Call] = []
    by_id: dict[str, _Call] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            rounds += 1
            for raw in message["tool_calls"]:
                raw = _as_dict(raw) or {}
                function = _as_dict(raw.get("function")) or {}
                args = function.get("arguments")
                parsed = _parse_json(args) if isinstance(args, str) else args
                call = _Call(str(function.get("name", "")), parsed if isinstance(parsed, dict) else None)
                calls.append(call)
                if isinstance(raw.get("id"), str):
                    by_id[raw["id"]] = call
        elif role == "tool":
            call = by_id.get(message.get("tool_call_id", ""))
            if call is None:
                call = next((c for c in calls if not c.answered), None)
            if call is not None:
                call.answered = True
                parsed = _parse_json(_text(message.get("content")))
                call.result = parsed if parsed is not None else {"error": {"code": "unreadable", "message": ""}}
    return rounds, calls


def _error_of(result: Any) -> dict[str, Any] | None:
    if isinstance(result, dict) and "error" in result:
        error = result["error"]
        return error if isinstance(error, dict) else {"code": str(error), "message": str(error)}
    if not isinstance(result, dict):
        return {"code": "unreadable", "message": ""}
    return None


def _search_args(schema: dict[str, Any], question: QuestionTerms, error: dict[str, Any] | None = None) -> dict | None:
    """Arguments for memory_search that fit its schema, or None when no call fits.

    With ``error`` (the previous call's error) the call is corrected: fewer,
    shorter terms, and no ``match``/``limit`` if the error names them.
    """
    props = _properties(schema)
    if props and "terms" not in props:
        return None
    term_spec = props.get("terms") if isinstance(props.get("terms"), dict) else {}
    max_items = term_spec.get("maxItems", 32)
    max_items = max_items if isinstance(max_items, int) and max_items > 0 else 32
    item_spec = term_spec.get("items") if isinstance(term_spec.get("items"), dict) else {}
    max_chars = item_spec.get("maxLength", 256)
    max_chars = max_chars if isinstance(max_chars, int) and max_chars > 0 else 256
    salient = {c.label for c in question.concepts if c.salient}
    kept = [t for t in question.search_terms if len(t) >= 3 or _HAS_CJK.search(t)]
    match = "prefix"
    if not any(t.lower() in salient for t in kept) and any(len(t) < 3 for t in question.search_terms):
        kept, match = list(question.search_terms), "exact"  # the salient terms are all short: exact keeps them
    if error is not None:
        kept = [t[:_RETRY_TERM_CHARS] for t in kept[:_RETRY_TERMS]]
    terms = list(dict.fromkeys(t for t in kept if t.strip() and len(t) <= max_chars))[:max_items]
    if not terms:
        return None
    args: dict[str, Any] = {"terms": terms}
    message = json.dumps(error).lower() if error else ""
    match_spec = props.get("match") if isinstance(props.get("match"), dict) else None
    if match_spec is not None and "match" not in message:
        enum = match_spec.get("enum")
        if not isinstance(enum, list) or match in enum:
            args["match"] = match
    limit_spec = props.get("limit") if isinstance(props.get("limit"), dict) else None
    if limit_spec is not None and "limit" not in message:
        maximum = limit_spec.get("maximum")
        args["limit"] = min(_SEARCH_LIMIT, maximum) if isinstance(maximum, int) and maximum >= 1 else _SEARCH_LIMIT
    return args


def _get_param(schema: dict[str, Any]) -> str:
    props = _properties(schema)
    if not props or "itemId" in props:
        return "itemId"
    if "item_id" in props:
        return "item_id"
    required = schema.get("required")
    return required[0] if isinstance(required, list) and required and isinstance(required[0], str) else "itemId"


def _tool_call(name: str, args: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_offline_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "\u3002", "\uff01", "\uff1f")) else text + "."


def _item_candidates(question: QuestionTerms, calls: list[_Call]) -> list[_Candidate]:
    """Every item returned by a successful search, scored against the question."""
    got: dict[str, str] = {}
    for call in calls:
        if call.name == GET_TOOL and _error_of(call.result) is None:
            record = call.result.get("item") if isinstance(call.result.get("item"), dict) else call.result
            if isinstance(record.get("itemId"), str) and isinstance(record.get("content"), str):
                got[record["itemId"]] = record["content"]
    candidates: dict[str, _Candidate] = {}
    for call in calls:
        if call.name != SEARCH_TOOL or _error_of(call.result) is not None:
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


def _document_candidates(question: QuestionTerms, messages: list[dict[str, Any]]) -> list[_Candidate]:
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
        for block in _DOCUMENT_BLOCK.findall(_text(message.get("content"))):
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


def _speakers(messages: list[dict[str, Any]]) -> frozenset[str]:
    """Names that open at least two lines of the conversation as ``Name: ...``: its speakers.

    One ``Decision: ...`` line is a heading, not a speaker; a name that opens
    line after line is who is talking.
    """
    counts: Counter[str] = Counter()
    for message in messages:
        if message.get("role") in ("user", "assistant"):
            counts.update(m.group(1) for line in _text(message.get("content")).split("\n")
                          if (m := _label(line)) is not None)
    return frozenset(name for name, n in counts.items() if n >= _SPEAKER_MIN_LINES)


def _history_candidates(question: QuestionTerms, messages: list[dict[str, Any]]) -> list[_Candidate]:
    """Statements (not questions, not abstentions) of the conversation before the question.

    A statement's speaker name (:func:`_speakers`) does not make it convincing:
    every line of a speaker carries the name, so "What did Caroline adopt?"
    would otherwise be answered by any line of Caroline's. The name only ranks
    among statements convincing on their own words.
    """
    out: list[_Candidate] = []
    speakers = _speakers(messages)
    for message in messages:
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        for line in _text(message.get("content")).split("\n"):
            speaker = ""
            if (match := _label(line)) is not None and match.group(1) in speakers:
                speaker, line = match.group(1), line[match.end():]
            for raw in _SENTENCE_SPLIT.split(line):
                sentence = _ROLE_LABEL.sub("", raw or "").strip()
                if not sentence or sentence.endswith(("?", "\uff1f")) or "i don't know" in sentence.lower():
                    continue
                fit = overlap(question, sentence)
                if speaker and fit.convincing:
                    fit = Overlap(overlap(question, f"{speaker} {sentence}").score, fit.salient_hits, True)
                out.append(_Candidate(sentence, fit, frozenset(), 0, len(out), from_user=role == "user",
                                      speaker=speaker))
    return out


def _pick(candidates: list[_Candidate], recency: bool) -> list[_Candidate]:
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


def _final(question: QuestionTerms, history: list[dict[str, Any]], calls: list[_Call]) -> dict[str, Any]:
    items = _pick(_item_candidates(question, calls) + _document_candidates(question, history), recency=False)
    said = _pick(_history_candidates(question, history), recency=True)
    if said and said[0].from_user and (not items or said[0].fit.score > items[0].fit.score):
        who = f"{said[0].speaker} said" if said[0].speaker else "you said"
        return _answer(f'Earlier {who}: "{said[0].text}"')
    if items:
        return _answer("From my notes: " + " ".join(_sentence(c.text) for c in items))
    if said:
        who = f"{said[0].speaker} said" if said[0].speaker else "you said" if said[0].from_user else "I noted"
        return _answer(f'Earlier in our conversation {who}: "{said[0].text}"')
    return _answer(ABSTAIN_ANSWER)


def respond(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Decide the next assistant message for a chat request.

    Args:
        messages: the OpenAI-format conversation (system, user, assistant, tool).
        tools: the OpenAI-format tool specs offered, if any.

    Returns:
        An OpenAI assistant message dict: either ``{"role": "assistant",
        "content": None, "tool_calls": [...]}`` with one call, or
        ``{"role": "assistant", "content": "<answer>"}``.

    Example:
        >>> respond([{"role": "user", "content": "What is my dog called?"}])["content"]
        "I don't know — I have no record of that in memory or in our conversation."
    """
    msgs = [m for m in (_as_dict(m) for m in messages or []) if m is not None]
    written = write_reply(msgs, tools)  # the write phase: a transcript to save and a save tool offered
    if written is not None:
        return written
    last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
    if last_user < 0:
        return _answer(ABSTAIN_ANSWER)
    question = analyze_question(_text(msgs[last_user].get("content")))
    history = msgs[:last_user]
    rounds, calls = _read_turn(msgs[last_user + 1 :])
    offered = _offered_tools(tools)
    if rounds >= MAX_TOOL_ROUNDS:
        return _final(question, history, calls)

    searches = [c for c in calls if c.name == SEARCH_TOOL]
    if SEARCH_TOOL in offered:
        if not searches:
            args = _search_args(offered[SEARCH_TOOL], question)
            if args is not None:
                return _tool_call(SEARCH_TOOL, args, len(msgs))
        elif all(_error_of(c.result) is not None for c in searches) and len(searches) == 1 and searches[0].answered:
            error = _error_of(searches[0].result) or {}
            if str(error.get("code")) not in _NO_RETRY_CODES:
                args = _search_args(offered[SEARCH_TOOL], question, error)
                if args is not None and args != searches[0].arguments:
                    return _tool_call(SEARCH_TOOL, args, len(msgs))

    elif (generic := generic_search_tool(offered, _descriptions(tools))) is not None:
        # Another system's search tool: call it once, then read its entries as memory_search results.
        if not any(c.name == generic for c in calls):
            args = search_arguments(offered[generic], question.search_terms)
            if args is not None:
                return _tool_call(generic, args, len(msgs))
        for call in calls:
            if call.name == generic and _error_of(call.result) is None:
                call.name, call.result = SEARCH_TOOL, {"results": entries(call.result)}

    if GET_TOOL in offered and not any(c.name == GET_TOOL for c in calls):
        best = _pick(_item_candidates(question, calls), recency=False)
        if best:
            return _tool_call(GET_TOOL, {_get_param(offered[GET_TOOL]): best[0].item_id}, len(msgs))
    return _final(question, history, calls)
