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


def test_a_long_mechanism_wraps_under_its_column_and_keeps_every_word_and_number() -> None:
    said = "archive by exact key after a judge model confirms the request twice"
    lines = forgetting_lines([{**ROWS[1], "mechanism": said}], width=90)
    assert [len(line) for line in lines[:2]] == [90, 90]  # every column but the mechanism's is 16 + 37 wide
    assert lines[1] == "  named_memory    " + "archive by exact key after a".ljust(33) + "  " + lines[1][-37:]
    assert lines[1].split()[-5:] == ["3", "3", "1", "5", "3"]
    assert lines[2:] == [" " * 18 + "judge model confirms the request", " " * 18 + "twice"]
    # narrower than the numbers alone: the numbers stay whole, the mechanism keeps its narrowest column
    narrow = forgetting_lines([{**ROWS[1], "mechanism": said}], width=40)
    assert narrow[1] == "  named_memory    archive by  " + "    3      3        1         5     3"
    assert " ".join(line.strip() for line in narrow[2:]) == said.removeprefix("archive by ")
    fits = forgetting_lines([{**ROWS[1], "mechanism": "delete"}])
    assert fits[0].split("  ")[1].startswith("mechanism") and "delete " in fits[1] and len(fits) == 2
    no_mechanism = forgetting_lines([{**ROWS[1], "mechanism": None}])
    assert no_mechanism[1].split() == ["named_memory", "3", "3", "1", "5", "3"] and len(no_mechanism) == 2


def test_the_table_fits_80_columns_whatever_the_arm_names_and_mechanisms_and_loses_nothing() -> None:
    plugin = "a_plugin_arm_whose_name_is_longer_than_any_column_allows"
    declared = {**mechanisms(list(builtin_arms())), plugin: "tombstone_then_compact_after_the_window expires"}
    rows = [{**ROWS[1], "arm": arm, "mechanism": said, "forget_requests": i}
            for i, (arm, said) in enumerate(declared.items())]
    lines = forgetting_lines(rows)
    assert max(len(line) for line in lines) == 80
    dream = lines.index("  memory_document_dream")
    # the arm stands alone when its name would squeeze the mechanism; its numbers lead its row, the mechanism wraps
    assert lines[dream + 1:dream + 3] == [" " * 18 + "archive superseded          15      3        1         5     3",
                                          " " * 18 + "entries"]
    for i, (arm, said) in enumerate(declared.items()):  # every arm, every word, every number, in order
        at = next(n for n, line in enumerate(lines) if line.split()[:1] == [arm])
        row = at + (lines[at].strip() == arm)
        assert lines[row].split()[-5:] == [str(i), "3", "1", "5", "3"]
        end = next((n for n in range(row + 1, len(lines)) if lines[n][:18].strip() or lines[n][-1].isdigit()), None)
        pieces = [lines[row][18:-37].strip(), *(line.strip() for line in lines[row + 1:end])]
        assert "".join(pieces).replace(" ", "") == said.replace(" ", "")
        assert arm == plugin or " ".join(pieces).split() == said.split()  # a word is broken only past the column
    # the two arms of a default-sized run keep their rows, the mechanism column narrows to fit
    pair = forgetting_lines([r for r in rows if r["arm"] in ("memory_document_topk_judge", "memory_document_dream")])
    assert max(map(len, pair)) == 80 and pair[1].split()[:2] == ["memory_document_topk_judge", "archive"]
    assert pair[4].split()[:2] == ["memory_document_dream", "archive"] and pair[5].strip() == "superseded"


def test_an_arm_that_exactly_fills_its_column_keeps_its_row_and_a_hyphenated_word_stays_whole() -> None:
    # 80 - 37 numbers - 4 gaps leaves 39: the arm's 2 + 27 and the narrowest mechanism column (10) fill it exactly
    rows = [{**ROWS[1], "arm": "memory_document_topk_vector", "mechanism": "tombs re-index"},
            {**ROWS[0], "mechanism": "superseded"}]
    lines = forgetting_lines(rows)
    assert lines[1] == "  memory_document_topk_vector  tombs       " + "    3      3        1         5     3"
    assert lines[2] == " " * 31 + "re-index" and lines[3].split()[:2] == ["history_only", "superseded"]
    assert max(map(len, lines)) == 80


def test_the_html_section_sorts_models_keeps_samples_and_skips_what_is_not_a_row() -> None:
    rows = [{**ROWS[0], "model": "z/last"}, "not a row", *ROWS]
    tables = forgetting_section({"forgetting": rows})
    assert [t["model"] for t in tables] == ["offline/reference", "z/last"]
    assert [r["samples"] for r in tables[0]["rows"]] == [3, 3] and len(tables[1]["rows"]) == 1
    assert forgetting_section({"forgetting": None}) == []


def test_a_long_arm_name_widens_the_arm_column_by_its_indent_only_and_the_columns_stay_aligned() -> None:
    rows = [{**ROWS[1], "arm": "memory_document_dream", "mechanism": "archive oldest"}, ROWS[0]]
    header, dream, history = forgetting_lines(rows)
    assert dream.startswith("  memory_document_dream  archive oldest    ")
    assert header.startswith("forgetting · arm" + " " * 9 + "mechanism")
    assert header.index("mechanism") == dream.index("archive") == history.index("none (no")
    assert len({len(line) for line in (header, dream, history)}) == 1
