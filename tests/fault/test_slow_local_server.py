"""A local model server that serves one request at a time, slowly: timeouts lower the calls in flight (additive
increase, multiplicative decrease) until the server keeps up, so samples finish instead of failing every retry."""

from __future__ import annotations

import json

from tests.integration.fake_openai_server import FakeOpenAIServer

ARMS = ("history_only", "recall", "full_history")


def test_a_one_slot_server_gets_fewer_calls_in_flight_and_every_sample_finishes(run_cli, server: FakeOpenAIServer) -> None:
    """One request at a time, 0.5 s each (abandoned requests still served), --timeout 3, 6 retries and 8 samples in
    flight: the first wave's last calls time out (8 x 0.5 s > 3 s), the limit comes down (each change one line, and
    in run.json), and all 15 samples end ok (with a fixed 8 in flight, at --timeout 2, 4 of 15 failed every retry).
    The margins leave room for a loaded CI machine: at 2 in flight a call waits about 1 s of its 3."""
    server.script.serial, server.script.delay_s = True, 0.5

    result = run_cli("--no-cache", "--max-concurrency", "8", "--timeout", "3", "--retries", "6", "--retry-delay", "0.05",
                     scenario="smoke-0[12345]*", arms=ARMS)

    records = result.records()
    assert len(records) == 15
    assert [r.error.message for r in records if r.error] == []
    assert "model calls in flight 8 -> 4" in result.err
    adaptive = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))["parameters"]["adaptive_concurrency"]
    assert adaptive["max_concurrency"] == 8 and adaptive["lowest"] < 8
    assert [c["to"] for c in adaptive["changes"]][:1] == [4]


def test_a_timeout_error_names_the_settings_that_would_have_helped(run_cli, server: FakeOpenAIServer) -> None:
    """A server slower than --timeout even for one call: the sample's error says to give a longer --timeout; with
    several in flight it names --max-concurrency too."""
    server.script.serial, server.script.delay_s = True, 1.5

    result = run_cli("--no-cache", "--max-concurrency", "2", "--timeout", "0.5", "--retries", "1", "--retry-delay", "0.01",
                     scenario="smoke-01*", arms=("history_only", "full_history"))

    messages = [r.error.message for r in result.records() if r.error]
    assert messages and all("--timeout" in m for m in messages)
    assert any("--max-concurrency" in m for m in messages) or all("longer --timeout" in m for m in messages)
