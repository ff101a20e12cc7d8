"""A model's malformed but complete 200 response is its answer, not a server error: recorded, scored, not retried,
one line in the terminal; a malformed tool call is a failed call the model sees."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.fake_openai_server import FakeOpenAIServer

ARMS = ("history_only", "recall", "full_history")


def _final(content: Any):
    def respond(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        message = reply["choices"][0]["message"]
        message.pop("tool_calls", None)
        message["content"] = content
        reply["choices"][0]["finish_reason"] = "stop"
        return reply
    return respond


def _first_call(change):
    def respond(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        for call in reply["choices"][0]["message"].get("tool_calls") or []:
            change(call)
        return reply
    return respond


def _no_function(call: dict[str, Any]) -> None:
    del call["function"]


def _deep_arguments(call: dict[str, Any]) -> None:
    call["function"]["arguments"] = "[" * 50_000 + "]" * 50_000


def _numeric_name(call: dict[str, Any]) -> None:
    call["function"]["name"] = 7


@pytest.mark.parametrize(("content", "answer"), [
    ([{"type": "text", "text": "Buildkite runs "}, {"type": "text", "text": "the pipelines."}], "Buildkite runs the pipelines."),
    (42, "42"),
    ({"answer": "Buildkite"}, '{"answer": "Buildkite"}'),
])
def test_content_that_is_not_text_is_recorded_as_the_answer_without_retries(run_cli, server: FakeOpenAIServer, content: Any, answer: str) -> None:
    """Content that is a list of parts, a number or an object: each sample is ok with that text as its answer,
    every call is made once (no retry), the terminal says so in one line, and no litellm traceback is shown."""
    server.script.respond = _final(content)

    result = run_cli("--no-cache", "--retries", "3", "--retry-delay", "0.001", scenario="smoke-0[123]*", arms=ARMS)

    records = result.records()
    assert len(records) == 9 and {r.status for r in records} == {"ok"}, [r.error for r in records]
    assert {r.final_answer for r in records} == {answer}
    assert len(server.requests) == 9 and all(c.attempts == 1 for r in records for c in r.model_calls)
    assert all(c.provider_fault and "content is a" in c.provider_fault for r in records for c in r.model_calls)
    assert result.err.count("had a malformed model response") == 1
    assert "Traceback" not in result.err and "InternalServerError" not in result.err
    assert (result.run_dir / "scores.jsonl").is_file()


@pytest.mark.parametrize("change", [_no_function, _deep_arguments, _numeric_name], ids=["no function", "deeply nested arguments", "numeric name"])
def test_a_malformed_tool_call_is_a_failed_call_the_model_sees(run_cli, server: FakeOpenAIServer, change) -> None:
    """A tool call without ``function``, with arguments nested 50,000 deep, or with a number for a name: the Host
    answers it with an error the model reads, the model's next answer ends the sample, nothing is retried."""
    server.script.respond = _first_call(change)

    result = run_cli("--no-cache", "--retries", "3", "--retry-delay", "0.001")

    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "final_answer", record.error
    (call,) = record.tool_calls
    assert call.status in ("unknown_tool", "invalid_arguments")
    assert record.final_answer.startswith("From memory: ") and '"error"' in record.final_answer  # the model saw the failure
    assert len(server.requests) == 2 and [c.attempts for c in record.model_calls] == [1, 1]
    assert "Traceback" not in result.err and "InternalServerError" not in result.err


@pytest.mark.parametrize(("flag", "value"), [
    ("--temperature", "nan"), ("--temperature", "inf"), ("--temperature", "-1"),
    ("--max-cost-usd", "nan"), ("--max-cost-usd", "inf"), ("--max-cost-usd", "-1"),
    ("--timeout", "nan"), ("--timeout", "0"), ("--timeout", "inf"), ("--retry-delay", "nan"), ("--retry-delay", "-1"),
])
def test_meaningless_numbers_are_refused_when_the_command_line_is_read(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--temperature nan``, ``--max-cost-usd inf``, ``--timeout 0`` ...: exit 2 with a message naming the flag and
    the value, before any model call."""
    from harness.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["run", "--model", "openai/fake", flag, value, "--no-progress"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert flag in err and value in err and "Traceback" not in err
