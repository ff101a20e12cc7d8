"""Scenarios and suites built in code for the prompt tests, and a Host run over a seeded store."""

from __future__ import annotations

from pathlib import Path

from harness.scenarios import Scenario, seed_store
from memory_tools.host import Host
from memory_tools.policy import MemoryPolicy, RunContext
from memory_tools.store import MemoryItemStore


def make_scenario(**probe_overrides: object) -> Scenario:
    probe = {
        "workspace": "ws-a",
        "started_at": "2026-03-02T10:00:00Z",
        "history": [{"role": "user", "content": "Morning."}, {"role": "assistant", "content": "Morning! What's up?"}],
        "message": "Which port does the dev server use?",
        **probe_overrides,
    }
    return Scenario.model_validate(
        {
            "id": "arm-test",
            "title": "Dev server port",
            "category": "project_fact",
            "description": "The port said earlier must be recalled.",
            "sessions": [
                {
                    "id": "s-late",
                    "workspace": "ws-a",
                    "started_at": "2026-02-10T09:00:00Z",
                    "turns": [{"role": "user", "content": "Moved the dev server to port 5174."}, {"role": "assistant", "content": "Noted."}],
                },
                {
                    "id": "s-early",
                    "workspace": None,
                    "started_at": "2026-01-05T09:00:00Z",
                    "turns": [{"role": "user", "content": "I prefer short answers."}],
                },
                {
                    "id": "s-other",
                    "workspace": "ws-b",
                    "started_at": "2026-01-20T09:00:00Z",
                    "turns": [{"role": "user", "content": "CANARY the billing port is 9999."}],
                },
            ],
            "items": [
                {
                    "id": "it-port",
                    "content": "The dev server runs on port 5174.",
                    "kind": "context",
                    "workspace": "ws-a",
                    "keys": ["dev server", "port"],
                    "sources": [{"session": "s-late", "turn": "t1"}],
                    "role": "answer",
                }
            ],
            "probe": probe,
            "expect": {"must_contain_any": ["5174"], "relevant_items": ["it-port"]},
        }
    )


def _host_run(scenario: Scenario, store: MemoryItemStore):
    probe = scenario.probe
    seed_store(store, scenario)
    policy = MemoryPolicy(enabled=probe.policy.enabled, agent_read_enabled=probe.policy.agent_read_enabled)
    return Host(store, policy).open_run(RunContext(workspace_key=probe.workspace, incognito=probe.incognito))


def write_small_suite(folder: Path) -> Path:
    """Two copies of :func:`make_scenario` (ids alpha, beta) as scenario files in ``folder``: a tiny suite for runs."""
    import json

    folder.mkdir()
    for sid in ("alpha", "beta"):
        data = make_scenario().model_dump(mode="json", exclude_none=True)
        data["id"] = sid
        (folder / f"{sid}.yaml").write_text(json.dumps(data), encoding="utf-8")
    return folder
