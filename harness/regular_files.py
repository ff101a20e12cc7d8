"""Reading a file only when it is a regular file: never a FIFO, a device or a socket, which would hang or never end.

``open()`` of a FIFO waits for a writer forever, and a character device such
as ``/dev/zero`` never ends; either would hang the command (or the viewer's
request thread) that reads it. :func:`open_regular` checks with ``os.stat``
first (a message naming the file and what it is), then opens with
``O_NONBLOCK`` so a FIFO swapped in after the check cannot block the open
either, and checks again with ``fstat`` on what was actually opened.

Example:
    >>> from pathlib import Path
    >>> read_regular_bytes(Path("/dev/null"))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NotRegularFileError: /dev/null: a character device, not a regular file; ...
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFileError", "file_kind", "open_regular", "read_regular_bytes", "read_regular_text"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class NotRegularFileError(OSError):
    """A path names something that is not a regular file (a FIFO, a device, a socket, a folder).

    An ``OSError``, so callers that already turn an unreadable file into a message handle it unchanged.
    """


def file_kind(mode: int) -> str:
    """What ``mode`` (``st_mode``) is, in words: ``a regular file``, ``a FIFO (named pipe)`` ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def _refuse(path: Path, mode: int) -> NotRegularFileError:
    return NotRegularFileError(f"{path}: {file_kind(mode)}, not a regular file; reading it could hang or never end. "
                               "Replace it with the file itself")


def open_regular(path: Path, *, follow_symlinks: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (symbolic links followed unless told not to).

    ``follow_symlinks=False``: a symbolic link at ``path`` itself is refused (``ELOOP``), also one swapped in
    after the caller checked it.

    Raises:
        NotRegularFileError: it is a FIFO, a device, a socket or a folder (checked before and after opening).
        OSError: it cannot be opened (missing, no permission).
    """
    path = Path(path)
    before = os.stat(path, follow_symlinks=follow_symlinks)
    if not stat.S_ISREG(before.st_mode):
        raise _refuse(path, before.st_mode)
    fd = os.open(
        path, _FLAGS if follow_symlinks else _FLAGS | getattr(os, "O_NOFOLLOW", 0)
    )  # O_NONBLOCK: a FIFO swapped in after the stat does not block the open
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            raise _refuse(path, after.st_mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file: ordinary reads from here on
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_bytes(path: Path) -> bytes:
    """The whole of ``path``, which must be a regular file (see :func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def read_regular_text(path: Path, encoding: str = "utf-8") -> str:
    """The whole of ``path`` decoded, which must be a regular file (see :func:`open_regular`).

    Raises:
        UnicodeDecodeError: it is not text in ``encoding`` (a ``ValueError``).
    """
    return read_regular_bytes(path).decode(encoding)
