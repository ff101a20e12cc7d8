"""Model-extracted items for the product store: the ``recall`` arm with items the agent extracted itself.

- write (mode ``agent``): after each earlier session the agent model gets
  ``save_memory_item`` (content, kind, keys, statement and temporal type,
  event times, and ``scope``: this conversation's workspace or global) and
  ``forget_memory_items`` (archive the items of this conversation's scope
  with any of the given keys). Every item is validated by the store's own
  rules (``MemoryItemStore.create``): a rejected item comes back to the model
  as an ``invalid_arguments`` error naming the rule, is recorded, and never
  ends the sample. The Host sets the rest: a deterministic item id
  (``<session>-x<n>``), one source (the session, its last turn), origin
  ``agent_extracted``, observed and created at the session's start.
- read (the probe): exactly the ``recall`` arm (``Host`` over this store,
  ``memory_search``/``memory_get``, same gates, budgets and prompt).

Run beside ``recall`` (the same store and tools over the scenario's
hand-extracted items, the oracle), it separates extraction failures (the
agent never wrote the fact) from retrieval failures (the fact was stored but
the probe did not find it): see ``harness.score.writes``.
"""

from __future__ import annotations

import json
from typing import Any

from harness.memory_systems.builtin import ItemStoreContract, ItemStoreInstance
from harness.memory_systems.protocol import (
    MemoryInstance,
    MemorySystem,
    StaticToolRun,
    ToolExecution,
    ToolRun,
    WriteMode,
)
from harness.scenarios import Scenario, Session
from memory_tools import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    LifecycleState,
    MemoryItemSource,
    MemoryItemStore,
    MemoryStoreError,
    MemoryValidationError,
    ScopeType,
    StatementType,
    TemporalType,
    item_visible,
)

SAVE_TOOL = "save_memory_item"
FORGET_TOOL = "forget_memory_items"

SAVE_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SAVE_TOOL,
        "description": (
            "Save one atomic long-term memory item: one durable preference, fact about the user or their project, "
            "or decision, with its exact values. Give it short keys it will be searched by (topics, names, "
            "identifiers as written, e.g. 'ci provider', 'buildkite', 'deploy command'); a later search finds "
            "the item only when a search term equals a key or is a prefix of one."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "The statement itself."},
                "kind": {"type": "string", "enum": [k.value for k in Kind]},
                "keys": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 256},
                    "minItems": 1,
                    "maxItems": 32,
                    "description": "1 to 32 short search keys.",
                },
                "statementType": {"type": "string", "enum": [s.value for s in StatementType]},
                "temporalType": {
                    "type": "string",
                    "enum": [t.value for t in TemporalType],
                    "description": "undated (default); point/interval/open_ended need eventStartedAt (UTC ms).",
                },
                "eventStartedAt": {"type": ["integer", "null"], "minimum": 0},
                "eventEndedAt": {"type": ["integer", "null"], "minimum": 0},
                "scope": {
                    "type": "string",
                    "enum": ["workspace", "global"],
                    "description": "'workspace': this conversation's project only (default when there is one); "
                    "'global': true about the user everywhere.",
                },
            },
            "required": ["content", "kind", "keys"],
            "additionalProperties": False,
        },
    },
}
FORGET_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FORGET_TOOL,
        "description": "Forget (archive) the saved items of this conversation's scope that have any of these keys.",
        "parameters": {
            "type": "object",
            "properties": {"keys": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 32}},
            "required": ["keys"],
            "additionalProperties": False,
        },
    },
}
_SAVE_FIELDS = frozenset(SAVE_SPEC["function"]["parameters"]["properties"])


def _result(status: str, body: dict[str, Any], *, read: bool = True) -> ToolExecution:
    return ToolExecution("", "", status, json.dumps(body, ensure_ascii=False, separators=(",", ":")), storage_read=read)


def _error(code: str, message: str, *, read: bool = False) -> ToolExecution:
    return _result(code, {"error": {"code": code, "message": message}}, read=read)


