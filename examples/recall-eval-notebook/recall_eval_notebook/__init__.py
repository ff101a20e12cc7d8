"""A notebook memory system for recall-eval: the agent writes notes, then searches them.

A complete third-party system in one file (``docs/memory-systems.md`` walks
through it). It registers under the ``recall_eval.memory_systems`` entry-point
group (see ``pyproject.toml``) and offers one arm, ``notebook``, with write
mode ``agent``:

- write phase: after each earlier session the agent gets ``note_save(title,
  text)`` (upsert by title within the session's scope; identical text is a
  no-op) and ``note_forget(title)``;
- probe: ``note_search(query)`` returns up to five notes (fewer when the run's
  retrieval budget says so: ``self.retrieval_budget``) of the probe's scope
  (global plus its workspace) sharing words with the query, most shared
  first, newest first on ties. Under a denying policy (incognito, memory off,
  agent reads off) no tool is offered and nothing is read.

Storage is a dict per sample: recall-eval opens a fresh instance for every
sample, so nothing crosses samples.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    StaticToolRun,
    ToolExecution,
    policy_denial,
    probe_messages,
)

__version__ = "0.1.0"

MAX_RESULTS = 5
_WORD = re.compile(r"\w+")
TOOL_INSTRUCTIONS = (
    "Notebook: you can search notes saved from the user's earlier conversations with note_search. Search "
    "before answering questions about earlier conversations, preferences or decisions; use only what it "
    "returns, and if it finds nothing relevant, say you don't know."
)


def _spec(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False},
        },
    }


SAVE_SPEC = _spec(
    "note_save",
    "Save or replace one note in the user's notebook: a short stable title and the full text of the fact.",
    {"title": {"type": "string", "description": "Short stable title, e.g. 'dev server port'"},
     "text": {"type": "string", "description": "The fact with its exact values"}},
)
FORGET_SPEC = _spec("note_forget", "Forget (delete) the note with this title.", {"title": {"type": "string"}})
SEARCH_SPEC = _spec(
    "note_search",
    "Search the user's notebook for notes sharing words with the query; returns up to five notes with title and text.",
    {"query": {"type": "string", "description": "Words to look for"}},
)


@dataclass
class Note:
    title: str
    text: str
    scope: str | None
    written_at: int
    order: int


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _result(status: str, payload: dict[str, Any], disclosed: tuple[str, ...] = (), read: bool = False) -> ToolExecution:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return ToolExecution(name="", arguments="", status=status, result_text=text, disclosed_item_ids=disclosed, storage_read=read)


def _notes(found: list[Note]) -> dict[str, Any]:
    return {"results": [{"title": n.title, "text": n.text} for n in found]}


def _text_argument(arguments: dict[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


class NotebookInstance(MemoryInstance):
    """One sample's notebook."""

    def __init__(self, scenario: Any) -> None:
        super().__init__(scenario)
        self.notes: dict[tuple[str | None, str], Note] = {}

    def begin_write(self, session: Any) -> StaticToolRun:
        scope, now = session.workspace, session.started_at

        def save(arguments: dict[str, Any]) -> ToolExecution:
            title, text = _text_argument(arguments, "title"), _text_argument(arguments, "text")
            if title is None or text is None:
                return _result("invalid_arguments", {"error": {"code": "invalid_arguments", "message": "title and text are required strings"}})
            key = (scope, title.lower())
            old = self.notes.get(key)
            if old is not None and old.text == text:
                return _result("ok", {"saved": title, "event": "unchanged"}, read=True)
            self.notes[key] = Note(title, text, scope, now, len(self.notes))
            return _result("ok", {"saved": title, "event": "updated" if old else "created"}, read=True)

        def forget(arguments: dict[str, Any]) -> ToolExecution:
            title = _text_argument(arguments, "title")
            if title is None:
                return _result("invalid_arguments", {"error": {"code": "invalid_arguments", "message": "title is required"}})
            removed = self.notes.pop((scope, title.lower()), None)
            missing = {"error": {"code": "not_found", "message": f"no note titled {title!r}"}}
            return _result("ok" if removed else "not_found", {"forgotten": title} if removed else missing, read=True)

        return StaticToolRun({"note_save": (SAVE_SPEC, save), "note_forget": (FORGET_SPEC, forget)})

    def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
        if policy_denial(policy, context) is not None:  # the policy gate: cold, and no storage read
            return ProbeSetup(probe_messages(self.scenario))
        workspace = context.workspace_key

        def search(arguments: dict[str, Any]) -> ToolExecution:
            query = _text_argument(arguments, "query")
            if query is None:
                return _result("invalid_arguments", {"error": {"code": "invalid_arguments", "message": "query is required"}})
            wanted = _words(query)
            scored = []
            for note in self.notes.values():
                if note.scope is not None and note.scope != workspace:
                    continue  # another workspace's note: never visible
                shared = len(wanted & (_words(note.title) | _words(note.text)))
                if shared:
                    scored.append((-shared, -note.written_at, -note.order, note))
            # The run's retrieval budget (recall-eval sets it on the instance; an older recall-eval does not).
            budget = getattr(self, "retrieval_budget", None)
            top_k, chars = (budget.top_k, budget.chars) if budget is not None else (MAX_RESULTS, None)
            found = [note for *_, note in sorted(scored, key=lambda s: s[:3])[:min(MAX_RESULTS, top_k)]]
            while found and chars is not None and len(_result("ok", _notes(found)).result_text) > chars:
                found.pop()  # whole notes dropped from the end until the result fits the budget
            ids = tuple(f"note:{note.scope or '-'}:{note.title}" for note in found)
            return _result("ok", _notes(found), ids, read=True)

        tools = StaticToolRun({"note_search": (SEARCH_SPEC, search)})
        return ProbeSetup(probe_messages(self.scenario, tool_instructions=TOOL_INSTRUCTIONS), tools)


class NotebookSystem(MemorySystem):
    """The notebook: agent-written notes, searched by shared words."""

    name = "notebook"
    description = "notes the agent writes after each session (note_save/note_forget), searched at the probe (note_search)"
    arms = {"notebook": "agent"}

    def open(self, scenario: Any, write_mode: str) -> NotebookInstance:
        return NotebookInstance(scenario)
