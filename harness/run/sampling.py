"""The run's model serving a memory server's requests for model calls (MCP sampling), each call recorded.

:class:`RunSampling` is the run layer's side of
:class:`harness.memory_systems.mcp.sampling.SamplingModel`: a request arrives
on the server's own event loop (a thread of its own), and the completion runs
on the run's loop through the run's :class:`~harness.run.agent.ModelClient`,
so it has the agent's call path, retries, rate limits, response cache and
``--max-cost-usd`` reservation. The server's ``maxTokens`` is kept, never
above the run's ``--max-tokens``, so the cap reserves what the call may cost.

Each call is a :class:`~harness.records.ModelCallLog` marked ``purpose:
sampling``, placed by :func:`place_calls` with the phase it was made in: a
write session's calls in that session's log (write-phase tokens), the
probe's among the probe's model calls. A call whose phase has no log (the
sample failed in that very phase) is left over, and the runner puts it in the
error record's model calls: what a failed sample spent is still recorded, and
``--resume`` counts it against the cap.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
from typing import Any

from harness.records import ModelCallLog, WritePhaseLog
from harness.run.agent import model_call_log

#: The phase of calls made at the probe (the write phase's are named by their session id).
PROBE = "probe"


class RunSampling:
    """One sample's door from its servers to the run's model (see the module docstring).

    Args:
        client: The run's model client; settings: the sample's model settings; epoch: the sample's epoch.
        loop: The run's event loop, on which every call is made.
    """

    def __init__(self, client: Any, settings: Any, epoch: int, loop: asyncio.AbstractEventLoop) -> None:
        self.client, self.settings, self.epoch, self.loop = client, settings, epoch, loop
        self.model_name = str(settings.model)
        self.phase = PROBE
        """Where calls made now belong: a write session's id, or :data:`PROBE`; set by the sample as it goes."""
        self.calls: list[tuple[str, ModelCallLog]] = []
        """(phase, call) of every completion served, in order."""

    def submit(self, messages: list[dict[str, Any]], max_tokens: int) -> concurrent.futures.Future[str]:
        """Start one completion on the run's loop; the future holds its text (or the model's failure)."""
        return asyncio.run_coroutine_threadsafe(self._complete(messages, max_tokens, self.phase), self.loop)

    async def _complete(self, messages: list[dict[str, Any]], max_tokens: int, phase: str) -> str:
        run_limit = self.settings.max_tokens
        limit = max(1, min(max_tokens, run_limit) if run_limit else max_tokens)
        used = dataclasses.replace(self.settings, max_tokens=limit)
        completion = await self.client.complete(messages, [], used, epoch=self.epoch)
        log = model_call_log(completion, len(self.calls), used.model, messages)
        self.calls.append((phase, log.model_copy(update={"purpose": "sampling"})))
        content = completion.message.get("content")
        return content if isinstance(content, str) else ""


def place_calls(calls: list[tuple[str, ModelCallLog]], write_phase: WritePhaseLog | None,
                probe_calls: list[ModelCallLog] | None) -> list[ModelCallLog]:
    """Append each call to its phase's log (``probe_calls`` None: the probe did not run); returns the calls left over."""
    sessions = {s.session_id: s for s in (write_phase.sessions if write_phase is not None else [])}
    left: list[ModelCallLog] = []
    for phase, call in calls:
        if phase == PROBE and probe_calls is not None:
            probe_calls.append(call)
        elif phase in sessions:
            sessions[phase].model_calls.append(call)
        else:
            left.append(call)
    return left
