"""A server's sampling requests: served by the run's model or refused, each counted, whatever the reason."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

import pytest

types = pytest.importorskip("mcp.types", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

from harness.memory_systems.mcp.sampling import SamplingGate, chat_messages  # noqa: E402


class _Model:
    """The run's model as the gate sees it: answers with a fixed text, or fails."""

    model_name = "offline/reference"

    def __init__(self, answer: str | None = "ranked: b, a") -> None:
        self.answer, self.asked = answer, []

    def submit(self, messages: list[dict[str, Any]], max_tokens: int) -> concurrent.futures.Future[str]:
        self.asked.append((messages, max_tokens))
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        if self.answer is None:
            future.set_exception(RuntimeError("BudgetExceeded: --max-cost-usd reached"))
        else:
            future.set_result(self.answer)
        return future


def _request(*contents: Any, system: str | None = "You rank notes.", max_tokens: int = 40) -> Any:
    messages = [types.SamplingMessage(role="user" if i % 2 == 0 else "assistant", content=c) for i, c in enumerate(contents)]
    return types.CreateMessageRequestParams(messages=messages, max_tokens=max_tokens, system_prompt=system)


def _text(text: str) -> Any:
    return types.TextContent(type="text", text=text)


def _ask(gate: SamplingGate, params: Any) -> Any:
    return asyncio.run(gate(None, params))


def test_a_text_request_becomes_chat_messages_with_its_system_prompt_first_and_roles_kept() -> None:
    params = _request(_text("rank these"), _text("a, b"), [_text("again"), _text("please")])
    assert chat_messages(params) == [{"role": "system", "content": "You rank notes."},
                                     {"role": "user", "content": "rank these"}, {"role": "assistant", "content": "a, b"},
                                     {"role": "user", "content": "again\nplease"}]
    assert chat_messages(_request(_text("x"), system=None)) == [{"role": "user", "content": "x"}]


def test_a_request_holding_an_image_is_named_by_its_content_type_not_sent() -> None:
    image = types.ImageContent(type="image", data="aGk=", mime_type="image/png")
    assert chat_messages(_request(_text("look"), image)) == "image"


def test_a_served_request_returns_the_models_text_and_counts_one_served() -> None:
    model = _Model()
    gate = SamplingGate("serve", 5, model)
    answer = _ask(gate, _request(_text("rank"), max_tokens=33))
    assert isinstance(answer, types.CreateMessageResult) and answer.content.text == "ranked: b, a"
    assert answer.model == "offline/reference" and (gate.served, gate.refused) == (1, 0)
    assert model.asked == [([{"role": "system", "content": "You rank notes."}, {"role": "user", "content": "rank"}], 33)]


@pytest.mark.parametrize(("make_gate", "why"), [
    (lambda: SamplingGate("refuse", 5, _Model()), "sampling.mode: refuse"),
    (lambda: SamplingGate("serve", 5, None), "no model serves sampling"),
    (lambda: SamplingGate("serve", 5, _Model(answer=None)), "BudgetExceeded"),
], ids=["refuse", "no model", "model failed"])
def test_a_request_refused_by_the_config_for_want_of_a_model_or_by_the_models_failure_is_an_error_counted(
        make_gate: Callable[[], SamplingGate], why: str) -> None:
    """Bug this guards: a refusal (or a failed call, the spending cap's included) that is not counted, so a product
    that went without looks like one that never asked. (Each case builds its gate: a gate made once at import
    counted the refusals of every earlier run of the test in the same process.)"""
    gate = make_gate()
    answer = _ask(gate, _request(_text("rank")))
    assert isinstance(answer, types.ErrorData) and why in answer.message
    assert (gate.served, gate.refused) == (0, 1)


def test_past_max_calls_a_sample_is_refused_and_each_refusal_counted() -> None:
    model = _Model()
    gate = SamplingGate("serve", 2, model)
    answers = [_ask(gate, _request(_text(f"rank {i}"))) for i in range(4)]
    assert [type(a).__name__ for a in answers] == ["CreateMessageResult"] * 2 + ["ErrorData"] * 2
    assert "sampling.max_calls" in answers[3].message and (gate.served, gate.refused) == (2, 2) and len(model.asked) == 2


def test_a_non_text_request_is_refused_without_reaching_the_model() -> None:
    model = _Model()
    gate = SamplingGate("serve", 5, model)
    audio = types.AudioContent(type="audio", data="aGk=", mime_type="audio/wav")
    answer = _ask(gate, _request(audio))
    assert isinstance(answer, types.ErrorData) and "audio" in answer.message and model.asked == []
    assert gate.refused == 1


def test_while_a_tool_is_called_synchronously_from_an_event_loop_requests_are_refused_then_served_again() -> None:
    """Bug this guards: a sampling request waiting on the run's loop while that loop's own thread waits on the tool
    call (a deadlock until the call's timeout)."""
    gate = SamplingGate("serve", 5, _Model())
    with gate.loop_blocked():
        blocked = _ask(gate, _request(_text("rank")))
    assert isinstance(blocked, types.ErrorData) and "synchronously" in blocked.message
    assert isinstance(_ask(gate, _request(_text("rank"))), types.CreateMessageResult)
    assert (gate.served, gate.refused) == (1, 1)


class _Unnamed(_Model):
    """A model object without a ``model_name`` (a plug-in's own sampling model)."""

    model_name = None

    def __getattribute__(self, name: str) -> Any:
        if name == "model_name":
            raise AttributeError(name)
        return super().__getattribute__(name)


class _Failing(_Model):
    def submit(self, messages: list[dict[str, Any]], max_tokens: int) -> concurrent.futures.Future[str]:
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        future.set_exception(ValueError("x" * 400))
        return future


def test_a_served_answer_ends_its_turn_and_names_the_model_or_recall_eval() -> None:
    answer = _ask(SamplingGate("serve", 5, _Model()), _request(_text("rank")))
    assert answer.stop_reason == "endTurn" and answer.content.type == "text"
    assert _ask(SamplingGate("serve", 5, _Unnamed()), _request(_text("rank"))).model == "recall-eval"


def test_a_models_failure_tells_the_server_its_kind_and_at_most_300_characters_of_it() -> None:
    answer = _ask(SamplingGate("serve", 5, _Failing()), _request(_text("rank")))
    detail = "ValueError: " + "x" * 400
    assert answer.message.endswith(detail[:300]) and detail[:301] not in answer.message


def test_the_call_limit_refusal_names_the_limit() -> None:
    gate = SamplingGate("serve", 1, _Model())
    _ask(gate, _request(_text("one")))
    assert _ask(gate, _request(_text("two"))).message == (
        "this sample's servers have had 1 model calls, the config's sampling.max_calls; refused")


def test_by_default_a_gate_serves_up_to_fifty_calls_and_without_a_model_refuses() -> None:
    """The defaults a config without a ``sampling`` block gets: serve, at most 50 calls a sample."""
    gate = SamplingGate(model=_Model())
    answers = [_ask(gate, _request(_text(f"rank {i}"))) for i in range(51)]
    assert (gate.served, gate.refused) == (50, 1) and "have had 50 model calls" in answers[-1].message
    assert "no model serves sampling" in _ask(SamplingGate(), _request(_text("rank"))).message
