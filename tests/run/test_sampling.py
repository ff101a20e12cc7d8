"""The run's model serving an MCP server's sampling: the run's client, the tighter token limit, calls placed by phase."""

from __future__ import annotations

import asyncio
import dataclasses
from types import SimpleNamespace
from typing import Any

from harness.records import ModelCallLog, WritePhaseLog, WriteSessionLog
from harness.run.agent import ModelSettings
from harness.run.sampling import PROBE, RunSampling, place_calls


class _Client:
    """The run's client as RunSampling calls it: records each call's settings, answers with a fixed completion."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[Any], settings: Any, *, epoch: int) -> Any:
        self.seen.append((messages, tools, settings, epoch))
        return SimpleNamespace(message={"content": "b, a"}, prompt_tokens=12, completion_tokens=3, finish_reason="stop",
                               latency_s=0.2, cost_usd=0.001, cached=False, attempts=1, deployment=None, fault=None)


def _call(round_: int = 0) -> ModelCallLog:
    return ModelCallLog(round=round_, latency_s=0.1, prompt_tokens=1, completion_tokens=1, usage_source="response",
                        purpose="sampling")


def _serve(settings: ModelSettings, asked_tokens: int, phase: str = PROBE) -> tuple[str, _Client, RunSampling]:
    client = _Client()

    async def main() -> tuple[str, RunSampling]:
        sampling = RunSampling(client, settings, 2, asyncio.get_running_loop())
        sampling.phase = phase
        future = sampling.submit([{"role": "user", "content": "rank"}], asked_tokens)
        return await asyncio.wrap_future(future), sampling

    text, sampling = asyncio.run(main())
    return text, client, sampling


def test_a_served_request_goes_through_the_runs_client_at_the_tighter_token_limit_and_is_recorded_as_sampling() -> None:
    """Bug this guards: a server's ``maxTokens`` above ``--max-tokens`` sent as is (the cap reserves less than the call
    may cost), or a served call left out of the record."""
    settings = ModelSettings("openai/gpt-4o-mini", 0.0, 30.0, 7, None, max_tokens=100)
    text, client, sampling = _serve(settings, 500, phase="s2")
    ((messages, tools, used, epoch),) = client.seen
    assert text == "b, a" and tools == [] and epoch == 2 and used.max_tokens == 100
    assert dataclasses.replace(used, max_tokens=settings.max_tokens) == settings  # nothing else of the run's changed
    ((phase, call),) = sampling.calls
    assert phase == "s2" and call.purpose == "sampling" and (call.prompt_tokens, call.completion_tokens) == (12, 3)
    assert call.cost_usd == 0.001 and call.latency_s == 0.2
    assert _serve(settings, 40)[1].seen[0][2].max_tokens == 40  # the server asked for less: it gets less
    assert _serve(dataclasses.replace(settings, max_tokens=None), 40)[1].seen[0][2].max_tokens == 40


def test_calls_go_to_their_phases_log_and_those_without_one_are_left_over() -> None:
    """Bug this guards: write-phase calls counted as the probe's (or lost), and a failed phase's calls dropped."""
    phase = WritePhaseLog(sessions=[WriteSessionLog(session_id="s1", workspace=None, stop_reason="final_answer")])
    probe: list[ModelCallLog] = []
    calls = [("s1", _call(0)), (PROBE, _call(1)), ("s2", _call(2))]
    left = place_calls(calls, phase, probe)
    assert [c.round for c in phase.sessions[0].model_calls] == [0] and [c.round for c in probe] == [1]
    assert [c.round for c in left] == [2]
    assert [c.round for c in place_calls(calls, None, None)] == [0, 1, 2]  # the sample failed before any log


class _SilentProvider(_Client):
    """A provider that reports no usage and answers with no text (only a refusal field, say)."""

    async def complete(self, messages: list[dict[str, Any]], tools: list[Any], settings: Any, *, epoch: int) -> Any:
        self.seen.append((messages, tools, settings, epoch))
        return SimpleNamespace(message={"content": None}, prompt_tokens=None, completion_tokens=None,
                               finish_reason="stop", latency_s=0.1, cost_usd=None, cached=False, attempts=1,
                               deployment=None, fault=None)


def test_the_servers_messages_reach_the_model_and_are_counted_when_the_provider_reports_no_usage() -> None:
    """Bug this guards: the server's messages lost on the way (the model asked nothing), or a call whose provider
    reported no usage recorded as free: its tokens are counted from the messages sent, with the run's model."""
    settings = ModelSettings("openai/gpt-4o-mini", 0.0, 30.0, 7, None, max_tokens=100)
    client = _SilentProvider()
    messages = [{"role": "system", "content": "You rank notes."}, {"role": "user", "content": "rank these " * 40}]

    async def main() -> tuple[str, RunSampling]:
        sampling = RunSampling(client, settings, 0, asyncio.get_running_loop())
        return await asyncio.wrap_future(sampling.submit(messages, 50)), sampling

    text, sampling = asyncio.run(main())
    assert client.seen[0][0] == messages
    assert text == ""  # no text from the model: an empty answer, not None or a placeholder
    ((phase, call),) = sampling.calls
    assert phase == PROBE  # a call made before the sample names a phase belongs to the probe
    assert call.usage_source == "counted" and call.prompt_tokens > 80 and call.completion_tokens == 0
    assert sampling.model_name == "openai/gpt-4o-mini"


