"""What a reader of one sample's scores is told, from hand-built tables; each test names the bug it was watched failing against.

Each case builds a scenario and a record by hand and pins the complete
``scores`` list of :func:`harness.score.scoring.score_sample` (every Score's name,
value, passed and reason) and the outcome. Together the cases reach every
branch of ``score_sample``: an error record, an unanswerable scenario answered
and abstained on, adherence-only scenarios, positive checks passing and
failing, unsupported claims of each kind, stale values mentioned as
superseded, a rubric judge passing and failing, a grounding judge finding
nothing, something and an unreadable reply, token F1 and retrieval figures.
Values are distinct (two failures where a reason joins them, precision apart
from recall, F1 with more than four decimals) so that a swapped field, a lost
separator or a changed word shows in the exact text. See
docs/mutation-testing.md for the mutants each case was watched killing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.records import SampleRecord, ToolCallLog, WritePhaseLog, WriteSessionLog
from harness.scenarios.models import Scenario
from harness.score.grounding import GroundingVerdict
from harness.score.judge import JudgeVerdict
from harness.score.matching import contains, find_spans, states_expected_fact
from harness.score.scoring import score_sample
from tests.score.scoring_factories import make_record, make_scenario, tool_call

Row = tuple[str, Any, Any, str]

NO_CLAIMS: Row = ("unsupported_claims", 0, True, "none")
NO_LEAKS: Row = ("tool_leakage", 0, True, "none")
ANSWERED: Row = ("abstained", False, None, "an answer expected; the answer does not abstain")
I_DONT_KNOW = ' (sentence 1: "i don\'t know" (not know))'
HEDGE = ' (sentence 1: "i\'m not sure" (hedge: not sure))'

_CANARIES = [{"text": "Postgres 13", "kind": "stale"}, {"text": "Falcon-7 launch code", "kind": "leakage"},
             {"text": "Postgres 16", "kind": "invented"}]


def _rows(scores: Any) -> list[Row]:
    return [(s.name, s.value, s.passed, s.reason) for s in scores.scores]


def _judge(verdict: str, reason: str) -> JudgeVerdict:
    return JudgeVerdict(verdict=verdict, reason=reason, raw=verdict.upper(), model="judge/m")  # type: ignore[arg-type]


def _grounding(*unsupported: str, malformed: str | None = None) -> GroundingVerdict:
    return GroundingVerdict(status="malformed" if malformed else "ok", unsupported=list(unsupported),
                            error=malformed, raw="{}", model="grounding/m")


def _adherence_only(**expect: Any) -> Scenario:
    """A preference scenario: no top-level positive check, the preferred indentation under ``adherence``."""
    return make_scenario("style-01", category="preference",
                         expect={"must_contain_any": [], "relevant_items": [],
                                 "adherence": {"must_contain_any": ["4 spaces"]}} | expect)


@dataclass(frozen=True)
class Case:
    scenario: Scenario
    answer: str | None
    outcome: str
    rows: list[Row]
    arm: str = "history_only"  # no tools offered, so no retrieval score unless a case asks for one
    calls: list[ToolCallLog] = field(default_factory=list)
    messages: list[dict[str, Any]] | None = None
    judge: JudgeVerdict | None = None
    grounding: GroundingVerdict | None = None
    error: bool = False

    def record(self) -> SampleRecord:
        record = make_record(self.scenario, self.answer, arm=self.arm, calls=self.calls, error=self.error)
        return record if self.messages is None else record.model_copy(update={"messages": self.messages})

    def score(self) -> Any:
        return score_sample(self.record(), self.scenario, judge=self.judge, grounding=self.grounding)


UNANSWERABLE = make_scenario("gap-01", abstain=True, category="abstention")
FACT = make_scenario()
TWO_STALE = make_scenario(expect={"canaries": [{"text": "Postgres 13", "kind": "stale"},
                                               {"text": "Postgres 12", "kind": "stale"},
                                               {"text": "Postgres 16", "kind": "invented"}]})
RUBRIC = make_scenario(expect={"rubric": "Names Postgres 15 as the billing database."})
PORT = make_scenario("port-01", expect={"must_contain_any": ["5432"], "relevant_items": [],
                                        "canaries": [{"text": "5433", "kind": "stale"}]})
EVERY_CLAIM = make_scenario(expect={
    "relevant_items": ["it-pg-version", "it-global"],
    "canaries": [*_CANARIES, {"text": "Postgres 14", "kind": "someone_else"}]})
BOTH_CHECKS = make_scenario(expect={"adherence": {"must_match": [r"^\S"]}})
NEGATIVE_ONLY = make_scenario(expect={"must_contain_any": [], "must_not_contain": ["MySQL"],
                                      "adherence": {"must_match": [r"^\S"]}})
NO_POSITIVE = make_scenario(expect={"must_contain_any": [], "must_not_contain": ["MySQL"]})

CASES: dict[str, Case] = {
    "an error record is not scored and says why": Case(
        FACT, None, "error", [("error", None, None, "not scored: Timeout: provider timed out")], error=True),
    "an unanswerable question abstained on is right and the cue is named": Case(
        UNANSWERABLE, "I don't have any record of that.", "abstained_correctly", [
            ("continuity", True, True, "abstained"),
            ("abstained", True, None,
             'abstention expected; the answer abstains (sentence 1: "i don\'t have any" (no possession))'),
            NO_CLAIMS, NO_LEAKS]),
    "an unanswerable question answered is wrong and the answer is the claim": Case(
        UNANSWERABLE, "It's MySQL 8.", "wrong", [
            ("continuity", False, False, "answered although nothing supports an answer"),
            ("abstained", False, None, "abstention expected; the answer does not abstain"),
            ("unsupported_claims", 1, False, 'answered_unanswerable: "It\'s MySQL 8."'), NO_LEAKS]),
    "an abstention that matches a forbidden pattern is wrong and says which": Case(
        make_scenario("gap-02", abstain=True, category="abstention", expect={"must_not_match": [r"my\s*sql"]}),
        "I don't know whether it is MySQL.", "wrong", [
            ("continuity", False, False, r"abstained; matches forbidden /my\s*sql/"),
            ("abstained", True, None, "abstention expected; the answer abstains" + I_DONT_KNOW),
            NO_CLAIMS, NO_LEAKS]),
    "an answer that passes the checks is correct": Case(
        FACT, "Billing runs Postgres 15.", "correct", [("continuity", True, True, "checks pass"), ANSWERED,
                                                        NO_CLAIMS, NO_LEAKS]),
    "failed checks are each named": Case(
        make_scenario(expect={"must_not_contain": ["MySQL"]}), "It runs MySQL.", "wrong", [
            ("continuity", False, False, "none of ['Postgres 15'] appears; contains forbidden 'MySQL'"),
            ANSWERED, NO_CLAIMS, NO_LEAKS]),
    "an abstention on an answerable question is said so": Case(
        FACT, "I don't know.", "abstained_wrongly", [
            ("continuity", False, False, "abstained on an answerable question"),
            ("abstained", True, None, "an answer expected; the answer abstains" + I_DONT_KNOW),
            NO_CLAIMS, NO_LEAKS]),
    "a cue in an answer that states the fact is named but the answer counts as answered": Case(
        FACT, "I'm not sure, but I think it's Postgres 15.", "correct", [
            ("continuity", True, True, "checks pass"),
            ("abstained", False, None, "an answer expected; the answer does not abstain" + HEDGE),
            NO_CLAIMS, NO_LEAKS]),
    "every kind of unsupported claim and tool leak is listed in order, with retrieval": Case(
        EVERY_CLAIM,
        "Billing runs Postgres 15 (it-pg-version); the replica runs Postgres 13, Postgres 16 is next, Postgres 14 "
        "is Dana's and the Falcon-7 launch code is set; see it-nope, it-global and it-BOX.", "wrong", [
            ("continuity", False, False,
             "checks pass; unsupported: stale 'Postgres 13', leakage 'Falcon-7 launch code', invented 'Postgres 16', "
             "someone_else 'Postgres 14', unknown_item_id 'it-nope', undisclosed_item_id 'it-global', "
             "unknown_item_id 'it-BOX'"),
            ANSWERED,
            ("unsupported_claims", 7, False,
             "stale: 'Postgres 13', leakage: 'Falcon-7 launch code', invented: 'Postgres 16', "
             "someone_else: 'Postgres 14', unknown_item_id: 'it-nope', undisclosed_item_id: 'it-global', "
             "unknown_item_id: 'it-BOX'"),
            ("tool_leakage", 1, False, "out_of_scope_item 'it-other-ws' in c1"),
            ("retained_after_forget", 0, False,
             "forget requests 0, forget calls 0 (0 removed something), forgotten facts 0: 1 still retrievable at the "
             "probe, 0 in the answer; retained_after_forget: 'it-pg-old' in c1"),
            ("retrieval", 0.25, None,
             "retrieved ['it-zzz', 'it-pg-old', 'it-other-ws', 'it-pg-version']; "
             "relevant ['it-pg-version', 'it-global']; precision 0.25, recall 0.50")],
        arm="recall", calls=[tool_call(["it-zzz", "it-pg-old", "it-other-ws", "it-pg-version"])]),
    "an item id the user pasted into the conversation is no unsupported claim": Case(
        FACT, "Billing runs Postgres 15, see it-global.", "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS],
        messages=[{"role": "system", "content": None},
                  {"role": "user", "content": "Which Postgres does billing run? it-global has notes."},
                  {"role": "assistant", "content": "Billing runs Postgres 15, see it-global."}]),
    "stale values mentioned as superseded are named and not counted": Case(
        TWO_STALE, "Billing moved from Postgres 13 to Postgres 15; Postgres 12 is no longer used.", "correct", [
            ("continuity", True, True,
             "checks pass; stale value mentioned as superseded: 'Postgres 13', 'Postgres 12'"),
            ANSWERED,
            ("unsupported_claims", 0, True,
             "none (stale value mentioned as superseded: 'Postgres 13', 'Postgres 12', not counted)"),
            NO_LEAKS]),
    "a superseded stale value is named after the claims that do count": Case(
        TWO_STALE, "Billing moved from Postgres 13 to Postgres 15; Postgres 16 is planned.", "wrong", [
            ("continuity", False, False,
             "checks pass; unsupported: invented 'Postgres 16'; stale value mentioned as superseded: 'Postgres 13'"),
            ANSWERED,
            ("unsupported_claims", 1, False,
             "invented: 'Postgres 16' (stale value mentioned as superseded: 'Postgres 13', not counted)"),
            NO_LEAKS]),
    "a short stale number is found word-bounded and excused when superseded": Case(
        PORT, "Use port 5432, not 5433 anymore.", "correct", [
            ("continuity", True, True, "checks pass; stale value mentioned as superseded: '5433'"), ANSWERED,
            ("unsupported_claims", 0, True, "none (stale value mentioned as superseded: '5433', not counted)"),
            NO_LEAKS]),
    "a supersession cue opening a line binds to the stale value on that line": Case(
        FACT, "Billing runs Postgres 15\nnot Postgres 13", "correct", [
            ("continuity", True, True, "checks pass; stale value mentioned as superseded: 'Postgres 13'"), ANSWERED,
            ("unsupported_claims", 0, True, "none (stale value mentioned as superseded: 'Postgres 13', not counted)"),
            NO_LEAKS]),
    "a cue at the end of one line does not excuse a stale value on the next": Case(
        FACT, "Billing runs Postgres 15 (the reporting box is deprecated)\nPostgres 13 still runs the archive.",
        "wrong", [
            ("continuity", False, False, "checks pass; unsupported: stale 'Postgres 13'"), ANSWERED,
            ("unsupported_claims", 1, False, "stale: 'Postgres 13'"), NO_LEAKS]),
    "a rubric judge's pass decides over failing patterns": Case(
        RUBRIC, "Billing is on PG fifteen.", "correct", [
            ("continuity", True, True, "judge pass: names version fifteen (patterns: fail)"), ANSWERED,
            NO_CLAIMS, NO_LEAKS],
        judge=_judge("pass", "names version fifteen")),
    "a rubric judge's fail decides over passing patterns": Case(
        RUBRIC, "Billing runs Postgres 15.", "wrong", [
            ("continuity", False, False, "judge fail: hedges on the version (patterns: pass)"), ANSWERED,
            NO_CLAIMS, NO_LEAKS],
        judge=_judge("fail", "hedges on the version")),
    "a judge verdict without a rubric is ignored": Case(
        FACT, "Billing runs MySQL.", "wrong", [
            ("continuity", False, False, "none of ['Postgres 15'] appears"), ANSWERED, NO_CLAIMS, NO_LEAKS],
        judge=_judge("pass", "looks fine")),
    "a grounding judge that finds nothing says so": Case(
        FACT, "Billing runs Postgres 15.", "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("grounding", 0, True, "grounding judge: every specific is supported by what the sample saw")],
        grounding=_grounding()),
    "ungrounded specifics are claims added to the canaries found": Case(
        FACT, "Billing runs Postgres 15, after Postgres 16 was dropped.", "wrong", [
            ("continuity", False, False, "checks pass; unsupported: invented 'Postgres 16', "
             "ungrounded 'a nightly backup at 02:00', ungrounded 'a 3-node cluster'"),
            ANSWERED,
            ("unsupported_claims", 3, False, "invented: 'Postgres 16', ungrounded: 'a nightly backup at 02:00', "
             "ungrounded: 'a 3-node cluster'"),
            NO_LEAKS,
            ("grounding", 2, False, "grounding judge: unsupported 'a nightly backup at 02:00'; 'a 3-node cluster'")],
        grounding=_grounding("a nightly backup at 02:00", "a 3-node cluster")),
    "an unreadable grounding reply adds no claim whatever it holds": Case(
        FACT, "Billing runs Postgres 15.", "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("grounding", 0, None, "grounding judge reply unreadable, not counted: no JSON object in the reply")],
        grounding=_grounding("a 3-node cluster", malformed="no JSON object in the reply")),
    "an abstaining answer is not grounded": Case(
        FACT, "I don't know.", "abstained_wrongly", [
            ("continuity", False, False, "abstained on an answerable question"),
            ("abstained", True, None, "an answer expected; the answer abstains" + I_DONT_KNOW), NO_CLAIMS, NO_LEAKS],
        grounding=_grounding("a 3-node cluster")),
    "adherence alone decides a preference scenario it passes": Case(
        _adherence_only(), "Indent with 4 spaces.", "correct", [
            ("continuity", True, True, "adherence checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("adherence", True, True, "checks pass")]),
    "adherence failures are each named": Case(
        _adherence_only(adherence={"must_contain_all": ["4 spaces", "snake_case"]}), "Indent with tabs.", "wrong", [
            ("continuity", False, False, "missing '4 spaces'; missing 'snake_case'"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("adherence", False, False, "missing '4 spaces'; missing 'snake_case'")]),
    "a hedge that states the preferred value answers a preference scenario": Case(
        _adherence_only(), "I'm not sure, but I think it is 4 spaces.", "correct", [
            ("continuity", True, True, "adherence checks pass"),
            ("abstained", False, None, "an answer expected; the answer does not abstain" + HEDGE),
            NO_CLAIMS, NO_LEAKS, ("adherence", True, True, "checks pass")]),
    "a stale preference mentioned as superseded is excused by the adherence checks": Case(
        _adherence_only(canaries=[{"text": "2 spaces", "kind": "stale"}]), "Use 4 spaces, not 2 spaces anymore.",
        "correct", [
            ("continuity", True, True, "adherence checks pass; stale value mentioned as superseded: '2 spaces'"),
            ANSWERED,
            ("unsupported_claims", 0, True, "none (stale value mentioned as superseded: '2 spaces', not counted)"),
            NO_LEAKS, ("adherence", True, True, "checks pass")]),
    "top-level checks decide when a scenario has both, whatever adherence says": Case(
        BOTH_CHECKS, "Billing runs MySQL.", "wrong", [
            ("continuity", False, False, "none of ['Postgres 15'] appears"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("adherence", True, True, "checks pass")]),
    "a forbidden string alone is a top-level check that decides over adherence": Case(
        NEGATIVE_ONLY, "Billing runs Postgres 15.", "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("adherence", True, True, "checks pass")]),
    "a cue with no positive check to state abstains": Case(
        NO_POSITIVE, "I'm not sure.", "abstained_wrongly", [
            ("continuity", False, False, "abstained on an answerable question"),
            ("abstained", True, None, "an answer expected; the answer abstains" + HEDGE), NO_CLAIMS, NO_LEAKS]),
    "a hedge stating only one of the required strings abstains": Case(
        make_scenario(expect={"must_contain_any": [], "must_contain_all": ["Postgres 15", "billing"]}),
        "I'm not sure, but I think it's Postgres 15.", "abstained_wrongly", [
            ("continuity", False, False, "abstained on an answerable question"),
            ("abstained", True, None, "an answer expected; the answer abstains" + HEDGE), NO_CLAIMS, NO_LEAKS]),
    "token F1 and BLEU-1 are reported to four decimals beside the checks": Case(
        make_scenario(expect={"f1_reference": "Postgres 15 billing cluster nightly"}), "Billing runs Postgres 15.",
        "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("token_f1", 0.6667, None, "informational, not part of correctness: LoCoMo's stemmed token F1 0.67 "
             "against 'Postgres 15 billing cluster nightly'"),
            ("bleu1", 0.6, None, "informational, not part of correctness: the mem0 paper's LoCoMo metric, BLEU-1 "
             "0.60 against 'Postgres 15 billing cluster nightly'")]),
    "nothing retrieved has no precision and a recall of 0": Case(
        FACT, "Billing runs Postgres 15.", "correct", [
            ("continuity", True, True, "checks pass"), ANSWERED, NO_CLAIMS, NO_LEAKS,
            ("retrieval", None, None, "retrieved nothing; relevant ['it-pg-version']; precision n/a, recall 0.00")],
        arm="recall"),
    "a retrieval with no relevant items has a precision but no recall": Case(
        UNANSWERABLE, "I don't know.", "abstained_correctly", [
            ("continuity", True, True, "abstained"),
            ("abstained", True, None, "abstention expected; the answer abstains" + I_DONT_KNOW), NO_CLAIMS, NO_LEAKS,
            ("retrieval", 0.0, None, "retrieved ['it-pg-version']; relevant []; precision 0.00, recall n/a")],
        arm="recall", calls=[tool_call(["it-pg-version"])]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_score_says_what_a_reader_needs(name: str) -> None:
    case = CASES[name]
    scores = case.score()
    assert (scores.outcome, _rows(scores)) == (case.outcome, case.rows)


def test_an_error_record_without_error_details_is_still_not_scored() -> None:
    record = make_record(FACT, error=True).model_copy(update={"error": None})
    scores = score_sample(record, FACT)
    assert (scores.outcome, _rows(scores)) == ("error", [("error", None, None, "not scored: error")])


def test_the_judge_and_grounding_fields_keep_both_results() -> None:
    """The pattern result stays beside the judge's; the grounding finding is named per case."""
    judged = CASES["a rubric judge's pass decides over failing patterns"].score()
    assert (judged.continuity_correct, judged.pattern_correct, judged.judge_verdict, judged.judge_reason) == (
        True, False, "pass", "names version fifteen")
    findings = [CASES[name].score().grounding for name in (
        "a grounding judge that finds nothing says so", "ungrounded specifics are claims added to the canaries found",
        "an unreadable grounding reply adds no claim whatever it holds", "an abstaining answer is not grounded")]
    assert findings == ["grounded", "ungrounded", "malformed", None]


