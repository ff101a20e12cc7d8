"""What a scenario asks to be forgotten: which turns are forget requests, and which canaries are forgotten facts.

A phantom request (``I'll never forget it``) inflates a table's "asked" column and makes a system that kept
everything look as if it ignored the user; a missed one hides that it did. A fact wrongly called forgotten turns a
leak across scopes into a "retained" line; a forgotten fact missed is never checked at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.scenarios.forgetting import (
    archived_in_scope_only,
    asks_to_forget,
    fold,
    forget_request_session_ids,
    forget_request_sessions,
    forget_requests,
    forgotten_texts,
    in_scope,
    is_forget_request,
    is_forgotten,
)
from harness.scenarios.models import Canary, ItemSpec, Scenario


def _scenario(turns: list[list[tuple[str, str]]], *, canaries: list[dict[str, str]] = (),
              items: list[dict[str, Any]] = (), workspace: str | None = "ws-a") -> Scenario:
    """Sessions s0, s1... of (role, text) turns; a probe in ``workspace``."""
    return Scenario.model_validate({
        "id": "forget-x", "title": "Forget", "category": "project_fact", "description": "A forgetting story.",
        "sessions": [{"id": f"s{i}", "workspace": "ws-a", "started_at": 1000 + i,
                      "turns": [{"role": role, "content": text} for role, text in session]}
                     for i, session in enumerate(turns)],
        "items": list(items),
        "probe": {"workspace": workspace, "started_at": 5000, "message": "Where do I live?"},
        "expect": {"must_contain_any": ["Lyon"], "canaries": list(canaries)},
    })


def _item(iid: str, content: str, *, workspace: str | None = "ws-a", archived: bool = True) -> dict[str, Any]:
    return {"id": iid, "content": content, "kind": "knowledge", "workspace": workspace,
            "state": "archived" if archived else "active", "keys": ["home"],
            "sources": [{"session": "s0", "turn": "t1"}], "role": "distractor"}


@pytest.mark.parametrize("text", [
    "Please forget my home address.", "Forget the release branch", "Delete everything about Nimbus",
    "erase it", "Don't keep that.", "don’t remember this", "do not store my phone number",
    "Okay, so please just forget it", "Can you please delete the old notes?", "could you just erase that",
    "You should now forget the old plan", "I want you to forget my address", "I'd like you to delete it",
    "i would like you to erase the draft", "Hey! Will you forget it", "dont save that", "Also, don't store it",
    "Thanks for the help. Now forget my address", "Fine; delete it", "We moved\nForget the old office",
])
def test_a_sentence_asking_the_assistant_to_forget_is_a_request(text: str) -> None:
    assert asks_to_forget(text)


@pytest.mark.parametrize("text", [
    "I'll never forget it!", "I'm not gonna forget a second of it.", "Don't forget to book the train.",
    "We should delete the old photos someday.", "Forget to call? Never.", "I forgot my keys", "forgetful me",
    "She told me to forget it", "Deleted files are in the bin", "Please don't forget the milk",
    "can I delete it myself", "you can't forget that", "",
])
def test_a_sentence_that_only_mentions_forgetting_asks_nothing(text: str) -> None:
    assert not asks_to_forget(text)


@pytest.mark.parametrize("text, found", [
    ("I'll never forget it", True), ("please DELETE it", True), ("erase", True), ("dont keep it", True),
    ("don't remember that", True), ("do not save", False), ("forgetful", False), ("undeleted", False),
    ("erased", False), ("keep it", False),
])
def test_a_forget_word_is_a_whole_word_or_a_dont_keep(text: str, found: bool) -> None:
    """The wide pattern validation finds a declared fact's request by: whole words only."""
    assert is_forget_request(text) is found


def test_fold_drops_format_characters_folds_case_and_collapses_whitespace() -> None:
    assert fold("  Rue\u200b de   RIVOLI\n12 ") == "rue de rivoli 12"
    assert fold("Straße") == "strasse"


