"""The systems table: one row per arm, read from the metrics it must agree with, and the per-call search latency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.records import ArmFingerprint, RunManifest
from harness.report.systems import SYSTEM_COLUMNS, systems_block, systems_lines, systems_section
from tests.score.scoring_factories import MODEL, make_record, make_scenario, tool_call

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


@pytest.fixture(scope="module")
def head_to_head(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A smoke run of three systems (two memory arms) and what `run` printed."""
    tmp = tmp_path_factory.mktemp("systems")
    out = tmp / "run"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(["run", "--scenarios", str(SMOKE), "--out", str(out), "--cache-dir", str(tmp / "cache"), "--no-progress",
              "--arms", "history_only", "recall", "recall_fts"])
    return out, printed.getvalue()


def test_the_systems_table_has_one_row_per_arm_agreeing_with_the_metrics(head_to_head: tuple[Path, str]) -> None:
    summary = json.loads((head_to_head[0] / "summary.json").read_text(encoding="utf-8"))
    rows = summary["systems"]
    assert [r["arm"] for r in rows] == ["history_only", "recall", "recall_fts"]
    metrics = {(m["arm"], m["metric"]): m for m in summary["metrics"] if m["category"] == "all"}
    for row in rows:
        arm = row["arm"]
        assert row["continuity"]["value"] == metrics[(arm, "continuity_accuracy")]["value"]
        assert row["continuity"]["ci_low"] == metrics[(arm, "continuity_accuracy")]["ci_low"]
        assert row["unsupported_claim_rate"] == metrics[(arm, "unsupported_claim_rate")]["value"]
        assert row["retrieved_recall"] == metrics[(arm, "retrieved_recall")]["value"]
        assert row["retrieval_budget"] == {"top_k": 10, "chars": 4000}
        assert row["sees_session_times"] is True
    assert rows[0]["search_calls"] == 0 and rows[0]["search_latency_p50_ms"] is None
    assert rows[1]["search_calls"] > 0 and rows[1]["search_latency_p50_ms"] <= rows[1]["search_latency_p95_ms"]
    assert rows[1]["system"] == "memory_tools" and rows[2]["system"] == "memory_tools_fts"


def test_a_head_to_head_run_prints_the_systems_table_and_the_ladder_within_80_columns(
        head_to_head: tuple[Path, str]) -> None:
    printed = head_to_head[1].splitlines()
    start = next(i for i, line in enumerate(printed) if line == "systems, retrieval budget top_k=10,chars=4000:")
    table = printed[start:start + 5]
    assert [line.split()[0] for line in table[2:]] == ["history_only", "recall", "recall_fts"]
    assert all(len(line) <= 80 for line in table)
    assert any(line.startswith("which layer has earned its complexity") for line in printed)


def test_the_page_shows_the_systems_table_with_every_column(head_to_head: tuple[Path, str]) -> None:
    page = (head_to_head[0] / "index.html").read_text(encoding="utf-8")
    assert 'id="systems"' in page and 'id="layers"' in page
    for key, header in SYSTEM_COLUMNS:
        # the smoke suite asks to forget nothing: no forgetting column (test below)
        assert (f"<th scope=\"col\">{header}</th>" in page) is (key != "forgetting")


def manifest(fingerprints: dict[str, ArmFingerprint] | None = None) -> RunManifest:
    return RunManifest(run_id="r", harness_version="0.1.0", status="complete", started_at="x", models=[MODEL],
                       arms=["history_only", "recall"], epochs=1, seed=0, scenario_paths=[], scenario_ids=[],
                       suite_hash="x", parameters={"retrieval_budget": {"top_k": 10, "chars": 4000}},
                       arm_fingerprints=fingerprints or {})


def metric(arm: str, name: str, value: float, category: str = "all") -> dict:
    return {"model": MODEL, "arm": arm, "category": category, "metric": name, "value": value, "ci_low": value - 0.1,
            "ci_high": value + 0.1, "n": 10}