def test_retrieval_recall_is_the_share_of_relevant_items_retrieved() -> None:
    scores = CASES["every kind of unsupported claim and tool leak is listed in order, with retrieval"].score()
    assert (scores.retrieved_precision, scores.retrieved_recall) == (0.25, 0.5)
    assert scores.answer_leaks == ["Falcon-7 launch code"]


# ------------------------------------------------------------------------------------------- the helpers behind them


def test_an_unanswerable_answer_is_quoted_whole_up_to_200_characters_then_cut_with_an_ellipsis() -> None:
    exact, longer = "x" * 199 + ".", "y" * 200 + "."
    claims = [score_sample(make_record(UNANSWERABLE, answer), UNANSWERABLE).unsupported_claims[0].text
              for answer in (exact, longer)]
    assert claims == [exact, "y" * 199 + "…"]


def test_an_empty_or_blank_needle_is_contained_in_every_answer_like_an_empty_substring() -> None:
    assert (contains("Billing runs Postgres 15.", ""), contains("", "  \n")) == (True, True)


def test_find_spans_bounds_short_needles_and_finds_every_occurrence() -> None:
    text = "port 5433, not 15433 or 5433.5; 5433"
    assert find_spans(text, "5433") == [(5, 9), (32, 36)]
    assert find_spans(text, "") == []


