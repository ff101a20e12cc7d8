"""Prose for a terminal: wrapped at word boundaries to its width, 80 columns when the output is piped.

The CLI promises that every line it prints fits the terminal, and 80
columns when piped (a CI log, ``| less``) unless ``COLUMNS`` says otherwise.
Prose wraps at word boundaries with an indented continuation; a token that
cannot wrap (a path, a URL, a hash) is never cut, so a caller puts such a
token on its own line (:func:`say_path`).
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

__all__ = ["PIPED_WIDTH", "say", "say_path", "terminal_width", "wrap"]

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
