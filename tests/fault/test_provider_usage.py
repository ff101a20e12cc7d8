"""A provider's usage numbers are not trusted: negative, non-numeric or implausible counts are replaced by counted
tokens, flagged in the record, and can never lower what ``--max-cost-usd`` has seen spent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.records import scan_results
from tests.integration.conftest import SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

ARMS = ("history_only", "recall", "full_history")
BAD_USAGE = {
    "negative prompt": {"prompt_tokens": -1_000_000},
    "text prompt": {"prompt_tokens": "lots"},
    "fractional completion": {"completion_tokens": 2.5},
    "huge completion": {"completion_tokens": 10**15},
    "prompt over any request": {"prompt_tokens": 10**12},
}


def _usage(fields: dict[str, Any], times: int | None = None):
    sent = [0]

    def respond(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        if times is None or sent[0] < times:
            reply["usage"].update(fields)
        sent[0] += 1
        return reply
    return respond


@pytest.mark.parametrize("name", BAD_USAGE)
def test_implausible_usage_is_replaced_by_counted_tokens_and_flagged(run_cli, server: FakeOpenAIServer, name: str) -> None:
    """Every response reports impossible usage: each call records litellm's counted tokens (``usage_source``
    counted, positive and small), names the fault in ``provider_fault``, and the terminal says so in one line."""
    server.script.respond = _usage(BAD_USAGE[name])

    result = run_cli("--no-cache", scenario="smoke-0[123]*", arms=ARMS)

    assert result.code in (0, 1), result.err
    calls = [call for r in result.records() for call in r.model_calls]
    assert calls and all(r.status == "ok" for r in result.records())
    for call in calls:
        assert call.usage_source == "counted"
        assert 0 < call.prompt_tokens < 100_000 and 0 < call.completion_tokens < 100_000
        assert call.provider_fault and call.provider_fault.startswith("usage ")
    assert "had implausible provider usage" in result.err and "Traceback" not in result.err
    assert "-1,000" not in result.out and "1,000,000,000,000" not in result.out  # the tokens per sample in the table


def test_plausible_usage_is_kept_as_reported(run_cli, server: FakeOpenAIServer) -> None:
    """The fake server's ordinary usage (4,242 + 17 tokens) is recorded as the response's, with no fault."""
    result = run_cli("--no-cache")

    calls = result.record("recall").model_calls
    assert [(c.prompt_tokens, c.completion_tokens, c.usage_source, c.provider_fault) for c in calls] == [(4242, 17, "response", None)] * 2


def _budget_run(tmp_path: Path, name: str, respond: Any) -> tuple[int, int, list[Any]]:
    """A run priced as gpt-4o-mini (litellm knows its price) with --max-cost-usd 0.004, one sample at a time:
    (exit code, requests made, records)."""
    from harness.cli import main

    with FakeOpenAIServer(Script(respond=respond)) as server:
        code = main(["run", "--model", "openai/gpt-4o-mini", "--api-base", server.base_url, "--scenarios", str(SMOKE),
                     "--filter", "smoke-0[12345]*", "--arms", *ARMS, "--out", str(tmp_path / name), "--no-cache",
                     "--max-concurrency", "1", "--max-cost-usd", "0.004", "--no-progress"])
        made = len(server.requests)
    return code, made, scan_results(tmp_path / name / "results.jsonl").records


def test_negative_usage_does_not_switch_off_max_cost_usd(tmp_path: Path) -> None:
    """A first response reporting prompt_tokens -1,000,000 (a negative cost) does not buy more calls: the run stops
    at --max-cost-usd after as many calls as the same run whose first response reports no usage (both counted),
    and no recorded cost is negative."""
    counted_code, counted_calls, _ = _budget_run(tmp_path, "counted", _usage({"prompt_tokens": 0, "completion_tokens": 0}, times=1))
    assert counted_code == 3 and counted_calls < 15  # stopped at the budget
    code, calls, records = _budget_run(tmp_path, "lying", _usage({"prompt_tokens": -1_000_000}, times=1))

    assert code == 3
    assert calls == counted_calls
    costs = [c.cost_usd for r in records for c in r.model_calls]
    assert costs and all(c is not None and c >= 0 for c in costs)
    assert records[0].model_calls[0].provider_fault == "usage prompt_tokens -1000000 is negative: counted instead"
