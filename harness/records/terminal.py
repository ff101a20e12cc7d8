"""Text a provider or a model wrote, made safe to show in a terminal.

A provider's error text, a model's answer or tool call, a judge's reply can hold
escape sequences (clear the screen, move the cursor, set the window title),
carriage returns and newlines (overwrite or forge a line such as ``verdict:
PASS``), bidi overrides (show text in another order than it is) and lone
surrogates (which UTF-8 cannot print). :func:`terminal_text` escapes all of
them as visible ``\\xNN`` / ``\\uNNNN`` text; nothing else changes.

Two places use it: every line that quotes provider text calls it (newlines
escaped too), and :func:`guard_streams` (installed by ``recall-eval``'s
``main``) passes everything written to stdout and stderr through it with
newlines and tabs kept, so a string that reaches a ``print`` by another path
still cannot drive the terminal. A rich progress bar or table writes its own
escape sequences to :func:`raw_stream` of the stream.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

#: C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates, lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    if match.group() in _NAMED:
        return _NAMED[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object, *, keep_newlines: bool = False) -> str:
    """``str(text)`` with every control character escaped (newlines too, unless ``keep_newlines``).

    Example:
        >>> terminal_text("bad\\x1b[2J\\nverdict: PASS")
        'bad\\\\x1b[2J\\\\nverdict: PASS'
    """
    value = str(text)
    pattern = _UNSAFE_KEEP_LINES if keep_newlines else _UNSAFE
    return pattern.sub(_escape, value) if pattern.search(value) else value


class _GuardedStream:
    """A text stream that escapes control characters (newlines and tabs kept) of everything written to it."""

    def __init__(self, raw: TextIO) -> None:
        self.raw_stream = raw

    def write(self, text: str) -> int:
        self.raw_stream.write(terminal_text(text, keep_newlines=True))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer ...
        return getattr(self.raw_stream, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a guard (for writers of their own escape sequences: rich); ``stream`` itself otherwise."""
    return getattr(stream, "raw_stream", stream)


@contextlib.contextmanager
def guard_streams() -> Iterator[None]:
    """Guard ``sys.stdout`` and ``sys.stderr`` for the duration (see the module docstring); restored afterwards."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _GuardedStream(raw_stream(sys.stdout)), _GuardedStream(raw_stream(sys.stderr))  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