def test_search_latency_is_taken_over_each_memory_search_call_not_per_sample() -> None:
    """One sample makes nine fast searches, another one slow search: per call the p50 is fast."""
    scenario = make_scenario("fact-01")
    fast = [tool_call(["it-pg-version"], call_id=f"c{i}") for i in range(9)]
    slow = [tool_call(["it-pg-version"], call_id="s").model_copy(update={"elapsed_s": 0.5})]
    get = [tool_call([], call_id="g", name="memory_get").model_copy(update={"elapsed_s": 9.0})]
    records = [make_record(scenario, calls=fast + get), make_record(make_scenario("fact-02"), calls=slow)]
    rows = systems_block(manifest(), records, [metric("recall", "continuity_accuracy", 0.5)])
    assert rows[0]["search_calls"] == 10  # memory_get is not a search
    assert rows[0]["search_latency_p50_ms"] == 1.0 and rows[0]["search_latency_p95_ms"] == 500.0


def test_the_search_latency_interval_resamples_scenarios_not_calls() -> None:
    """Calls of one scenario share its memory and its load: they are one unit of the bootstrap, not independent.

    With every call from one scenario, each resample is that scenario whole, so the p50's interval has no width;
    resampled per call, it would spread from the fastest call to the slowest.
    """
    calls = [tool_call(["it-pg-version"], call_id=f"c{i}").model_copy(update={"elapsed_s": 0.01 * (i + 1)})
             for i in range(9)]
    (row,) = systems_block(manifest(), [make_record(make_scenario("fact-01"), calls=calls)],
                           [metric("recall", "continuity_accuracy", 0.5)])
    assert row["search_calls"] == 9 and row["search_latency_p50_ms"] == 50.0
    assert row["search_latency_p50_ci_ms"] == [50.0, 50.0]


def test_search_calls_of_a_failed_probe_are_not_counted_nor_timed() -> None:
    """A probe that errored after searching is no measurement of the system's search: its calls are left out."""
    ok = make_record(make_scenario("fact-01"), calls=[tool_call(["it-pg-version"], call_id="a")])
    slow = tool_call(["it-pg-version"], call_id="b").model_copy(update={"elapsed_s": 7.0})
    failed = make_record(make_scenario("fact-02"), calls=[slow, slow.model_copy(update={"call_id": "c"})], error=True)
    (row,) = systems_block(manifest(), [ok, failed], [metric("recall", "continuity_accuracy", 0.5)])
    assert row["search_calls"] == 1 and row["search_latency_p95_ms"] == 1.0


@pytest.mark.parametrize("name, counted", [("memory_search", True), ("recall", True), ("vector_search", True),
                                           ("memory_get", False), ("remember", False), ("search_notes", False)])
def test_a_search_call_is_a_memory_search_named_memorys_recall_or_a_plug_ins_search(name: str, counted: bool) -> None:
    call = tool_call(["it-pg-version"], call_id="a", name=name)
    (row,) = systems_block(manifest(), [make_record(make_scenario("fact-01"), calls=[call])],
                           [metric("recall", "continuity_accuracy", 0.5)])
    assert row["search_calls"] == int(counted)


def test_a_system_that_cannot_back_date_writes_is_marked_beside_its_temporal_accuracy() -> None:
    blind = ArmFingerprint(system="mem0", version="mem0ai 0.1", write_mode="agent",
                           retrieval_budget={"top_k": 10, "chars": 4000}, sees_session_times=False, config_hash="c" * 64)
    metrics = [metric("recall", "continuity_accuracy", 0.8), metric("recall", "continuity_accuracy", 0.2, "temporal")]
    summary = {"systems": systems_block(manifest({"recall": blind}), [], metrics),
               "run": {"parameters": {"retrieval_budget": {"top_k": 10, "chars": 4000}}}}
    row = summary["systems"][0]
    assert row["sees_session_times"] is False and row["temporal_continuity"]["value"] == 0.2
    section = systems_section(summary)
    assert section is not None and section["budget"] == "top_k=10,chars=4000"
    cells = dict(zip([key for key, _ in SYSTEM_COLUMNS], section["rows"][0]["cells"]))
    assert cells["session_times"] == "NO: writes stamped now (20% [10%, 30%])"
    assert cells["continuity"] == "80% [70%, 90%]"


