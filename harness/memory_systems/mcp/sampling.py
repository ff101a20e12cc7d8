"""A server's requests for model calls (MCP sampling), served with the run's model or refused, every one counted.

A product may ask its client for a completion (``sampling/createMessage``):
to rank its notes, summarise a conversation, extract facts. A memory system
built into recall-eval, or a plug-in such as mem0, makes such calls with the
run's model, counted and capped like the agent's; an MCP server gets the same
terms. One :class:`SamplingGate` serves a sample's servers (all its scopes):

- **served** (config ``sampling.mode: serve``, the default): the request's
  text messages (and its system prompt) go to the run's model through
  :class:`SamplingModel`, the run layer's door to its client, so the call has
  the agent's call path, retries, rate limits, response cache and
  ``--max-cost-usd`` reservation, and is recorded in the sample's record as a
  model call with ``purpose: sampling`` (its tokens, cost and seconds). The
  server's ``maxTokens`` is honoured, never above the run's ``--max-tokens``;
  its model preferences and temperature are not (the run's model and settings
  answer, as they answer every system);
- **refused**, each counted in :attr:`SamplingGate.refused`: the config says
  ``refuse``; the sample has served ``sampling.max_calls`` already; the run
  gives no model (a server started to read its tool list); the request holds
  no text (an image, a tool use); or the run's model failed, the spending cap
  included (the cap then ends the run as it does for any call).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Protocol

#: What a refused server is told, by reason (``{detail}`` filled in).
REFUSALS = {
    "config": "sampling is refused by this arm's config (sampling.mode: refuse)",
    "limit": "this sample's servers have had {detail} model calls, the config's sampling.max_calls; refused",
    "no_model": "no model serves sampling here (recall-eval is reading the server's tools, not running a sample)",
    "blocked": "the tool was called synchronously from the run's event loop, which cannot serve a model call meanwhile",
    "content": "recall-eval serves text sampling only; this request holds {detail} content",
    "failed": "the run's model did not answer: {detail}",
}


class SamplingModel(Protocol):
    """The run's model as a server's sampling reaches it (implemented by the run layer: ``harness.run.sampling``)."""

    def submit(self, messages: list[dict[str, Any]], max_tokens: int) -> concurrent.futures.Future[str]:
        """Start one completion of ``messages`` on the run's loop (recorded, capped); the future holds its text."""
        ...


def chat_messages(params: Any) -> list[dict[str, Any]] | str:
    """The request as chat messages (its system prompt first), or the kind of content that is not text."""
    messages: list[dict[str, Any]] = []
    if getattr(params, "system_prompt", None):
        messages.append({"role": "system", "content": str(params.system_prompt)})
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts = []
        for block in blocks:
            if getattr(block, "type", None) != "text":
                return str(getattr(block, "type", "unknown"))
            texts.append(str(block.text))
        messages.append({"role": "assistant" if message.role == "assistant" else "user", "content": "\n".join(texts)})
    return messages


class SamplingGate:
    """Serves or refuses one sample's sampling requests (see the module docstring); thread-safe counters.

    Args:
        mode: ``serve`` or ``refuse`` (the config's ``sampling.mode``).
        max_calls: Requests served per sample at most.
        model: The run's model, or None (nothing can be served: a server started only to list its tools).
    """

    def __init__(self, mode: str = "serve", max_calls: int = 50, model: SamplingModel | None = None) -> None:
        self.mode, self.max_calls, self.model = mode, max_calls, model
        self.served = 0
        """Requests answered by the run's model."""
        self.refused = 0
        """Requests refused, for whatever reason (see :data:`REFUSALS`)."""
        self._lock = threading.Lock()
        self._started = 0
        self._blocked = 0

    @contextlib.contextmanager
    def loop_blocked(self) -> Iterator[None]:
        """Refuse requests while a tool is called synchronously from an event loop's own thread: serving one would
        need that loop, which waits on the call (a deadlock until the call's timeout)."""
        with self._lock:
            self._blocked += 1
        try:
            yield
        finally:
            with self._lock:
                self._blocked -= 1

    def _admit(self, params: Any) -> tuple[list[dict[str, Any]] | None, str]:
        """(the messages to send, "") or (None, why it is refused); a request admitted holds one of ``max_calls``."""
        messages = chat_messages(params)
        with self._lock:
            if self.mode != "serve":
                return None, REFUSALS["config"]
            if self.model is None:
                return None, REFUSALS["no_model"]
            if self._blocked:
                return None, REFUSALS["blocked"]
            if isinstance(messages, str):
                return None, REFUSALS["content"].format(detail=messages)
            if self._started >= self.max_calls:
                return None, REFUSALS["limit"].format(detail=self.max_calls)
            self._started += 1
        return messages, ""

    def _count(self, *, served: bool) -> None:
        with self._lock:
            if served:
                self.served += 1
            else:
                self.refused += 1

    async def __call__(self, context: Any, params: Any) -> Any:
        """The SDK's sampling callback (runs on the server's own event loop)."""
        from mcp import types

        messages, why = self._admit(params)
        if messages is None or self.model is None:
            self._count(served=False)
            return types.ErrorData(code=types.INVALID_REQUEST, message=why)
        try:
            text = await asyncio.wrap_future(self.model.submit(messages, int(params.max_tokens)))
        except Exception as exc:  # noqa: BLE001 - the model failed (the cap, the provider): the server is told, counted
            self._count(served=False)
            detail = f"{type(exc).__name__}: {exc}"[:300]
            return types.ErrorData(code=types.INTERNAL_ERROR, message=REFUSALS["failed"].format(detail=detail))
        self._count(served=True)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text),
                                         model=getattr(self.model, "model_name", "recall-eval"), stop_reason="endTurn")