def test_states_expected_fact_reads_the_adherence_checks_when_the_top_level_has_none() -> None:
    assert states_expected_fact("I'm not sure, but I think it is 4 spaces.", _adherence_only()) is True
    assert states_expected_fact("I'm not sure, but I think it is tabs.", _adherence_only()) is False


def test_states_expected_fact_is_false_without_any_positive_check() -> None:
    assert states_expected_fact("I'm not sure, it is not MySQL.", NO_POSITIVE) is False


def test_an_adherence_check_that_only_forbids_states_no_fact() -> None:
    """A preference whose adherence only forbids (cons-007's nut list) gives no fact to state: an answer that avoids
    the words and abstains has not stated anything (it would count as answered if the forbid-only checks passed)."""
    forbid_only = _adherence_only(adherence={"must_not_contain": ["peanut"]})
    assert states_expected_fact("I'm not sure, maybe pretzels.", forbid_only) is False


def test_states_expected_fact_needs_every_must_contain_all_string() -> None:
    scenario = make_scenario(expect={"must_contain_any": [], "must_contain_all": ["Postgres 15", "billing"]})
    assert states_expected_fact("I'm not sure, but I think billing runs Postgres 15.", scenario) is True
    assert states_expected_fact("I'm not sure, but I think it's Postgres 15.", scenario) is False


