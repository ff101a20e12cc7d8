"""The pairwise judge: both orders asked, position bias read as a tie, robust parsing, cache and calibration (no network)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from harness.scenarios import Scenario
from harness.score.pairwise import (
    CALIBRATION_FILE,
    PairComparison,
    PairwiseJudge,
    build_messages,
    calibrate,
    cohen_kappa_multi,
    judge_context,
    load_calibration,
    parse_preference,
)
from tests.memory_systems.prompt_factories import make_scenario


def _answers(messages) -> tuple[str, str]:
    text = messages[-1]["content"]
    a = text.split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]
    b = text.split("<<<B\n", 1)[1].split("\nB>>>", 1)[0]
    return a, b


class _Scripted:
    """A pairwise completer: ``always`` answers one fixed letter; otherwise prefers the answer holding ``needle``."""

    def __init__(self, *, always: str | None = None, needle: str = "") -> None:
        self.always, self.needle = always, needle
        self.prompts: list[list[dict[str, str]]] = []

    def __call__(self, model, messages):
        self.prompts.append(messages)
        if self.always is not None:
            return json.dumps({"better": self.always, "reason": "scripted"})
        a, b = _answers(messages)
        better = "tie" if (self.needle in a) == (self.needle in b) else "A" if self.needle in a else "B"
        return json.dumps({"better": better, "reason": "holds the fact" if better != "tie" else "same"})


def _judge(tmp_path: Path, complete) -> PairwiseJudge:
    return PairwiseJudge(model="test/pairwise", cache_dir=tmp_path / "judge", complete=complete)


def test_both_orders_are_asked_with_the_answers_swapped(tmp_path: Path) -> None:
    scripted = _Scripted(needle="5174")
    judge = _judge(tmp_path, scripted)
    got = judge.compare("ctx", "Which port?", "Port 5174.", "I don't know.")
    assert [_answers(p) for p in scripted.prompts] == [("Port 5174.", "I don't know."), ("I don't know.", "Port 5174.")]
    assert (got.forward, got.backward, got.score, got.outcome, got.position_biased) == ("A", "B", 1.0, "first", False)
    worse = judge.compare("ctx", "Which port?", "I don't know.", "Port 5174.")
    assert (worse.score, worse.outcome) == (-1.0, "second")


@pytest.mark.parametrize("letter", ["A", "B"])
def test_a_judge_that_always_prefers_one_position_yields_ties_and_position_bias_not_wins(tmp_path: Path, letter: str) -> None:
    judge = _judge(tmp_path, _Scripted(always=letter))
    got = judge.compare("ctx", "Which port?", "Port 5174.", "I don't know.")
    assert (got.score, got.outcome, got.position_biased) == (0.0, "tie", True)


def test_the_combination_of_the_two_orders() -> None:
    assert PairComparison("A", "tie").score == 0.5 and PairComparison("A", "tie").outcome == "first"
    assert PairComparison("tie", "A").score == -0.5 and PairComparison("tie", "A").outcome == "second"
    assert PairComparison("tie", "tie").outcome == "tie" and not PairComparison("tie", "tie").position_biased
    assert PairComparison("B", "A").score == -1.0 and not PairComparison("B", "A").position_biased


@pytest.mark.parametrize(("raw", "better", "readable"), [
    ('{"better": "A", "reason": "x"}', "A", True),
    ('```json\n{"better": "b", "reason": "x"}\n```', "B", True),
    ('Sure: {"winner": "tie"} done', "tie", True),
    ('{"better": "neither"}', "tie", True),
    ('better: B because it states the port', "B", True),
    ("I cannot decide.", "tie", False),
    ("", "tie", False),
    ('{"better": "C"}', "tie", False),
])
def test_preferences_are_read_robustly_and_an_unreadable_reply_is_a_tie(raw: str, better: str, readable: bool) -> None:
    got, _, ok = parse_preference(raw)
    assert (got, ok) == (better, readable)


def test_an_unreadable_reply_is_counted_as_malformed(tmp_path: Path) -> None:
    judge = _judge(tmp_path, lambda model, messages: "no idea")
    got = judge.compare("ctx", "q", "a", "b")
    assert got.malformed == 2 and got.outcome == "tie" and judge.malformed == 2


def test_verdicts_are_cached_on_disk(tmp_path: Path) -> None:
    scripted = _Scripted(needle="5174")
    _judge(tmp_path, scripted).compare("ctx", "q", "5174", "no")
    again = _judge(tmp_path, scripted)
    again.compare("ctx", "q", "5174", "no")
    assert len(scripted.prompts) == 2 and (again.calls, again.cached) == (0, 2)


def test_the_prompt_never_names_an_arm(tmp_path: Path) -> None:
    messages = build_messages(judge_context(make_scenario()), "Which port?", "first", "second")
    text = json.dumps(messages)
    for arm in ("recall", "history_only", "shadow", "full_history", "memory_search"):
        assert arm not in text


def test_the_judge_sees_the_earlier_sessions_in_scope_and_not_other_workspaces() -> None:
    context = judge_context(make_scenario())
    assert "Moved the dev server to port 5174." in context and "I prefer short answers." in context
    assert "CANARY" not in context and "Morning! What's up?" in context
    assert "Memory of earlier conversations is OFF" not in context
    cold = judge_context(make_scenario(incognito=True))
    assert cold.startswith("Memory of earlier conversations is OFF for this conversation (incognito)")


def test_long_earlier_context_keeps_the_newest_sessions() -> None:
    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["sessions"].append({"id": "s-old-long", "workspace": "ws-a", "started_at": "2025-12-01T09:00:00Z",
                             "turns": [{"role": "user", "content": "old " * 400}]})
    context = judge_context(Scenario.model_validate(data), max_chars=400)
    assert "port 5174" in context and "old old" not in context and "left out for length" in context


def test_the_judge_sees_every_turn_of_the_current_conversation_in_order_with_its_speaker() -> None:
    history = [{"role": "user", "content": "Morning.", "speaker": "Caroline"},
               {"role": "assistant", "content": "Morning! What's up?"}, {"role": "user", "content": "About the port."}]
    context = judge_context(make_scenario(history=history))
    current = context.split("<<<CURRENT\n", 1)[1]
    assert current.startswith("user (Caroline): Morning.\nassistant: Morning! What's up?\nuser: About the port.\n")


def test_an_older_session_that_fits_is_shown_when_a_newer_one_is_too_long() -> None:
    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["sessions"][0]["turns"].append({"role": "user", "content": "long " * 400})  # s-late, the newest: too long
    context = judge_context(Scenario.model_validate(data), max_chars=400)
    assert "I prefer short answers." in context and "port 5174" not in context
    assert "(1 older earlier conversation(s) left out for length)" in context


def test_multiclass_kappa_matches_a_hand_computation() -> None:
    # observed 4/6; labels A2 B2 T2, predictions A4 B1 T1: chance = (2*4 + 2*1 + 2*1) / 36 = 1/3
    labels = ["A", "A", "B", "B", "tie", "tie"]
    predictions = ["A", "A", "B", "A", "A", "tie"]
    assert cohen_kappa_multi(labels, predictions) == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))
    assert cohen_kappa_multi(["tie"], ["tie"]) is None and cohen_kappa_multi([], []) is None


def test_calibration_reports_agreement_position_bias_and_kappa(tmp_path: Path) -> None:
    """Six labelled pairs and a needle judge: every figure checked against a count by hand."""
    items = [
        {"id": "a1", "answer_a": "FACT here", "answer_b": "nothing", "label": "A"},     # judge: A (agrees)
        {"id": "b1", "answer_a": "nothing", "answer_b": "FACT here", "label": "B"},     # judge: B (agrees)
        {"id": "t1", "answer_a": "FACT one", "answer_b": "FACT two", "label": "tie"},   # judge: tie (agrees)
        {"id": "t2", "answer_a": "none", "answer_b": "zero", "label": "tie"},           # judge: tie (agrees)
        {"id": "a2", "answer_a": "nothing", "answer_b": "nil", "label": "A"},           # judge: tie (mistake)
        {"id": "b2", "answer_a": "FACT", "answer_b": "nope", "label": "B"},             # judge: A (mistake)
    ]
    path = tmp_path / "cal.yaml"
    path.write_text(json.dumps({"items": [{**i, "context": "ctx", "question": "q"} for i in items]}), encoding="utf-8")
    result = calibrate(_judge(tmp_path, _Scripted(needle="FACT")), path)
    assert result.n == 6 and result.agreement == pytest.approx(4 / 6) and result.position_bias_rate == 0.0
    # labels A2 B2 T2, predictions A2 B1 T3: chance = (4 + 2 + 6) / 36 = 1/3
    assert result.cohen_kappa == pytest.approx((4 / 6 - 1 / 3) / (2 / 3))
    assert sorted(m["id"] for m in result.mistakes) == ["a2", "b2"]
    biased = calibrate(_judge(tmp_path / "biased", _Scripted(always="A")), path)
    assert biased.position_bias_rate == 1.0 and biased.agreement == pytest.approx(2 / 6)


def test_the_shipped_calibration_set_has_60_pairs_a_third_ties_and_both_positions() -> None:
    items = load_calibration(CALIBRATION_FILE)
    labels = Counter(item["label"] for item in items)
    assert len(items) >= 60 and labels["tie"] >= len(items) / 3
    assert abs(labels["A"] - labels["B"]) <= 2  # the better answer is first as often as second
    assert len({item["id"] for item in items}) == len(items)
    assert len({item["group"] for item in items}) >= 8
    assert all(item["answer_a"] != item["answer_b"] for item in items)


def test_a_calibration_item_without_a_label_is_named(tmp_path: Path) -> None:
    from harness.score import JudgeError

    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps({"items": [{"id": "x", "context": "c", "question": "q", "answer_a": "a",
                                           "answer_b": "b", "label": "first"}]}), encoding="utf-8")
    with pytest.raises(JudgeError, match=r"items\[0\].label is 'first'"):
        load_calibration(path)


def test_the_judge_is_shown_the_earlier_sessions_oldest_first_then_the_current_conversation_word_for_word() -> None:
    assert judge_context(make_scenario(history=[])) == (
        "Earlier conversations:\n<<<EARLIER\n[earlier conversation s-early]\nuser: I prefer short answers.\n\n"
        "[earlier conversation s-late]\nuser: Moved the dev server to port 5174.\nassistant: Noted.\nEARLIER>>>\n\n"
        "The current conversation so far:\n<<<CURRENT\n(no earlier turns in this conversation)\nCURRENT>>>")
    assert judge_context(make_scenario(incognito=True), max_chars=10) == (
        "Memory of earlier conversations is OFF for this conversation (incognito): a correct answer uses none of "
        "them.\n\nEarlier conversations:\n<<<EARLIER\n(2 older earlier conversation(s) left out for length)\n\n"
        "(no earlier conversation)\nEARLIER>>>\n\nThe current conversation so far:\n<<<CURRENT\nuser: Morning.\n"
        "assistant: Morning! What's up?\nCURRENT>>>")


def test_the_earlier_sessions_fill_the_length_limit_exactly_newest_first() -> None:
    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["sessions"].append({"id": "s-mid", "workspace": "ws-a", "started_at": "2026-02-01T09:00:00Z",
                             "turns": [{"role": "user", "content": "The staging cluster is blue."}]})
    scenario = Scenario.model_validate(data)
    sizes = {"s-late": len("[earlier conversation s-late]\nuser: Moved the dev server to port 5174.\nassistant: Noted."),
             "s-mid": len("[earlier conversation s-mid]\nuser: The staging cluster is blue."),
             "s-early": len("[earlier conversation s-early]\nuser: I prefer short answers.")}
    every = judge_context(scenario, max_chars=sum(sizes.values()))
    assert every.index("s-early]") < every.index("s-mid]") < every.index("s-late]") and "left out" not in every
    cut = judge_context(scenario, max_chars=sum(sizes.values()) - 1)
    assert "s-early]" not in cut and cut.index("s-mid]") < cut.index("s-late]")
    assert "(1 older earlier conversation(s) left out for length)" in cut


def test_the_judge_gets_its_instructions_as_the_system_message_and_the_case_as_the_user_message() -> None:
    messages = build_messages("ctx", "Which port?", "first", "second")
    assert [sorted(m) for m in messages] == [["content", "role"], ["content", "role"]]
    assert [m["role"] for m in messages] == ["system", "user"] and "Reply with JSON only" in messages[0]["content"]
    assert "ctx" in messages[1]["content"] and "first" in messages[1]["content"]


@pytest.mark.parametrize(("raw", "expected"), [
    ('{"better": " a ", "reason": "  it states the port  "}', ("A", "it states the port", True)),
    ('{"better": "B"}', ("B", "(no reason given)", True)),
    ('{"better": "tie", "reason": "   "}', ("tie", "(no reason given)", True)),
    ('{"winner": "Equal", "reason": "both wrong"}', ("tie", "both wrong", True)),
    ('{"better": "NEITHER", "reason": "n"}', ("tie", "n", True)),
    ('{"better": "A", "winner": "B", "reason": "r"}', ("A", "r", True)),
    ('Here:\n```json\n{\n  "better": "b",\n  "reason": "line two"\n}\n```', ("B", "line two", True)),
    ('{not json} and then {"better": "A", "reason": "second object"}', ("A", "second object", True)),
    ('{"better": "maybe", "reason": "x"} {"better": "B", "reason": "the next one"}', ("B", "the next one", True)),
    ('{"verdict": "A"} {"winner": "b", "reason": "w"}', ("B", "w", True)),
    ('BETTER: a, since it keeps the port', ("A", "read from a malformed reply", True)),
    ('"Winner" = "TIE" (both)', ("tie", "read from a malformed reply", True)),
    ('winner:b', ("B", "read from a malformed reply", True)),
    ('better: Apple', ("tie", "unparseable judge reply: 'better: Apple'", False)),
    ('The better one is A', ("tie", "unparseable judge reply: 'The better one is A'", False)),
    ('{"better": "C", "reason": "x"}', ("tie", "unparseable judge reply: '{\"better\": \"C\", \"reason\": \"x\"}'", False)),
    (None, ("tie", "unparseable judge reply: ''", False)),
])
def test_a_reply_is_read_as_its_letter_and_stripped_reason_and_an_unreadable_one_as_a_tie_naming_it(
        raw: str, expected: tuple[str, str, bool]) -> None:
    """JSON first (in a fence, over lines, the first object that names a letter; ``better`` before ``winner``), then
    a ``better: X`` written without JSON, else a tie whose reason quotes the reply."""
    assert parse_preference(raw) == expected


def test_an_unreadable_replys_reason_quotes_its_first_200_characters() -> None:
    raw = "I cannot decide. " + "x" * 300
    assert parse_preference(raw) == ("tie", f"unparseable judge reply: {raw[:200]!r}", False)


def test_each_order_is_recorded_with_its_reason_raw_reply_and_model_and_counted(tmp_path: Path) -> None:
    replies = iter(['{"better": "A", "reason": "keeps the port"}', "no idea"])
    judge = _judge(tmp_path, lambda model, messages: next(replies))
    got = judge.compare("ctx", "Which port?", "Port 5174.", "I don't know.")
    assert (got.forward, got.backward, got.malformed) == ("A", "tie", 1)
    assert got.reasons == ("keeps the port", "unparseable judge reply: 'no idea'")
    forward = judge.ask("ctx", "Which port?", "Port 5174.", "I don't know.")  # cached now
    assert (forward.better, forward.status, forward.reason, forward.model, forward.cached) == (
        "A", "ok", "keeps the port", "test/pairwise", True)
    assert forward.raw == '{"better": "A", "reason": "keeps the port"}'
    backward = judge.ask("ctx", "Which port?", "I don't know.", "Port 5174.")
    assert (backward.status, backward.raw, backward.cached) == ("malformed", "no idea", True)
    assert judge.summary() == {"model": "test/pairwise", "prompt_version": "pairwise-v1", "calls": 2, "cached": 2,
                               "malformed": 2}  # a cached malformed reply is counted again: it is a tie again
    clean = _judge(tmp_path / "clean", _Scripted(needle="5174"))
    assert clean.compare("ctx", "q", "5174", "no").malformed == 0 and clean.summary()["malformed"] == 0


def test_calibration_reports_the_labelled_ties_and_each_mistake_with_both_orders(tmp_path: Path) -> None:
    items = [
        {"id": "a1", "answer_a": "FACT here", "answer_b": "nothing", "label": "A"},
        {"id": "t1", "answer_a": "none", "answer_b": "zero", "label": "tie"},
        {"id": "a2", "answer_a": "nothing", "answer_b": "nil", "label": "A"},     # judge: tie
        {"id": "b2", "answer_a": "FACT", "answer_b": "nope", "label": "B"},       # judge: A
    ]
    path = tmp_path / "cal.yaml"
    path.write_text(json.dumps({"items": [{**i, "context": "ctx", "question": "q"} for i in items]}), encoding="utf-8")
    result = calibrate(_judge(tmp_path, _Scripted(needle="FACT")), path)
    assert result.mistakes == [{"id": "a2", "label": "A", "verdict": "tie", "orders": ["tie", "tie"]},
                               {"id": "b2", "label": "B", "verdict": "A", "orders": ["A", "B"]}]
    # labels A2 B1 T1, predictions A2 T2: observed 2/4, chance (2*2 + 1*2)/16 = 3/8
    assert result.as_dict() == {"n": 4, "agreement": 0.5, "position_bias_rate": 0.0,
                                "cohen_kappa": pytest.approx((0.5 - 3 / 8) / (1 - 3 / 8)), "labelled_ties": 0.25}
    biased = calibrate(_judge(tmp_path / "biased", _Scripted(always="B")), path)
    assert biased.position_bias_rate == 1.0 and [m["id"] for m in biased.mistakes] == ["a1", "a2", "b2"]
    assert biased.mistakes[0] == {"id": "a1", "label": "A", "verdict": "tie", "orders": ["B", "B"]}


def test_a_calibration_set_without_items_reports_no_figures(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(json.dumps({"items": []}), encoding="utf-8")
    result = calibrate(_judge(tmp_path, _Scripted(needle="FACT")), path)
    assert result.as_dict() == {"n": 0, "agreement": None, "position_bias_rate": None, "cohen_kappa": None,
                                "labelled_ties": None} and result.mistakes == []
    path.write_text(json.dumps(["not", "a", "mapping"]), encoding="utf-8")
    assert load_calibration(path) == []
    path.write_text(json.dumps({"pairs": []}), encoding="utf-8")  # a mapping without items: no items
    assert load_calibration(path) == []


@pytest.mark.parametrize(("item", "message"), [
    ("just text", r"items\[0\]\.label is 'just text'; use 'A', 'B' or 'tie'"),
    ({"id": "x", "context": "c", "question": "q", "answer_a": "a", "label": "A"}, r"items\[0\] \('x'\) needs answer_b as a string"),
    ({"id": "y", "context": "c", "question": 3, "answer_a": "a", "answer_b": "b", "label": "tie"}, r"items\[0\] \('y'\) needs question as a string"),
    ({"id": "z", "question": "q", "answer_a": "a", "answer_b": "b", "label": "B"}, r"items\[0\] \('z'\) needs context as a string"),
    ({"id": "w", "context": "c", "question": "q", "answer_b": "b", "answer_a": None, "label": "B"}, r"needs answer_a as a string"),
])
def test_a_calibration_item_of_the_wrong_shape_is_named_with_its_file_and_field(tmp_path: Path, item: object,
                                                                                 message: str) -> None:
    from harness.score import JudgeError

    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps({"items": [item]}), encoding="utf-8")
    with pytest.raises(JudgeError, match=message) as raised:
        load_calibration(path)
    assert str(path) in str(raised.value)


def test_a_calibration_file_that_cannot_be_read_is_a_judge_error_naming_it(tmp_path: Path) -> None:
    from harness.score import JudgeError

    path = tmp_path / "broken.yaml"
    path.write_text("items: [unclosed", encoding="utf-8")
    with pytest.raises(JudgeError, match="broken.yaml"):
        load_calibration(path)


def test_kappa_is_undefined_for_lists_of_different_lengths_and_for_a_single_label() -> None:
    assert cohen_kappa_multi(["A", "B"], ["A"]) is None
    assert cohen_kappa_multi(["A", "A"], ["A", "A"]) is None
    assert cohen_kappa_multi(["A", "B"], ["B", "A"]) == pytest.approx(-1.0)


def test_calibration_shows_the_judge_each_items_own_context_and_question(tmp_path: Path) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(json.dumps({"items": [{"id": "p1", "context": "[earlier] the port is 5174", "question": "Which port?",
                                           "answer_a": "5174", "answer_b": "no idea", "label": "A"}]}), encoding="utf-8")
    scripted = _Scripted(needle="5174")
    calibrate(_judge(tmp_path, scripted), path)
    assert len(scripted.prompts) == 2
    for prompt in scripted.prompts:
        assert prompt[-1]["content"].startswith("[earlier] the port is 5174\n\nThe user's latest message:\n<<<QUESTION\n"
                                                "Which port?\nQUESTION>>>")


def test_a_cached_verdict_is_kept_apart_per_model_and_prompt_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.score.pairwise as pairwise

    scripted = _Scripted(needle="5174")
    PairwiseJudge(model="judge-one", cache_dir=tmp_path, complete=scripted).ask("ctx", "q", "5174", "no")
    other = PairwiseJudge(model="judge-two", cache_dir=tmp_path, complete=scripted)
    other.ask("ctx", "q", "5174", "no")
    assert (other.calls, other.cached, len(scripted.prompts)) == (1, 0, 2)
    monkeypatch.setattr(pairwise, "PROMPT_VERSION", "pairwise-v2")
    newer = PairwiseJudge(model="judge-one", cache_dir=tmp_path, complete=scripted)
    newer.ask("ctx", "q", "5174", "no")
    assert (newer.calls, newer.cached, len(scripted.prompts)) == (1, 0, 3)


def test_a_pairwise_call_reserves_its_prompt_and_300_reply_tokens(tmp_path: Path) -> None:
    from harness.run.budget import Budget, Price

    budget = Budget(1.0, {"test/pairwise": Price(input=0.0, output=0.001)})
    reserved: list[float] = []

    def complete(model: str, messages: list[dict[str, str]]) -> str:
        reserved.append(budget.reserved_usd)
        return '{"better": "tie", "reason": "same"}'

    PairwiseJudge(model="test/pairwise", cache_dir=tmp_path, complete=complete, budget=budget).ask("c", "q", "a", "b")
    assert reserved == [pytest.approx(0.3)] and budget.in_flight == 0
