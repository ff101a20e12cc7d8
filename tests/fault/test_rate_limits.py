"""Rate limits and server errors at the start of a run: retried with backoff, never taken for a configuration error."""

from __future__ import annotations

import pytest

from harness.records import scan_results
from tests.integration.fake_openai_server import FakeOpenAIServer

ARMS = ("history_only", "recall", "full_history")


def test_a_burst_of_429_with_retry_after_at_the_start_loses_no_sample(run_cli, server: FakeOpenAIServer) -> None:
    """A 1.5 s burst of HTTP 429 (Retry-After 0.5 s) as the run starts: every sample is retried through it and ends ok; the run is not stopped."""
    server.script.fail_status, server.script.fail_for_s, server.script.retry_after_s = 429, 1.5, 0.5

    # Backoff alone (0.001 s x 2^n: under 0.02 s in all) gives up within the burst; 4 waits of Retry-After (2 s) outlast it.
    result = run_cli("--no-cache", "--retries", "4", "--retry-delay", "0.001", "--max-concurrency", "3", scenario="smoke-0[123]*", arms=ARMS)

    assert result.code == 0, result.err
    assert "stopped model" not in result.err and "Fix the model name" not in result.err
    records = result.records()
    assert len(records) == 9 and {r.status for r in records} == {"ok"}
    statuses = [seen.status for seen in server.requests]
    assert statuses.count(429) >= 3 and statuses[-1] == 200
    assert max(call.attempts for r in records for call in r.model_calls) > 1


@pytest.mark.parametrize("status", [429, 503])
def test_samples_that_exhaust_their_retries_on_429_or_5xx_at_the_start_do_not_stop_the_run(run_cli, server: FakeOpenAIServer, status: int) -> None:
    """The first four samples fail with 429/503 even after retries: the model is not stopped as misconfigured; the
    rest run and resume redoes the four."""
    server.script.fail_status, server.script.fail_times, server.script.retry_after_s = status, 4, 0

    result = run_cli("--no-cache", "--retries", "0", "--max-concurrency", "1", scenario="smoke-0[123]*", arms=ARMS)

    # 4 of 9 samples failed: over --max-error-rate, so the verdict is inconclusive and run exits 1 (not 2: not stopped)
    assert result.code == 1, result.err
    assert "errors: 4 of 9 samples" in result.out + result.err
    assert "stopped model" not in result.err and "Fix the model name" not in result.err
    records = result.records()
    assert len(records) == 9
    assert sum(r.status == "error" for r in records) == 4 and sum(r.status == "ok" for r in records) == 5

    from harness.cli import main

    assert main(["run", "--resume", str(result.run_dir), "--api-base", server.base_url, "--no-progress"]) == 0
    final = scan_results(result.run_dir / "results.jsonl")
    assert len(final.records) == 9 and {r.status for r in final.records} == {"ok"}


def test_bad_credentials_still_stop_the_model_early(run_cli, server: FakeOpenAIServer) -> None:
    """HTTP 401 on every call: the model is stopped after its first samples (a configuration error), with the fix and the resume command."""
    server.script.fail_status, server.script.fail_times = 401, None

    result = run_cli("--no-cache", "--max-concurrency", "1", scenario="smoke-0[123]*", arms=ARMS)

    assert result.code == 2
    assert len(result.records()) == 3 and len(server.requests) == 3
    assert "stopped model openai/fake" in result.err and "AuthenticationError" in result.err and "--resume" in result.err
