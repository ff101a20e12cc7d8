"""Hostile ``--store`` files for ``validate`` and ``run``: a symlinked store held open by a real writer process with
commits still in its WAL (read through the link with every commit, nothing created beside it, the sha256 covering
the WAL), a FIFO (refused at once, never a hang), and eleven damaged values (one line naming the field, exit 2)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fault.conftest import REPO, SMOKE, cli_in_process
from tests.scenarios.store_factories import ITEMS, T0, write_store

#: A writer that keeps the store open in WAL mode with two more items committed into the WAL, never checkpointed.
WRITER = """
import sys
from memory_tools import ItemInput, KeyInput, Kind, MemoryItemSource, MemoryItemStore
store = MemoryItemStore(sys.argv[1])
store._db.execute("PRAGMA wal_autocheckpoint = 0")
for n in (1, 2):
    store.create(ItemInput(content=f"Late note {n}.", kind=Kind.CONTEXT, keys=(KeyInput("late"),),
                           sources=(MemoryItemSource("s", "r", "t", f"e{n}"),), item_id=f"late-{n}",
                           observed_at=int(sys.argv[2]), now=int(sys.argv[2])))
print("ready", flush=True)
sys.stdin.read()
"""


def _validate(store: Path) -> subprocess.CompletedProcess[str]:
    return cli_in_process("validate", SMOKE, "--store", store)


@pytest.fixture()
def store_in_use(tmp_path: Path) -> Iterator[Path]:
    """A store (4 items) held open by another process whose 2 further items sit only in the WAL."""
    (tmp_path / "data").mkdir()
    path = write_store(tmp_path / "data" / "team.sqlite")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(T0)], cwd=REPO, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        assert (path.parent / "team.sqlite-wal").stat().st_size > 0
        yield path
    finally:
        writer.communicate("", timeout=60)


def test_a_symlinked_store_in_use_is_read_with_its_wal_and_nothing_is_created_beside_it(store_in_use: Path,
                                                                                       tmp_path: Path) -> None:
    """``--store LINK`` to a store whose writer holds 2 commits in its WAL: 6 items (not the main file's 4), and the
    store's folder holds the same files afterwards."""
    link = tmp_path / "link.sqlite"
    link.symlink_to(store_in_use)
    before = sorted(p.name for p in store_in_use.parent.iterdir())
    done = _validate(link)
    assert done.returncode == 0, done.stderr
    assert f"store {store_in_use}: {len(ITEMS) + 2} items" in done.stdout
    assert sorted(p.name for p in store_in_use.parent.iterdir()) == before


def test_a_copied_store_with_a_wal_and_no_shm_gets_no_shm(store_in_use: Path, tmp_path: Path) -> None:
    """A store copied with its ``-wal`` (no ``-shm``, nobody holding it): read with its 6 items, no ``-shm`` made."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("team.sqlite", "team.sqlite-wal"):
        shutil.copy(store_in_use.parent / name, copy / name)
    done = _validate(copy / "team.sqlite")
    assert done.returncode == 0 and f"{len(ITEMS) + 2} items" in done.stdout, done.stderr
    assert sorted(p.name for p in copy.iterdir()) == ["team.sqlite", "team.sqlite-wal"]


def test_the_runs_sha256_covers_the_wal(store_in_use: Path, tmp_path: Path) -> None:
    """run.json's store sha256 is not the main file's alone: the WAL's two commits are in what it digests."""
    run = cli_in_process("run", "--scenarios", SMOKE, "--filter", "smoke-01*", "--arms", "recall", "--store", store_in_use,
                      "--out", tmp_path / "run", "--no-progress")
    assert run.returncode in (0, 1), run.stderr
    recorded = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["parameters"]["store"]
    assert recorded["items"] == len(ITEMS) + 2
    assert recorded["sha256"] != hashlib.sha256(store_in_use.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("where", ["store", "wal"])
def test_a_fifo_as_the_store_or_its_wal_is_refused_at_once(tmp_path: Path, command: str, where: str) -> None:
    """A FIFO as ``--store`` (or as the ``-wal`` beside it): one line naming it, exit 2, no read that waits forever."""
    store = tmp_path / "team.sqlite"
    if where == "store":
        os.mkfifo(store)
    else:
        write_store(store)
        os.mkfifo(tmp_path / "team.sqlite-wal")
    argv = (["validate", SMOKE] if command == "validate" else
            ["run", "--scenarios", SMOKE, "--filter", "smoke-01*", "--out", tmp_path / "run", "--no-progress"])
    done = cli_in_process(*argv, "--store", store)
    assert done.returncode == 2, done.stderr
    assert "a FIFO (named pipe), not a regular file" in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr


def _sqlite(change: str) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        write_store(path)
        db = sqlite3.connect(path)
        if "NULL" in change:  # a store another tool wrote without the NOT NULL constraint
            db.execute("PRAGMA writable_schema = ON")
            db.execute("UPDATE sqlite_master SET sql = replace(sql, 'created_at INTEGER NOT NULL', 'created_at INTEGER') "
                       "WHERE name = 'memory_item'")
            db.commit()
            db.close()
            db = sqlite3.connect(path)
        db.execute(change)
        db.commit()
        db.close()
        return path
    return make


def _export(item_change: dict[str, object] | None = None, raw: str | None = None) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        if raw is not None:
            path.write_text(raw, encoding="utf-8")
            return path
        item = {"item_id": "a", "content": "The port is 5433.", "kind": "context", "observed_at": T0,
                "keys": [{"key": "port"}], "sources": [{"session_id": "s1", "turn_id": "t1"}]} | (item_change or {})
        doc = {"format": "recall-eval-memory-items", "schema_version": 2, "items": [item]}
        path.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
        return path
    return make


BAD_STORES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "sqlite created_at NULL": (_sqlite("UPDATE memory_item SET created_at = NULL WHERE item_id = 'style'"), "created_at"),
    "sqlite created_at text": (_sqlite("UPDATE memory_item SET created_at = 'yesterday' WHERE item_id = 'style'"), "created_at"),
    "sqlite created_at 1e400": (_sqlite("UPDATE memory_item SET created_at = 1e400 WHERE item_id = 'style'"), "created_at"),
    "sqlite key row of a missing item": (_sqlite("INSERT INTO memory_item_key VALUES ('ghost', 'x', 'x', 'concept', "
                                                 "'llm', NULL, 0, 0)"), "'ghost'"),
    "json created_at null": (_export({"created_at": None}), "created_at"),
    "json created_at garbage": (_export({"created_at": "garbage"}), "created_at"),
    "json created_at [1]": (_export({"created_at": [1]}), "created_at"),
    "json created_at NaN": (_export({"created_at": math.nan}), "created_at"),
    "json keys as a string": (_export({"keys": "port, staging"}), "'keys'"),
    "json sources [1, 2]": (_export({"sources": [1, 2]}), "'sources'"),
    "json nested 200,000 deep": (_export(raw="[" * 200_000 + "]" * 200_000), "nested"),
}


@pytest.mark.parametrize("name", BAD_STORES)
def test_a_damaged_store_value_is_one_line_naming_it(tmp_path: Path, name: str) -> None:
    """Each of the eleven damaged values: ``validate --store`` exits 2 with one line naming the field, no traceback."""
    make, field = BAD_STORES[name]
    store = make(tmp_path / ("team.sqlite" if name.startswith("sqlite") else "team.json"))
    done = _validate(store)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and field in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr
