"""A sensitive run's scenarios: every text redacted before any model (or record) sees it, the logged reply too."""

from __future__ import annotations

import json
from pathlib import Path

from harness.redaction import Redactor
from harness.scenarios import Scenario
from harness.scenarios.privacy import prepare_run_scenarios, redact_scenarios, sensitive_suites

MARK = "Ana Lopez"
"""A name only the user's ``--redact`` pattern hides (no secret pattern matches it)."""


def _scenario() -> Scenario:
    return Scenario.model_validate({
        "id": "logged-1", "title": f"Call with {MARK}", "category": "project_fact",
        "description": f"logged traffic of {MARK}",
        "sessions": [{"id": "s1", "workspace": "acme", "started_at": "2026-03-01T10:00:00Z",
                      "turns": [{"role": "user", "content": f"{MARK} says use port 5433."}]}],
        "items": [{"id": "it-1", "content": f"{MARK}: port 5433.", "kind": "context", "workspace": "acme",
                   "keys": [MARK.lower(), "port"], "sources": [{"session": "s1", "turn": "t1"}]}],
        "probe": {"workspace": "acme", "started_at": "2026-03-02T10:00:00Z", "message": f"Which port did {MARK} pick?",
                  "history": [{"role": "user", "content": f"About {MARK}."}]},
        "expect": {"unlabelled": True, "logged_reply": f"{MARK} picked 5433."},
    })


def _texts(scenario: Scenario) -> str:
    return json.dumps(scenario.model_dump(mode="json"))


def test_every_text_of_a_scenario_is_redacted_the_logged_reply_included() -> None:
    (out,), _, count = redact_scenarios([_scenario()], Redactor.build(["(?i)ana lopez"]))
    assert MARK not in _texts(out) and MARK.lower() not in _texts(out)
    assert out.expect.logged_reply == "[REDACTED] picked 5433."
    assert count == 8 and "5433" in out.sessions[0].turns[0].content


def test_a_sensitive_run_redacts_on_its_own_and_a_plain_run_leaves_texts_as_they_are() -> None:
    scenario = _scenario()
    (plain,) = prepare_run_scenarios([scenario], {"sensitive": False, "redact": {"patterns": ["(?i)ana lopez"]}})
    assert plain.expect.logged_reply == scenario.expect.logged_reply
    (redacted,) = prepare_run_scenarios([scenario], {"sensitive": True, "redact": {"patterns": ["(?i)ana lopez"]}})
    assert MARK not in _texts(redacted)


def test_only_a_suite_that_says_sensitive_true_is_sensitive(tmp_path: Path) -> None:
    for name, value in {"a": True, "b": "true", "c": False}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "_suite.json").write_text(json.dumps({"sensitive": value}), encoding="utf-8")
    assert sensitive_suites([tmp_path / n for n in "abc"]) == [str(tmp_path / "a" / "_suite.json")]
