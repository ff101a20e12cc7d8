"""Small transcript files written for the transcript importer's tests (no real traffic), and their import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from harness.importers import import_transcripts

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx"
"""An OpenAI-shaped key the default secret patterns must remove."""


def message(session: str, role: str, content: Any, at: str | int | None, *, workspace: str | None = "acme",
            user: str | None = "u1", **extra: Any) -> dict[str, Any]:
    """One logged message in the JSONL shape (fields left out when None)."""
    out: dict[str, Any] = {"session_id": session, "role": role, "content": content}
    if workspace is not None:
        out["workspace"] = workspace
    if user is not None:
        out["user_id"] = user
    if at is not None:
        out["timestamp"] = at
    return out | extra


def two_sessions() -> list[dict[str, Any]]:
    """The plain case: a session that states a fact, a later one that asks about it."""
    return [
        message("s1", "user", "Use port 5433 for the staging database.", "2026-03-01T10:00:00Z"),
        message("s1", "assistant", "Noted: staging uses 5433.", "2026-03-01T10:00:05Z"),
        message("s2", "user", "Which port did we pick for staging?", "2026-03-02T09:00:00Z"),
        message("s2", "assistant", "You picked 5433.", "2026-03-02T09:00:04Z"),
    ]


def write_jsonl(path: Path, messages: list[Any]) -> Path:
    path.write_text("".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages), encoding="utf-8")
    return path


def imported_transcripts(tmp_path: Path, messages: list[Any], *, redact: tuple[str, ...] = ()) -> tuple[Path, list[str]]:
    """Import ``messages`` written as a JSONL file; the suite folder and the printed lines."""
    lines: list[str] = []
    out = tmp_path / "suite"
    import_transcripts(write_jsonl(tmp_path / "log.jsonl", messages), out, redact=redact, echo=lines.append)
    return out, lines


def scenarios_of(out: Path) -> dict[str, dict[str, Any]]:
    """The written scenario files by id (``_defaults.yaml`` left out)."""
    found = {}
    for path in sorted(out.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        found[data["id"]] = data
    return found


def suite_json(out: Path) -> dict[str, Any]:
    return json.loads((out / "_suite.json").read_text(encoding="utf-8"))
