"""A team's real memory store as the items of every scenario: ``--store FILE`` on ``run`` and ``validate``.

``FILE`` is a memory-item SQLite file in :mod:`memory_tools`' schema, or the
JSON export of its items (``docs/store-export.md``). It is only ever read: the
SQLite file's bytes, with the commits of a ``-wal`` beside the real file (a
store in use) checkpointed into a private copy, are opened in memory
(:mod:`harness.scenarios.store_file`; nothing is written beside the store,
and ``sha256`` covers the WAL's commits). A FIFO or any file that is not a
regular one is refused, and so is a store of another schema version than
:data:`memory_tools.SCHEMA_VERSION`; a damaged value (a ``created_at`` that is
no time, keys that are not a list, a key row of no item, JSON nested past
Python's limit) is one :class:`StoreError` naming the item and field.

Every scenario's hand-written ``items`` are replaced by the store's, less
those the store did not hold yet when the probe ran (``created_at`` at or
after ``probe.started_at``: a store read today knows the future of an old
session). Every scope is kept: the Host filters them exactly as in
production (:func:`memory_tools.item_visible`: global items and the probe's
own workspace, active only), and scoring sees the others' workspaces, so a
scope violation is still caught. Items are seeded with ``observed_at`` as
their store time (the seeding's rule), so search ranks them by it rather
than by the real ``updated_at``; their version restarts at 1.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.scenarios.models import ItemSpec, Scenario
from memory_tools import SCHEMA_VERSION, LifecycleState, MemoryItem, ScopeType, item_visible

EXPORT_FORMAT = "recall-eval-memory-items"
"""The ``format`` field of a JSON export (docs/store-export.md)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"
_NOT_IDENT = re.compile(r"[^A-Za-z0-9._:-]+")
_TABLES = ("memory_item", "memory_item_key", "memory_item_source")


class StoreError(Exception):
    """The ``--store`` file cannot be used; the message names the file, the field and the fix."""


@dataclass(frozen=True)
class StoreItems:
    """The items of a store file, oldest first by ``created_at``, and what identifies the file."""

    path: str
    sha256: str
    schema_version: int
    items: tuple[ItemSpec, ...]
    #: ``created_at`` of each item (UTC milliseconds), in the order of ``items``.
    created: tuple[int, ...]

    def record(self) -> dict[str, Any]:
        """What ``run.json`` records of the store (its path, digest, version and size; never an item)."""
        return {"path": self.path, "sha256": self.sha256, "schema_version": self.schema_version,
                "items": len(self.items)}


def _provenance_id(text: Any, fallback: str) -> str:
    """A source's session or turn id as an identifier (provenance only: the Host never filters on it)."""
    cleaned = _NOT_IDENT.sub("-", str(text)).strip("-._:")
    return cleaned[:512] if cleaned else fallback


def _objects(row: dict[str, Any], field: str, where: str) -> list[dict[str, Any]]:
    """``row[field]`` (keys or sources): a list of objects, or none.

    Raises:
        StoreError: it is a string, a number or a list holding anything but objects.
    """
    value = row.get(field) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise StoreError(f"{where}: field {field!r} {value!r:.80} must be a list of objects "
                         f"(docs/store-export.md)")
    return value


def _spec(row: dict[str, Any], where: str) -> ItemSpec:
    row = row | {"keys": _objects(row, "keys", where), "sources": _objects(row, "sources", where)}
    sources = [{"session": _provenance_id(s.get("session_id"), "session"), "turn": _provenance_id(s.get("turn_id"), "turn")}
               for s in row.get("sources") or []]
    keys = [{"key": k.get("key"), "type": k.get("key_type", "concept"), "origin": k.get("key_origin", "llm")}
            for k in row.get("keys") or []]
    scope = row.get("scope_type", "workspace" if row.get("scope_key") is not None else "global")
    if (scope == ScopeType.GLOBAL) != (row.get("scope_key") is None):
        raise StoreError(f"{where}: scope_type {scope!r} with scope_key {row.get('scope_key')!r}: a global item has "
                         "no scope key and a workspace item has one")
    data = {
        "id": row.get("item_id"), "content": row.get("content"), "kind": row.get("kind"),
        "statement_type": row.get("statement_type", "fact"), "temporal_type": row.get("temporal_type", "undated"),
        "event_started_at": row.get("event_started_at"), "event_ended_at": row.get("event_ended_at"),
        "observed_at": row.get("observed_at"), "workspace": row.get("scope_key"),
        "state": row.get("lifecycle_state", "active"), "origin": row.get("origin", "agent_extracted"),
        "keys": keys, "sources": sources,
    }
    try:
        return ItemSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        field = {"id": "item_id", "workspace": "scope_key", "state": "lifecycle_state"}.get(field, field)
        raise StoreError(f"{where}: field {field!r} {first.get('input')!r}: {first['msg']}") from None


