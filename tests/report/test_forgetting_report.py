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


def test_the_summary_block_names_each_arms_mechanism_in_the_runs_arm_order() -> None:
    from harness.report.forgetting import forgetting_block
    from harness.score import SampleScores

    def sample(arm: str, asked: int) -> SampleScores:
        return SampleScores(sample_id=f"s/{arm}/m/0", scenario_id="s", category="project_fact", arm=arm, model="m",
                            epoch=0, status="ok", outcome="correct", should_abstain=False, forget_requests=asked)

    rows = forgetting_block([sample("recall", 1), sample("no_such_arm", 1), sample("history_only", 1)],
                            ["recall", "history_only", "no_such_arm"])
    assert [(r["arm"], r["mechanism"]) for r in rows] == [
        ("recall", "archive"), ("history_only", "none (no memory)"), ("no_such_arm", "unknown (system not installed)")]
    assert forgetting_block([sample("recall", 0)]) == []


def test_several_models_are_headings_and_each_arm_is_under_its_own() -> None:
    other = [{**r, "model": "a/first", "forget_requests": 12345} for r in ROWS[:1]]
    lines = forgetting_lines([*ROWS, *other])
    assert [line for line in lines if not line.startswith(" ")][1:] == ["a/first", "offline/reference"]
    assert lines[1] == "a/first" and lines[2].split()[0] == "history_only" and lines[2].split()[4] == "12345"
    assert [line.split()[0] for line in lines[4:]] == ["history_only", "named_memory"]
    # the asked column widens to its widest cell, right-aligned under its header
    assert lines[0].endswith("asked  calls  removed  retained  said".replace("asked", "asked".rjust(5)))
    assert lines[2].index("12345") + 5 == lines[0].index("asked") + len("asked") == lines[4].index(" 3 ") + 2
    assert forgetting_lines([]) == []


def test_a_long_mechanism_is_cut_to_fit_the_width_but_never_below_its_floor() -> None:
    long = [{**ROWS[1], "mechanism": "archive by exact key after a judge model confirms the request twice"}]
    lines = forgetting_lines(long, width=90)
    assert [len(line) for line in lines] == [90, 90]  # every column but the mechanism's is 16 + 37 wide
    assert lines[1][18:18 + 33] == "archive by exact key after a jud…"
    narrow = forgetting_lines(long, width=40)
    # MECHANISM_MAX: a cut below it would say nothing
    assert narrow[1][18:18 + 26] == "archive by exact key af…  " and len(narrow[1]) == 16 + 2 + 24 + 2 + 37
    fits = forgetting_lines([{**ROWS[1], "mechanism": "delete"}])
    assert fits[0].split("  ")[1].startswith("mechanism") and "delete " in fits[1] and "…" not in fits[1]
    no_mechanism = forgetting_lines([{**ROWS[1], "mechanism": None}])
    assert no_mechanism[1].split() == ["named_memory", "3", "3", "1", "5", "3"]


def test_the_html_section_sorts_models_keeps_samples_and_skips_what_is_not_a_row() -> None:
    rows = [{**ROWS[0], "model": "z/last"}, "not a row", *ROWS]
    tables = forgetting_section({"forgetting": rows})
    assert [t["model"] for t in tables] == ["offline/reference", "z/last"]
    assert [r["samples"] for r in tables[0]["rows"]] == [3, 3] and len(tables[1]["rows"]) == 1
    assert forgetting_section({"forgetting": None}) == []


def test_a_long_arm_name_widens_the_arm_column_by_its_indent_only_and_the_columns_stay_aligned() -> None:
    rows = [{**ROWS[1], "arm": "memory_document_dream", "mechanism": "archive superseded"}, ROWS[0]]
    header, dream, history = forgetting_lines(rows)
    assert dream.startswith("  memory_document_dream  archive superseded  ")
    assert header.startswith("forgetting · arm" + " " * 9 + "mechanism")
    assert header.index("mechanism") == dream.index("archive") == history.index("none (no")
    assert len({len(line) for line in (header, dream, history)}) == 1