class ExtractedItemsInstance(ItemStoreInstance):
    """An empty item store the agent fills session by session; the probe reads it like ``recall``."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario, MemoryItemStore(":memory:"))
        self._saved = 0
        self._forgets = 0
        self.rejected: list[str] = []
        """The store's reason for every rejected item, in order (also in each call's result)."""

    def begin_write(self, session: Session) -> ToolRun | None:
        return StaticToolRun(
            {
                SAVE_TOOL: (SAVE_SPEC, lambda args: self._save(session, args)),
                FORGET_TOOL: (FORGET_SPEC, lambda args: self._forget(session, args)),
            }
        )

    def _save(self, session: Session, args: dict[str, Any]) -> ToolExecution:
        unknown = sorted(str(k) for k in args if k not in _SAVE_FIELDS)
        if unknown:
            return self._reject(f"unknown properties {unknown}; accepted: {', '.join(sorted(_SAVE_FIELDS))}")
        scope = args.get("scope") or ("workspace" if session.workspace else "global")
        if scope not in ("workspace", "global"):
            return self._reject(f'scope must be "workspace" or "global", got {scope!r}')
        if scope == "workspace" and session.workspace is None:
            return self._reject('this conversation has no workspace: use scope "global"')
        raw_keys = args.get("keys")
        keys = tuple(KeyInput(k, KeyType.CONCEPT, KeyOrigin.LLM) for k in raw_keys) if isinstance(raw_keys, list) else raw_keys
        self._saved += 1
        item_id = f"{session.id}-x{self._saved}"
        turn = session.turns[-1]
        item = ItemInput(
            content=args.get("content"),  # type: ignore[arg-type]  # the store's rules judge every value
            kind=args.get("kind"),  # type: ignore[arg-type]
            keys=keys,  # type: ignore[arg-type]
            sources=(MemoryItemSource(session.id, f"write-{session.id}", turn.id or "t1", f"{session.id}:write:{self._saved}"),),
            statement_type=args.get("statementType") or StatementType.FACT,
            temporal_type=args.get("temporalType") or TemporalType.UNDATED,
            scope_type=ScopeType.WORKSPACE if scope == "workspace" else ScopeType.GLOBAL,
            scope_key=session.workspace if scope == "workspace" else None,
            event_started_at=args.get("eventStartedAt"),
            event_ended_at=args.get("eventEndedAt"),
            observed_at=session.started_at,
            item_id=item_id,
            now=session.started_at,
        )
        try:
            record = self.store.create(item)
        except MemoryStoreError as exc:  # validation (the store's own rules) or a conflict: recorded, never fatal
            return self._reject(f"item rejected: {exc}", read=True)
        return _result("ok", {"event": "created", "itemId": record.item.item_id, "keys": [k.key for k in record.keys]})

    def _reject(self, reason: str, *, read: bool = False) -> ToolExecution:
        self.rejected.append(reason)
        return _error("invalid_arguments", reason, read=read)

    def _forget(self, session: Session, args: dict[str, Any]) -> ToolExecution:
        raw = args.get("keys")
        if set(args) - {"keys"} or not isinstance(raw, list) or not raw or not all(isinstance(k, str) for k in raw):
            return _error("invalid_arguments", 'send {"keys": ["<key>", ...]}: the keys of the items to forget')
        try:
            found = self.store.search_by_keys(raw, "exact", workspace_key=session.workspace, limit=100)
        except MemoryValidationError as exc:
            return _error("invalid_arguments", str(exc))
        archived = []
        for record in found:
            if item_visible(record.item, session.workspace) and record.item.lifecycle_state == LifecycleState.ACTIVE:
                self.store.archive(record.item.item_id, now=session.started_at)
                archived.append(record.item.item_id)
        if not archived:
            return _error("not_found", "no saved item of this conversation's scope has any of these keys", read=True)
        self._forgets += len(archived)
        return _result("ok", {"event": "forgotten", "itemIds": archived})


class ExtractedItemsSystem(ItemStoreContract, MemorySystem):
    """The product store filled by the agent model (structured extraction), read like ``recall``."""

    name = "memory_tools_extracted"
    description = "the recall arm over items the agent extracted after each session (save_memory_item)"
    arms = {"recall_extracted": "agent"}
    forgetting = "archive by exact key"
    ingests = "raw turns"  # the agent model extracts items from each session's transcript

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return ExtractedItemsInstance(scenario)

