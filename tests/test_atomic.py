"""Replacing a file atomically: whole bytes even on short writes, the old file kept on failure, no planted temp used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import atomic
from harness.atomic import TEMP_SUFFIX, write_atomic


def _short_writes(monkeypatch: pytest.MonkeyPatch, most: int) -> list[int]:
    """``os.write`` that writes at most ``most`` bytes a call, as a pipe, a full buffer or a signal may."""
    sizes: list[int] = []

    def short(fd: int, data: memoryview) -> int:
        sizes.append(os.write(fd, data[:most]))
        return sizes[-1]

    monkeypatch.setattr(atomic, "_write", short)
    return sizes


def test_a_short_write_is_continued_until_every_byte_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _short_writes(monkeypatch, 3)
    text = "port 5433 · 端口 " * 5
    write_atomic(tmp_path / "out.txt", text)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == text
    assert len(sizes) > 1 and sum(sizes) == len(text.encode("utf-8"))


def test_text_in_pieces_and_text_longer_than_a_slice_are_written_whole(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "TEXT_SLICE", 4)
    write_atomic(tmp_path / "page.html", ["<p>", "é" * 9, "</p>"])
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == "<p>" + "é" * 9 + "</p>"
    write_atomic(tmp_path / "raw.bin", b"\x00\xff" * 5)
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\xff" * 5


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp_file(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "run.json"
    target.write_text("old", encoding="utf-8")
    calls: list[int] = []

    def full_disk(fd: int, data: memoryview) -> int:
        calls.append(1)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return os.write(fd, data[:2])

    monkeypatch.setattr(atomic, "_write", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "new content")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_planted_file_under_the_temp_name_is_never_written_through(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    names = iter(["planted", "planted", "fresh"])
    monkeypatch.setattr(atomic, "temp_path", lambda path: path.with_name(f".{path.name}.{next(names)}{TEMP_SUFFIX}"))
    (tmp_path / f".out.txt.planted{TEMP_SUFFIX}").symlink_to(victim)
    write_atomic(tmp_path / "out.txt", "new")
    assert victim.read_text(encoding="utf-8") == "keep" and (tmp_path / "out.txt").read_text(encoding="utf-8") == "new"



def test_a_temp_file_is_hidden_beside_its_target_with_twelve_random_hex_digits(tmp_path: Path) -> None:
    """``.<name>.<12 hex>.tmp``: recognisable debris after a crash, and short enough that a target name near the
    255-byte limit of a file name still has a temp name (a 64-digit token would not)."""
    import re

    names = {atomic.temp_path(tmp_path / "run.json").name for _ in range(20)}
    assert len(names) == 20 and all(re.fullmatch(r"\.run\.json\.[0-9a-f]{12}\.tmp", n) for n in names)
    long_name = "r" * 220 + ".json"  # its temp name is 243 bytes
    write_atomic(tmp_path / long_name, "x")
    assert (tmp_path / long_name).read_text(encoding="utf-8") == "x"


def test_a_folder_where_every_temp_name_is_taken_gives_up_naming_the_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "temp_path", lambda path: path.with_name(f".{path.name}.taken{TEMP_SUFFIX}"))
    (tmp_path / f".out.txt.taken{TEMP_SUFFIX}").write_text("someone else's", encoding="utf-8")
    with pytest.raises(FileExistsError) as caught:
        write_atomic(tmp_path / "out.txt", "new")
    assert str(caught.value) == f"{tmp_path}: could not create a fresh temp file in 16 tries"
    assert not (tmp_path / "out.txt").exists()


def test_a_file_written_with_the_default_mode_follows_the_umask(tmp_path: Path) -> None:
    """Run files are as any other file the user writes: 0o666 less the umask, never world-writable nor executable."""
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "summary.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "summary.json").stat().st_mode & 0o777 == 0o644


def test_a_private_file_is_owner_only_from_its_creation_not_only_once_written(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory document's temp file is 0o600 while its bytes go in: no moment where another user could open it."""
    modes: list[int] = []

    def watching(fd: int, data: memoryview) -> int:
        modes.append(os.fstat(fd).st_mode & 0o777)
        return os.write(fd, data)

    monkeypatch.setattr(atomic, "_write", watching)
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "memory.md", "secret", mode=0o600)
    finally:
        os.umask(old)
    assert modes == [0o600] and (tmp_path / "memory.md").stat().st_mode & 0o777 == 0o600


def test_a_text_is_written_a_slice_at_a_time_not_a_character_at_a_time(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of hundreds of MB is a few hundred writes, not one system call per character."""
    sizes = _short_writes(monkeypatch, 1 << 20)
    monkeypatch.setattr(atomic, "TEXT_SLICE", 4)
    write_atomic(tmp_path / "page.html", "abcdefghij")
    assert sizes == [4, 4, 2]


def test_when_the_temp_file_cannot_be_removed_either_the_write_error_is_the_one_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(fd: int, data: memoryview) -> int:
        raise OSError(28, "No space left on device")

    def unlink(path: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic, "_write", full_disk)
    monkeypatch.setattr(atomic.os, "unlink", unlink)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomic(tmp_path / "run.json", "new")
