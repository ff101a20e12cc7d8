"""The agent loop: talk to a model through litellm, run its tool calls through the Host.

One sample is: call the model with the arm's messages and tools (the built-in
offline models in-process, :mod:`harness.run.direct`; every other through litellm); if it asks
for tools, execute every call (parallel calls in order) through the Host run,
append the assistant message and one ``tool`` message per call (content = the
Host's exact result text), and call again; stop on a final answer.

Cap on tool rounds: the model may make at most ``max_tool_rounds`` rounds of
tool calls; after the last executed round it gets one more call (tools still
offered) to answer. If it asks for tools again, the loop stops with
``max_tool_rounds``, does not execute them, and the answer is that call's text
(possibly None). So a sample makes at most ``max_tool_rounds + 1`` model calls.

Model mistakes (bad JSON arguments, unknown tools, missing call ids, empty
answers, endless tool calls) are recorded and scored, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from harness.memory_systems import ArmSetup
from harness.records import ModelCallLog, SampleError, ToolCallLog
from harness.run.model_client import Completion, ModelClient, ModelSettings, arguments_text, count_tokens
from harness.run.retry import RetryExhaustedError

DEFAULT_MAX_TOOL_ROUNDS = 4


class MemoryRunLike(Protocol):
    """The part of ``memory_tools.MemoryRun`` the loop needs."""

    def call(self, name: str, arguments: str | dict[str, Any]) -> Any: ...


@dataclass
class AgentOutcome:
    """What the loop produced for one sample."""

    final_answer: str | None
    stop_reason: str
    messages: list[dict[str, Any]]
    model_calls: list[ModelCallLog]
    tool_calls: list[ToolCallLog]
    error: SampleError | None = None


def model_call_log(completion: Completion, round_: int, model: str, messages: list[dict[str, Any]]) -> ModelCallLog:
    """The record of one completion (counted tokens when the provider reported none)."""
    if completion.prompt_tokens is None and completion.completion_tokens is None:
        prompt = count_tokens(model, messages=messages)
        answer = completion.message.get("content") or ""
        calls = "".join(c["function"]["name"] + c["function"]["arguments"] for c in completion.message.get("tool_calls", []))
        completion_tokens, source = count_tokens(model, text=answer + calls), "counted"
    else:
        prompt, completion_tokens, source = completion.prompt_tokens or 0, completion.completion_tokens or 0, "response"
    return ModelCallLog(
        round=round_,
        latency_s=completion.latency_s,
        prompt_tokens=prompt,
        completion_tokens=completion_tokens,
        usage_source=source,
        cost_usd=completion.cost_usd,
        finish_reason=completion.finish_reason,
        tool_call_count=len(completion.message.get("tool_calls", [])),
        cached=completion.cached,
        attempts=completion.attempts,
        deployment=completion.deployment,
        provider_fault=completion.fault,
    )


def _execute_call(host_run: MemoryRunLike | None, call: dict[str, Any], round_: int, model: str) -> ToolCallLog:
    name, arguments = call["function"]["name"], call["function"]["arguments"]
    if host_run is None:
        text = f"Error: no tool named {name!r} is available in this conversation."
        status, disclosed, storage_read, elapsed = "unknown_tool", [], False, 0.0
        arguments = arguments_text(arguments)
    else:
        record = host_run.call(name, arguments)
        # The Host's record holds the arguments as a string whatever the provider sent (a dict is JSON-dumped).
        arguments = record.arguments
        text, status = record.result_text, str(record.status)
        disclosed, storage_read, elapsed = list(record.disclosed_item_ids), bool(record.storage_read), float(record.elapsed_s)
    return ToolCallLog(
        round=round_,
        call_id=call["id"],
        name=name,
        arguments=arguments,
        status=status,
        result_text=text,
        result_chars=len(text),
        result_tokens=count_tokens(model, text=text),
        disclosed_item_ids=disclosed,
        storage_read=storage_read,
        elapsed_s=elapsed,
    )


async def run_agent(
    setup: ArmSetup,
    host_run: MemoryRunLike | None,
    *,
    client: ModelClient,
    settings: ModelSettings,
    epoch: int = 0,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
) -> AgentOutcome:
    """Run one sample to a final answer, the round cap, an empty answer or an error.

    ``host_run`` None (arms without memory) answers any tool call with an
    ``unknown_tool`` result and never touches storage.
    """
    messages = [dict(m) for m in setup.messages]
    outcome = AgentOutcome(None, "error", messages, [], [])
    rounds = 0
    try:
        while True:
            completion = await client.complete(messages, setup.tools, settings, epoch=epoch)
            outcome.model_calls.append(model_call_log(completion, rounds, settings.model, messages))
            message = completion.message
            calls = message.get("tool_calls", [])
            for index, call in enumerate(calls):
                if not call["id"]:
                    call["id"] = f"call_r{rounds}_{index}"  # the transcript must pair calls with results
                if not isinstance(call["function"].get("arguments"), str):  # the transcript replays to providers as text
                    call["function"]["arguments"] = arguments_text(call["function"].get("arguments"))
            messages.append(message)
            content = message.get("content")
            if not calls:
                has_text = isinstance(content, str) and content.strip() != ""
                outcome.final_answer = content if has_text else None
                outcome.stop_reason = "final_answer" if has_text else "empty_answer"
                return outcome
            if rounds >= max_tool_rounds:
                outcome.final_answer = content if isinstance(content, str) and content.strip() else None
                outcome.stop_reason = "max_tool_rounds"
                return outcome
            for call in calls:
                log = _execute_call(host_run, call, rounds, settings.model)
                outcome.tool_calls.append(log)
                messages.append({"role": "tool", "tool_call_id": log.call_id, "content": log.result_text})
            rounds += 1
    except RetryExhaustedError as exc:
        outcome.error = SampleError(type=type(exc.error).__name__, message=_short(str(exc.error)), attempts=exc.attempts)
    except Exception as exc:  # noqa: BLE001 - a broken sample is recorded, the run goes on
        outcome.error = SampleError(type=type(exc).__name__, message=_short(str(exc)), attempts=1)
    outcome.stop_reason = "error"
    return outcome


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " ..."