PET = make_scenario("pet-01", expect={"must_contain_any": ["Max"], "relevant_items": [], "canaries": []})


def _written(*arguments: dict[str, Any]) -> SampleRecord:
    """A sample whose write phase saved one note per ``arguments`` (the probe's answer does not matter here)."""
    calls = [ToolCallLog(round=0, call_id=f"w{i}", name="save_note", arguments=json.dumps(a), status="ok",
                         result_text="{}", result_chars=2, result_tokens=1, storage_read=True, elapsed_s=0.0)
             for i, a in enumerate(arguments)]
    phase = WritePhaseLog(sessions=[WriteSessionLog(session_id="s1", stop_reason="final_answer", tool_calls=calls)])
    return make_record(PET, "I don't know.", arm="history_only").model_copy(update={"write_phase": phase})


@pytest.mark.parametrize("arguments", [
    ({"text": "The dog is named Max"}, {"text": "Walks at 7"}),
    ({"text": "The dog is named Max", "tags": "pets"},),
], ids=["two saved notes", "two strings of one note"])
def test_a_short_expected_word_ending_one_saved_string_is_found_word_bounded(arguments) -> None:
    """Saved strings are read as separate lines: the line break bounds the word like a space."""
    assert score_sample(_written(*arguments), PET).write_holds_answer is True


def test_a_short_expected_word_inside_a_longer_saved_word_is_not_found() -> None:
    assert score_sample(_written({"text": "The dog is named Maxwell"}), PET).write_holds_answer is False
