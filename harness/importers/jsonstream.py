"""Read a JSON array one element at a time, so memory holds one element, not the file.

LongMemEval's S file is hundreds of MB and its M file several GB, yet each
element (one question with its haystack) is a few MB at most. The standard
``json`` module parses whole documents only, so this reader feeds
``JSONDecoder.raw_decode`` a growing window of the file: each element is
decoded once it is complete and the consumed text is dropped. No third-party
streaming parser is needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from harness.importers.faults import ImporterError

CHUNK_CHARS = 1 << 20
MAX_ELEMENT_CHARS = 1 << 30
"""An element larger than this (1 Gi characters) is refused rather than read into memory."""

_WHITESPACE = " \t\n\r"


class _Window:
    """The unread part of a text stream, extended on demand; ``offset`` is the file position of ``text[0]``."""

    def __init__(self, stream: IO[str], chunk: int) -> None:
        self.stream, self.chunk = stream, chunk
        self.text, self.pos, self.offset, self.eof = "", 0, 0, False

    def more(self) -> bool:
        """Read more text (at least doubling the unread part, so re-decoding a large element stays linear)."""
        if self.eof:
            return False
        self.text, self.offset, self.pos = self.text[self.pos:], self.offset + self.pos, 0
        if len(self.text) > MAX_ELEMENT_CHARS:
            raise ImporterError(f"an element is larger than {MAX_ELEMENT_CHARS} characters: not a benchmark file")
        piece = self.stream.read(max(self.chunk, len(self.text)))
        if not piece:
            self.eof = True
            return False
        self.text += piece
        return True

    def skip_space(self) -> str:
        """Skip whitespace; return the next character, or '' at the end of the file."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""


def iter_array(path: Path, *, chunk: int = CHUNK_CHARS, stream: IO[str] | None = None) -> Iterator[Any]:
    """Yield the elements of the JSON array in ``path`` one by one.

    Args:
        path: The file; named in error messages (and opened unless ``stream`` is given).
        chunk: Characters read at a time.
        stream: An open text stream to read instead of opening ``path`` (tests use it to watch the reads).

    Raises:
        ImporterError: The file is not a JSON array, or an element is not valid JSON (with its index and position).
    """
    if stream is None:
        try:
            with open(path, encoding="utf-8-sig") as handle:
                yield from iter_array(path, chunk=chunk, stream=handle)
        except UnicodeDecodeError as exc:
            raise ImporterError(
                f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); is it the benchmark's JSON file?"
            ) from None
        except OSError as exc:
            raise ImporterError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return
    window = _Window(stream, chunk)
    decoder = json.JSONDecoder()
    first = window.skip_space()
    if first != "[":
        found = "an empty file" if not first else f"{first!r}"
        raise ImporterError(f"{path}: expected a JSON array ('[' ...) at the start, found {found}")
    window.pos += 1
    index = 0
    while True:
        head = window.skip_space()
        if head == "]" and index == 0:
            window.pos += 1
            break
        if not head:
            raise ImporterError(f"{path}: the file ends inside the array after element {index}: is it truncated?")
        while True:
            try:
                value, end = decoder.raw_decode(window.text, window.pos)
            except json.JSONDecodeError as exc:
                at, end_of_text = window.offset + exc.pos, window.offset + len(window.text.rstrip())
                if window.more():
                    continue
                if at >= end_of_text:
                    raise ImporterError(f"{path}: the file ends inside element {index}: is it truncated?") from None
                raise ImporterError(f"{path}: element {index} is not valid JSON at character {at}: {exc.msg}") from None
            if end == len(window.text) and window.more():
                continue  # a number or literal may go on in the next chunk: decode again with more text
            break
        window.pos = end
        yield value
        index += 1
        after = window.skip_space()
        if after == ",":
            window.pos += 1
            continue
        if after == "]":
            window.pos += 1
            break
        found = "the end of the file" if not after else repr(after)
        raise ImporterError(f"{path}: expected ',' or ']' after element {index - 1} at character "
                            f"{window.offset + window.pos}, found {found}: is the file truncated?")
    trailing = window.skip_space()
    if trailing:
        raise ImporterError(f"{path}: extra data after the array at character {window.offset + window.pos}")
