"""The agent loop: tool rounds through the Host, the round cap, model mistakes, retries, cache."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm import ModelResponse  # noqa: E402

from harness.run.agent import Completion, ModelClient, ModelSettings  # noqa: E402
from harness.run.cache import ResponseCache  # noqa: E402
from harness.run.retry import RetryPolicy  # noqa: E402
from tests.run.scripted_model import ScriptedLLM, _run, install_scripted, tool_call


def test_offline_model_searches_reads_and_answers() -> None:
    install_scripted(lambda m, t: {"content": "unused"})
    outcome = _run("recall", model="offline/reference")
    assert outcome.stop_reason == "final_answer" and "5174" in (outcome.final_answer or "")
    assert outcome.tool_calls and outcome.tool_calls[0].name == "memory_search"
    assert "it-port" in {i for call in outcome.tool_calls for i in call.disclosed_item_ids}
    roles = [m["role"] for m in outcome.messages]
    assert roles[:4] == ["system", "user", "assistant", "user"] and "tool" in roles and roles[-1] == "assistant"
    json.dumps(outcome.messages)  # the transcript is plain JSON


def test_offline_model_calls_cost_zero_as_stated_by_the_provider() -> None:
    install_scripted(lambda m, t: {"content": "unused"})
    outcome = _run("recall", model="offline/reference")
    assert outcome.model_calls and all(call.cost_usd == 0.0 for call in outcome.model_calls)


def test_a_provider_stated_cost_is_recorded_as_is() -> None:
    class PricedLLM(ScriptedLLM):
        async def acompletion(self, model, messages, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
            response = await super().acompletion(model, messages, *args, **kwargs)
            response._hidden_params["response_cost"] = 0.25
            return response

    install_scripted(lambda m, t: {"content": "ok"})
    if not any(entry["provider"] == "priced" for entry in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "priced", "custom_handler": PricedLLM()}]
    outcome = _run("history_only", model="priced/x")
    assert [call.cost_usd for call in outcome.model_calls] == [0.25]

def test_tool_results_go_back_verbatim_with_the_call_id() -> None:
    def script(messages, tools):
        if messages[-1]["role"] == "tool":
            return {"content": "done"}
        return {"tool_calls": [tool_call("memory_search", '{"terms": ["port"]}', "a"), tool_call("memory_get", '{"itemId": "it-port"}', "b")]}

    install_scripted(script)
    outcome = _run("recall")
    tool_messages = [m for m in outcome.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["a", "b"]
    assert [m["content"] for m in tool_messages] == [c.result_text for c in outcome.tool_calls]
    assert [c.round for c in outcome.tool_calls] == [0, 0] and outcome.tool_calls[1].status == "ok"
    assert all(c.result_tokens > 0 and c.result_chars == len(c.result_text) for c in outcome.tool_calls)
    assert [c.round for c in outcome.model_calls] == [0, 1] and outcome.model_calls[0].tool_call_count == 2


def test_round_cap_stops_a_model_that_always_calls_tools() -> None:
    install_scripted(lambda m, t: {"content": "still looking", "tool_calls": [tool_call("memory_search", '{"terms": ["x"]}')]})
    outcome = _run("recall", max_tool_rounds=2)
    assert outcome.stop_reason == "max_tool_rounds"
    assert len(outcome.model_calls) == 3 and len(outcome.tool_calls) == 2
    assert outcome.final_answer == "still looking"


def test_malformed_tool_calls_are_recorded_not_raised() -> None:
    calls = [
        tool_call("memory_search", "{not json", "bad"),
        tool_call("delete_everything", "{}", "unknown"),
        tool_call("memory_get", '{"itemId": "x"}', None),
    ]

    def script(messages, tools):
        return {"content": "I don't know."} if messages[-1]["role"] == "tool" else {"tool_calls": calls}

    install_scripted(script)
    outcome = _run("recall")
    assert outcome.stop_reason == "final_answer" and outcome.error is None
    assert [c.status for c in outcome.tool_calls] == ["invalid_arguments", "unknown_tool", "not_found"]
    assistant = next(m for m in outcome.messages if m.get("tool_calls"))
    tool_ids = [m["tool_call_id"] for m in outcome.messages if m["role"] == "tool"]
    assert outcome.tool_calls[2].call_id and [c["id"] for c in assistant["tool_calls"]] == tool_ids


def test_dict_tool_arguments_from_a_scripted_model_are_logged_as_text() -> None:
    def script(messages, tools):
        if messages[-1]["role"] == "tool":
            return {"content": "done"}
        return {"tool_calls": [{"id": "d", "type": "function", "function": {"name": "memory_get", "arguments": {"itemId": "it-port"}}}]}

    install_scripted(script)
    outcome = _run("recall")
    assert outcome.error is None and outcome.tool_calls[0].status == "ok"
    assert json.loads(outcome.tool_calls[0].arguments) == {"itemId": "it-port"}


class _DictArgumentsClient(ModelClient):
    """A client whose replies skip litellm's normalisation: tool arguments arrive as a dict."""

    async def complete(self, messages, tools, settings, *, epoch):  # type: ignore[override]
        if messages[-1]["role"] == "tool":
            message = {"role": "assistant", "content": "done"}
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [tool_call("memory_get", {"itemId": "it-port"}, "d")]}  # type: ignore[arg-type]
        return Completion(message, 10, 2, "stop", 0.0, None, False, 1)


@pytest.mark.parametrize("arm", ["recall", "history_only"])
def test_dict_tool_arguments_never_fail_record_validation(arm: str) -> None:
    outcome = _run(arm, client=_DictArgumentsClient())
    assert outcome.error is None and outcome.stop_reason == "final_answer"
    logged = outcome.tool_calls[0]
    assert isinstance(logged.arguments, str) and json.loads(logged.arguments) == {"itemId": "it-port"}
    assert logged.status == ("ok" if arm == "recall" else "unknown_tool")
    assistant = next(m for m in outcome.messages if m.get("tool_calls"))
    assert isinstance(assistant["tool_calls"][0]["function"]["arguments"], str)


