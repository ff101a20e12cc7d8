"""A summary's aggregate tables checked against its samples (harness.runs.table_check): each way they can differ,
named in one line, and every kind of run the report writes agreeing with itself."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.analysis import VerdictConfig
from harness.report import build_report
from harness.runs.table_check import TABLES, recomputed_tables, scores_format_problem, table_disagreement
from tests.runs.compare_factories import synthetic_run
from tests.score.scoring_factories import MODEL

#: The end of every disagreement message.
WHY = "(the file was edited, or built by another harness version)"


def _said(where: str, theirs: Any, mine: Any) -> str:
    """The message naming ``where`` (a path and its row's names), the summary's value and the samples'."""
    return f"its {where} is {theirs!r}, but the samples of scores.jsonl give {mine!r} {WHY}"


def _summary_and_rows(run: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return summary, rows


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:  # recall 9 of 10, history_only 2 of 10
    return synthetic_run(tmp_path_factory.mktemp("tables") / "run")


@pytest.fixture
def checked(run: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the summary, the tables its samples give), untouched: a test edits the summary."""
    summary, rows = _summary_and_rows(run)
    return summary, recomputed_tables(rows, VerdictConfig(**summary["verdict"]["config"]))


def test_a_report_with_other_arms_compared_and_another_alpha_agrees_only_under_its_own_config(tmp_path: Path) -> None:
    """The arms compared and alpha come from the summary's verdict config: a report comparing history_only against
    recall first (then full_history) at alpha 0.1 is rebuilt as written, and the defaults would rebuild other
    tables."""
    run_dir = synthetic_run(tmp_path / "run", arms=("full_history", "history_only", "recall"))
    config = VerdictConfig(treatment_arm="history_only", baseline_arm="recall", alpha=0.1)
    build_report(run_dir, thresholds=config)
    summary, rows = _summary_and_rows(run_dir)
    tables = recomputed_tables(rows, config)
    assert table_disagreement(summary, tables) is None
    assert [(r["arm_a"], r["arm_b"]) for r in tables["mcnemar"]] == [("recall", "history_only"),
                                                                      ("full_history", "history_only")]
    for other in (VerdictConfig(), VerdictConfig(treatment_arm="history_only"),
                  VerdictConfig(treatment_arm="history_only", baseline_arm="recall")):
        assert table_disagreement(summary, recomputed_tables(rows, other)) is not None, other


def test_an_edited_value_is_named_with_its_row_and_both_values(checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    summary["metrics"][0]["value"] = 0.9
    assert table_disagreement(summary, tables) == _said(
        f"metrics[0].value (model {MODEL}, arm history_only, category all, metric continuity_accuracy)", 0.9, 0.2)


def test_a_value_inside_a_rows_list_is_named_with_the_row_it_is_in(
        checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    summary["latency"][1]["values_s"][3] = 9.0
    assert table_disagreement(summary, tables) == (
        f"its latency[1].values_s[3] (model {MODEL}, arm recall) is 9.0, but the samples of scores.jsonl give 1.031 "
        f"{WHY}")


def test_a_field_added_or_removed_in_a_row_is_named(checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    edited = copy.deepcopy(summary)
    edited["mcnemar"][0]["favourable"] = True
    assert table_disagreement(edited, tables) == (
        f"its mcnemar[0].favourable (model {MODEL}) is True, but the samples of scores.jsonl give '(missing)' {WHY}")
    del summary["mcnemar"][0]["fixed"]
    assert table_disagreement(summary, tables) == (
        f"its mcnemar[0].fixed (model {MODEL}) is '(missing)', but the samples of scores.jsonl give 7 {WHY}")


def test_a_row_added_or_removed_is_named_at_its_index(checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    edited = copy.deepcopy(summary)
    edited["flips"].append({"scenario_id": "fact-99"})
    assert table_disagreement(edited, tables) == (
        f"its flips[7] is 'a table', but the samples of scores.jsonl give '(missing)' {WHY}")
    removed = summary["flips"].pop()
    assert table_disagreement(summary, tables) == (
        f"its flips[6] is '(missing)', but the samples of scores.jsonl give {removed!r} {WHY}")


def test_a_table_missing_or_not_a_list_is_named_whole(checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    edited = copy.deepcopy(summary)
    del edited["added_latency"]
    assert table_disagreement(edited, tables) == _said("added_latency", "(missing)", tables["added_latency"])
    summary["min_detectable_effect"] = {"mde": 0.1}
    assert table_disagreement(summary, tables) == _said("min_detectable_effect", "a table",
                                                        tables["min_detectable_effect"])


def test_a_number_agrees_as_int_or_float_but_not_as_a_bool_or_a_string(
        checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """JSON writes 10 and 10.0 alike for a reader; ``true`` for 1 or ``"10"`` for 10 is another value."""
    summary, tables = checked
    assert summary["mcnemar"][0]["tied"] == 0 and summary["metrics"][0]["n"] == 10
    summary["metrics"][0]["n"] = 10.0
    summary["mcnemar"][0]["tied"] = 0.0
    assert table_disagreement(summary, tables) is None
    for table, field, value in (("mcnemar", "tied", False), ("metrics", "n", "10")):
        edited = copy.deepcopy(summary)
        edited[table][0][field] = value
        assert f"[0].{field} (model {MODEL}" in (table_disagreement(edited, tables) or ""), (field, value)
    tables["mcnemar"][0]["tied"] = False  # the samples' bool against the summary's number
    assert "mcnemar[0].tied (model" in (table_disagreement(summary, tables) or "")


def test_a_row_without_title_rebuilds_flips_titled_empty_as_the_report_writes_them(run: Path) -> None:
    summary, rows = _summary_and_rows(run)
    for row in rows:
        row["title"] = None
    flips = recomputed_tables(rows, VerdictConfig())["flips"]
    assert flips and {flip["title"] for flip in flips} == {""}


def test_the_protocols_headline_and_apart_groups_are_rebuilt_from_each_rows_place(run: Path) -> None:
    """A suite with a protocol: each row says whether its scenario counts in the headline and which groups report it
    apart; the rebuilt tables hold a headline row over exactly those and a paired row per group apart."""
    _, rows = _summary_and_rows(run)
    assert VerdictConfig().treatment_arm == "recall"
    for row in rows:
        number = int(row["scenario_id"].removeprefix("fact-"))
        row["headline"] = number < 6
        row["apart"] = ["adversarial"] if number >= 6 else []
        if number == 9:
            row["apart"].append("abstention")
    tables = recomputed_tables(rows, VerdictConfig())
    headline = [r for r in tables["paired"] if r["category"] == "headline" and r["metric"] == "continuity_accuracy"]
    assert [r["n_scenarios"] for r in headline] == [6]
    apart = {r["category"]: r["n_scenarios"] for r in tables["paired"] if r["metric"] == "continuity_accuracy"
             and r["category"].startswith("apart:")}
    assert apart == {"apart:abstention": 1, "apart:adversarial": 4}
    for row in rows:
        row["headline"] = None
        row["apart"] = []
    plain = recomputed_tables(rows, VerdictConfig())
    assert not [r for r in plain["paired"] if r["category"] == "headline" or r["category"].startswith("apart:")]


def test_scores_in_an_older_format_or_a_damaged_field_are_named_with_the_row(run: Path) -> None:
    """Format 3 (the report's) and 2 (before ``apart_gates``) are read; 1 and any other are named."""
    _, rows = _summary_and_rows(run)
    assert {row["schema_version"] for row in rows} == {3}
    assert scores_format_problem(rows) is None
    old = copy.deepcopy(rows)
    for row in old:
        row["schema_version"] = 2
        del row["apart_gates"]
    assert scores_format_problem(old) is None
    for version in (1, 4):
        old[2]["schema_version"] = version
        assert scores_format_problem(old) == (
            f"scores.jsonl row 3 has schema_version {version}, not 2 or 3: it holds no whole sample scores to check "
            "the summary's tables against (written by an older report)")
    rows[4]["scores"][1]["passed"] = "maybe"
    assert scores_format_problem(rows) == (
        "scores.jsonl row 5: scores.1.passed: Input should be a valid boolean, unable to interpret input")


def test_every_table_the_report_writes_is_checked(checked: tuple[dict[str, Any], dict[str, Any]]) -> None:
    summary, tables = checked
    assert set(TABLES) == set(tables)
    for name in TABLES:
        edited = copy.deepcopy(summary)
        edited[name] = []
        assert (table_disagreement(edited, tables) or "").startswith(f"its {name}[0] is '(missing)'"), name


def test_a_row_is_named_by_whichever_naming_fields_it_has_and_an_unnamed_row_by_its_place_alone() -> None:
    """The message names a row by model, arm, baseline, treatment, category and metric where the row has them as
    text (a table of another shape, or one added later, is named as well as it can be)."""
    named = {"baseline": "history_only", "treatment": "recall", "arm": "recall", "n": 3, "value": 1}
    assert table_disagreement({"metrics": [{**named, "value": 2}]}, {"metrics": [named]}) == (
        f"its metrics[0].value (arm recall, baseline history_only, treatment recall) is 2, but the samples of "
        f"scores.jsonl give 1 {WHY}")
    empty: dict[str, Any] = {name: [] for name in TABLES}
    assert table_disagreement({**empty, "paired": [{"value": 2}]}, {**empty, "paired": [{"value": 1}]}) == (
        f"its paired[0].value is 2, but the samples of scores.jsonl give 1 {WHY}")
    nested = {"model": "m", "interval": {"low": 1}}  # a value in an object inside a row: named by the row
    assert table_disagreement({**empty, "paired": [{**nested, "interval": {"low": 2}}]}, {**empty, "paired": [nested]}) \
        == f"its paired[0].interval.low (model m) is 2, but the samples of scores.jsonl give 1 {WHY}"
