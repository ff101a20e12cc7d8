"""The retrieval budget: its syntax, its bounds, and the one budget a run's suites may declare."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import (
    DEFAULT_RETRIEVAL_BUDGET,
    RetrievalBudget,
    RetrievalBudgetError,
    load_scenarios,
    parse_retrieval_budget,
    scenario_hash,
    suite_budget,
)

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "scenarios" / "smoke"


def test_a_budget_parses_both_keys_and_keeps_the_default_of_one_left_out() -> None:
    assert parse_retrieval_budget("top_k=30,chars=8000") == RetrievalBudget(top_k=30, chars=8000)
    assert parse_retrieval_budget(" chars = 6000 ") == RetrievalBudget(top_k=10, chars=6000)
    assert parse_retrieval_budget("top_k=3").label() == "top_k=3,chars=4000"
    assert DEFAULT_RETRIEVAL_BUDGET.record() == {"top_k": 10, "chars": 4000}


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty; give e.g. top_k=10,chars=4000"),
    ("top_k", "'top_k' is not key=value"),
    ("k=10", "unknown key 'k'; the keys are top_k and chars"),
    ("top_k=10,top_k=20", "top_k given twice"),
    ("top_k=ten", "top_k='ten' is not a whole number"),
    ("top_k=-1", "top_k='-1' is not a whole number"),
    ("top_k=0", "top_k=0 must be a whole number from 1 to 100"),
    ("top_k=101", "top_k=101 must be a whole number from 1 to 100"),
    ("chars=100", "chars=100 must be a whole number from 256 to 1000000"),
])
def test_a_bad_budget_is_refused_naming_the_key_and_value(text: str, message: str) -> None:
    with pytest.raises(RetrievalBudgetError) as caught:
        parse_retrieval_budget(text)
    assert str(caught.value).startswith("--retrieval-budget: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def write_suite(folder: Path, budget: str | None) -> Path:
    folder.mkdir(parents=True)
    for source in sorted(SMOKE.glob("*.yaml"))[:2]:
        (folder / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    if budget is not None:
        (folder / "_defaults.yaml").write_text(f"retrieval_budget: {budget}\n", encoding="utf-8")
    return folder


def test_a_suite_declares_its_budget_in_its_defaults(tmp_path: Path) -> None:
    scenarios = load_scenarios([write_suite(tmp_path / "s", "{top_k: 5, chars: 2000}")])
    assert {s.retrieval_budget for s in scenarios} == {RetrievalBudget(top_k=5, chars=2000)}
    assert suite_budget(scenarios) == RetrievalBudget(top_k=5, chars=2000)


def test_a_suite_without_a_budget_hashes_as_before_budgets_existed(tmp_path: Path) -> None:
    plain = load_scenarios([write_suite(tmp_path / "plain", None)])
    budgeted = load_scenarios([write_suite(tmp_path / "budgeted", "{top_k: 5}")])
    assert suite_budget(plain) is None
    assert [scenario_hash(s) for s in plain] == [scenario_hash(s) for s in load_scenarios([SMOKE])][:2]
    assert [scenario_hash(s) for s in plain] != [scenario_hash(s) for s in budgeted]  # a budget is part of the suite


def test_a_suite_budget_out_of_bounds_is_a_scenario_problem(tmp_path: Path) -> None:
    from harness.scenarios import ScenarioError

    with pytest.raises(ScenarioError) as caught:
        load_scenarios([write_suite(tmp_path / "s", "{top_k: 500}")])
    assert "retrieval_budget" in str(caught.value.problems or caught.value)


def test_scenarios_that_declare_different_budgets_are_refused_naming_both(tmp_path: Path) -> None:
    a = load_scenarios([write_suite(tmp_path / "a", "{top_k: 5}")])
    b = load_scenarios([write_suite(tmp_path / "b", "{top_k: 30}")])
    with pytest.raises(RetrievalBudgetError) as caught:
        suite_budget([a[0], b[0]])
    assert "top_k=5,chars=4000" in str(caught.value) and "top_k=30,chars=4000" in str(caught.value)
    with pytest.raises(RetrievalBudgetError, match="declares none"):
        suite_budget([a[0], *load_scenarios([SMOKE])])
