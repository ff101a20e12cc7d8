"""Scenarios for Dream Mode's tests: a correction across sessions, a duplicate, a secret, another workspace."""

from __future__ import annotations

from typing import Any

from harness.scenarios import Scenario

SECRET = "sk-proj-Zq8Lm3Nw7Rt2Yv5Kx9Pb4Hd6"
FOREIGN = "billing port is 9443"


def _session(sid: str, day: int, text: str, workspace: str | None = "ws-a") -> dict[str, Any]:
    return {"id": sid, "workspace": workspace, "started_at": f"2026-01-{day:02d}T09:00:00Z",
            "turns": [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]}


def dream_scenario(*, probe: dict[str, Any] | None = None, same_day: bool = False) -> Scenario:
    """ws-a: the dev server port said, repeated, corrected; a secret said; ws-b: a fact of its own."""
    sessions = [
        _session("s1", 5, "The dev server runs on port 5173."),
        _session("s2", 6, "Reminder: the dev server runs on port 5173."),
        _session("s3", 7, f"My OpenAI key is {SECRET} for the scripts."),
        _session("s4", 8, f"The {FOREIGN} on the invoice service.", workspace="ws-b"),
        _session("s5", 9, "We moved the dev server to port 8080 yesterday."),
    ]
    if same_day:  # every session ten minutes after the previous one: no idle window before the probe's day
        for index, session in enumerate(sessions):
            session["started_at"] = f"2026-01-05T09:{index * 10:02d}:00Z"
    return Scenario.model_validate({
        "id": "dream-test", "title": "Dev server port corrected", "category": "update",
        "description": "The port was corrected; the old value must not be served.",
        "sessions": sessions,
        "items": [{"id": "it-port", "content": "The dev server runs on port 8080.", "kind": "context",
                   "workspace": "ws-a", "keys": ["dev server"], "sources": [{"session": "s5", "turn": "t1"}],
                   "role": "answer"}],
        "probe": {"workspace": "ws-a", "started_at": "2026-01-12T10:00:00Z",
                  "message": "Which port does the dev server use?", **(probe or {})},
        "expect": {"must_contain_any": ["8080"], "relevant_items": ["it-port"],
                   "canaries": [{"text": "5173", "kind": "stale"}, {"text": FOREIGN, "kind": "leakage"}]},
    })
