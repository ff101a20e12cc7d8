"""The JSON fast path: a scenario file written as JSON is read by the C JSON parser, and its lines found by scanning its text.

A file takes this path only when it is valid JSON that YAML reads the same
way (no duplicate keys, no constants JSON and YAML read differently, nesting
within :data:`~harness.scenarios.limits.MAX_DEPTH`); anything else goes
through the YAML parser. Composing a YAML node tree for line numbers costs
about a millisecond per 2 kB; :class:`_JsonLines` finds the same lines
without one.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, cast

from harness.scenarios.limits import MAX_DEPTH
from harness.scenarios.problems import Loc


class _JsonLines:
    """Lines of the values of a JSON-syntax file, as the YAML node tree would give them, without composing it.

    Composing a YAML tree costs about a millisecond per 2 kB, which a suite of
    small files with a warning each paid once per file for a line number. A
    JSON text (one the fast path accepted: valid JSON that YAML reads the same
    way, so no duplicate keys) is scanned instead: the children of a mapping or
    list are found once, by the C JSON scanner, when a lookup first enters it.
    A mapping child's line is its key's, a list item's its value's first
    character, as the YAML tree's start marks; lines count ``\n``, ``\r\n``
    and a lone ``\r`` as YAML does. A file whose JSON is all on one line
    (as ``json.dumps`` writes it) has every value on that line: only whether a
    path exists is asked, of the data.
    """

    __slots__ = ("_text", "_root", "_children", "_flat")

    def __init__(self, text: str) -> None:
        self._text = text
        body = _json_body(text)
        self._root = text.index("{", len(text) - len(body)) if body is not None else -1
        self._children: dict[int, dict[str, tuple[int, int]] | list[tuple[int, int]] | None] = {}
        one_line = body is not None and "\n" not in body.rstrip() and "\r" not in body.rstrip()
        self._flat: Any = json.loads(body) if body is not None and one_line else _MISSING

    def line(self, pos: int) -> int:
        text = self._text
        breaks = text.count("\n", 0, pos)
        if "\r" in text:
            breaks += text.count("\r", 0, pos) - text.count("\r\n", 0, pos)
        return breaks + 1

    def _at(self, where: Loc) -> int | None:
        """Position of the value at ``where`` (None when the path leaves the data, as :func:`_node_at`)."""
        pos: int | None = self._root if self._root >= 0 else None
        for part in where:
            child = self._child(pos, part) if pos is not None else None
            pos = child[1] if child is not None else None
        return pos

    def line_of(self, where: Loc, loc: Loc) -> tuple[int | None, bool]:
        """:func:`_line_of` of the node at ``where`` (a probe entry's place), for ``loc`` below it."""
        if self._flat is not _MISSING:
            return self._flat_line_of(where, loc)
        pos = self._at(where)
        line = None
        for part in loc:
            child = self._child(pos, part) if pos is not None else None
            if child is None:
                return line, False
            line, pos = self.line(child[0]), child[1]
        return line, True

    def start_line(self, where: Loc) -> int | None:
        if self._flat is not _MISSING:
            return self.line(self._root) if self._flat_at(where) is not _MISSING else None
        pos = self._at(where)
        return self.line(pos) if pos is not None else None

    def _flat_at(self, where: Loc) -> Any:
        value = self._flat
        for part in where:
            value = _data_child(value, part)
        return value

    def _flat_line_of(self, where: Loc, loc: Loc) -> tuple[int | None, bool]:
        value, line = self._flat_at(where), None
        for part in loc:
            value = _data_child(value, part)
            if value is _MISSING:
                return line, False
            line = self.line(self._root)
        return line, True

    def _child(self, pos: int, part: Any) -> tuple[int, int] | None:
        """(position its line is read at, position of its value) of child ``part`` of the value at ``pos``."""
        if pos not in self._children:
            self._children[pos] = self._scan(pos)
        children = self._children[pos]
        if isinstance(children, dict):
            return children.get(part) if isinstance(part, str) else None
        if isinstance(children, list) and isinstance(part, int) and part < len(children):
            return children[part]
        return None

    def _scan(self, pos: int) -> dict[str, tuple[int, int]] | list[tuple[int, int]] | None:
        text, skip = self._text, _SKIP_SPACE
        opening = text[pos]
        if opening not in "{[":
            return None  # a scalar has no children
        closing = "}" if opening == "{" else "]"
        found: list[tuple[str, int, int]] = []
        index = skip(text, pos + 1).end()
        while text[index] != closing:
            key, key_pos = "", index
            if opening == "{":
                key, end = _scan_string(text, index + 1)
                index = skip(text, skip(text, end).end() + 1).end()  # past the ':'
            _, end = _scan_value(text, index)
            found.append((key, key_pos, index))
            index = skip(text, end).end()
            if text[index] == ",":
                index = skip(text, index + 1).end()
        if opening == "{":
            return {key: (key_pos, value_pos) for key, key_pos, value_pos in reversed(found)}  # the first of a key
        return [(value_pos, value_pos) for _, _, value_pos in found]


_MISSING: Any = object()


def _data_child(value: Any, part: Any) -> Any:
    """Child ``part`` of parsed JSON ``value``, found as :func:`_line_of` finds it in the tree (:data:`_MISSING` if not)."""
    if isinstance(value, dict):
        return value.get(part, _MISSING)
    if isinstance(value, list) and isinstance(part, int) and part < len(value):
        return value[part]
    return _MISSING


_JSON_SPACE = re.compile(r"[ \t\n\r]*")
#: ``_JSON_SPACE.match``, which always matches (``*``): typed so, its ``.end()`` is the first index past the spaces.
_SKIP_SPACE = cast("Callable[[str, int], re.Match[str]]", _JSON_SPACE.match)
_scan_string: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_scan_value: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=2)
def json_lines(text: str) -> _JsonLines:
    """The line finder of a text (the last two kept: a file's problems ask for several lines)."""
    return _JsonLines(text)


