"""Ingest and embedding cost per sample, the same way for every system, cached and uncached figures apart."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.report.accounting import accounting_by_arm, accounting_cells


def _record(arm: str, *, status: str = "ok", ingest: tuple[float, float] | None = (0.5, 0.0), embedding: dict[str, Any] | None = None,
            model: str = "m") -> Any:
    used = None
    if embedding is not None:
        used = SimpleNamespace(**{"calls": 1, "texts": 10, "cached": 0, "tokens": 0, "cost_usd": 0.0, "latency_s": 0.0,
                                  "cached_latency_s": 0.0, "cached_tokens": 0, "cached_cost_usd": 0.0, **embedding})
    log = None if ingest is None else SimpleNamespace(open_s=ingest[0], write_s=ingest[1])
    return SimpleNamespace(status=status, model=model, arm=arm, ingest=log, embedding=used)


def test_each_arm_gets_per_sample_means_of_its_ok_samples() -> None:
    rows = accounting_by_arm([
        _record("mem0", ingest=(0.8, 2.0), embedding={"calls": 4, "texts": 40, "latency_s": 1.0, "tokens": 100, "cost_usd": 0.01}),
        _record("mem0", ingest=(0.6, 1.0), embedding={"calls": 2, "texts": 20, "latency_s": 0.5, "tokens": 50, "cost_usd": 0.02}),
        _record("mem0", status="error", ingest=(9.0, 9.0), embedding={"calls": 99}),
        _record("recall", ingest=(0.02, 0.0)),
    ])
    mem0, recall = rows[("m", "mem0")], rows[("m", "recall")]
    assert mem0["ingest_s"] == pytest.approx(2.2) and mem0["open_s"] == pytest.approx(0.7) and mem0["write_s"] == pytest.approx(1.5)
    assert (mem0["embedding_calls"], mem0["embedding_texts"], mem0["embedding_tokens"]) == (3.0, 30.0, 75.0)
    assert mem0["embedding_s"] == pytest.approx(0.75) and mem0["embedding_cost_usd"] == pytest.approx(0.015)
    assert recall["ingest_s"] == pytest.approx(0.02) and recall["embedding_calls"] is None  # embeds nothing: no figure
    assert accounting_cells(recall) == {"ingest": "0.02", "embedding": "—", "embedding_cost": "—", "tool_calls": "0.0 · 0.0, —, 0"}


def test_an_arm_served_from_anothers_cache_reports_what_it_would_have_cost_uncached() -> None:
    rows = accounting_by_arm([
        _record("recall_vector", embedding={"calls": 1, "latency_s": 3.0, "tokens": 300, "cost_usd": 0.03}),
        _record("recall_hybrid", embedding={"calls": 0, "cached": 10, "latency_s": 0.001, "cached_latency_s": 3.0,
                                            "cached_tokens": 300, "cached_cost_usd": 0.03}),
    ])
    first, second = rows[("m", "recall_vector")], rows[("m", "recall_hybrid")]
    assert second["embedding_s"] == pytest.approx(0.001) and second["embedding_cached"] == 10.0  # what it paid: next to nothing
    assert second["embedding_s_uncached"] == pytest.approx(first["embedding_s_uncached"], abs=0.01)
    assert (second["embedding_tokens_uncached"], second["embedding_cost_usd_uncached"]) == (300.0, pytest.approx(0.03))
    assert accounting_cells(second)["embedding"] == "0.0 · 0.00 (3.00)"


def test_a_system_on_its_own_embedder_is_marked_in_the_table() -> None:
    own = {"embedder": {"source": "own", "model": "vendor-embed-v2", "prefix": None, "dimensions": None}, "embedding_calls": 1.0}
    assert accounting_cells(own)["embedding"] == "own embedder: vendor-embed-v2 (not the run's)"
    run = {**own, "embedder": {"source": "run", "model": "lexical"}, "embedding_s": 0.5, "embedding_s_uncached": 0.5}
    assert accounting_cells(run)["embedding"] == "1.0 · 0.50 (0.50)"


def test_a_sample_of_an_embedding_arm_that_embedded_nothing_counts_as_zero() -> None:
    rows = accounting_by_arm([_record("mem0", embedding={"calls": 4, "latency_s": 1.0}), _record("mem0")])
    assert rows[("m", "mem0")]["embedding_calls"] == 2.0 and rows[("m", "mem0")]["embedding_s"] == pytest.approx(0.5)


def test_an_offline_run_records_ingest_for_every_arm_and_embeddings_for_the_vector_arm(tmp_path: Path) -> None:
    from harness.cli import main

    out = tmp_path / "run"
    code = main(["run", "--scenarios", "scenarios/smoke", "--arms", "recall", "recall_vector", "--out", str(out),
                 "--no-cache", "--no-progress"])
    assert code in (0, 1)
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["ingest"]["open_s"] > 0 for r in records if r["status"] == "ok")
    vector = [r["embedding"] for r in records if r["arm"] == "recall_vector" and r.get("embedding")]
    assert vector and all(e["calls"] >= 1 for e in vector if e["texts"])  # the lexical embedder works in process: its batches are calls
    for record in (r for r in records if r["arm"] == "recall_vector" and r["status"] == "ok"):
        # the passages are embedded at ingest (one batch), the probe's searches add one query each, nothing more
        ingest, searches = record["ingest"], sum(c["name"] == "memory_search" and c["status"] == "ok" for c in record["tool_calls"])
        assert ingest["embedding_calls"] == 1 and ingest["embedding_texts"] > 0, record["sample_id"]
        assert record["embedding"]["texts"] - ingest["embedding_texts"] == searches, record["sample_id"]
    systems = {row["arm"]: row for row in json.loads((out / "summary.json").read_text(encoding="utf-8"))["systems"]}
    assert systems["recall"]["ingest_s"] > 0 and systems["recall"]["embedding_calls"] is None
    assert systems["recall_vector"]["embedding_calls"] >= 1 and systems["recall_vector"]["embedding_s_uncached"] >= 0


def _call(elapsed_s: float, text: str = "") -> Any:
    return SimpleNamespace(elapsed_s=elapsed_s, result_text=text)


def test_write_and_probe_tool_calls_their_latency_and_the_bytes_shown_are_per_sample_for_every_system() -> None:
    write = SimpleNamespace(sessions=[SimpleNamespace(tool_calls=[_call(0.010), _call(0.030)]), SimpleNamespace(tool_calls=[_call(0.020)])])
    first = _record("mcp:x")
    first.write_phase, first.tool_calls = write, [_call(0.100, "é" * 10)]  # 20 bytes in UTF-8, 10 characters
    second = _record("mcp:x")
    second.write_phase, second.tool_calls = None, [_call(0.040, "abcd"), _call(0.050, "")]
    row = accounting_by_arm([first, second])[("m", "mcp:x")]
    assert (row["write_tool_calls"], row["probe_tool_calls"], row["disclosed_bytes"]) == (1.5, 1.5, 12.0)
    assert row["tool_latency_p50_ms"] == pytest.approx(35.0) and row["tool_latency_p95_ms"] == pytest.approx(87.5)
    assert accounting_cells(row)["tool_calls"] == "1.5 · 1.5, 35.0 / 87.5, 12"


def test_sampling_requests_refused_are_a_per_sample_mean_shown_only_for_systems_that_can_ask() -> None:
    """Bug this guards: a product depending on MCP sampling looked like any other in the table (nothing counted)."""
    asked, quiet, builtin = _record("mcp:x"), _record("mcp:x"), _record("recall")
    asked.sampling_refused, quiet.sampling_refused = 3, 0
    for record in (asked, quiet, builtin):
        record.write_phase, record.tool_calls, record.model_calls = None, [_call(0.010)], []
    rows = accounting_by_arm([asked, quiet, builtin, _record("mcp:x", status="error")])
    assert rows[("m", "mcp:x")]["sampling_refused"] == 1.5 and "sampling_refused" not in rows[("m", "recall")]
    assert accounting_cells(rows[("m", "mcp:x")])["tool_calls"].endswith(", refused 1.5")
    assert "sampling" not in accounting_cells(rows[("m", "recall")])["tool_calls"]


def _model_call(purpose: str | None, tokens: tuple[int, int], cost: float, seconds: float, cached: bool = False) -> Any:
    return SimpleNamespace(purpose=purpose, prompt_tokens=tokens[0], completion_tokens=tokens[1], cost_usd=cost,
                           latency_s=seconds, cached=cached)


def test_sampling_calls_served_are_counted_per_sample_from_both_phases_apart_from_the_agents_calls() -> None:
    """Bug this guards: the model calls an MCP server had served (``purpose: sampling``) missing from the systems
    table (a product's model use looking free), or the agent's own calls counted as the server's."""
    probe_and_write, none_served = _record("mcp:x"), _record("mcp:x")
    probe_and_write.sampling_refused, none_served.sampling_refused = 1, 0
    probe_and_write.model_calls = [_model_call(None, (500, 40), 0.5, 2.0), _model_call("sampling", (50, 10), 0.01, 0.25)]
    probe_and_write.write_phase = SimpleNamespace(sessions=[SimpleNamespace(tool_calls=[])], model_calls=[
        _model_call("sampling", (30, 10), 0.02, 0.5), _model_call("sampling", (20, 0), 0.03, 0.25, cached=True)])
    none_served.model_calls, none_served.write_phase = [_model_call(None, (400, 20), 0.4, 1.0)], None
    for record in (probe_and_write, none_served):
        record.tool_calls = []
    row = accounting_by_arm([probe_and_write, none_served])[("m", "mcp:x")]
    assert (row["sampling_calls"], row["sampling_tokens"]) == (1.5, 60.0)  # (3 + 0) calls, (60 + 40 + 20 + 0) tokens
    assert row["sampling_cost_usd"] == pytest.approx(0.015) and row["sampling_s"] == pytest.approx(0.5)  # cached: free
    assert accounting_cells(row)["tool_calls"].endswith(", sampling 1.5 calls · 60 tokens · $0.0150 · 0.50 s, refused 0.5")


def test_figures_that_are_zero_stay_zero_and_nothing_cached_adds_nothing_uncached() -> None:
    """Bug this guards: a zero figure (no text cached, no tokens, no cost) read as one, or an arm that paid for
    everything itself given an uncached figure above what it paid."""
    rows = accounting_by_arm([_record("recall_vector", embedding={"calls": 2, "texts": 6, "tokens": 40, "cost_usd": 0.004,
                                                                 "latency_s": 0.2}),
                              _record("recall_vector", embedding={"calls": 0, "texts": 0, "latency_s": 0.0})])
    row = rows[("m", "recall_vector")]
    assert (row["embedding_calls"], row["embedding_texts"], row["embedding_cached"]) == (1.0, 3.0, 0.0)
    assert (row["embedding_tokens"], row["embedding_tokens_uncached"]) == (20.0, 20.0)
    assert row["embedding_cost_usd"] == pytest.approx(0.002) and row["embedding_cost_usd_uncached"] == pytest.approx(0.002)
    assert row["embedding_s"] == pytest.approx(0.1) and row["embedding_s_uncached"] == pytest.approx(0.1)
    free = accounting_by_arm([_record("recall_vector", embedding={"calls": 0, "texts": 0})])[("m", "recall_vector")]
    assert (free["embedding_calls"], free["embedding_texts"], free["embedding_tokens"], free["embedding_s"]) == (0.0, 0.0, 0.0, 0.0)
    assert (free["embedding_tokens_uncached"], free["embedding_cost_usd_uncached"], free["embedding_s_uncached"]) == (0.0, 0.0, 0.0)
    assert accounting_cells(free)["embedding"] == "0.0 · 0.00 (0.00)" and accounting_cells(free)["embedding_cost"] == "0 · $0.0000"


def test_a_sampling_call_without_a_price_or_with_a_negative_one_costs_nothing() -> None:
    """Bug this guards: an unpriced served request (cost None) breaking the table, or a provider's negative cost
    (a refund, a rounding) lowering what a product's sampling cost."""
    record = _record("mcp:x")
    record.sampling_refused, record.tool_calls, record.write_phase = 0, [], None
    record.model_calls = [_model_call("sampling", (10, 5), None, 0.5),  # type: ignore[arg-type]
                          _model_call("sampling", (10, 5), -0.5, 0.5), _model_call("sampling", (10, 5), 0.25, 0.5)]
    row = accounting_by_arm([record])[("m", "mcp:x")]
    assert (row["sampling_calls"], row["sampling_tokens"], row["sampling_s"]) == (3.0, 45.0, 1.5)
    assert row["sampling_cost_usd"] == pytest.approx(0.25)


def test_a_row_without_figures_shows_a_dash_in_every_column() -> None:
    assert accounting_cells({}) == {"ingest": "—", "embedding": "—", "embedding_cost": "—", "tool_calls": "—"}
    assert accounting_cells({"write_tool_calls": 1.0})["tool_calls"] == "—"  # one of the two counts alone
    assert accounting_cells({"probe_tool_calls": 1.0})["tool_calls"] == "—"


def test_the_cells_show_tokens_without_a_price_and_zero_bytes_and_zero_sampling_as_zero() -> None:
    """Each cell's exact text: tokens with no cost shown alone, bytes not recorded as 0, a server that asked for
    nothing as 0.0 calls and 0 tokens (not hidden, not invented), and an unpriced sampling cost left out."""
    row = {"ingest_s": 1.234, "embedding_calls": 2.0, "embedding_s": None, "embedding_s_uncached": 1.5,
           "embedding_tokens": 12345.0, "embedding_cost_usd": None, "write_tool_calls": 0.0, "probe_tool_calls": 2.0,
           "tool_latency_p50_ms": 3.0, "tool_latency_p95_ms": None, "disclosed_bytes": None,
           "sampling_refused": 0.0, "sampling_calls": 0.0, "sampling_tokens": 0.0, "sampling_cost_usd": None,
           "sampling_s": 0.0}
    assert accounting_cells(row) == {
        "ingest": "1.23", "embedding": "2.0 · — (1.50)", "embedding_cost": "12,345",
        "tool_calls": "0.0 · 2.0, —, 0, sampling 0.0 calls · 0 tokens · 0.00 s, refused 0.0"}
    row.update(embedding_cost_usd=0.5, tool_latency_p95_ms=4.26, disclosed_bytes=1234.0, sampling_calls=None,
               sampling_tokens=None, sampling_cost_usd=0.01, sampling_s=None, sampling_refused=2.0)
    cells = accounting_cells(row)
    assert cells["embedding_cost"] == "12,345 · $0.5000"
    assert cells["tool_calls"] == "0.0 · 2.0, 3.0 / 4.3, 1,234, sampling 0.0 calls · 0 tokens · $0.0100 · — s, refused 2.0"


def test_write_tool_calls_and_probe_tool_calls_are_counted_apart() -> None:
    """Bug this guards: the write phase's calls shown as the probe's (or the reverse), hiding a system that spends
    its calls writing rather than searching."""
    record = _record("mcp:x")
    record.write_phase = SimpleNamespace(sessions=[SimpleNamespace(tool_calls=[_call(0.001), _call(0.001)]),
                                                   SimpleNamespace(tool_calls=[_call(0.001), _call(0.001)])])
    record.tool_calls = [_call(0.001, "ab")]
    row = accounting_by_arm([record])[("m", "mcp:x")]
    assert (row["write_tool_calls"], row["probe_tool_calls"], row["disclosed_bytes"]) == (4.0, 1.0, 2.0)
    assert accounting_cells(row)["tool_calls"] == "4.0 · 1.0, 1.0 / 1.0, 2"


def test_a_system_that_embeds_nothing_has_no_embedding_figure_at_all_not_zeros() -> None:
    """Bug this guards: an arm without embeddings given 0 tokens and $0 uncached in ``summary.json``, as if it had
    embedded for free, beside the arms that did."""
    row = accounting_by_arm([_record("recall"), _record("recall", ingest=None)])[("m", "recall")]
    embedding = ("embedding_calls", "embedding_texts", "embedding_cached", "embedding_tokens", "embedding_cost_usd",
                 "embedding_s", "embedding_s_uncached", "embedding_tokens_uncached", "embedding_cost_usd_uncached")
    assert {name: row[name] for name in embedding} == dict.fromkeys(embedding)
    assert (row["ingest_s"], row["open_s"], row["write_s"]) == (0.5, 0.5, 0.0)  # of the one sample that recorded it
