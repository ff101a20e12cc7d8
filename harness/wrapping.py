"""Prose for a terminal: wrapped at word boundaries to its width, 80 columns when the output is piped.

The CLI promises that every line it prints fits the terminal, and 80
columns when piped (a CI log, ``| less``) unless ``COLUMNS`` says otherwise.
Prose wraps at word boundaries with an indented continuation; a token that
cannot wrap (a path, a URL, a hash) is never cut, so a caller puts such a
token on its own line (:func:`say_path`).

Error messages are printed by many commands, each in its own words, and all
of them go to standard error: :func:`wrapped_stderr` (installed by
``recall-eval``'s ``main``) wraps every complete line written there that is
longer than the width, so no error, warning or note has to remember to.
"""

from __future__ import annotations

import contextlib
import os
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["PIPED_WIDTH", "WrappingStream", "say", "say_path", "terminal_width", "wrap", "wrapped_stderr"]

#: Columns when the output is not a terminal and ``COLUMNS`` is unset.
PIPED_WIDTH = 80
_NARROWEST = 40


def terminal_width(stream: TextIO | None = None) -> int:
    """``COLUMNS`` when set, else the terminal's own width when ``stream`` is one, else :data:`PIPED_WIDTH`."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 0:
        return max(_NARROWEST, int(value))
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return max(_NARROWEST, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass
    return PIPED_WIDTH


def wrap(text: str, width: int | None = None, indent: str = "  ") -> list[str]:
    """``text`` in lines of at most ``width`` columns (the terminal's), continued under ``indent``; words are never
    cut, so a word longer than the width stands alone on its line."""
    width = width or terminal_width()
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lead = paragraph[: len(paragraph) - len(paragraph.lstrip(" "))]
        lines += textwrap.wrap(paragraph, width, initial_indent="", subsequent_indent=lead + indent,
                               break_on_hyphens=False, break_long_words=False) or [""]
    return lines


def say(text: str, file: TextIO | None = None, indent: str = "  ") -> None:
    """Print ``text`` wrapped to ``file``'s width (standard output by default)."""
    stream = file or sys.stdout
    for line in wrap(text, terminal_width(stream), indent):
        print(line, file=stream)


def say_path(label: str, path: object, file: TextIO | None = None) -> None:
    """``label path`` on one line when it fits, else ``label`` then the path alone on the next (it cannot wrap)."""
    stream = file or sys.stdout
    text = f"{label} {path}"
    if len(text) <= terminal_width(stream):
        print(text, file=stream)
    else:
        print(label, file=stream)
        print(f"  {path}", file=stream)


class WrappingStream:
    """A text stream that wraps each complete line longer than the terminal's width before passing it on.

    Text is held until its newline, so a line printed in pieces is wrapped whole; a line within the width passes
    unchanged, byte for byte. ``raw_stream`` is the stream under every wrapper (a rich progress bar writes its
    own cursor moves there, never wrapped).
    """

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.raw_stream = getattr(inner, "raw_stream", inner)
        self._pending = ""
        self._lock = threading.Lock()  # the progress thread and the main thread both write here

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._pending = (self._pending + text).split("\n")
            if lines:
                width = terminal_width(self.raw_stream)
                self._inner.write("".join(line + "\n" if len(line) <= width else "\n".join(wrap(line, width)) + "\n"
                                          for line in lines))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """A line without its newline yet goes out as it is (a prompt, a flushed partial line)."""
        with self._lock:
            if self._pending:
                self._inner.write(self._pending)
                self._pending = ""
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer ...
        return getattr(self._inner, name)


@contextlib.contextmanager
def wrapped_stderr() -> Iterator[None]:
    """``sys.stderr`` wrapped to its terminal's width for the duration (see the module docstring); restored
    afterwards, with any unfinished line written out."""
    saved = sys.stderr
    stream = WrappingStream(saved)
    sys.stderr = stream  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = saved
        stream.flush()