def test_a_server_asking_for_one_token_gets_one() -> None:
    settings = ModelSettings("openai/gpt-4o-mini", 0.0, 30.0, 7, None, max_tokens=100)
    assert _serve(settings, 1)[1].seen[0][2].max_tokens == 1
    assert _serve(settings, 0)[1].seen[0][2].max_tokens == 1  # never 0: a request of nothing still asks for a token


class _UncountedProvider(_Client):
    """A provider that answers with text and reports no usage."""

    async def complete(self, messages: list[dict[str, Any]], tools: list[Any], settings: Any, *, epoch: int) -> Any:
        self.seen.append((messages, tools, settings, epoch))
        return SimpleNamespace(message={"content": "привет мир, 東京: naïve café"}, prompt_tokens=None,
                               completion_tokens=None, finish_reason="stop", latency_s=0.1, cost_usd=None,
                               cached=False, attempts=1, deployment=None, fault=None)


def test_an_uncounted_call_is_counted_with_the_run_models_tokenizer_not_litellms_default() -> None:
    """Bug this guards: the served call counted with no model name, i.e. with litellm's default tokenizer
    (``cl100k_base``, gpt-3.5-turbo's) instead of the run model's (``o200k_base`` for gpt-4o-mini): a sample's
    sampling tokens, and the cost the cap reserves from them, off by a quarter on non-English text."""
    settings = ModelSettings("openai/gpt-4o-mini", 0.0, 30.0, 7, None, max_tokens=100)
    messages = [{"role": "user", "content": "Ранжируй заметки: 東京の会議, naïve café, señor " * 8}]

    async def main() -> RunSampling:
        sampling = RunSampling(_UncountedProvider(), settings, 0, asyncio.get_running_loop())
        await asyncio.wrap_future(sampling.submit(messages, 50))
        return sampling

    ((_, call),) = asyncio.run(main()).calls
    import litellm  # imported by the count above; here only to say what each tokenizer gives

    reply = "привет мир, 東京: naïve café"
    expected = (litellm.token_counter(model=settings.model, messages=messages),
                litellm.token_counter(model=settings.model, text=reply))
    default = (litellm.token_counter(model=None, messages=messages), litellm.token_counter(model=None, text=reply))
    assert expected[0] != default[0] and expected[1] != default[1]  # the two tokenizers differ on this text
    assert (call.prompt_tokens, call.completion_tokens) == expected