def test_the_terminal_table_keeps_only_the_columns_that_fit() -> None:
    summary = {"systems": systems_block(manifest(), [], [metric("recall", "continuity_accuracy", 0.5)]),
               "run": {"parameters": {"retrieval_budget": {"top_k": 10, "chars": 4000}}}}
    assert all(len(line) <= 50 for line in systems_lines(summary, width=50))
    assert "search ms" in systems_lines(summary, width=80)[1] and "search ms" not in systems_lines(summary, width=50)[1]
    assert systems_lines({}) == [] and systems_section({}) is None


def test_with_a_suite_protocol_continuity_is_the_headlines_as_the_verdict_reads_it() -> None:
    """LoCoMo's adversarial category is reported apart: an arm that sees nothing must not lead by abstaining there."""
    metrics = [metric("history_only", "continuity_accuracy", 0.11),
               metric("history_only", "continuity_accuracy", 0.05, "headline"),
               metric("recall", "continuity_accuracy", 0.06), metric("recall", "continuity_accuracy", 0.08, "headline")]
    rows = systems_block(manifest(), [], metrics)
    assert [(r["arm"], r["continuity"]["value"], r["continuity_over"]) for r in rows] == [
        ("history_only", 0.05, "headline"), ("recall", 0.08, "headline")]
    lines = systems_lines({"systems": rows, "run": {"parameters": {"retrieval_budget": {"top_k": 10, "chars": 4000}}}})
    assert lines[0] == "systems, retrieval budget top_k=10,chars=4000; continuity over the headline:"
    assert all(len(line) <= 80 for line in lines)


def test_without_a_protocol_continuity_is_over_every_category() -> None:
    rows = systems_block(manifest(), [], [metric("recall", "continuity_accuracy", 0.5)])
    assert rows[0]["continuity"]["value"] == 0.5 and rows[0]["continuity_over"] == "all"


def test_every_arm_gets_its_forgetting_figures_where_a_scenario_asks_to_forget() -> None:
    """mem0 keeps forgotten facts and repeats some: the systems table shows it for that arm, not only for recall."""
    metrics = [metric(arm, "continuity_accuracy", 0.5) for arm in ("history_only", "recall")]
    metrics += [metric("history_only", "retained_after_forget_count", 9.0), metric("recall", "retained_after_forget_count", 0.0),
                metric("history_only", "answer_forgotten_rate", 0.5), metric("recall", "answer_forgotten_rate", 0.0)]
    summary = {"systems": systems_block(manifest(), [], metrics), "run": {}}
    section = systems_section(summary)
    assert section is not None and "forgotten: retained / said" in section["columns"]
    at = section["columns"].index("forgotten: retained / said")
    assert [r["cells"][at] for r in section["rows"]] == ["9 / 5", "0 / 0"]
    plain = {"systems": systems_block(manifest(), [], metrics[:2]), "run": {}}
    assert "forgotten: retained / said" not in systems_section(plain)["columns"]


_FIGURES = {"continuity_accuracy": 0.8, "unsupported_claim_rate": 0.1, "answer_leakage_rate": 0.05,
            "tool_leakage_count": 2.0, "retrieved_recall": 0.75, "retrieved_precision": 0.5, "prompt_tokens": 1200.0,
            "completion_tokens": 300.33, "write_prompt_tokens": 800.0, "write_completion_tokens": 55.5,
            "cost_usd": 0.0123, "retained_after_forget_count": 2.0, "answer_forgotten_rate": 0.3}


def _full_row() -> tuple[dict, list]:
    fingerprint = ArmFingerprint(system="mem0", version="mem0ai 0.1", write_mode="agent", config_hash="c" * 64,
                                 retrieval_budget={"top_k": 5, "chars": 2000}, sees_session_times=True,
                                 embedder={"model": "lexical"})
    metrics = [metric("recall", name, value) for name, value in _FIGURES.items()]
    metrics.append(metric("recall", "continuity_accuracy", 0.6, "temporal"))
    calls = [tool_call(["it-pg-version"], call_id=f"c{i}").model_copy(update={"elapsed_s": 0.002 * (i + 1)})
             for i in range(3)]
    records = [make_record(make_scenario("fact-01"), calls=calls[:2]), make_record(make_scenario("fact-02"), calls=calls[2:])]
    (row,) = systems_block(manifest({"recall": fingerprint}), records, metrics, {(MODEL, "recall"): 3})
    return row, records


