"""What a scenario asks to be forgotten: forget requests in its sessions, and the facts they withdraw.

Two marks, both in the scenario file:

- a **forget request** is a user turn of an earlier session that asks to
  forget ("forget my home address", "delete everything about Nimbus",
  "don't keep that"): :data:`FORGET_REQUEST`, the same words the offline
  writer and the write-path score read;
- a **forgotten fact** is a canary of kind ``forgotten`` (a fact an earlier
  session of the probe's scope stated and a later one withdrew), or a
  ``leakage`` canary that the scenario's items hold only as archived items
  of the probe's own scope (the store keeps it archived: nothing crosses a
  scope, so its return is a failure to forget, never a leak).

Scoring (``harness.score.forgetting``) calls the return of a forgotten fact
``retained_after_forget``; ``tool_leakage`` stays for what crosses scope or
policy. Validation (``validation/forgetting.py``) holds a forgotten canary
to its story: stated in the probe's scope, withdrawn by a later request
there, archived in every item of that scope that holds it, and not in the
probe's own message or history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.memo import by_identity
from harness.scenarios.models import Canary, ItemSpec, Scenario, Session
from memory_tools import LifecycleState, strip_format_characters

FORGET_REQUEST = re.compile(r"\b(forget|delete|erase)\b|\bdon'?t (remember|keep|save)\b", re.IGNORECASE)
"""Any forget word in a user turn: how validation finds the request that withdraws a declared forgotten fact.
Too wide to count requests by (``I'll never forget it``): :data:`ASKS_TO_FORGET` does that."""

_LEAD = r"(?:(?:ok(?:ay)?|so|and|also|actually|oh|hey|now|please|just)[,!]?\s+)*"
_ASK = (r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:just\s+)?"
        r"|you\s+(?:can|should|may|could|must)\s+(?:now\s+|just\s+)?"
        r"|i(?:\s+(?:want|need|would\s+like)|['’]d\s+like)\s+you\s+to\s+)?")
ASKS_TO_FORGET = re.compile(
    rf"^{_LEAD}{_ASK}(?:forget|delete|erase)\b(?!\s+to\b)"
    rf"|^{_LEAD}(?:do\s+not|don['’]?t)\s+(?:remember|keep|save|store)\b", re.IGNORECASE)
"""A sentence that asks the assistant to forget: an imperative (``Please forget my home address``, ``Forget the
release branch``, ``Don't keep that``) or a request (``can you delete ...``, ``I want you to forget ...``) at
the sentence's start. Not a statement about the speaker (``I'll never forget it``), not ``don't forget to``."""
_SENTENCE = re.compile(r"[^.!?;\n]+")


def fold(text: str) -> str:
    """Text as scoring matches it, roughly: format characters dropped, case folded, whitespace collapsed."""
    return " ".join(strip_format_characters(text).casefold().split())


def is_forget_request(text: str) -> bool:
    return FORGET_REQUEST.search(text) is not None


def asks_to_forget(text: str) -> bool:
    """Whether some sentence of ``text`` asks the assistant to forget (:data:`ASKS_TO_FORGET`).

    Example:
        >>> asks_to_forget("I've moved. Please forget my home address."), asks_to_forget("I'll never forget it!")
        (True, False)
    """
    return any(ASKS_TO_FORGET.search(sentence.strip()) for sentence in _SENTENCE.findall(text))


def _request_turns(scenario: Scenario) -> tuple[tuple[str, int], ...]:
    declared = bool(forgotten_texts(scenario))
    return tuple((s.id, k) for s in scenario.sessions for k, t in enumerate(s.turns)
                 if t.role == "user" and (asks_to_forget(t.content) or declared and is_forget_request(t.content)))


forget_requests = by_identity(_request_turns)
"""A scenario's forget requests, one per user turn, as (session id, turn index): a turn that asks the assistant to
forget (:func:`asks_to_forget`), or, where the scenario declares a forgotten fact, any turn with a forget word
(the request validation found for it). Declared, not guessed: a conversation that only mentions forgetting asks
nothing."""


def forget_request_session_ids(scenario: Scenario) -> tuple[str, ...]:
    """The sessions holding a forget request (:data:`forget_requests`), in order, once each."""
    return tuple(dict.fromkeys(session for session, _ in forget_requests(scenario)))


def _requests(sessions: Sequence[Session]) -> tuple[str, ...]:
    return tuple(s.id for s in sessions if any(t.role == "user" and is_forget_request(t.content) for t in s.turns))


forget_request_sessions = by_identity(_requests)
"""The ids of the sessions (of a session list) in which the user asked to forget something, in list order."""


def in_scope(workspace: str | None, scenario: Scenario) -> bool:
    """Whether something of ``workspace`` (None: global) is in the probe's scope."""
    return workspace is None or workspace == scenario.probe.workspace


def archived_in_scope_only(text: str, items: Sequence[ItemSpec], scenario: Scenario) -> bool:
    """Whether the items that hold ``text`` are all archived items of the probe's scope (and there is one)."""
    needle = fold(text)
    holders = [item for item in items if needle and needle in fold(item.content)]
    return bool(holders) and all(
        item.state == LifecycleState.ARCHIVED and in_scope(item.workspace, scenario) for item in holders
    )


def is_forgotten(canary: Canary, scenario: Scenario) -> bool:
    """A ``forgotten`` canary, or a ``leakage`` one the items hold only as archived in the probe's scope."""
    if canary.kind == "forgotten":
        return True
    return canary.kind == "leakage" and archived_in_scope_only(canary.text, scenario.items, scenario)


def _forgotten(scenario: Scenario) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.text for c in scenario.expect.canaries if is_forgotten(c, scenario)))


forgotten_texts = by_identity(_forgotten)
"""The texts of a scenario's forgotten facts (see the module docstring), in canary order, once each."""
