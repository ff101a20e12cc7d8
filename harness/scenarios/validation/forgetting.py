"""Checks of a ``forgotten`` canary: the story a forgetting scenario must tell (see :mod:`harness.scenarios.forgetting`).

A forgotten fact is stated in an earlier session of the probe's scope, a
later user turn of that scope asks to forget it, every item of the scope
that holds it is archived (the scenario's items are what a good memory
holds), and the probe's own message and history do not show it (every arm
would see it there, so its return would measure nothing). Each broken rule
is an error at the canary's text, saying how to fix it.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.scenarios.forgetting import fold, in_scope, is_forget_request
from harness.scenarios.models import Scenario
from harness.scenarios.problems import Finding
from memory_tools import LifecycleState


def check_forgotten(scenario: Scenario) -> Iterator[Finding]:
    """Errors for every ``forgotten`` canary whose scenario does not tell its story."""
    sessions = sorted((s for s in scenario.sessions if in_scope(s.workspace, scenario)), key=lambda s: s.started_at)
    scope = f"workspace {scenario.probe.workspace}" if scenario.probe.workspace else "global sessions only"
    shown = fold("\n".join([scenario.probe.message, *(t.content for t in scenario.probe.history)]))
    for j, canary in enumerate(scenario.expect.canaries):
        if canary.kind != "forgotten":
            continue
        loc = ("expect", "canaries", j, "text")
        needle = fold(canary.text)
        if needle in shown:
            yield Finding(loc, "a forgotten fact appears in the probe's own message or history: every arm sees it "
                               "there, so its return measures nothing; remove it from the probe", canary.text)
        stated = [(i, k) for i, s in enumerate(sessions) for k, t in enumerate(s.turns) if needle in fold(t.content)]
        if not stated:
            yield Finding(loc, f"no earlier session of the probe's scope ({scope}) states this forgotten fact: "
                               "state it in a session turn before a later turn asks to forget it", canary.text)
        else:
            first_session, first_turn = stated[0]
            withdrawn = any(
                t.role == "user" and is_forget_request(t.content)
                for i, s in enumerate(sessions) if i >= first_session
                for k, t in enumerate(s.turns) if i > first_session or k > first_turn
            )
            if not withdrawn:
                yield Finding(loc, f"nothing asks to forget this fact after session {sessions[first_session].id} "
                                   "states it: add a later user turn of the probe's scope saying forget, delete, "
                                   "erase or don't keep (or make the canary stale if it was corrected)", canary.text)
        for item in scenario.items:
            if in_scope(item.workspace, scenario) and item.state != LifecycleState.ARCHIVED and needle in fold(item.content):
                yield Finding(loc, f"item {item.id} of the probe's scope holds this forgotten fact but is active: a "
                                   "good memory no longer serves it, so store it with state: archived (or leave it "
                                   "out)", canary.text)