def _sqlite_rows(path: Path, data: bytes) -> tuple[int, list[dict[str, Any]]]:
    image = bytearray(data)  # with its WAL's commits already in (harness.scenarios.store_file)
    image[18:20] = b"\x01\x01"  # a WAL-mode header as a rollback one: an in-memory copy has no WAL to read
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(bytes(image))
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in _TABLES if t not in tables]
        if missing:
            raise StoreError(f"{path}: not a memory store (no table {', '.join(missing)}); give a memory-item SQLite "
                             "file of memory_tools or its JSON export (docs/store-export.md)")
        check_version(version, path)
        db.row_factory = sqlite3.Row
        items = {r["item_id"]: dict(r) | {"keys": [], "sources": []}
                 for r in db.execute("SELECT * FROM memory_item ORDER BY item_id")}
        for table, field, query in (
                ("memory_item_key", "keys", "SELECT item_id, key, key_type, key_origin FROM memory_item_key ORDER BY item_id, key"),
                ("memory_item_source", "sources", "SELECT * FROM memory_item_source ORDER BY item_id, position")):
            for r in db.execute(query):
                owner = items.get(r["item_id"])
                if owner is None:
                    raise StoreError(f"{path}: a {table} row names item_id {r['item_id']!r}, which the store does not "
                                     "hold (a damaged store: PRAGMA foreign_key_check lists such rows)")
                owner[field].append(dict(r))
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read the store: {exc}") from None
    finally:
        db.close()
    return version, list(items.values())


def check_version(version: Any, path: Path) -> None:
    """Refuse a store of another schema version than this memory_tools reads.

    Raises:
        StoreError: naming both versions and what to do.
    """
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: memory store schema version {version!r}, and this harness reads version "
                         f"{SCHEMA_VERSION} (memory_tools SCHEMA_VERSION); open it with the memory_tools that wrote "
                         "it and export its items as JSON of this version (docs/store-export.md), or upgrade it")


def _json_rows(path: Path, data: bytes) -> tuple[int, list[dict[str, Any]]]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise StoreError(f"{path}: neither a memory-item SQLite file nor a JSON export ({exc})") from None
    except RecursionError:
        raise StoreError(f"{path}: JSON nested deeper than Python reads; an export is a list of flat item "
                         "objects (docs/store-export.md)") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise StoreError(f"{path}: field 'format' must be {EXPORT_FORMAT!r} (docs/store-export.md)")
    check_version(doc.get("schema_version"), path)
    items = doc.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise StoreError(f"{path}: field 'items' must be a list of item objects (docs/store-export.md)")
    return doc["schema_version"], items


def load_store(path: str | Path) -> StoreItems:
    """The items of the store file ``path`` (SQLite or JSON export), read without writing anything.

    Raises:
        StoreError: the file is missing, of another format or schema version, or an item breaks the scenario
            format (the message names the item and field).
    """
    path, data = _read(path, "--store")
    version, rows = (_sqlite_rows if data.startswith(_SQLITE_MAGIC) else _json_rows)(path, data)
    specs: list[tuple[int, ItemSpec]] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = f"{path}: item {row.get('item_id')!r}" if row.get("item_id") else f"{path}: items[{index}]"
        spec = _spec(row, where)
        if spec.id in seen:
            raise StoreError(f"{where}: item_id repeated; every item id is unique in a store")
        seen.add(spec.id)
        if spec.observed_at is None:
            raise StoreError(f"{where}: field 'observed_at' is missing")
        specs.append((_created(row.get("created_at", spec.observed_at), where), spec))
    specs.sort(key=lambda pair: (pair[0], pair[1].id))
    return StoreItems(str(path), hashlib.sha256(data).hexdigest(), int(version),
                      tuple(s for _, s in specs), tuple(c for c, _ in specs))


