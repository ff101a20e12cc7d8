"""Reading a chat request as the offline agent sees it: the tools offered, and the tool calls of the current turn with their parsed results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SEARCH_TOOL = "memory_search"
GET_TOOL = "memory_get"


@dataclass(slots=True)
class Call:
    """One tool call of the current turn and, once it arrived, its parsed result."""

    name: str
    arguments: dict[str, Any] | None
    result: Any = None
    answered: bool = False


def as_dict(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        data = dump()
        return data if isinstance(data, dict) else None
    return None


def content_text(content: Any) -> str:
    """The text of a message content: a string or a list of OpenAI content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def offered_tools(tools: Any) -> dict[str, dict[str, Any]]:
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


def descriptions(tools: Any) -> dict[str, str]:
    """Each offered function name's description."""
    out: dict[str, str] = {}
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = str(function.get("description") or "")
    return out


def properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def read_turn(messages: list[dict[str, Any]]) -> tuple[int, list[Call]]:
    """Tool rounds and tool calls (with their results) after the last user message."""
    rounds = 0
    calls: list[Call] = []
    by_id: dict[str, Call] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            rounds += 1
            for raw in message["tool_calls"]:
                raw = as_dict(raw) or {}
                function = as_dict(raw.get("function")) or {}
                args = function.get("arguments")
                parsed = _parse_json(args) if isinstance(args, str) else args
                call = Call(str(function.get("name", "")), parsed if isinstance(parsed, dict) else None)
                calls.append(call)
                if isinstance(raw.get("id"), str):
                    by_id[raw["id"]] = call
        elif role == "tool":
            answered = by_id.get(message.get("tool_call_id", ""))
            if answered is None:
                answered = next((c for c in calls if not c.answered), None)
            if answered is not None:
                answered.answered = True
                parsed = _parse_json(content_text(message.get("content")))
                answered.result = parsed if parsed is not None else {"error": {"code": "unreadable", "message": ""}}
    return rounds, calls


def error_of(result: Any) -> dict[str, Any] | None:
    if isinstance(result, dict) and "error" in result:
        error = result["error"]
        return error if isinstance(error, dict) else {"code": str(error), "message": str(error)}
    if not isinstance(result, dict):
        return {"code": "unreadable", "message": ""}
    return None
