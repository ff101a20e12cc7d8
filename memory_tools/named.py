"""Named memories (``../shared/seeds/004_720c434a1af603d4.txt``): short, editable records addressed by name.

A third memory design beside the item store: the model keeps a small library
of named notes with three operations.

- ``remember(name, text, scope)`` upserts one record. Its id derives from the
  normalized name, the scope and the application identity (application,
  namespace and, for ``project``, the workspace key), never from the
  conversation, so a fresh session reaches the same record. Identical text is a
  no-op; a replacement keeps the creation time. Every write is reported as a
  :class:`WriteEvent` that tells ``created`` from ``updated`` (and
  ``unchanged``), so consumers do not confuse replacement with growth.
- ``forget(name, scope)`` deletes the record.
- ``recall`` reads one record by exact name, or searches by topic: lexical
  overlap of the query's words with the names (weighted double) and the texts,
  default 5 results, at most 50. Scope is filtered in SQL *before* ranking and
  limiting, so another workspace's records can never crowd out the run's own.

Scopes: ``user`` is the product store's ``global`` scope (no scope key),
``project`` is ``workspace`` scope (the run's workspace key). A recall-
disable setting (:class:`NamedIdentity` ``recall_enabled=False``) makes
every recall, exact-name reads included, find nothing without reading
storage and without deleting anything: the cold control. ``remember`` still
upserts as usual.

Deterministic ids are not authorization: the Host derives the identity from
the run, and the model never supplies it.

Example:
    >>> store = NamedMemoryStore()
    >>> who = NamedIdentity(application="recall-eval", workspace_key="ws-1")
    >>> store.remember("deploy route", "make deploy ENV=prod", "project", who, now=1).event
    'created'
    >>> store.remember("deploy route", "make deploy ENV=prod", "project", who, now=2).event
    'unchanged'
    >>> [m.name for m in store.recall(who, query="how do I deploy")]
    ['deploy route']
"""

from __future__ import annotations

import sqlite3
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

from memory_tools.model import MemoryStoreError, MemoryValidationError
from memory_tools.named_model import (
    DEFAULT_RECALL_LIMIT,
    MAX_RECALL_LIMIT,
    NAMED_SCHEMA_VERSION,
    NamedIdentity,
    NamedMemory,
    NamedScope,
    WriteEvent,
    WriteKind,
    check_scope,
    named_memory_id,
    normalize_name,
    normalize_text,
    overlap_score,
    scope_key_of,
    words,
)

_DDL = """
CREATE TABLE named_memory (
    memory_id TEXT NOT NULL PRIMARY KEY,
    application TEXT NOT NULL,
    namespace TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('user', 'project')),
    scope_key TEXT,
    normalized_name TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    version INTEGER NOT NULL CHECK (version >= 1),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    CHECK ((scope = 'user') = (scope_key IS NULL))
);
CREATE INDEX named_memory_scope ON named_memory (application, namespace, scope, scope_key);
CREATE TABLE named_memory_event (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    name TEXT NOT NULL,
    scope TEXT NOT NULL,
    event TEXT NOT NULL CHECK (event IN ('created', 'updated', 'forgotten')),
    at INTEGER NOT NULL
);
"""
_COLUMNS = "memory_id, application, namespace, scope, scope_key, name, text, version, created_at, updated_at"


