"""One offline model call answered in-process: the reply, its usage and its finish reason, without litellm.

The litellm custom provider (:mod:`harness.offline_model._provider`) wraps the
same :func:`answer` in a ``ModelResponse``, so a call through litellm and a
call straight to :func:`answer` give the same message, usage and finish
reason (``tests/offline_model/test_direct_calls.py`` compares them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.offline_model._policy import ABSTAIN_ANSWER, respond
from harness.offline_model._structured import json_schema_of, structured_reply

PROVIDER = "offline"


def _abstain(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {"role": "assistant", "content": ABSTAIN_ANSWER}


POLICIES: dict[str, Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]]] = {
    "reference": respond,
    "abstain": _abstain,
}
"""Model name (after ``offline/``) -> policy."""


@dataclass(frozen=True)
class OfflineReply:
    """What one offline call answers: the assistant message as the policy gave it, and its usage.

    Attributes:
        message: ``{"role": "assistant", "content": ..., "tool_calls": [...]}`` (``tool_calls`` only when it calls tools).
        prompt_tokens: The request's estimated size (:func:`prompt_tokens`).
        completion_tokens: The reply's estimated size (its text, or its calls' names and arguments).
        finish_reason: ``tool_calls`` when it calls tools, else ``stop``.
    """

    message: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


def count_tokens(text: str) -> int:
    """A cheap deterministic token estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def prompt_tokens(messages: list[Any], tools: Any) -> int:
    """The usage's prompt tokens: ``count_tokens`` of each message's content (JSON when not text) plus 4, its tool calls and the tools."""
    total = 0
    for message in messages:
        if isinstance(message, dict):
            content = message.get("content")
            total += 4 + count_tokens(content if isinstance(content, str) else json.dumps(content, default=str))
            if message.get("tool_calls"):
                total += count_tokens(json.dumps(message["tool_calls"], default=str))
    if tools:
        total += count_tokens(json.dumps(tools, default=str))
    return total


def policy_of(model: str) -> Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]] | None:
    """The policy serving ``offline/<name>`` (or a bare ``<name>``), None for a name no policy serves."""
    return POLICIES.get(model.removeprefix(f"{PROVIDER}/"))


def answer(model: str, messages: list[Any], tools: list[dict[str, Any]] | None,
           response_format: dict[str, Any] | None = None) -> OfflineReply:
    """Answer one chat request with the named offline model.

    A JSON-schema ``response_format`` turns a prose reply into a JSON value valid under the schema
    (:mod:`harness.offline_model._structured`); a reply calling tools is left as it is.

    Raises:
        KeyError: ``model`` is not a served offline model (see :data:`POLICIES`).
    """
    policy = policy_of(model)
    if policy is None:
        raise KeyError(model)
    reply = policy(messages, tools)
    schema = json_schema_of(response_format)
    if schema is not None and not reply.get("tool_calls"):
        reply = structured_reply([m for m in messages if isinstance(m, dict)], schema, str(reply.get("content") or ""))
    tool_calls = reply.get("tool_calls") or None
    if tool_calls:
        completion = sum(count_tokens(c["function"]["name"] + c["function"]["arguments"]) for c in tool_calls)
    else:
        completion = count_tokens(reply.get("content") or "")
    return OfflineReply(reply, prompt_tokens(messages, tools), completion, "tool_calls" if tool_calls else "stop")
