"""The built-in offline models called in-process, without litellm.

``import litellm`` costs about 3.7 s of CPU and 195 MiB, most of a small
offline run. An ``offline/reference`` or ``offline/abstain`` call made
without a Router is therefore answered here by the same function the
litellm custom provider wraps (:func:`harness.offline_model.answer`), in a
response shaped like litellm's for the agent loop: the same message, usage,
finish reason and stated cost 0.0 (``tests/run/test_direct_calls.py`` runs
every call of a golden-sized run both ways and compares them). The agent
loop's own machinery (response cache, retries, rate limits, budget and the
concurrency gate) stays around the call either way; the per-try timeout does
not, because an in-process call never awaits and so could not be interrupted.

Everything provider-facing still goes through litellm: real models, any
model behind a ``--router-config``, an offline name no policy serves (litellm
reports it as its own error) and a call with extra litellm arguments other
than ``response_format`` (which the offline model honours itself). A
``--tpm`` limit or ``--max-cost-usd`` budget on an offline model counts the
prompt with litellm's ``token_counter`` (messages), so that run imports it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.offline_model import MODEL_NAMES, answer


@dataclass(frozen=True)
class _Function:
    name: str
    arguments: Any


@dataclass(frozen=True)
class _ToolCall:
    id: str | None
    function: _Function
    type: str = "function"


@dataclass(frozen=True)
class _Message:
    content: str | None
    tool_calls: list[_ToolCall] | None


@dataclass(frozen=True)
class _Choice:
    message: _Message
    finish_reason: str


@dataclass(frozen=True)
class _Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class DirectResponse:
    """The attributes of a litellm ``ModelResponse`` that the agent loop reads."""

    choices: list[_Choice]
    usage: _Usage
    #: As the provider states it on litellm's response: the offline models are free.
    _hidden_params: dict[str, Any] = field(default_factory=lambda: {"response_cost": 0.0})


def is_direct(model: str, *, router: Any = None, extra: dict[str, Any] | None = None) -> bool:
    """Whether a call of ``model`` is answered in-process (a built-in offline model, no Router, no extra litellm
    arguments but ``response_format``)."""
    return model in MODEL_NAMES and router is None and set(extra or {}) <= {"response_format"}


def needs_litellm(models: Iterable[str], router_config: Any = None) -> bool:
    """Whether a run of ``models`` calls litellm at all (a model other than the built-in offline ones, or a Router)."""
    return bool(router_config) or any(model not in MODEL_NAMES for model in models)


async def direct_completion(*, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                            response_format: dict[str, Any] | None = None, **_ignored: Any) -> DirectResponse:
    """``litellm.acompletion``'s answer for a built-in offline model, without litellm.

    The other keyword arguments (temperature, seed, timeout, max_tokens,
    api_base...) are accepted and ignored, as the provider ignores them.
    """
    reply = answer(model, messages, tools, response_format)
    calls = [_ToolCall(c.get("id"), _Function(c["function"]["name"], c["function"]["arguments"]))
             for c in reply.message.get("tool_calls") or []]
    message = _Message(reply.message.get("content"), calls or None)
    return DirectResponse([_Choice(message, reply.finish_reason)], _Usage(reply.prompt_tokens, reply.completion_tokens))