def test_every_figure_of_a_systems_row_is_read_from_its_own_metric_and_the_arms_fingerprint() -> None:
    """Each column from its own metric row (a swapped name would show one system's leakage as its recall)."""
    from harness.report.accounting import accounting_by_arm

    row, records = _full_row()
    interval = lambda value: {"value": value, "ci_low": value - 0.1, "ci_high": value + 0.1, "n": 10}  # noqa: E731
    assert row == {
        "model": MODEL, "arm": "recall", "system": "mem0", "version": "mem0ai 0.1", "config_hash": "c" * 64,
        "embedder": {"model": "lexical"}, "retrieval_budget": {"top_k": 5, "chars": 2000},
        "continuity": interval(0.8), "continuity_over": "all", "unsupported_claim_rate": 0.1,
        "answer_leakage_rate": 0.05, "tool_leakage_count": 2.0, "retrieved_recall": 0.75, "retrieved_precision": 0.5,
        "uncredited_ids": 3, "probe_tokens": 1500.3, "write_tokens": 855.5, "search_calls": 3,
        "search_latency_p50_ms": 4.0, "search_latency_p95_ms": 6.0, "search_latency_p50_ci_ms": row["search_latency_p50_ci_ms"],
        "cost_usd": 0.0123, "sees_session_times": True, "temporal_continuity": interval(0.6),
        "retained_after_forget": 2.0, "forgotten_in_answers": 3, **accounting_by_arm(records).get((MODEL, "recall"), {})}
    low, high = row["search_latency_p50_ci_ms"]
    assert 2.0 <= low <= 4.0 <= high <= 6.0


def test_each_cell_of_the_systems_table_shows_its_figure_in_its_unit() -> None:
    from harness.report.systems import _cells

    row, _ = _full_row()
    cells = _cells(row)
    assert {k: cells[k] for k, _ in SYSTEM_COLUMNS[:10]} == {
        "continuity": "80% [70%, 90%]", "unsupported_claim_rate": "10%", "leakage": "5% / 2",
        "retrieved_recall": "75%", "retrieved_precision": "50%", "tokens": "1,500 / 856", "search_latency": "4.00 / 6.00",
        "cost_usd": "$0.0123", "session_times": "yes (60% [50%, 70%])", "forgetting": "2 / 3"}


def test_a_row_without_figures_shows_a_dash_in_every_cell() -> None:
    from harness.report.systems import _cells

    (row,) = systems_block(manifest(), [], [metric("recall", "continuity_accuracy", 0.5)])
    cells = _cells({**row, "continuity": {"value": 0.5}})
    assert row["system"] is None and row["retrieval_budget"] == {"top_k": 10, "chars": 4000}
    assert (row["probe_tokens"], row["write_tokens"], row["forgotten_in_answers"]) == (None, None, None)
    assert {k: cells[k] for k, _ in SYSTEM_COLUMNS[:10]} == {
        "continuity": "50%", "unsupported_claim_rate": "—", "leakage": "— / —", "retrieved_recall": "—",
        "retrieved_precision": "—", "tokens": "— / —", "search_latency": "—", "cost_usd": "—", "session_times": "—",
        "forgetting": "—"}


def test_a_run_without_a_recorded_budget_says_so_and_names_the_default() -> None:
    rows = systems_block(manifest(), [], [metric("recall", "continuity_accuracy", 0.5)])
    section = systems_section({"systems": rows, "run": {"parameters": {}}})
    assert section["budget"] == "not recorded (top_k=10,chars=4000)"
    assert section["rows"][0]["model"] == MODEL and section["rows"][0]["arm"] == "recall"
    assert section["rows"][0]["system"] == "—"
    lines = systems_lines({"systems": rows, "run": {"parameters": {"retrieval_budget": {"top_k": 3}}}})
    assert lines[0] == "systems, retrieval budget not recorded (top_k=10,chars=4000):"


