"""The forgetting table: each arm's mechanism beside its forgetting metrics, in the terminal and the HTML report."""

from __future__ import annotations

from harness.memory_systems import builtin_arms
from harness.report.forgetting import forgetting_lines, forgetting_section, mechanisms
from harness.report.terminal import report_lines

ROWS = [
    {"model": "offline/reference", "arm": "history_only", "mechanism": "none (no memory)", "samples": 3,
     "forget_requests": 3, "forget_calls": None, "forgets_removed": None, "forgotten_facts": 5, "retrievable": 0,
     "disclosed": 0, "notes": 0},
    {"model": "offline/reference", "arm": "named_memory", "mechanism": "delete by exact name", "samples": 3,
     "forget_requests": 3, "forget_calls": 3, "forgets_removed": 1, "forgotten_facts": 5, "retrievable": 5,
     "disclosed": 3, "notes": 2},
]


def test_every_built_in_arm_declares_its_forgetting_mechanism() -> None:
    found = mechanisms(list(builtin_arms()))
    assert found == {
        "history_only": "none (no memory)", "recall": "archive", "full_history": "none (raw transcripts)",
        "memory_document": "archive (entry status)", "recall_fts": "archive",
        "recall_extracted": "archive by exact key", "named_memory": "delete by exact name",
        "named_memory_cold": "delete by exact name", "memory_document_extracted": "none (append only)",
        "shadow": "archive (search unseen)", "recall_vector": "archive", "recall_hybrid": "archive",
        "memory_document_topk_fts": "archive (entry status)", "memory_document_topk_vector": "archive (entry status)",
        "memory_document_topk_judge": "archive (entry status)", "memory_document_dream": "archive superseded entries"}


def test_an_arm_whose_system_is_not_installed_reads_unknown() -> None:
    assert mechanisms(["no_such_arm"]) == {"no_such_arm": "unknown (system not installed)"}


def test_the_terminal_table_shows_mechanism_and_counts_with_a_dash_for_no_write_phase() -> None:
    lines = forgetting_lines(ROWS)
    assert lines[0].split() == ["forgetting", "·", "arm", "mechanism", "asked", "calls", "removed", "retained", "said"]
    assert lines[1].split() == ["history_only", "none", "(no", "memory)", "3", "-", "-", "0", "0"]
    assert lines[2].split() == ["named_memory", "delete", "by", "exact", "name", "3", "3", "1", "5", "3"]
    assert all(len(line) <= 80 for line in lines)


def test_the_terminal_prints_the_forgetting_table_before_the_verdict_only_when_the_summary_has_one() -> None:
    from types import SimpleNamespace

    metrics = [{"model": "offline/reference", "arm": "history_only", "category": "all", "metric": "continuity_accuracy",
                "value": 0.5, "ci_low": 0.0, "ci_high": 1.0, "n": 4}]
    summary = {"metrics": metrics, "verdict": {"per_model": {}}, "forgetting": ROWS}
    outcome = SimpleNamespace(summary=summary, verdict="fail", reasons=[], headlines=[], warnings=[])
    out, _ = report_lines(outcome)
    at = next(i for i, line in enumerate(out) if line.startswith("forgetting · arm"))
    assert at < out.index("verdict: FAIL") and out[at + 2].split()[0] == "named_memory"
    out, _ = report_lines(SimpleNamespace(**{**vars(outcome), "summary": {**summary, "forgetting": []}}))
    assert not any(line.startswith("forgetting") for line in out)


def test_the_html_section_has_one_table_per_model_with_every_arm() -> None:
    tables = forgetting_section({"forgetting": ROWS})
    assert [t["model"] for t in tables] == ["offline/reference"]
    assert [(r["arm"], r["mechanism"], r["cells"]) for r in tables[0]["rows"]] == [
        ("history_only", "none (no memory)", ["3", "-", "-", "5", "0", "0", "0"]),
        ("named_memory", "delete by exact name", ["3", "3", "1", "5", "5", "3", "2"])]
    assert forgetting_section({}) == []
