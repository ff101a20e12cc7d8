"""A model that would generate until its context is full: every call carries --max-tokens, and a cut-off answer is recorded and scored as given."""

from __future__ import annotations

import json

from tests.integration.fake_openai_server import FakeOpenAIServer


def test_every_call_carries_the_default_token_limit_and_run_json_records_it(run_cli, server: FakeOpenAIServer) -> None:
    """No --max-tokens given: every request still has max_tokens 2048, and run.json parameters say so."""
    result = run_cli("--no-cache")

    assert result.code == 0, result.err
    assert [seen.body.get("max_tokens") for seen in server.requests] == [2048, 2048]
    assert json.loads((result.run_dir / "run.json").read_text())["parameters"]["max_tokens"] == 2048


def test_an_answer_cut_off_at_max_tokens_records_finish_reason_length_and_is_kept(run_cli, server: FakeOpenAIServer) -> None:
    """A server that stops at --max-tokens 64 (finish_reason length): the call records 'length', the text is the
    final answer, the terminal says so."""
    server.script.finish_reason = "length"

    result = run_cli("--no-cache", "--max-tokens", "64")

    assert result.code == 0, result.err
    assert {seen.body.get("max_tokens") for seen in server.requests} == {64}
    record = result.record("recall")
    assert record.status == "ok" and record.stop_reason == "final_answer"
    assert [call.finish_reason for call in record.model_calls] == ["tool_calls", "length"]
    assert record.final_answer and record.final_answer.startswith("From memory:")
    assert "1 sample had a model call cut off at --max-tokens 64 (finish_reason length)" in result.err
