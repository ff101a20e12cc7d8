"""The starter suite in recall, recall_vector and recall_hybrid on the offline model and the lexical embedder, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, iter_records
from harness.scenarios import load_scenarios, probe_policy
from memory_tools import admission

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "scenarios" / "starter"
ARMS = ("recall", "recall_vector", "recall_hybrid")


@pytest.fixture(scope="module")
def starter_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.cli import main

    base = tmp_path_factory.mktemp("vector-starter")
    code = main(["run", "--scenarios", str(STARTER), "--arms", *ARMS, "--out", str(base / "run"),
                 "--cache-dir", str(base / "cache"), "--no-progress"])
    assert code in (0, 1)  # without history_only the verdict is inconclusive, never a crash
    return base / "run"


def _metric(run_dir: Path, arm: str, name: str) -> float:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    (value,) = [m["value"] for m in summary["metrics"] if m["arm"] == arm and m["category"] == "all" and m["metric"] == name]
    return value


def test_every_sample_of_the_three_arms_finishes(starter_run: Path) -> None:
    records = list(iter_records(starter_run / RESULTS_FILE))
    scenarios = {s.id for s in load_scenarios([STARTER])}
    assert {(r.scenario_id, r.arm) for r in records} == {(s, a) for s in scenarios for a in ARMS}
    assert all(r.status == "ok" for r in records)


def test_the_vector_arms_offer_recall_s_tools_and_record_the_lexical_embedder(starter_run: Path) -> None:
    records = list(iter_records(starter_run / RESULTS_FILE))
    offered = {(r.scenario_id, r.arm): r.tools_offered for r in records}
    for record in records:
        assert record.tools_offered == offered[(record.scenario_id, "recall")]
        if record.arm == "recall":
            assert record.embedding is None
        else:
            assert record.embedding is not None and record.embedding.model == "lexical"


def test_policy_denied_probes_stay_cold_in_the_vector_arms(starter_run: Path) -> None:
    scenarios = {s.id: s for s in load_scenarios([STARTER])}
    denied = {sid for sid, s in scenarios.items() if admission(*probe_policy(s)) is not None}
    assert denied, "the starter suite has policy-denied probes"
    for record in iter_records(starter_run / RESULTS_FILE):
        if record.scenario_id in denied and record.arm != "recall":
            # the passages were indexed when the store was built (ingest); the denied probe embedded no query
            assert record.tools_offered == [] and record.embedding.texts == record.ingest.embedding_texts
            assert not any(call.storage_read for call in record.tool_calls)


def test_no_tool_level_leak_and_disclosures_are_the_results_shown(starter_run: Path) -> None:
    for arm in ARMS:
        assert _metric(starter_run, arm, "tool_leakage_count") == 0
    for record in iter_records(starter_run / RESULTS_FILE):
        for call in record.tool_calls:
            if call.name == "memory_search" and call.status == "ok":
                shown = [r["itemId"] for r in json.loads(call.result_text)["results"]]
                assert call.disclosed_item_ids == shown


def test_vectors_find_items_the_key_search_misses(starter_run: Path) -> None:
    # the seed's measured failure of exact/prefix keys: worded differently from the keys, found by content
    assert _metric(starter_run, "recall_vector", "retrieved_recall") > _metric(starter_run, "recall", "retrieved_recall")


def test_the_run_records_the_embedder_in_run_json(starter_run: Path) -> None:
    parameters = json.loads((starter_run / "run.json").read_text(encoding="utf-8"))["parameters"]
    assert (parameters["embedding_model"], parameters["embedding_prefix"]) == ("lexical", "none")
