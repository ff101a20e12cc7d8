"""A sensitive run's scenarios: every text redacted before any model (or record) sees it, the logged reply too."""

from __future__ import annotations

import json
from pathlib import Path

from harness.redaction import Redactor
from harness.scenarios import Scenario
from harness.scenarios.models import ItemSpec, Revision
from harness.scenarios.privacy import prepare_run_scenarios, redact_scenarios, sensitive_suites
from harness.scenarios.store_items import StoreItems

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


def test_an_items_earlier_contents_are_redacted_as_its_content_is() -> None:
    """An item's revisions hold what it said before an update: the same person's name, the same secret."""
    scenario = _scenario()
    item = scenario.items[0].model_copy(update={
        "revisions": [Revision(content=f"{MARK}: port 5432.", at=1), Revision(content="port 5431.", at=2)]})
    (out,), _, _ = redact_scenarios([scenario.model_copy(update={"items": [item]})], Redactor.build(["(?i)ana lopez"]))
    assert [r.content for r in out.items[0].revisions] == ["[REDACTED]: port 5432.", "port 5431."]
    assert [r.at for r in out.items[0].revisions] == [1, 2]


def _store(items: list[ItemSpec], created: list[int]) -> StoreItems:
    return StoreItems(path="team.json", sha256="0" * 64, schema_version=1, items=tuple(items), created=tuple(created))


def _two_probes() -> list[Scenario]:
    """Two probes of one conversation: one list of sessions, the second probe a day later."""
    first = _scenario()
    second = first.model_copy(update={"id": "logged-2", "probe": first.probe.model_copy(
        update={"started_at": first.probe.started_at + 86_400_000})})
    assert second.sessions is first.sessions
    return [first, second]


def test_a_plain_run_with_a_store_gives_each_probe_the_items_the_store_held_before_it() -> None:
    probes = _two_probes()
    early, late = (probes[0].items[0].model_copy(update={"id": i}) for i in ("it-early", "it-late"))
    store = _store([early, late], [probes[0].probe.started_at - 1, probes[1].probe.started_at - 1])
    first, second = prepare_run_scenarios(probes, {"sensitive": False}, store)
    assert [i.id for i in first.items] == ["it-early"] and [i.id for i in second.items] == ["it-early", "it-late"]
    assert first.items[0].content == f"{MARK}: port 5433."  # a plain run: nothing redacted


def test_a_store_is_redacted_once_and_every_probe_shares_its_redacted_items() -> None:
    """A LoCoMo-sized store over hundreds of probes: its items are redacted once, not once per probe's prefix."""
    probes = _two_probes()
    store = _store([probes[0].items[0]], [probes[0].probe.started_at - 1])
    out, redacted_store, count = redact_scenarios(probes, Redactor.build(["(?i)ana lopez"]), store)
    assert redacted_store.items[0].content == "[REDACTED]: port 5433."
    assert all(scenario.items[0] is redacted_store.items[0] for scenario in out)


def test_a_conversation_shared_by_its_probes_is_redacted_once_and_stays_shared() -> None:
    """Probes of one conversation share one list of sessions; so do their redacted copies (one copy in memory)."""
    out, _, count = redact_scenarios(_two_probes(), Redactor.build(["(?i)ana lopez"]))
    assert out[0].sessions is out[1].sessions and out[0].items is out[1].items
    assert out[0].sessions[0].turns[0].content == "[REDACTED] says use port 5433."
    assert count == 2 * 8 - 3  # the shared session turn and item (content, key) counted once; the rest per probe


def test_a_text_repeated_across_probes_is_matched_once_and_counted_every_time(monkeypatch) -> None:
    """An imported suite repeats each earlier session in every later probe's file: the patterns run once a text."""
    redactor = Redactor.build(["(?i)ana lopez"])
    seen: list[str] = []
    original = Redactor.redact

    def counting(self: Redactor, text: str) -> tuple[str, int]:
        seen.append(text)
        return original(self, text)

    monkeypatch.setattr(Redactor, "redact", counting)
    probes = [_scenario(), _scenario().model_copy(update={"id": "logged-2"})]
    probes[1] = probes[1].model_copy(update={"sessions": list(probes[1].sessions)})  # the same texts, not the same list
    out, _, count = redact_scenarios(probes, redactor)
    assert len(seen) == len(set(seen)) and count == 2 * 8
    assert out[1].sessions[0].turns[0].content == "[REDACTED] says use port 5433."


def test_a_broken_suite_file_does_not_hide_a_sensitive_suite_after_it(tmp_path: Path) -> None:
    """One unreadable ``_suite.json`` must not end the search: the sensitive suite after it still makes the run sensitive."""
    for name, text in {"a": "{not json", "b": json.dumps({"sensitive": True})}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "_suite.json").write_text(text, encoding="utf-8")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "_suite.json").mkdir()  # not even a file
    assert sensitive_suites([tmp_path / n for n in "cab"]) == [str(tmp_path / "b" / "_suite.json")]