#: 9999-12-31T23:59:59.999Z in UTC milliseconds: past it a ``created_at`` is no date Python can show.
_LAST_MILLIS = 253_402_300_799_999


def _created(value: Any, where: str) -> int:
    """An item's ``created_at`` as UTC milliseconds: an integer, a whole finite number or ISO 8601, 0 to year 9999.

    Raises:
        StoreError: naming the item and value (NULL, text that is no time, NaN, 1e400, a list ...).
    """
    from harness.scenarios.field_types import to_millis

    millis: Any = value
    if isinstance(value, str):
        try:
            millis = to_millis(value)
        except ValueError:
            millis = None
    elif isinstance(value, float) and value.is_integer():
        millis = int(value)
    if type(millis) is not int or not 0 <= millis <= _LAST_MILLIS:
        raise StoreError(f"{where}: field 'created_at' {value!r} is not a time: give UTC milliseconds (0 to "
                         f"{_LAST_MILLIS}, year 9999) or ISO 8601 such as 2026-03-02T10:00:00Z")
    return millis


def _read(path: str | Path, label: str) -> tuple[Path, bytes]:
    """(real path, bytes with any WAL checkpointed in) of a store file, as :func:`harness.scenarios.store_file.read_store_bytes`."""
    from harness.scenarios.store_file import StoreFileError, read_store_bytes

    try:
        return read_store_bytes(path, label)
    except StoreFileError as exc:
        raise StoreError(str(exc)) from None


def with_store(scenarios: Iterable[Scenario], store: StoreItems) -> list[Scenario]:
    """``scenarios`` with their items replaced by the store's items created before each probe started.

    Probes that see the same items share one list (so the runner seeds one store template for them).
    """
    lists: dict[int, list[ItemSpec]] = {}
    out = []
    for scenario in scenarios:
        n = bisect.bisect_left(store.created, scenario.probe.started_at)  # created strictly before the probe
        items = lists.get(n)
        if items is None:
            items = lists[n] = list(store.items[:n])
        out.append(scenario.model_copy(update={"items": items}))
    return out


def visible_counts(scenarios: Sequence[Scenario]) -> list[tuple[str, int, int]]:
    """(scenario id, items in its store, items its probe may read) by the Host's own rule (:func:`memory_tools.item_visible`)."""
    out = []
    for scenario in scenarios:
        workspace = scenario.probe.workspace
        visible = sum(item_visible(_as_item(item), workspace) for item in scenario.items)
        out.append((scenario.id, len(scenario.items), visible))
    return out


def _as_item(spec: ItemSpec) -> MemoryItem:
    """Enough of a store record for the Host's scope rule: scope and lifecycle (the rest is unused)."""
    scope = ScopeType.WORKSPACE if spec.workspace is not None else ScopeType.GLOBAL
    return MemoryItem(spec.id, 1, spec.content, spec.kind, spec.statement_type, spec.temporal_type, scope,
                      spec.workspace, spec.event_started_at, spec.event_ended_at, spec.observed_at or 0,
                      LifecycleState(spec.state), spec.origin, "", 0, 0)


def export_document(path: str | Path) -> dict[str, Any]:
    """The JSON export (docs/store-export.md) of the memory-item SQLite file ``path``, read as :func:`load_store` reads.

    Raises:
        StoreError: as :func:`load_store`.
    """
    path, data = _read(path, "export")
    if not data.startswith(_SQLITE_MAGIC):
        raise StoreError(f"{path}: not an SQLite file")
    version, rows = _sqlite_rows(path, data)
    items = []
    for row in rows:
        row = dict(row)
        row["keys"] = [{k: key[k] for k in ("key", "key_type", "key_origin")} for key in row["keys"]]
        row["sources"] = [{k: s[k] for k in ("session_id", "run_id", "turn_id", "event_id")} for s in row["sources"]]
        row.pop("content_hash", None)
        items.append(row)
    return {"format": EXPORT_FORMAT, "schema_version": version, "items": items}
