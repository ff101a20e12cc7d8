"""One SQLite database under a lock: how a memory store opens, copies, closes and runs its transactions.

:class:`memory_tools.store.MemoryItemStore` builds the item operations on this. One connection per store,
guarded by a re-entrant lock, so a store can be shared by threads; every transaction is rolled back on any
error, a failing ``COMMIT`` (a full disk) included.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Self

from memory_tools import _schema
from memory_tools._key_index import KeyIndexCache
from memory_tools._schema import SCHEMA_VERSION
from memory_tools.model import MemoryStoreError


class StoreDatabase:
    """The database of one memory store: its connection, lock, key-index cache and transactions.

    Args:
        path: A database file (created with the schema when new) or ``":memory:"``.

    Raises:
        MemoryStoreError: The file is not a memory store, or its schema version is unknown.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self._path = os.fspath(path)
        self._lock = threading.RLock()
        self._key_index = KeyIndexCache()  # in-memory key rows for wide prefix searches, dropped by every write
        try:
            self._db: sqlite3.Connection | None = _schema.connect(self._path)
        except sqlite3.Error as error:
            raise MemoryStoreError(f"cannot open memory store {self._path!r}: {error}") from error

    # -- lifecycle of the store --------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self._path

    @property
    def closed(self) -> bool:
        return self._db is None

    def schema_version(self) -> int:
        """The schema version recorded in the database (``PRAGMA user_version``)."""
        with self._lock:
            return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def journal_mode(self) -> str:
        """SQLite's journal mode: ``wal`` for file databases, ``memory`` for ``:memory:``."""
        with self._lock:
            return str(self._conn().execute("PRAGMA journal_mode").fetchone()[0])

    def close(self) -> None:
        """Close the database; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
                self._key_index.drop()

    def snapshot(self) -> bytes:
        """The whole database as one image (SQLite ``serialize``), for :meth:`from_snapshot` to copy.

        The evaluation harness seeds a conversation's store once and opens a
        copy per sample instead of inserting and validating every item again.
        """
        with self._lock:
            return self._conn().serialize()

    @classmethod
    def from_snapshot(cls, image: bytes) -> Self:
        """A new in-memory store holding a copy of ``image`` (from :meth:`snapshot`); the image is not changed.

        Raises:
            MemoryStoreError: ``image`` is not a memory store of this schema version.
        """
        store = cls(":memory:")
        with store._lock:
            db = store._conn()
            try:
                db.deserialize(image)
                version = db.execute("PRAGMA user_version").fetchone()[0]
            except sqlite3.Error as error:
                store.close()
                raise MemoryStoreError(f"not a memory store image: {error}") from error
            if version != SCHEMA_VERSION:
                store.close()
                raise MemoryStoreError(f"memory store image has schema version {version}, expected {SCHEMA_VERSION}")
            db.execute("PRAGMA foreign_keys = ON")
        return store

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise MemoryStoreError(f"memory store {self._path!r} is closed")
        return self._db

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """One transaction under the lock; rolled back on any error."""
        with self._lock:
            db = self._conn()
            db.execute(begin)
            try:
                yield db
                db.execute("COMMIT")  # inside: a COMMIT that fails (disk full) is rolled back, not left open for good
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (takes the write lock at once); the in-memory key index is stale after it."""
        with self._transaction("BEGIN IMMEDIATE") as db:
            self._key_index.drop()
            yield db

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read snapshot."""
        return self._transaction("BEGIN")