class NamedMemoryStore:
    """Named memories in one SQLite database (a file or ``":memory:"``), safe to share between threads.

    Args:
        path: A database file (created when new) or ``":memory:"``.

    Raises:
        MemoryStoreError: the file is not a named-memory store, or SQLite cannot open it.
    """

    def __init__(self, path: str = ":memory:") -> None:
        self._path = str(path)
        self._lock = threading.RLock()
        try:
            self._db: sqlite3.Connection | None = _connect(self._path)
        except sqlite3.Error as error:
            raise MemoryStoreError(f"cannot open named memory store {self._path!r}: {error}") from error

    def close(self) -> None:
        """Close the database; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> NamedMemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._db is None:
                raise MemoryStoreError(f"named memory store {self._path!r} is closed")
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")  # inside: a COMMIT that fails (busy) is rolled back, not left open for good
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    # -- writes ------------------------------------------------------------------------------------
    def remember(self, name: str, text: str, scope: NamedScope, identity: NamedIdentity, *, now: int) -> WriteEvent:
        """Upsert the record ``name`` in ``scope``: create it, replace its text, or do nothing.

        A replacement keeps ``created_at`` and the first-written display name,
        adds 1 to the version and sets ``updated_at`` to ``max(updated_at, now)``.
        Works whatever ``identity.recall_enabled`` says.

        Raises:
            MemoryValidationError: a bad name, text, scope or time, or ``project`` without a workspace.
        """
        memory_id = named_memory_id(name, scope, identity)
        display, normalized, body = _display_name(name), normalize_name(name), normalize_text(text)
        _check_now(now)
        with self._transaction() as db:
            current = _read(db, memory_id)
            if current is not None and current.text == body:
                return WriteEvent("unchanged", current)
            if current is None:
                memory = NamedMemory(
                    memory_id, identity.application, identity.namespace, scope, scope_key_of(scope, identity),
                    display, body, 1, now, now,
                )  # fmt: skip
                db.execute(
                    f"INSERT INTO named_memory ({_COLUMNS}, normalized_name) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (*_row(memory), normalized),
                )
                event: WriteKind = "created"
            else:
                memory = NamedMemory(
                    current.memory_id, current.application, current.namespace, current.scope, current.scope_key,
                    current.name, body, current.version + 1, current.created_at, max(current.updated_at, now),
                )  # fmt: skip
                db.execute(
                    "UPDATE named_memory SET text = ?, version = ?, updated_at = ? WHERE memory_id = ?",
                    (memory.text, memory.version, memory.updated_at, memory_id),
                )
                event = "updated"
            _log_event(db, memory, event, now)
        return WriteEvent(event, memory)

    def forget(self, name: str, scope: NamedScope, identity: NamedIdentity, *, now: int) -> WriteEvent | None:
        """Delete the record ``name`` in ``scope``; None when there is none.

        Raises:
            MemoryValidationError: a bad name or scope, or ``project`` without a workspace.
        """
        memory_id = named_memory_id(name, scope, identity)
        _check_now(now)
        with self._transaction() as db:
            current = _read(db, memory_id)
            if current is None:
                return None
            db.execute("DELETE FROM named_memory WHERE memory_id = ?", (memory_id,))
            _log_event(db, current, "forgotten", now)
        return WriteEvent("forgotten", current)

    # -- reads -------------------------------------------------------------------------------------
    def get(self, name: str, scope: NamedScope, identity: NamedIdentity) -> NamedMemory | None:
        """Point read of one record, for the Host and tests; ignores ``recall_enabled``."""
        memory_id = named_memory_id(name, scope, identity)
        with self._transaction() as db:
            return _read(db, memory_id)

    def recall(
        self,
        identity: NamedIdentity,
        *,
        name: str | None = None,
        query: str | None = None,
        scope: NamedScope | None = None,
        limit: int = DEFAULT_RECALL_LIMIT,
    ) -> list[NamedMemory]:
        """Exact-name point reads (``name``) or a bounded topic search (``query``), in the identity's scopes.

        ``scope`` None searches ``user`` plus, when the run has a workspace,
        ``project``. By name: the record of each searched scope with that name
        (``project`` first). By query: records whose name or text shares a word
        with the query, ranked by :func:`overlap_score` (descending), then
        ``updated_at`` descending, then memory id; scope is filtered before
        ranking and ``limit``. With ``identity.recall_enabled`` False the
        result is empty and storage is not read.

        Raises:
            MemoryValidationError: not exactly one of ``name`` and ``query``, a bad
                scope, or ``limit`` outside 1..:data:`MAX_RECALL_LIMIT`.
        """
        if (name is None) == (query is None):
            raise MemoryValidationError("recall needs exactly one of name (point read) and query (topic search)")
        if type(limit) is not int or not 1 <= limit <= MAX_RECALL_LIMIT:
            raise MemoryValidationError(f"limit must be an integer from 1 to {MAX_RECALL_LIMIT} (got {limit!r})")
        scopes = _searched_scopes(scope, identity)
        if name is not None:
            normalize_name(name)
        if not identity.recall_enabled:
            return []
        if name is not None:
            ids = [named_memory_id(name, s, identity) for s in sorted(scopes, key=lambda s: s != "project")]
            with self._transaction() as db:
                found = [_read(db, memory_id) for memory_id in ids]
            return [m for m in found if m is not None][:limit]
        terms = words(query or "")
        if not terms:
            return []
        with self._transaction() as db:
            candidates = _in_scope(db, identity, scopes)
        scored = [(overlap_score(terms, m), m) for m in candidates]
        scored = [(score, m) for score, m in scored if score > 0]
        scored.sort(key=lambda pair: (-pair[0], -pair[1].updated_at, pair[1].memory_id))
        return [m for _, m in scored[:limit]]

    def all_memories(self) -> list[NamedMemory]:
        """Every stored record of every identity, by memory id (for scoring the writes)."""
        with self._transaction() as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM named_memory ORDER BY memory_id").fetchall()
        return [_memory(row) for row in rows]

    def events(self) -> list[tuple[WriteKind, str, str, int]]:
        """The write log in order: ``(event, memory_id, name, at)``; ``unchanged`` writes are not logged."""
        with self._transaction() as db:
            rows = db.execute("SELECT event, memory_id, name, at FROM named_memory_event ORDER BY seq").fetchall()
        return [(row[0], row[1], row[2], row[3]) for row in rows]


def _searched_scopes(scope: object, identity: NamedIdentity) -> tuple[NamedScope, ...]:
    if scope is not None:
        chosen = check_scope(scope)
        scope_key_of(chosen, identity)  # project without a workspace is an error, not an empty result
        return (chosen,)
    return ("user", "project") if identity.workspace_key is not None else ("user",)


def _in_scope(db: sqlite3.Connection, identity: NamedIdentity, scopes: tuple[NamedScope, ...]) -> list[NamedMemory]:
    """Every record the identity may see in ``scopes``: the SQL filter that runs before any ranking or limit."""
    clauses, parameters = [], [identity.application, identity.namespace]
    if "user" in scopes:
        clauses.append("(scope = 'user' AND scope_key IS NULL)")
    if "project" in scopes and identity.workspace_key is not None:
        clauses.append("(scope = 'project' AND scope_key = ?)")
        parameters.append(identity.workspace_key)
    if not clauses:
        return []
    sql = f"SELECT {_COLUMNS} FROM named_memory WHERE application = ? AND namespace = ? AND ({' OR '.join(clauses)})"
    return [_memory(row) for row in db.execute(sql, parameters).fetchall()]


def _display_name(name: str) -> str:
    return " ".join(unicodedata.normalize("NFC", name).split())


def _check_now(now: object) -> None:
    if type(now) is not int or now < 0:
        raise MemoryValidationError(f"now must be a non-negative integer (UTC milliseconds), got {now!r}")


def _read(db: sqlite3.Connection, memory_id: str) -> NamedMemory | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM named_memory WHERE memory_id = ?", (memory_id,)).fetchone()
    return None if row is None else _memory(row)


def _row(memory: NamedMemory) -> tuple[object, ...]:
    return (
        memory.memory_id, memory.application, memory.namespace, memory.scope, memory.scope_key, memory.name,
        memory.text, memory.version, memory.created_at, memory.updated_at,
    )  # fmt: skip


def _memory(row: tuple[object, ...]) -> NamedMemory:
    return NamedMemory(*row)  # type: ignore[arg-type]


def _log_event(db: sqlite3.Connection, memory: NamedMemory, event: WriteKind, at: int) -> None:
    db.execute(
        "INSERT INTO named_memory_event (memory_id, name, scope, event, at) VALUES (?,?,?,?,?)",
        (memory.memory_id, memory.name, memory.scope, event, at),
    )


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if version == 0 and not tables:
            db.executescript(f"BEGIN;{_DDL}PRAGMA user_version = {NAMED_SCHEMA_VERSION};COMMIT;")
        elif version != NAMED_SCHEMA_VERSION or ("named_memory",) not in tables:
            raise MemoryStoreError(
                f"{path!r} is not a named memory store of schema version {NAMED_SCHEMA_VERSION} "
                f"(user_version {version}); use a new file"
            )
    except BaseException:
        db.close()
        raise
    return db
