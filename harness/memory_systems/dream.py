"""Dream Mode (seed 001, "V0.3 — open questions"): idle-window consolidation of the memory document.

"When the app sits idle for X minutes, summarize chat sessions into new memory
entries. Has serious privacy implications. Even with extractToolEnabled ON this
would be an additional opt-in." This module holds the decisions, each a pure
function the arm (:mod:`harness.memory_systems.dream_arm`) and the tests call:

- **when** (:func:`idle_windows`): a window opens before a session (or the
  probe) that starts more than ``idle_ms`` after the previous session started;
  it consolidates the sessions since the last window;
- **whether** (:func:`consolidation_denial`): never with memory off, agent reads
  off or extraction off (the seed's switches; Dream Mode needs extraction on and
  is opt-in on top of it), never for an incognito workspace (the probe's privacy
  context, :func:`incognito_workspaces`): no session of it is read, no entry of
  its file written;
- **what it asks** (:func:`consolidation_request`): one request per workspace
  file, holding only that workspace's pending sessions and that file's active
  entries (ids ``e1`` ...): another workspace's content never reaches the request;
- **what it writes** (:func:`apply_consolidation`): the reply's entries are
  appended through the extraction write path
  (:func:`harness.memory_systems.document_write.append_entry`: secrets redacted,
  the 128 KiB limit, no duplicate of an active entry); the entries a new one
  ``replaces`` are marked ``status=archived`` (superseded) in their metadata
  line, except one the new entry merely repeats; every append and every
  supersession is returned as a recorded write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.memory_systems.document import DocumentSettings
from harness.memory_systems.document_format import METADATA_PREFIX, _with_status, parse_memory_document
from harness.memory_systems.document_write import ExtractArguments, append_entry, parse_extract_arguments
from harness.memory_systems.write_prompt import render_transcript
from harness.scenarios import Scenario, Session
from memory_tools import ToolArgumentError

DEFAULT_IDLE_MINUTES = 60
"""X of the seed's "idle for X minutes": a gap longer than an hour between two sessions is an idle window."""
MAX_ENTRY_LINE_CHARS = 300
CONSOLIDATE_SYSTEM = (
    "You consolidate the user's memory file while the app is idle. You are given the file's current entries "
    "(each with an id) and the conversations since the last consolidation. Answer only with the JSON asked for: "
    "the durable facts, preferences and decisions worth keeping, each as one specific statement with its exact "
    "values; when a statement corrects or updates existing entries, list their ids in replaces; merge duplicates "
    "into one statement. Never include passwords, API keys or tokens."
)


@dataclass(frozen=True)
class Window:
    """One idle window: before ``before`` (a session id, or ``probe``) at ``at_ms``, it consolidates ``sessions``."""

    before: str
    at_ms: int
    sessions: tuple[Session, ...]


def idle_windows(sessions: Sequence[Session], probe_at_ms: int, idle_ms: int) -> list[Window]:
    """The windows of ``sessions`` (write order) and the probe: a gap of more than ``idle_ms`` between one start
    and the next opens one, holding the sessions since the previous window."""
    windows: list[Window] = []
    pending: list[Session] = []
    starts = [(s.id, s.started_at) for s in sessions[1:]] + [("probe", probe_at_ms)]
    for session, (next_id, next_at) in zip(sessions, starts):
        pending.append(session)
        if next_at - session.started_at > idle_ms:
            windows.append(Window(next_id, next_at, tuple(pending)))
            pending = []
    return windows


def incognito_workspaces(scenario: Scenario) -> frozenset[str | None]:
    """The workspaces whose privacy context is incognito: the probe's, when the probe runs incognito."""
    probe = scenario.probe
    return frozenset({probe.workspace}) if probe.incognito is not False else frozenset()


def consolidation_denial(settings: DocumentSettings, scenario: Scenario) -> str | None:
    """Why no consolidation may run for this user at all (a switch off), or None (fail closed: only ``True`` is on)."""
    policy = scenario.probe.policy
    if settings.enabled is not True or policy.enabled is not True:
        return "memory is turned off"
    if settings.agent_read_enabled is not True or policy.agent_read_enabled is not True:
        return "agent reads are off"
    if settings.extract_tool_enabled is not True:
        return "extraction is off (Dream Mode is an opt-in on top of it)"
    return None


def consolidation_scopes(window: Window, scenario: Scenario) -> dict[str | None, list[Session]]:
    """Workspace file -> its pending sessions, incognito workspaces left out (nothing of them is read)."""
    blocked = incognito_workspaces(scenario)
    scopes: dict[str | None, list[Session]] = {}
    for session in window.sessions:
        if session.workspace not in blocked:
            scopes.setdefault(session.workspace, []).append(session)
    return scopes


