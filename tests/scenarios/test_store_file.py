"""``--store`` bytes in process: only a regular file, through a symlink, with its WAL's commits, nothing beside it.

tests/fault/test_store_files.py checks the same with real writer processes and the CLI; these call the module
itself, so each rule has a test in the process that runs it (and mutmut sees them).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.scenarios import store_file
from harness.scenarios.store_file import StoreFileError, read_regular, read_store_bytes


def _rows(data: bytes, tmp_path: Path) -> list[str]:
    """The notes held by the database ``data`` (opened from a copy, so no WAL of the original is read)."""
    copy = tmp_path / "read-back" / "copy.sqlite"
    copy.parent.mkdir(exist_ok=True)
    copy.write_bytes(data)
    db = sqlite3.connect(copy)
    try:
        return [row[0] for row in db.execute("SELECT body FROM notes ORDER BY body")]
    finally:
        db.close()


@pytest.fixture
def store_in_use(tmp_path: Path) -> Iterator[Path]:
    """A WAL-mode database held open with two commits still in its ``-wal`` (no checkpoint)."""
    path = tmp_path / "store" / "memory.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the table in the main file, the rows below only in the WAL
    db.execute("INSERT INTO notes VALUES ('early')")
    db.execute("INSERT INTO notes VALUES ('late')")
    yield path
    db.close()


def test_a_regular_file_is_read_and_a_missing_one_is_none(tmp_path: Path) -> None:
    (tmp_path / "a.sqlite").write_bytes(b"\x00bytes\xff")
    assert read_regular(tmp_path / "a.sqlite", "--store") == b"\x00bytes\xff"
    assert read_regular(tmp_path / "absent.sqlite", "--store") is None


@pytest.mark.timeout(10)  # the bug is a read that waits for a writer forever
def test_a_fifo_is_refused_at_once_with_its_kind_and_the_fix(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    with pytest.raises(StoreFileError) as refused:
        read_regular(fifo, "--store")
    assert str(refused.value) == (f"--store {fifo}: a FIFO (named pipe), not a regular file; give the memory-item "
                                  "SQLite file or its JSON export (docs/store-export.md)")


def test_a_folder_or_a_device_is_named_as_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(StoreFileError, match=r"^--items \S+: a folder, not a regular file"):
        read_regular(tmp_path, "--items")
    with pytest.raises(StoreFileError, match=r"^--store /dev/null: a character device, not a regular file"):
        read_regular(Path("/dev/null"), "--store")


def test_an_unopenable_path_is_one_line_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(StoreFileError, match=r"^--store \S+/file/under: cannot read: Not a directory$"):
        read_regular(tmp_path / "file" / "under", "--store")


@pytest.mark.timeout(10)
def test_the_descriptor_is_closed_when_the_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        with pytest.raises(StoreFileError):
            read_regular(fifo, "--store")
    assert len(os.listdir("/proc/self/fd")) == before
    (tmp_path / "store.sqlite").write_bytes(b"SQLite format 3\x00")
    for _ in range(5):
        assert read_regular(tmp_path / "store.sqlite", "--store") == b"SQLite format 3\x00"
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_read_that_fails_after_opening_is_one_line_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "store.sqlite").write_bytes(b"x")
    real_fstat = os.fstat

    def failing(fd: int) -> os.stat_result:  # the store's descriptor only: pytest's own calls go through
        if os.readlink(f"/proc/self/fd/{fd}") == str(tmp_path / "store.sqlite"):
            raise OSError(5, "Input/output error")
        return real_fstat(fd)

    monkeypatch.setattr(store_file.os, "fstat", failing)
    with pytest.raises(StoreFileError) as failed:
        read_regular(tmp_path / "store.sqlite", "--store")
    assert str(failed.value) == f"--store {tmp_path / 'store.sqlite'}: cannot read: Input/output error"


def test_a_store_in_use_is_read_with_the_commits_its_wal_holds(store_in_use: Path, tmp_path: Path) -> None:
    beside = sorted(p.name for p in store_in_use.parent.iterdir())
    real, data = read_store_bytes(store_in_use)
    assert real == store_in_use
    assert _rows(data, tmp_path) == ["early", "late"]
    assert sorted(p.name for p in store_in_use.parent.iterdir()) == beside  # no -shm, no copy beside it


def test_a_symlinked_store_is_read_with_the_wal_beside_the_real_file(store_in_use: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.sqlite"
    link.symlink_to(store_in_use)
    real, data = read_store_bytes(link)
    assert real == store_in_use
    assert _rows(data, tmp_path) == ["early", "late"]
    assert not (tmp_path / "link.sqlite-wal").exists()


def test_a_file_that_is_not_sqlite_is_returned_as_it_is_whatever_lies_beside_it(tmp_path: Path) -> None:
    export = tmp_path / "items.json"
    export.write_bytes(b'{"schema_version": 1}')
    (tmp_path / "items.json-wal").write_bytes(b"not a wal")
    assert read_store_bytes(export, "--items") == (export, b'{"schema_version": 1}')


def test_a_missing_store_or_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreFileError, match=r"^--store \S+absent.sqlite: cannot read: no such file$"):
        read_store_bytes(tmp_path / "absent.sqlite")
    loop = tmp_path / "loop.sqlite"
    loop.symlink_to(loop)
    with pytest.raises(StoreFileError, match=r"^--store \S+loop.sqlite: cannot read: ") as looped:
        read_store_bytes(loop)
    assert "no such file" not in str(looped.value) and ("loop" in str(looped.value) or "levels" in str(looped.value))
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(StoreFileError) as not_a_folder:
        read_store_bytes(tmp_path / "file" / "under.sqlite", "--items")
    assert str(not_a_folder.value) == f"--items {tmp_path / 'file' / 'under.sqlite'}: cannot read: Not a directory"


def test_a_store_that_vanishes_between_resolving_and_reading_is_named(tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "memory.sqlite"
    store.write_bytes(b"SQLite format 3\x00")
    monkeypatch.setattr(store_file, "read_regular", lambda path, label: None)
    with pytest.raises(StoreFileError, match=r"^--store \S+memory.sqlite: cannot read: no such file$"):
        read_store_bytes(store)


def test_a_damaged_store_with_a_wal_is_one_line_not_a_sqlite_traceback(tmp_path: Path) -> None:
    store = tmp_path / "memory.sqlite"
    store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    (tmp_path / "memory.sqlite-wal").write_bytes(b"\x01" * 64)
    with pytest.raises(StoreFileError, match=r"^--store \S+memory.sqlite: cannot read the store with its -wal: "):
        read_store_bytes(store)


def test_a_wal_that_changes_during_every_copy_gives_up_after_five_attempts(tmp_path: Path, monkeypatch) -> None:
    """A busy writer: each read of the -wal differs from the one before, so no copy is consistent."""
    store = tmp_path / "memory.sqlite"
    store.write_bytes(b"SQLite format 3\x00")
    reads: list[Path] = []

    def changing(path: Path, label: str) -> bytes:
        assert label == "--items"  # every refusal names the option the user gave
        reads.append(path)
        return f"wal read {len(reads)}".encode() if path.name.endswith("-wal") else b"SQLite format 3\x00"

    monkeypatch.setattr(store_file, "read_regular", changing)
    with pytest.raises(StoreFileError) as busy:
        read_store_bytes(store, "--items")
    assert str(busy.value) == (f"--items {store}: its -wal changed during each of 5 copies (a busy writer); try again, "
                               "or export the store while it is quiet (docs/store-export.md)")
    assert [p.name for p in reads] == ["memory.sqlite-wal", "memory.sqlite", "memory.sqlite-wal"] * 5


def test_a_wal_that_settles_on_the_second_copy_is_read_then(store_in_use: Path, tmp_path: Path, monkeypatch) -> None:
    wal_path = store_in_use.with_name(store_in_use.name + "-wal")
    real_read, seen = store_file.read_regular, []

    def once_changed(path: Path, label: str) -> bytes | None:
        seen.append(path.name)
        data = real_read(path, label)
        return b"torn" if path == wal_path and len(seen) == 3 else data  # the first re-read differs

    monkeypatch.setattr(store_file, "read_regular", once_changed)
    _, data = read_store_bytes(store_in_use)
    assert _rows(data, tmp_path) == ["early", "late"]
    assert len(seen) == 6


def test_the_checkpoint_works_in_a_temporary_folder_that_is_removed(store_in_use: Path, tmp_path: Path,
                                                                    monkeypatch) -> None:
    monkeypatch.setattr(store_file.tempfile, "tempdir", str(tmp_path / "private"))
    (tmp_path / "private").mkdir()
    main = store_in_use.read_bytes()
    wal = store_in_use.with_name(store_in_use.name + "-wal").read_bytes()
    assert _rows(store_file._checkpointed(main, wal), tmp_path) == ["early", "late"]
    assert list((tmp_path / "private").iterdir()) == []
