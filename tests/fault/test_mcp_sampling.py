"""MCP servers that ask the client for model calls (MCP sampling), as real subprocesses (``fake_mcp_server.py``).

Served with the run's model by default, each call is recorded in the sample's
record (``purpose: sampling``, with the phase it was made in), counted in the
systems table and reserved under ``--max-cost-usd`` like the agent's calls; a
request the config refuses, past its per-sample limit or past the cap is
refused and counted; a server that crashes after sampling leaves an error
record holding the calls it had served, so their cost stays on the run's books.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

from harness.memory_systems.mcp.connection import live_servers  # noqa: E402
from harness.records import RESULTS_FILE, scan_results  # noqa: E402
from harness.run.budget import recorded_cost  # noqa: E402
from tests.fault.test_mcp_faults import configs, fake_config, run  # noqa: E402, F401 - the configs fixture
from tests.integration.fake_openai_server import FakeOpenAIServer  # noqa: E402

#: What one request costs at the usage the fake OpenAI server reports (4,242 prompt and 17 completion tokens, gpt-4o-mini).
CALL_USD = 4242 * 0.15e-6 + 17 * 0.6e-6


def sampling_calls(record: dict, phase: str) -> list[dict]:
    """The record's served sampling calls of the probe (``probe``) or of the write phase (``write``)."""
    if phase == "probe":
        calls = record["model_calls"]
    else:
        calls = [c for s in (record.get("write_phase") or {}).get("sessions", []) for c in s["model_calls"]]
    return [c for c in calls if c.get("purpose") == "sampling"]


def named(record: dict, tool: str) -> list[dict]:
    """The record's calls of ``tool``, both phases."""
    written = [c for s in (record.get("write_phase") or {}).get("sessions", []) for c in s["tool_calls"]]
    return [c for c in [*written, *record["tool_calls"]] if c["name"] == tool]


def test_a_servers_requests_for_model_calls_are_served_by_the_runs_model_and_counted_in_their_phase(
        tmp_path: Path, configs: Path) -> None:
    """Fault: a product that asks the client for a model call in every save (write phase) and every search (probe);
    expected: each answered by the run's (offline) model, whose answer the server receives, each recorded as a model
    call ``purpose: sampling`` in the phase it was made in, with its tokens, and counted per sample in summary.json's
    ``systems`` (nothing refused); the agent's own calls stay apart."""
    arm = fake_config(configs, "fake-asks", "ok", env={"FAKE_SAMPLING": "both"})
    code, records, summary = run(tmp_path, arm)
    assert code in (0, 1) and [r["status"] for r in records] == ["ok"]
    (record,) = records
    saves, searches = named(record, "save_note"), named(record, "search_notes")
    assert saves and searches
    assert len(sampling_calls(record, "write")) == len(saves) and len(sampling_calls(record, "probe")) == len(searches)
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in sampling_calls(record, "write"))
    assert all('"model_said": ""' not in c["result_text"] for c in searches)  # the server got the model's answer
    assert record["sampling_refused"] == 0 and any(c.get("purpose") is None for c in record["model_calls"])
    row = next(r for r in summary["systems"] if r["arm"] == arm)
    served = sampling_calls(record, "write") + sampling_calls(record, "probe")
    assert row["sampling_calls"] == len(served) and row["sampling_refused"] == 0
    assert row["sampling_tokens"] == sum(c["prompt_tokens"] + c["completion_tokens"] for c in served)
    assert live_servers() == {}


def test_a_config_that_refuses_sampling_and_a_sample_past_its_limit_refuse_each_request_and_count_it(
        tmp_path: Path, configs: Path) -> None:
    """Fault: a product asking for a model call in every search and save, under an arm that refuses sampling, and
    under one that serves at most one per sample; expected: the first refuses every request, the second serves one
    and refuses the rest, each refusal counted per sample in the record and the systems table (the product shows
    that it went without); an arm that cannot ask has no count."""
    refusing = fake_config(configs, "fake-refused", "ok", env={"FAKE_SAMPLING": "both"})
    limited = fake_config(configs, "fake-limited", "ok", env={"FAKE_SAMPLING": "both"})
    for name, sampling in (("fake-refused", "mode: refuse"), ("fake-limited", "max_calls: 1")):
        path = configs / f"{name}.yaml"
        path.write_text(path.read_text(encoding="utf-8") + f"sampling: {{{sampling}}}\n", encoding="utf-8")
    code, records, summary = run(tmp_path, refusing, limited, "recall")
    assert code in (0, 1) and {r["status"] for r in records} == {"ok"}
    by_arm = {r["arm"]: r for r in records}
    asked = len(named(by_arm[refusing], "save_note")) + len(named(by_arm[refusing], "search_notes"))
    assert asked >= 2 and by_arm[refusing]["sampling_refused"] == asked
    assert sampling_calls(by_arm[refusing], "write") == [] and sampling_calls(by_arm[refusing], "probe") == []
    served = sampling_calls(by_arm[limited], "write") + sampling_calls(by_arm[limited], "probe")
    assert len(served) == 1 and by_arm[limited]["sampling_refused"] == asked - 1
    assert "sampling_refused" not in by_arm["recall"]
    rows = {r["arm"]: r for r in summary["systems"]}
    assert rows[refusing]["sampling_refused"] == asked and rows[refusing]["sampling_calls"] == 0
    assert rows[limited]["sampling_calls"] == 1 and "sampling_refused" not in rows["recall"]