def test_only_user_turns_asking_to_forget_are_requests_in_order_once_per_session() -> None:
    scn = _scenario([
        [("user", "I live at 12 Rue de Rivoli."), ("assistant", "Noted; I can forget it whenever you like.")],
        [("user", "Please forget my address."), ("assistant", "Done."), ("user", "And delete my phone number too.")],
        [("user", "I'll never forget Paris.")],
        [("assistant", "Should I erase it?"), ("user", "Yes. Erase it.")],
    ])
    assert forget_requests(scn) == (("s1", 0), ("s1", 2), ("s3", 1))
    assert forget_request_session_ids(scn) == ("s1", "s3")
    # the wide reading (any forget word) of a session list, user turns only
    assert forget_request_sessions(scn.sessions) == ("s1", "s2", "s3")
    assert forget_request_sessions(scn.sessions[:1]) == ()


def test_a_declared_forgotten_fact_makes_any_forget_word_its_request() -> None:
    """Where the scenario declares a forgotten fact, the turn validation found as its request counts, even one
    that is not an imperative ("I need that address deleted, erase it from memory" style phrasing)."""
    turns = [[("user", "My address is 12 Rue de Rivoli.")], [("user", "I'd rather you not keep it: erase, please.")],
             [("assistant", "I will delete it.")]]
    assert forget_requests(_scenario(turns)) == ()
    declared = _scenario(turns, canaries=[{"text": "12 Rue de Rivoli", "kind": "forgotten"}])
    assert forget_requests(declared) == (("s1", 0),)
    assert forget_request_session_ids(declared) == ("s1",)


def test_in_scope_is_global_or_the_probes_own_workspace() -> None:
    scn = _scenario([])
    assert in_scope(None, scn) and in_scope("ws-a", scn) and not in_scope("ws-b", scn)
    assert not in_scope("ws-a", _scenario([], workspace=None)) and in_scope(None, _scenario([], workspace=None))


def test_a_leakage_canary_is_forgotten_only_when_every_item_holding_it_is_archived_in_the_probes_scope() -> None:
    """Archived in scope only: a failure to forget. Active anywhere, or held in another workspace: a leak."""
    text = "12 Rue de Rivoli"
    cases = {
        "archived here": ([_item("a", "Lives at 12 rue de  RIVOLI")], True),
        "archived, global": ([_item("a", "Lives at 12 Rue de Rivoli", workspace=None)], True),
        "two archived here": ([_item("a", "12 Rue de Rivoli"), _item("b", "home: 12 Rue de Rivoli")], True),
        "active here": ([_item("a", "Lives at 12 Rue de Rivoli", archived=False)], False),
        "archived elsewhere": ([_item("a", "Lives at 12 Rue de Rivoli", workspace="ws-b")], False),
        "one of two active": ([_item("a", "12 Rue de Rivoli"), _item("b", "12 Rue de Rivoli", archived=False)], False),
        "held by none": ([_item("a", "Lives in Lyon")], False),
    }
    for name, (items, expected) in cases.items():
        scn = _scenario([], items=items)
        specs = [ItemSpec.model_validate(i) for i in items]
        assert archived_in_scope_only(text, specs, scn) is expected, name
        leak = Canary(text=text, kind="leakage")
        assert is_forgotten(leak, scn) is expected, name
    assert not archived_in_scope_only("  ", [ItemSpec.model_validate(_item("a", "x  y"))], _scenario([]))


def test_forgotten_texts_are_forgotten_canaries_and_archived_leaks_in_canary_order_once_each() -> None:
    scn = _scenario([], items=[_item("a", "Old phone 555-0100"), _item("b", "Falcon-7 code", workspace="ws-b")],
                    canaries=[{"text": "12 Rue de Rivoli", "kind": "forgotten"},
                              {"text": "Falcon-7 code", "kind": "leakage"},
                              {"text": "Old phone 555-0100", "kind": "leakage"},
                              {"text": "Old phone 555-0100", "kind": "stale"},
                              {"text": "12 Rue de Rivoli", "kind": "forgotten"},
                              {"text": "Postgres 16", "kind": "invented"}])
    assert forgotten_texts(scn) == ("12 Rue de Rivoli", "Old phone 555-0100")
    stale = Canary(text="Old phone 555-0100", kind="stale")
    assert not is_forgotten(stale, scn) and is_forgotten(Canary(text="anything", kind="forgotten"), scn)
