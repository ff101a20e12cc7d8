"""Memory-item store files for the ``--store`` tests: a few items in two workspaces and the global scope."""

from __future__ import annotations

import hashlib
from pathlib import Path

from memory_tools import ItemInput, KeyInput, Kind, MemoryItemSource, MemoryItemStore, ScopeType

DAY = 86_400_000
T0 = 1_772_359_200_000  # 2026-03-01T10:00:00Z


def _item(item_id: str, content: str, keys: tuple[str, ...], workspace: str | None, at: int) -> ItemInput:
    return ItemInput(content=content, kind=Kind.CONTEXT, keys=tuple(KeyInput(k) for k in keys),
                     sources=(MemoryItemSource(f"run/{item_id}", "r1", "turn 1", "e1"),),
                     scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL, scope_key=workspace,
                     observed_at=at, item_id=item_id, now=at)


ITEMS = (
    ("acme-port", "The staging database port is 5433.", ("staging", "port", "database"), "acme", T0),
    ("beta-port", "Beta's staging database port is 6000.", ("staging", "port", "database"), "beta", T0),
    ("style", "The user prefers short answers.", ("style", "answers"), None, T0),
    ("acme-late", "The staging port moved to 7777.", ("staging", "port"), "acme", T0 + 10 * DAY),
)
"""(id, content, keys, workspace, created at): acme's and beta's answers to the same question, a global
preference, and an item written after the probes of the tests (2026-03-02) ran."""


def write_store(path: Path, items: tuple[tuple[str, str, tuple[str, ...], str | None, int], ...] = ITEMS) -> Path:
    """A memory-item SQLite file (memory_tools' schema, WAL mode as the store writes it) holding ``items``."""
    with MemoryItemStore(str(path)) as store:
        for item_id, content, keys, workspace, at in items:
            store.create(_item(item_id, content, keys, workspace, at))
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def side_files(path: Path) -> list[str]:
    """The files SQLite may add beside a database (a read must add none)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name) and p != path)