class NotPlainJson(Exception):
    """The text is not JSON the YAML path would read the same way: parse it as YAML."""


_NOT_AS_JSON = re.compile(
    "[^\x09\x0A\x0D\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]|\\\\u[dD][89a-fA-F]"
)
"""What YAML reads differently from JSON: characters PyYAML refuses, YAML line breaks (folded inside quotes), surrogate escapes (refused).

The definition; :func:`_reads_differently` asks the same question faster.
"""

_REFUSED_CHARS = tuple(
    chr(code)
    for code in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0xFFFE, 0xFFFF)
)
"""The characters :data:`_NOT_AS_JSON` matches outside the surrogate block (a test holds the two equal)."""

_SURROGATE_ESCAPE = re.compile("\\\\u[dD][89a-fA-F]")


def _reads_differently(body: str) -> bool:
    """Whether :data:`_NOT_AS_JSON` matches anywhere in ``body``, at C speed.

    A character-class regex scans a megabyte of text in about 25 ms (half a
    LongMemEval S suite's ``validate``); one ``in`` per refused character
    (memchr) and a UTF-8 encode (which refuses lone surrogates) take about 2 ms.
    """
    if any(char in body for char in _REFUSED_CHARS):
        return True
    if not body.isascii():
        try:
            body.encode("utf-8")
        except UnicodeEncodeError:
            return True  # a lone surrogate
    return "\\u" in body and _SURROGATE_ESCAPE.search(body) is not None


def _no_constant(name: str) -> Any:
    raise NotPlainJson(name)  # NaN/Infinity: not JSON, and YAML reads them as strings


def _float(literal: str) -> float:
    # YAML 1.1 reads a float only with a '.' and a signed exponent, so `1e5` and `1.0e5` are strings there
    exponent = max(literal.find("e"), literal.find("E"))
    if "." not in literal or (exponent >= 0 and literal[exponent + 1] not in "+-"):
        raise NotPlainJson(literal)
    return float(literal)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise NotPlainJson("duplicate key")  # the YAML path names it with its line
    return result


def _json_body(text: str) -> str | None:
    """``text`` without leading comment and blank lines when the rest may be JSON (starts with ``{``), else None."""
    start = 0
    while True:
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return text[start:] if stripped.startswith("{") else None
        if end < 0:
            return None
        start = end + 1


def _too_deep_data(data: Any) -> bool:
    """Whether ``data`` (plain JSON data) nests mappings and lists deeper than :data:`MAX_DEPTH`.

    Level by level, never recursive: one list of the containers at each depth
    (a third faster than a call per container, most of them a key's leaf
    mapping), stopping at depth :data:`MAX_DEPTH` + 1.
    """
    kind = data.__class__
    if kind is not dict and kind is not list:
        return False
    level, depth = [data], 1
    while level:
        if depth > MAX_DEPTH:
            return True
        deeper: list[Any] = []
        add = deeper.append
        for value in level:
            for child in value.values() if value.__class__ is dict else value:
                kind = child.__class__
                if kind is dict or kind is list:
                    add(child)
        level, depth = deeper, depth + 1
    return False


def parse_json(text: str) -> Any:
    """The data of a JSON-syntax scenario file, or raise :class:`NotPlainJson` for the YAML path to judge it.

    The importers write JSON syntax (valid YAML), which ``json`` parses about
    a hundred times faster than YAML. Anything YAML could read differently
    or must refuse with a line (duplicate keys, NaN, ``1e5``, deep nesting,
    a tab or control character YAML rejects) goes to the YAML path.
    """
    body = _json_body(text)
    if body is None or _reads_differently(body):
        raise NotPlainJson("not JSON")
    try:
        data = json.loads(body, object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_float)
    except (ValueError, RecursionError) as exc:
        raise NotPlainJson(str(exc)) from None
    if _too_deep_data(data):
        raise NotPlainJson("too deep")
    return data