def test_a_server_that_crashes_after_sampling_leaves_an_error_record_holding_the_calls_it_had_served(
        tmp_path: Path, configs: Path) -> None:
    """Fault: a product that asks for a model call in its first save and then exits mid-call; expected: the sample is
    an error record quoting the server's stderr that still holds the served call (``purpose: sampling``, its tokens)
    and the sampling counts, so what the sample spent is on the run's books (``--resume`` counts it)."""
    arm = fake_config(configs, "fake-asks-then-dies", "crash", env={"FAKE_SAMPLING": "save"})
    code, records, _ = run(tmp_path, arm)
    (record,) = records
    assert code == 2 and record["status"] == "error" and "crashing mid-call" in record["error"]["message"]
    served = [c for c in record["model_calls"] if c.get("purpose") == "sampling"]
    assert len(served) == 1 and served[0]["prompt_tokens"] > 0 and record["sampling_refused"] == 0
    assert live_servers() == {}


def _priced_run(tmp_path: Path, server: FakeOpenAIServer, arm: str, cap: str) -> tuple[int, list]:
    """The arm on one scenario with the fake OpenAI server's model (priced as gpt-4o-mini), no cache, under ``cap``."""
    flags = ("--model", "openai/gpt-4o-mini", "--api-base", server.base_url, "--no-cache", "--max-tokens", "1000",
             "--max-cost-usd", cap)
    code, _, _ = run(tmp_path, arm, flags=flags)
    return code, scan_results(tmp_path / "run" / RESULTS_FILE).records


def test_every_sampling_request_the_provider_sees_is_on_the_runs_books_even_when_the_server_crashes(
        tmp_path: Path, configs: Path, server: FakeOpenAIServer) -> None:
    """Fault: a priced model behind a fake OpenAI server, and a product that asks for a model call in each save and
    search; then one that crashes after its first sampled save; expected: every request the provider saw is a model
    call in the records (the agent's and the server's) and the recorded cost is what they cost, the crashed sample's
    call included, so a cap or ``--resume`` counts every dollar spent."""
    asks = fake_config(configs, "fake-priced", "ok", env={"FAKE_SAMPLING": "both"})
    code, records = _priced_run(tmp_path, server, asks, "1.0")
    (record,) = records
    served = [c for s in record.write_phase.sessions for c in s.model_calls] + list(record.model_calls)
    assert code in (0, 1) and record.status == "ok" and any(c.purpose == "sampling" for c in served)
    assert len(server.requests) == len(served)
    assert recorded_cost(records) == pytest.approx(len(server.requests) * CALL_USD)
    dies = fake_config(configs, "fake-priced-dies", "crash", env={"FAKE_SAMPLING": "save"})
    seen = len(server.requests)
    code, records = _priced_run(tmp_path / "crash", server, dies, "1.0")
    (record,) = records
    assert record.status == "error" and len(server.requests) - seen == 1
    assert recorded_cost(records) == pytest.approx(CALL_USD) and record.model_calls[0].purpose == "sampling"


def test_a_sampling_request_past_the_spending_cap_is_refused_and_never_reaches_the_provider(
        tmp_path: Path, configs: Path, server: FakeOpenAIServer) -> None:
    """Fault: a product that asks for a model call in its first save, under ``--max-cost-usd`` smaller than any call's
    worst case; expected: the request is refused before it reaches the provider (none seen), counted as refused, the
    run stops at the cap (exit 3), and nothing is recorded as spent."""
    arm = fake_config(configs, "fake-over-cap", "ok", env={"FAKE_SAMPLING": "save"})
    code, records = _priced_run(tmp_path, server, arm, "0.00001")
    assert code == 3 and len(server.requests) == 0
    (record,) = records
    assert record.sampling_refused is not None and record.sampling_refused >= 1
    assert recorded_cost(records) == 0.0
