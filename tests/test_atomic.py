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