def test_the_terminal_table_lists_the_arms_that_reported_ids_they_were_not_credited_with() -> None:
    metrics = [metric(arm, "continuity_accuracy", 0.5) for arm in ("history_only", "recall")]
    rows = systems_block(manifest(), [], metrics, {(MODEL, "recall"): 4})
    assert [r["uncredited_ids"] for r in rows] == [0, 4]
    lines = systems_lines({"systems": rows, "run": {}}, width=80)
    assert lines[1:4] == ["arm                 continuity [CI]   unsup   rec@k     search ms",
                          "history_only         50% [40%, 60%]       —       —             —",
                          "recall               50% [40%, 60%]       —       —             —"]
    assert lines[4] == "  ids reported but not credited (beyond top_k, or not shown): recall 4"
    assert len(systems_lines({"systems": rows[:1], "run": {}})) == 3



def test_search_latencies_are_in_milliseconds_to_three_places_with_an_interval_over_scenarios() -> None:
    """A failed probe first does not end the reading; scenarios of 1.23456, 2.34567 and 3.76543 ms: the p50 is the middle one,
    and its interval, resampling the three scenarios, has width."""
    failed = make_record(make_scenario("fact-00"), calls=[tool_call(["it-pg-version"], call_id="x")], error=True)
    records = [failed] + [
        make_record(make_scenario(f"fact-0{n}"), calls=[tool_call(["it-pg-version"], call_id=f"c{n}").model_copy(
            update={"elapsed_s": seconds})]) for n, seconds in ((1, 0.00123456), (2, 0.00234567), (3, 0.00376543))]
    (row,) = systems_block(manifest(), records, [metric("recall", "continuity_accuracy", 0.5)])
    assert (row["search_calls"], row["search_latency_p50_ms"], row["search_latency_p95_ms"]) == (3, 2.346, 3.765)
    assert row["search_latency_p50_ci_ms"] == [1.235, 3.765]


def test_a_half_open_interval_shows_the_value_alone_and_gives_no_latency_interval() -> None:
    import types

    from harness.report.systems import _cells, _ms_ci

    assert _cells({"continuity": {"value": 0.5, "ci_low": 0.4, "ci_high": None}})["continuity"] == "50%"
    assert _ms_ci(types.SimpleNamespace(value=0.002, ci_low=0.001, ci_high=None)) is None


def test_answers_repeating_a_forgotten_fact_need_both_the_rate_and_its_count() -> None:
    from harness.report.systems import _forgotten_answers

    assert _forgotten_answers({"value": 0.3, "n": 10}) == 3
    assert _forgotten_answers({"value": 0.3, "n": None}) is None and _forgotten_answers({"value": None, "n": 10}) is None


@pytest.mark.parametrize("arm_width, shown", [(27, True), (28, False)])
def test_the_search_column_is_kept_exactly_when_it_fits_80_columns(arm_width: int, shown: bool) -> None:
    """arm, then continuity (2 + 21), unsup (2 + 6), rec@k (2 + 6) and search ms (2 + 12): 53 columns past the arm."""
    lines = systems_lines({"systems": [{"arm": "a" * arm_width, "uncredited_ids": 0}]})
    assert ("search ms" in lines[1]) is shown and all(len(line) <= 80 for line in lines)
    assert len(lines[1]) == arm_width + (53 if shown else 39)


def test_every_arm_with_an_uncredited_id_is_listed() -> None:
    lines = systems_lines({"systems": [{"arm": "history_only", "uncredited_ids": 1}, {"arm": "recall", "uncredited_ids": 4},
                                       {"arm": "recall_fts", "uncredited_ids": 0}]})
    assert lines[-1] == "  ids reported but not credited (beyond top_k, or not shown): history_only 1, recall 4"


def test_the_page_section_names_each_rows_system_and_carries_the_contracts() -> None:
    from harness.report.contracts import contracts_section

    row, _ = _full_row()
    summary = {"systems": [row], "run": {}}
    section = systems_section(summary)
    assert section["rows"][0]["system"] == "mem0" and section["contracts"] == contracts_section(summary)
