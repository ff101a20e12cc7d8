"""A scripted model: a litellm custom provider whose answers a test writes as a function of the messages and tools."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm import CustomLLM, ModelResponse  # noqa: E402

from harness.offline_model import register  # noqa: E402
from harness.run.agent import ModelClient, ModelSettings, run_agent  # noqa: E402
from harness.run.retry import RetryPolicy  # noqa: E402
from harness.scenarios import seed_store  # noqa: E402
from memory_tools.host import Host  # noqa: E402
from memory_tools.policy import MemoryPolicy, RunContext  # noqa: E402
from memory_tools.store import MemoryItemStore  # noqa: E402
from tests.memory_systems.arm_builders import get_arm  # noqa: E402
from tests.memory_systems.prompt_factories import make_scenario  # noqa: E402

Script = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], Any]


class ScriptedLLM(CustomLLM):
    """A litellm provider ``scripted/<name>`` whose replies come from ``script`` (a dict, or an exception to raise)."""

    script: Script = staticmethod(lambda messages, tools: {"content": "ok"})
    calls = 0
    last_kwargs: dict[str, Any] = {}

    async def acompletion(self, model, messages, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        type(self).calls += 1
        type(self).last_kwargs = kwargs
        reply = type(self).script(messages, kwargs.get("optional_params", {}).get("tools"))
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, float):  # a delay in seconds, then a plain answer
            await asyncio.sleep(reply)
            reply = {"content": "late"}
        message = {"role": "assistant", "content": reply.get("content"), "tool_calls": reply.get("tool_calls")}
        usage = reply.get("usage", {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14})
        return ModelResponse(choices=[{"message": message, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}], usage=usage)


def install_scripted(script: Script) -> type[ScriptedLLM]:
    """Register (once) the scripted provider and set its script; returns the class for call counts."""
    register()
    if not any(entry["provider"] == "scripted" for entry in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "scripted", "custom_handler": ScriptedLLM()}]
    ScriptedLLM.script = staticmethod(script)
    ScriptedLLM.calls = 0
    return ScriptedLLM


def tool_call(name: str, arguments: str, call_id: str | None = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _run(
    arm: str,
    model: str = "scripted/x",
    scenario=None,
    client: ModelClient | None = None,
    settings: ModelSettings | None = None,
    settings_timeout: float = 120.0,
    **kwargs: Any,
):
    scenario = scenario or make_scenario()
    store = MemoryItemStore(":memory:")
    try:
        host_run = None
        if get_arm(arm).uses_memory:
            seed_store(store, scenario)
            host_run = Host(store, MemoryPolicy(enabled=True, agent_read_enabled=True)).open_run(RunContext(workspace_key="ws-a"))
        setup = get_arm(arm).build(scenario, host_run)
        client = client or ModelClient(retry=RetryPolicy(retries=0))
        settings = settings or ModelSettings(model, timeout_s=settings_timeout)
        return asyncio.run(run_agent(setup, host_run, client=client, settings=settings, **kwargs))
    finally:
        store.close()
