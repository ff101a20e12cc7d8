"""``recall-eval run --model openai/... --api-base URL`` over real HTTP to a fake OpenAI server.

These go through litellm's openai provider and the openai SDK exactly as a
local llama.cpp / vLLM / Ollama server would be reached.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.conftest import DUMMY_KEY
from tests.integration.fake_openai_server import COMPLETION_TOKENS, PROMPT_TOKENS, FakeOpenAIServer


def _files_containing(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_run_against_an_openai_compatible_server_records_host_tool_calls_usage_and_report(run_cli, server: FakeOpenAIServer) -> None:
    result = run_cli(arms=("history_only", "recall", "full_history"))

    assert result.code == 0, result.err
    records = {r.arm: r for r in result.records()}
    assert sorted(records) == ["full_history", "history_only", "recall"]
    assert all(r.status == "ok" and r.stop_reason == "final_answer" for r in records.values())
    recall = records["recall"]
    (call,) = recall.tool_calls
    assert call.name == "memory_search" and call.status == "ok"
    assert call.disclosed_item_ids == ["it-changelog-format"]
    assert "Keep a Changelog" in recall.final_answer  # the server answered from the Host's result text
    assert recall.messages[-2]["role"] == "tool" and recall.messages[-2]["content"] == call.result_text
    assert [(m.prompt_tokens, m.completion_tokens, m.usage_source) for m in recall.model_calls] == [
        (PROMPT_TOKENS, COMPLETION_TOKENS, "response")
    ] * 2
    assert (result.run_dir / "index.html").is_file() and (result.run_dir / "summary.json").is_file()
    assert json.loads((result.run_dir / "run.json").read_text())["status"] == "complete"
    # the key went over the wire, and nowhere else
    assert {seen.authorization for seen in server.requests} == {f"Bearer {DUMMY_KEY}"}
    assert any(result.cache_dir.rglob("*.json"))
    assert _files_containing(result.run_dir, DUMMY_KEY) == [] and _files_containing(result.cache_dir, DUMMY_KEY) == []


@pytest.mark.parametrize("status", [500, 429])
def test_transient_server_errors_are_retried_and_the_sample_succeeds(run_cli, server: FakeOpenAIServer, status: int) -> None:
    server.script.fail_status, server.script.fail_times, server.script.retry_after_s = status, 2, 0

    result = run_cli("--no-cache", "--retry-delay", "0.01")

    assert result.code == 0, result.err
    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "final_answer"
    assert record.model_calls[0].attempts == 3 and record.model_calls[1].attempts == 1
    assert [seen.status for seen in server.requests] == [status, status, 200, 200]


def test_bad_credentials_fail_samples_once_each_with_a_clear_message(run_cli, server: FakeOpenAIServer) -> None:
    server.script.fail_status, server.script.fail_times = 401, None

    result = run_cli("--no-cache", "--retry-delay", "0.01", arms=("history_only", "recall", "full_history"))

    assert result.code != 0
    records = result.records()
    assert records and all(r.status == "error" and r.error.type == "AuthenticationError" and r.error.attempts == 1 for r in records)
    assert len(server.requests) == len(records)  # no retry of a 401
    assert "Traceback" not in result.err and "OPENAI_API_KEY" in result.err and "--resume" in result.err
    assert DUMMY_KEY not in result.err and _files_containing(result.run_dir, DUMMY_KEY) == []


@pytest.mark.parametrize(
    ("mode", "status"),
    [("bad_json", "invalid_arguments"), ("unknown_tool", "unknown_tool"), ("extra_workspace", "invalid_arguments")],
)
def test_malformed_tool_calls_are_recorded_with_the_host_status_and_the_sample_completes(
    run_cli, server: FakeOpenAIServer, mode: str, status: str
) -> None:
    server.script.mode = mode

    result = run_cli()

    assert result.code == 0, result.err
    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "final_answer"
    (call,) = record.tool_calls
    assert call.status == status and call.storage_read is False and call.disclosed_item_ids == []
    assert '"error"' in call.result_text and status in call.result_text
    sent = server.requests[0].body["messages"]
    assert server.requests[-1].body["messages"][-1]["content"] == call.result_text and len(sent) < len(server.requests[-1].body["messages"])


def test_endless_tool_calls_stop_at_the_round_cap(run_cli, server: FakeOpenAIServer) -> None:
    server.script.mode = "endless"

    result = run_cli("--max-tool-rounds", "2")

    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "max_tool_rounds"
    assert len(record.model_calls) == 3 and len(record.tool_calls) == 2 and len(server.requests) == 3


def test_an_empty_answer_is_recorded_not_raised(run_cli, server: FakeOpenAIServer) -> None:
    server.script.mode = "empty"

    result = run_cli()

    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "empty_answer" and record.final_answer is None


def test_a_slow_server_times_out_per_call_and_is_recorded(run_cli, server: FakeOpenAIServer) -> None:
    server.script.delay_s = 20.0

    result = run_cli("--no-cache", "--timeout", "1", "--retries", "1", "--retry-delay", "0.01")

    record = result.record("recall")
    assert record.status == "error" and "Timeout" in record.error.type and record.error.attempts == 2
    assert re.search(r"(?i)timed out|within 1 s", record.error.message)  # says what happened, not ""
    assert 1 <= len(server.requests) <= 2  # a try can time out in litellm's own setup, before sending
    assert result.code != 0 and "Traceback" not in result.err and "--timeout" in result.err
