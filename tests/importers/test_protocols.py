"""The importers write their benchmarks' published protocols into the suite's _defaults.yaml."""

from __future__ import annotations

from pathlib import Path

from harness.scenarios import load_suite
from tests.importers.importer_fixtures import imported, read_yaml


def test_locomo_writes_mem0s_protocol_categories_1_to_4_with_adversarial_apart(tmp_path: Path) -> None:
    out, _ = imported("locomo", tmp_path)
    protocol = read_yaml(out / "_defaults.yaml")["protocol"]
    assert protocol["headline"] == ["single_hop", "multi_hop", "temporal", "open_domain"]
    assert protocol["reported_apart"] == ["adversarial"]
    assert protocol["recent_history"] == {"kind": "last_sessions", "count": 1}
    assert protocol["category_order"] == ["single_hop", "multi_hop", "temporal", "open_domain", "adversarial"]
    scenarios = load_suite([out]).scenarios
    assert scenarios and all(s.protocol is not None and s.protocol.reported_apart == ["adversarial"] for s in scenarios)


def test_longmemeval_writes_abstention_apart_and_preference_judge_only(tmp_path: Path) -> None:
    out, _ = imported("longmemeval", tmp_path)
    protocol = read_yaml(out / "_defaults.yaml")["protocol"]
    assert protocol["abstention_apart"] is True and protocol["judge_only"] == ["single_session_preference"]
    assert protocol["recent_history"] == {"kind": "last_sessions", "count": 1}
    assert protocol["category_order"][:3] == ["single_session_user", "single_session_assistant",
                                              "single_session_preference"]
    suite = load_suite([out])
    assert not suite.errors and all(s.protocol is not None for s in suite.scenarios)


def test_the_suite_counts_answerable_probes_without_a_relevant_item(tmp_path: Path) -> None:
    import json

    from tests.importers.importer_fixtures import write_locomo

    out, _ = imported("locomo", tmp_path, write_locomo(tmp_path / "locomo10.json", samples=1, sessions=2, cite=False))
    counts = json.loads((out / "_suite.json").read_text(encoding="utf-8"))["counts"]
    assert counts["answerable_probes_without_relevant_item_by_category"] == {"open_domain": 2}
    assert "**2 answerable probes have no relevant item** (open_domain 2)" in (out / "SUITE.md").read_text(encoding="utf-8")