def test_tool_call_in_an_arm_without_tools_never_reads_storage() -> None:
    install_scripted(
        lambda m, t: (
            {"content": "fine"}
            if m[-1]["role"] == "tool"
            else {"tool_calls": [tool_call("memory_search", '{"terms": ["port"]}')]}
        )
    )
    outcome = _run("history_only")
    assert outcome.tool_calls[0].status == "unknown_tool" and not outcome.tool_calls[0].storage_read


def test_empty_answer_is_a_stop_reason() -> None:
    install_scripted(lambda m, t: {"content": "  "})
    outcome = _run("history_only")
    assert outcome.stop_reason == "empty_answer" and outcome.final_answer is None and outcome.error is None


def test_transient_errors_are_retried_with_backoff() -> None:
    failures = iter([litellm.RateLimitError("slow down", "scripted", "x"), litellm.RateLimitError("slow down", "scripted", "x")])
    install_scripted(lambda m, t: next(failures, {"content": "answer"}))
    sleeps: list[float] = []

    async def no_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    client = ModelClient(retry=RetryPolicy(retries=4, sleep=no_sleep))
    outcome = _run("history_only", client=client)
    assert outcome.final_answer == "answer" and outcome.model_calls[0].attempts == 3
    assert len(sleeps) == 2 and sleeps[0] <= 1.0 and sleeps[1] <= 2.0


def test_non_transient_error_fails_at_once() -> None:
    install_scripted(lambda m, t: litellm.AuthenticationError("bad key", "scripted", "x"))
    outcome = _run("history_only", client=ModelClient(retry=RetryPolicy(retries=4, sleep=_never)))
    assert outcome.stop_reason == "error" and outcome.error is not None
    assert outcome.error.type == "AuthenticationError" and outcome.error.attempts == 1 and ScriptedLLM.calls == 1


async def _never(seconds: float) -> None:  # pragma: no cover - must not be awaited
    raise AssertionError("no backoff expected")


def test_missing_usage_is_counted() -> None:
    install_scripted(lambda m, t: {"content": "hello there", "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
    call = _run("history_only").model_calls[0]
    assert call.usage_source == "counted" and call.prompt_tokens > 0 and call.completion_tokens > 0


def test_cache_serves_a_repeat_without_calling_the_model(tmp_path) -> None:
    model = install_scripted(lambda m, t: {"content": "answer"})
    client = ModelClient(ResponseCache(tmp_path), RetryPolicy(retries=0))
    first = _run("history_only", client=client)
    second = _run("history_only", client=client)
    assert model.calls == 1
    assert not first.model_calls[0].cached and second.model_calls[0].cached
    assert second.final_answer == "answer" and second.model_calls[0].latency_s == first.model_calls[0].latency_s


def test_each_epoch_has_its_own_cache_entry(tmp_path) -> None:
    model = install_scripted(lambda m, t: {"content": "answer"})
    client = ModelClient(ResponseCache(tmp_path), RetryPolicy(retries=0))
    _run("history_only", client=client, epoch=0)
    _run("history_only", client=client, epoch=1)
    assert model.calls == 2 and len(list(tmp_path.rglob("*.json"))) == 2


def test_a_different_max_tokens_is_a_different_cache_entry(tmp_path) -> None:
    model = install_scripted(lambda m, t: {"content": "answer"})
    client = ModelClient(ResponseCache(tmp_path), RetryPolicy(retries=0))
    for limit in (100, 200, 100):
        _run("history_only", client=client, settings=ModelSettings("scripted/x", max_tokens=limit))
    assert model.calls == 2 and len(list(tmp_path.rglob("*.json"))) == 2


def test_max_tokens_reaches_the_provider() -> None:
    model = install_scripted(lambda m, t: {"content": "ok"})
    _run("history_only", settings=ModelSettings("scripted/x", max_tokens=321))
    assert model.last_kwargs["optional_params"].get("max_tokens") == 321


@pytest.mark.parametrize("arm", ["history_only", "full_history"])
def test_arms_without_memory_offer_no_tools(arm: str) -> None:
    seen: list[Any] = []
    install_scripted(lambda m, t: seen.append(t) or {"content": "ok"})
    _run(arm)
    assert seen == [None]


def test_slow_call_times_out_and_is_retried_as_transient() -> None:
    delays = iter([5.0])
    install_scripted(lambda m, t: next(delays, {"content": "quick"}))

    async def no_sleep(seconds: float) -> None:
        return None

    # the 5 s call times out; the quick retry has 1 s, room enough on a loaded machine
    outcome = _run("history_only", client=ModelClient(retry=RetryPolicy(retries=1, sleep=no_sleep)), settings_timeout=1.0)
    assert outcome.final_answer == "quick" and outcome.model_calls[0].attempts == 2


def test_api_base_reaches_the_provider() -> None:
    model = install_scripted(lambda m, t: {"content": "ok"})
    _run("history_only", settings=ModelSettings("scripted/x", api_base="http://127.0.0.1:9/v1", seed=7))
    assert model.last_kwargs.get("api_base") == "http://127.0.0.1:9/v1"


def test_missing_credentials_reported_as_server_error_are_not_retried() -> None:
    install_scripted(lambda m, t: litellm.InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`", "scripted", "x"))
    outcome = _run("history_only", client=ModelClient(retry=RetryPolicy(retries=4, sleep=_never)))
    assert outcome.error is not None and outcome.error.attempts == 1 and ScriptedLLM.calls == 1
