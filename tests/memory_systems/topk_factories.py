"""A scenario whose memory document holds many entries, one of them the answer, for the top-K document tests."""

from __future__ import annotations

from typing import Any

from harness.scenarios import Scenario

FILLER_TOPICS = (
    ("coffee order", "The usual coffee order is an oat flat white."),
    ("standup time", "Team standup happens at 09:30 every weekday."),
    ("laptop model", "The work laptop is a ThinkPad X1 Carbon."),
    ("gym days", "Gym sessions are on Tuesday and Friday evenings."),
    ("editor theme", "The editor theme is Solarized Dark."),
    ("train line", "The commute uses the Northern line."),
    ("plant watering", "The office fern is watered on Mondays."),
    ("lunch spot", "Friday lunch is at the ramen place on King Street."),
    ("book club", "Book club meets on the last Thursday of the month."),
    ("bike lock", "The bike lock code is kept in the password manager."),
    ("music focus", "Focus music is lo-fi playlists."),
    ("holiday plan", "Summer holiday is two weeks in Portugal."),
)


def topk_scenario(*, probe: dict[str, Any] | None = None, filler: int = len(FILLER_TOPICS)) -> Scenario:
    """``filler`` unrelated entries plus the answer (the staging database host), all in ``ws-a``."""
    items = [
        {"id": f"it-{index:02d}", "content": content, "kind": "context", "workspace": "ws-a", "keys": [key],
         "sources": [{"session": "s1", "turn": "t1"}], "role": "distractor"}
        for index, (key, content) in enumerate(FILLER_TOPICS[:filler])
    ]
    items.append({"id": "it-answer", "content": "The staging database host is pg-staging-7.internal.", "kind": "context",
                  "workspace": "ws-a", "keys": ["staging database"], "sources": [{"session": "s1", "turn": "t1"}],
                  "role": "answer"})
    return Scenario.model_validate({
        "id": "topk-test", "title": "Staging host among many notes", "category": "project_fact",
        "description": "One relevant entry among many.",
        "sessions": [{"id": "s1", "workspace": "ws-a", "started_at": "2026-01-05T09:00:00Z",
                      "turns": [{"role": "user", "content": "Notes for later."}]}],
        "items": items,
        "probe": {"workspace": "ws-a", "started_at": "2026-03-02T10:00:00Z",
                  "message": "What is the staging database host?", **(probe or {})},
        "expect": {"must_contain_any": ["pg-staging-7"], "relevant_items": ["it-answer"]},
    })
