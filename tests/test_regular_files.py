"""Reading only regular files: a FIFO, a device or a folder is refused with a message, never opened to hang."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from harness.regular_files import NotRegularFileError, open_regular, read_regular_bytes, read_regular_text


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{\"x\": 1}\n", encoding="utf-8")
    assert read_regular_text(tmp_path / "a.json") == "{\"x\": 1}\n"
    (tmp_path / "link.json").symlink_to(tmp_path / "a.json")
    assert read_regular_bytes(tmp_path / "link.json") == b"{\"x\": 1}\n"  # a link to a file is followed by default


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """Opening a FIFO with no writer would block forever: refused from its stat, naming the file and what it is."""
    os.mkfifo(tmp_path / "results.jsonl")
    done: list[BaseException] = []
    reader = threading.Thread(target=lambda: _catch(done, tmp_path / "results.jsonl"), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading the FIFO hung"
    assert isinstance(done[0], NotRegularFileError) and isinstance(done[0], OSError)
    assert str(done[0]).startswith(f"{tmp_path / 'results.jsonl'}: a FIFO (named pipe), not a regular file")


def _catch(into: list[BaseException], path: Path) -> None:
    try:
        read_regular_bytes(path)
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        into.append(exc)


@pytest.mark.parametrize(("path", "kind"), [(Path("/dev/zero"), "a character device"), (Path("/"), "a folder")])
def test_a_device_or_a_folder_is_refused(path: Path, kind: str) -> None:
    with pytest.raises(NotRegularFileError, match=kind):
        read_regular_bytes(path)


def test_a_link_is_refused_when_links_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.html").write_text("page", encoding="utf-8")
    (tmp_path / "index.html").symlink_to(tmp_path / "real.html")
    with pytest.raises(OSError) as caught:
        open_regular(tmp_path / "index.html", follow_symlinks=False)
    assert isinstance(caught.value, NotRegularFileError) or caught.value.errno == errno.ELOOP