def _entry_line(label: str, title: str, content: str) -> str:
    text = " ".join(f"{title} — {content}".split())
    return f"[{label}] {text if len(text) <= MAX_ENTRY_LINE_CHARS else text[: MAX_ENTRY_LINE_CHARS - 1] + '…'}"


def consolidation_request(document: str, sessions: Iterable[Session], *, now_ms: int) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The messages, JSON-schema ``response_format`` and entry ids (``e1`` ...: the file's active entries, in file
    order) of one file's consolidation."""
    active = parse_memory_document(document, now_ms=now_ms).active_entries
    labels = [f"e{index + 1}" for index in range(len(active))]
    lines = [_entry_line(label, entry.title, entry.content) for label, entry in zip(labels, active)]
    transcripts = "\n\n".join(render_transcript(session) for session in sessions)
    user = "Current entries:\n" + ("\n".join(lines) or "(none)") + f"\n\nConversations since the last consolidation:\n{transcripts}"
    replaces = {"type": "array", "items": {"type": "string", "enum": labels}} if labels else {"type": "array", "maxItems": 0}
    schema = {"type": "object", "additionalProperties": False, "required": ["entries"], "properties": {"entries": {
        "type": "array", "items": {"type": "object", "required": ["content"], "additionalProperties": False,
                                   "properties": {"content": {"type": "string"}, "title": {"type": "string"},
                                                  "replaces": replaces}}}}}
    messages = [{"role": "system", "content": CONSOLIDATE_SYSTEM}, {"role": "user", "content": user}]
    return messages, {"type": "json_schema", "json_schema": {"name": "memory_consolidation", "schema": schema}}, labels


@dataclass(frozen=True)
class DreamWrite:
    """One recorded write of a consolidation: ``append`` (an entry added or found already there) or ``supersede``."""

    action: str
    entry_id: str
    content: str
    """The text as written (redacted) or, for ``supersede``, the content of the entry archived."""
    event: str
    """``appended``/``unchanged`` (append), ``archived`` (supersede), or why a write was refused."""


def parse_consolidation(reply: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    """(extract_memory arguments, ids it replaces) per entry of the reply; anything malformed is left out."""
    try:
        value = json.loads(reply)
    except (json.JSONDecodeError, TypeError, ValueError):
        return []
    entries = value.get("entries") if isinstance(value, dict) else None
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        replaces = entry.get("replaces")
        ids = tuple(r for r in replaces if isinstance(r, str)) if isinstance(replaces, list) else ()
        out.append(({k: entry[k] for k in ("content", "title") if k in entry}, ids))
    return out


def supersede(document: str, entry_id: str) -> str:
    """``document`` with the entry whose metadata ``id`` is ``entry_id`` marked ``status=archived``."""
    lines = document.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.lstrip().startswith(METADATA_PREFIX) and f" id={entry_id} " in f" {line.strip()} ":
            lines[index] = _with_status(line, "archived")
            break
    return "".join(lines)


def apply_consolidation(document: str, reply: str, labels: Sequence[str], *, now_ms: int,
                        settings: DocumentSettings) -> tuple[str, list[DreamWrite]]:
    """The file after the reply's entries are appended (redacted, deduplicated) and the entries they replace
    archived; every write in order. An entry the new one repeats word for word is kept, not superseded."""
    active = parse_memory_document(document, now_ms=now_ms).active_entries
    by_label = dict(zip(labels, active))
    writes: list[DreamWrite] = []
    archived: set[str] = set()
    for arguments, replaces in parse_consolidation(reply):
        try:
            args: ExtractArguments = parse_extract_arguments(arguments)
            document, event, identifier = append_entry(document, args, now_ms=now_ms, settings=settings)
        except ToolArgumentError as exc:
            writes.append(DreamWrite("append", "", "", f"refused: {exc}"))
            continue
        written = next((e for e in parse_memory_document(document).entries if e.id == identifier), None)
        writes.append(DreamWrite("append", identifier, written.content if written else "", event))
        for label in dict.fromkeys(replaces):
            old = by_label.get(label)
            if old is None or not old.id or old.id == identifier or old.id in archived:
                continue  # an id it was not shown, an entry without id, the entry it repeats, or one already archived
            archived.add(old.id)
            document = supersede(document, old.id)
            writes.append(DreamWrite("supersede", old.id, old.content, "archived"))
    return document, writes
