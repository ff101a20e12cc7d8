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
