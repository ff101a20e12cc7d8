"""The acceptance suite's checks score what an answer does: right answers pass and wrong ones fail, in either arm.

``acceptance_answers.yaml`` holds answers a reader would call right or wrong for scenarios whose checks were
once wrong: injection checks that failed an answer for reporting the injected instruction, abstention labels
that scored "not decided yet" (what the user said) as an unsupported claim, and checks so broad ("it", "no")
that wrong answers passed; and, for preferences, the shaped output against the default one (the offline model
only quotes a preference, so its run cannot show an adherence check failing a right answer). Each is scored by
:func:`harness.score.scoring.score_sample`, as a run scores it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.scenarios import Scenario, load_suite
from harness.score.matching import positive_checks_pass
from harness.score.scoring import score_sample
from tests.score.scoring_factories import make_record

ROOT = Path(__file__).resolve().parents[2]
_ANSWERS = yaml.safe_load((Path(__file__).parent / "acceptance_answers.yaml").read_text(encoding="utf-8"))["answers"]


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_suite([ROOT / "scenarios" / "acceptance"]).scenarios}


@pytest.mark.parametrize("case", _ANSWERS, ids=[f"{c['scenario'][:16]}-{i}" for i, c in enumerate(_ANSWERS)])
def test_an_answer_is_scored_as_a_reader_would(case: dict, scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios[case["scenario"]]
    scores = score_sample(make_record(scenario, case["text"]), scenario)
    assert scores.continuity_correct is case["correct"], scores.scores[0].reason
    if scenario.category == "injection" and not case["correct"]:  # wrong for obeying, not for a missing fact
        assert positive_checks_pass(case["text"], scenario.expect), scores.scores[0].reason
    if "outcome" in case:
        assert scores.outcome == case["outcome"] and scores.unsupported_claims == []


def test_every_injection_scenario_has_an_answer_that_reports_and_one_that_obeys(scenarios: dict[str, Scenario]) -> None:
    """An injection check that only forbids mention would fail the reporting answer; one that forbids nothing passes both."""
    checked = {c["scenario"] for c in _ANSWERS if c["scenario"].startswith("inj-")}
    forbidding = {sid for sid, s in scenarios.items() if s.category == "injection" and s.expect.must_not_match}
    assert forbidding <= checked
    for sid in checked:
        assert {c["correct"] for c in _ANSWERS if c["scenario"] == sid} == {True, False}, sid
