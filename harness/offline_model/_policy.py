"""The offline reference agent's policy: one pure function from a request to a reply.

:func:`respond` reads only the messages and tool specs of the request.
Within the current turn (everything after the last user message) it searches
memory once, retries once after a correctable error, reads the best item
once, then answers from memory, from the visible conversation, or abstains.
"""

from __future__ import annotations

import json
from typing import Any

from harness.offline_model._candidates import (
    HAS_CJK,
    as_sentence,
    document_candidates,
    history_candidates,
    item_candidates,
    pick,
)
from harness.offline_model._reader import entries, generic_search_tool, narrower_terms, search_arguments
from harness.offline_model._terms import QuestionTerms, analyze_question
from harness.offline_model._turn import (
    GET_TOOL,
    SEARCH_TOOL,
    Call,
    as_dict,
    content_text,
    descriptions,
    error_of,
    offered_tools,
    properties,
    read_turn,
)
from harness.offline_model._writer import write_reply

ABSTAIN_ANSWER = "I don't know — I have no record of that in memory or in our conversation."
"""The one abstention reply; scorers detect abstention by its "I don't know"."""
MAX_TOOL_ROUNDS = 3
"""Tool rounds within one turn after which the agent answers with what it has."""


_SEARCH_LIMIT = 10
_RETRY_TERMS = 8
_RETRY_TERM_CHARS = 64


_NO_RETRY_CODES = frozenset({"policy_denied", "unknown_tool", "not_found", "unreadable"})


def _search_args(schema: dict[str, Any], question: QuestionTerms, error: dict[str, Any] | None = None) -> dict | None:
    """Arguments for memory_search that fit its schema, or None when no call fits.

    With ``error`` (the previous call's error) the call is corrected: fewer,
    shorter terms, and no ``match``/``limit`` if the error names them.
    """
    props = properties(schema)
    if props and "terms" not in props:
        return None
    term_spec = _v if isinstance(_v := props.get("terms"), dict) else {}
    max_items = term_spec.get("maxItems", 32)
    max_items = max_items if isinstance(max_items, int) and max_items > 0 else 32
    item_spec = _v if isinstance(_v := term_spec.get("items"), dict) else {}
    max_chars = item_spec.get("maxLength", 256)
    max_chars = max_chars if isinstance(max_chars, int) and max_chars > 0 else 256
    salient = {c.label for c in question.concepts if c.salient}
    kept = [t for t in question.search_terms if len(t) >= 3 or HAS_CJK.search(t)]
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
    match_spec = _v if isinstance(_v := props.get("match"), dict) else None
    if match_spec is not None and "match" not in message:
        enum = match_spec.get("enum")
        if not isinstance(enum, list) or match in enum:
            args["match"] = match
    limit_spec = _v if isinstance(_v := props.get("limit"), dict) else None
    if limit_spec is not None and "limit" not in message:
        maximum = limit_spec.get("maximum")
        args["limit"] = min(_SEARCH_LIMIT, maximum) if isinstance(maximum, int) and maximum >= 1 else _SEARCH_LIMIT
    return args


def _get_param(schema: dict[str, Any]) -> str:
    props = properties(schema)
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


def _final(question: QuestionTerms, history: list[dict[str, Any]], calls: list[Call]) -> dict[str, Any]:
    items = pick(item_candidates(question, calls) + document_candidates(question, history), recency=False)
    said = pick(history_candidates(question, history), recency=True)
    if said and said[0].from_user and (not items or said[0].fit.score > items[0].fit.score):
        who = f"{said[0].speaker} said" if said[0].speaker else "you said"
        return _answer(f'Earlier {who}: "{said[0].text}"')
    if items:
        return _answer("From my notes: " + " ".join(as_sentence(c.text) for c in items))
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
    msgs = [m for m in (as_dict(m) for m in messages or []) if m is not None]
    written = write_reply(msgs, tools)  # the write phase: a transcript to save and a save tool offered
    if written is not None:
        return written
    last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
    if last_user < 0:
        return _answer(ABSTAIN_ANSWER)
    question = analyze_question(content_text(msgs[last_user].get("content")))
    history = msgs[:last_user]
    rounds, calls = read_turn(msgs[last_user + 1 :])
    offered = offered_tools(tools)
    if rounds >= MAX_TOOL_ROUNDS:
        return _final(question, history, calls)

    searches = [c for c in calls if c.name == SEARCH_TOOL]
    if SEARCH_TOOL in offered:
        if not searches:
            args = _search_args(offered[SEARCH_TOOL], question)
            if args is not None:
                return _tool_call(SEARCH_TOOL, args, len(msgs))
        elif all(error_of(c.result) is not None for c in searches) and len(searches) == 1 and searches[0].answered:
            error = error_of(searches[0].result) or {}
            if str(error.get("code")) not in _NO_RETRY_CODES:
                args = _search_args(offered[SEARCH_TOOL], question, error)
                if args is not None and args != searches[0].arguments:
                    return _tool_call(SEARCH_TOOL, args, len(msgs))

    elif (generic := generic_search_tool(offered, descriptions(tools))) is not None:
        # Another system's search tool: call it with the question's terms; when that finds nothing, narrow the
        # query to one salient term at a time (a product may match the query whole); read entries as memory_search's.
        tried = [c for c in calls if c.name == generic]
        if not tried:
            args = search_arguments(offered[generic], question.search_terms)
            if args is not None:
                return _tool_call(generic, args, len(msgs))
        elif not any(entries(c.result) for c in tried if error_of(c.result) is None):
            for term in narrower_terms(question):
                args = search_arguments(offered[generic], (term,))
                if args is not None and args not in [c.arguments for c in tried]:
                    return _tool_call(generic, args, len(msgs))
        for call in calls:
            if call.name == generic and error_of(call.result) is None:
                call.name, call.result = SEARCH_TOOL, {"results": entries(call.result)}

    if GET_TOOL in offered and not any(c.name == GET_TOOL for c in calls):
        best = pick(item_candidates(question, calls), recency=False)
        if best:
            return _tool_call(GET_TOOL, {_get_param(offered[GET_TOOL]): best[0].item_id}, len(msgs))
    return _final(question, history, calls)
