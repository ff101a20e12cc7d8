"""A suite's protocol as data: declared in _defaults.yaml, validated, carried by every probe; recent history chosen by it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.cli import main
from harness.memory_systems.prompts import build_full_history, build_history_only
from harness.scenarios import Protocol, load_suite, recent_sessions
from tests.scenarios.conversation_factories import write_conversation

PROTOCOL = """\
categories:
  project_fact: A fact.
  trap: A trap question.
protocol:
  name: Test paper
  headline: [project_fact]
  reported_apart: [trap]
  recent_history: {recent}
  category_order: [trap, project_fact]
"""


def _suite(tmp_path: Path, recent: str = "{kind: last_sessions, count: 1}", extra: str = "") -> Path:
    write_conversation(tmp_path)
    (tmp_path / "_defaults.yaml").write_text(PROTOCOL.format(recent=recent) + extra, encoding="utf-8")
    return tmp_path


def test_a_suite_declares_its_protocol_in_defaults_and_every_probe_carries_it(tmp_path: Path) -> None:
    suite = load_suite([_suite(tmp_path)])
    assert not suite.errors and len(suite.scenarios) == 3
    protocol = suite.scenarios[0].protocol
    assert protocol is not None and protocol.headline == ["project_fact"] and protocol.reported_apart == ["trap"]
    assert all(s.protocol == protocol for s in suite.scenarios)
    assert protocol.order(["project_fact", "zeta", "trap"]) == ["trap", "project_fact", "zeta"]


def test_a_protocol_must_say_what_recent_history_the_probe_sees(tmp_path: Path) -> None:
    (tmp_path / "_defaults.yaml").write_text("protocol: {name: x}\n", encoding="utf-8")
    write_conversation(tmp_path)
    errors = [str(p) for p in load_suite([tmp_path]).errors]
    assert any("protocol.recent_history" in e and "required" in e.lower() for e in errors), errors


@pytest.mark.parametrize("declared, misspelt", [
    ("headline: [project_fact]", "headline: [project_fakt]"),
    # a misspelt group reported apart would leave the real category in the headline, unnoticed
    ("reported_apart: [trap]", "reported_apart: [trapp]"),
])
def test_a_protocol_naming_an_undeclared_category_is_an_error(tmp_path: Path, declared: str, misspelt: str) -> None:
    _suite(tmp_path)
    text = (tmp_path / "_defaults.yaml").read_text(encoding="utf-8").replace(declared, misspelt)
    (tmp_path / "_defaults.yaml").write_text(text, encoding="utf-8")
    errors = [str(p) for p in load_suite([tmp_path]).errors]
    name = misspelt.split("[")[1].rstrip("]")
    assert any(f"undeclared categories ['{name}']" in e for e in errors), errors


@pytest.mark.parametrize("bad, words", [
    ({"headline": ["a"], "reported_apart": ["a"]}, "both in headline and reported_apart"),
    ({"headline": ["all"]}, "reserved"),
    ({"recent_history": {"kind": "last_turns"}}, "needs a count"),
    ({"recent_history": {"kind": "none", "count": 2}}, "takes no count"),
    ({"category_order": ["a", "a"]}, "twice"),
])
def test_an_inconsistent_protocol_is_refused_with_a_reason(bad: dict, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        Protocol.model_validate({"name": "x", "recent_history": {"kind": "none"}, **bad})


def test_recent_history_last_sessions_is_the_last_session_before_the_probe(tmp_path: Path) -> None:
    scenario = load_suite([_suite(tmp_path)]).scenarios[0]
    assert [s.id for s in recent_sessions(scenario)] == ["s2"]
    messages = build_history_only(scenario).messages
    assert "[Earlier conversation s2" in messages[1]["content"] and "Lisbon" in messages[1]["content"]
    assert "Biscuit" not in json.dumps(messages)  # session 1 is not recent history


def test_recent_history_last_turns_keeps_the_last_turns_across_sessions(tmp_path: Path) -> None:
    scenario = load_suite([_suite(tmp_path, "{kind: last_turns, count: 3}")]).scenarios[0]
    chosen = recent_sessions(scenario)
    assert [(s.id, [t.id for t in s.turns]) for s in chosen] == [("s1", ["t2"]), ("s2", ["t1", "t2"])]


def test_recent_history_none_said_explicitly_shows_nothing(tmp_path: Path) -> None:
    scenario = load_suite([_suite(tmp_path, "{kind: none}")]).scenarios[0]
    assert recent_sessions(scenario) == [] and len(build_history_only(scenario).messages) == 2


def test_without_a_protocol_history_only_sees_what_it_saw_before(tmp_path: Path) -> None:
    write_conversation(tmp_path)
    scenario = load_suite([tmp_path]).scenarios[0]
    assert scenario.protocol is None and recent_sessions(scenario) == []
    assert [m["role"] for m in build_history_only(scenario).messages] == ["system", "user"]


def test_full_history_pastes_the_recent_session_once(tmp_path: Path) -> None:
    scenario = load_suite([_suite(tmp_path)]).scenarios[0]
    text = json.dumps(build_full_history(scenario).messages)
    assert text.count("[Earlier conversation s2") == 1 and text.count("[Earlier conversation s1") == 1


def test_validate_fails_on_an_incomplete_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(tmp_path)
    (tmp_path / "_suite.json").write_text(json.dumps({"complete": False, "source": {"file": "locomo10.json"}}),
                                          encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "_suite.json: complete: incomplete suite: the import of locomo10.json stopped before the end" in out
    assert "1 errors" in out


def test_validate_passes_a_complete_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(tmp_path)
    (tmp_path / "_suite.json").write_text(json.dumps({"complete": True}), encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 0
    assert "incomplete" not in capsys.readouterr().out


@pytest.mark.parametrize("declared, category, abstain, judged, counted", [
    ({"reported_apart": ["trap"]}, "trap", True, False, False),  # apart, though the headline lists nothing
    ({"reported_apart": ["trap"]}, "fact", False, False, True),
    ({"headline": ["fact"]}, "other", False, False, False),
    ({"abstention_apart": True}, "fact", True, False, False),  # LongMemEval's _abs questions
    ({"abstention_apart": True}, "fact", False, False, True),
    ({"judge_only": ["pref"]}, "pref", False, False, False),  # no judge: not judged, out of the headline
    ({"judge_only": ["pref"]}, "pref", False, True, True),
])
def test_the_headline_counts_a_category_as_the_protocol_says(declared: dict, category: str, abstain: bool,
                                                             judged: bool, counted: bool) -> None:
    protocol = Protocol.model_validate({"name": "x", "recent_history": {"kind": "none"}, **declared})
    assert protocol.in_headline(category, abstain=abstain, judged=judged) is counted


def test_every_category_the_protocol_names_is_checked_against_the_suite() -> None:
    protocol = Protocol.model_validate({"name": "x", "recent_history": {"kind": "none"}, "headline": ["a"],
                                        "reported_apart": ["b"], "judge_only": ["c"], "category_order": ["d"]})
    assert protocol.names() == {"a", "b", "c", "d"}


@pytest.mark.parametrize("bad, message", [
    ({"headline": ["a", "a"]}, "protocol headline names a category twice: ['a', 'a']"),
    ({"reported_apart": ["b", "b"]}, "protocol reported_apart names a category twice: ['b', 'b']"),
    ({"judge_only": ["c", "c"]}, "protocol judge_only names a category twice: ['c', 'c']"),
    ({"category_order": ["d", "d"]}, "protocol category_order names a category twice: ['d', 'd']"),
    ({"reported_apart": ["headline", "all"]}, "protocol reported_apart names ['all', 'headline']: reserved for the "
                                              "report's own rows"),
    ({"judge_only": ["all"]}, "protocol judge_only names ['all']: reserved for the report's own rows"),
    ({"category_order": ["headline"]}, "protocol category_order names ['headline']: reserved for the report's own rows"),
    ({"headline": ["b", "a"], "reported_apart": ["a", "b"]},
     "protocol: ['a', 'b'] both in headline and reported_apart; a category is one or the other"),
    ({"recent_history": {"kind": "last_sessions"}},
     "recent_history kind last_sessions needs a count (how many sessions or turns, 1 or more)"),
    ({"recent_history": {"kind": "none", "count": 1}}, "recent_history kind none takes no count"),
])
def test_each_inconsistency_is_refused_with_a_message_naming_the_field_and_the_categories(bad: dict,
                                                                                          message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Protocol.model_validate({"name": "x", "recent_history": {"kind": "none"}, **bad})
    assert [str(e["ctx"]["error"]) for e in caught.value.errors()] == [message]


def test_a_consistent_protocol_with_every_field_is_accepted() -> None:
    protocol = Protocol.model_validate({
        "name": "x", "headline": ["a"], "reported_apart": ["b"], "judge_only": ["a"], "category_order": ["b", "a"],
        "recent_history": {"kind": "last_turns", "count": 4}})
    assert protocol.recent_history.count == 4 and protocol.order({"z", "a", "b", "c"}) == ["b", "a", "c", "z"]
