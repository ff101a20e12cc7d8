"""YAML documents of a suite: safe parsing, field paths to lines, and problems placed at them.

Parsing refuses YAML aliases and nesting deeper than :data:`MAX_DEPTH` while
the file is still a node tree, so a hostile file costs a one-line error, not
a traceback or gigabytes. The node tree maps field paths to lines, so every
schema or cross-field finding becomes a :class:`Problem` at a file and line
(a ``_defaults.yaml``'s or a conversation's when the value came from there).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from harness.scenarios.models import CATEGORY_PATTERN, Category, Scenario
from harness.memo import ByIdentity
from harness.scenarios.validation import Finding, Loc, Problem, format_loc, format_value

MAX_DEPTH = 32
"""Deepest nesting of mappings and lists a scenario file may use (a scenario needs about 8)."""

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastResolveLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader with PyYAML's tag resolution for plain scalars, minus the work it does for nothing here.

    libyaml's composer asks Python for the tag of every node; PyYAML's
    resolver also consults path resolvers and wildcard implicit resolvers,
    which the safe loader never registers (checked below), so only the
    implicit resolvers keyed by a scalar's first character can apply. A
    LoCoMo-sized conversation file holds ~160,000 scalars: this is a tenth of
    loading it. Same tags as PyYAML's (a test compares them).
    """

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is yaml.SequenceNode else self.DEFAULT_MAPPING_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


# The shortcuts above are exact while no path resolver and no wildcard (None) implicit resolver is registered.
_Loader = (_FastResolveLoader if not _BaseLoader.yaml_path_resolvers and None not in _BaseLoader.yaml_implicit_resolvers
           else _BaseLoader)


class _Document:
    """One parsed YAML file (or one probe entry of it): its data and its node tree (for line numbers).

    A file read by the JSON fast path keeps its ``text`` instead of a node
    tree, and finds a line by scanning that JSON text (:class:`_JsonLines`),
    never composing a YAML tree; ``where`` is the entry's place in its file.
    """

    __slots__ = ("path", "data", "_node", "_text", "_where")

    def __init__(self, path: Path, data: Any, node: yaml.Node | None = None, *, text: str | None = None, where: Loc = ()) -> None:
        self.path, self.data, self._node, self._text, self._where = path, data, node, text, where

    @property
    def node(self) -> yaml.Node | None:
        if self._text is not None:
            self._node, self._text = _node_at(_compose(self._text), self._where), None
        return self._node

    def line_of(self, loc: Loc) -> tuple[int | None, bool]:
        """:func:`_line_of` of this document's node tree, read from the JSON text when there is no tree."""
        if self._text is not None:
            return _json_lines(self._text).line_of(self._where, loc)
        return _line_of(self._node, loc)

    def start_line(self) -> int | None:
        """The line this document (a probe entry: its value in the ``probes`` list) starts on."""
        if self._text is not None:
            return _json_lines(self._text).start_line(self._where)
        return self._node.start_mark.line + 1 if self._node is not None else None

    def entry(self, data: Any, key: str, index: int) -> _Document:
        """The document of item ``index`` of this mapping's list ``key`` (lazy when this one is)."""
        if self._text is not None:
            return _Document(self.path, data, text=self._text, where=(*self._where, key, index))
        return _Document(self.path, data, _node_at(self._node, (key, index)))

    def line_getter(self, loc: Loc) -> Callable[[], int | None]:
        """The line of ``loc``, looked up when called (only a duplicate id asks).

        A lazy document's getter holds neither its data nor its text (a suite
        of large files would keep them all alive): it re-reads the file, and
        gives no line if the file changed since it was parsed.
        """
        if self._text is None:
            line = _line_of(self._node, loc)[0]
            return lambda: line
        path, digest, where = self.path, _text_digest(self._text), self._where

        def line() -> int | None:
            text, _ = _read(path)
            return _json_lines(text).line_of(where, loc)[0] if text is not None and _digest(text) == digest else None

        return line


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
        self._flat: Any = json.loads(body) if one_line else _MISSING

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
        text, skip = self._text, _JSON_SPACE.match
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
_scan_string = json.decoder.scanstring
_scan_value = json.JSONDecoder().scan_once


@functools.lru_cache(maxsize=2)
def _json_lines(text: str) -> _JsonLines:
    """The line finder of a text (the last two kept: a file's problems ask for several lines)."""
    return _JsonLines(text)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# The probes of one conversation file share its text object: digest it once, not once per probe (a LoCoMo
# file is hundreds of kB and holds hundreds of probes). Only the last few texts are kept alive.
_text_digest = ByIdentity(_digest, maxsize=4)


def _node_at(node: yaml.Node | None, loc: Loc) -> yaml.Node | None:
    """The node at ``loc`` below ``node`` (None when the path leaves the tree)."""
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((value for key, value in node.value if isinstance(key, yaml.ScalarNode) and key.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
        if child is None:
            return None
        node = child
    return node


class _NotPlainJson(Exception):
    """The text is not JSON the YAML path would read the same way: parse it as YAML."""


_NOT_AS_JSON = re.compile(
    "[^\x09\x0A\x0D\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]|\\\\u[dD][89a-fA-F]"
)
"""What YAML reads differently from JSON: characters PyYAML refuses, YAML line breaks (folded inside quotes), surrogate escapes (refused)."""


def _no_constant(name: str) -> Any:
    raise _NotPlainJson(name)  # NaN/Infinity: not JSON, and YAML reads them as strings


def _float(literal: str) -> float:
    # YAML 1.1 reads a float only with a '.' and a signed exponent, so `1e5` and `1.0e5` are strings there
    exponent = max(literal.find("e"), literal.find("E"))
    if "." not in literal or (exponent >= 0 and literal[exponent + 1] not in "+-"):
        raise _NotPlainJson(literal)
    return float(literal)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _NotPlainJson("duplicate key")  # the YAML path names it with its line
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

    Recursive, but never past :data:`MAX_DEPTH` + 1 calls deep.
    """

    def over(value: Any, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return True
        for child in value.values() if value.__class__ is dict else value:
            kind = child.__class__
            if (kind is dict or kind is list) and over(child, depth + 1):
                return True
        return False

    kind = data.__class__
    return (kind is dict or kind is list) and over(data, 1)


def _parse_json(text: str) -> Any:
    """The data of a JSON-syntax scenario file, or raise :class:`_NotPlainJson` for the YAML path to judge it.

    The importers write JSON syntax (valid YAML), which ``json`` parses about
    a hundred times faster than YAML. Anything YAML could read differently
    or must refuse with a line (duplicate keys, NaN, ``1e5``, deep nesting,
    a tab or control character YAML rejects) goes to the YAML path.
    """
    body = _json_body(text)
    if body is None or _NOT_AS_JSON.search(body):
        raise _NotPlainJson("not JSON")
    try:
        data = json.loads(body, object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_float)
    except (ValueError, RecursionError) as exc:
        raise _NotPlainJson(str(exc)) from None
    if _too_deep_data(data):
        raise _NotPlainJson("too deep")
    return data



def _display(path: Path) -> Path:
    """``path`` relative to the working folder when it lies below it, for messages."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _read(path: Path) -> tuple[str | None, list[Problem]]:
    try:
        return path.read_text(encoding="utf-8"), []
    except UnicodeDecodeError as exc:
        return None, [Problem(str(path), None, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}")]
    except OSError as exc:
        return None, [Problem(str(path), None, "", f"cannot read: {exc.strerror}")]


def _parse(path: Path, text: str | None = None) -> tuple[_Document | None, list[Problem]]:
    """Parse ``path`` (or its already-read ``text``) into data and node tree, or problems."""
    if text is None:
        text, problems = _read(path)
        if text is None:
            return None, problems
    if "{" in text[:4096]:
        try:
            data = _parse_json(text)
        except _NotPlainJson:
            pass
        else:
            return _Document(path, data, text=text), []
    loader = _Loader(text)
    duplicates: list[yaml.Node] = []
    try:
        node = loader.get_single_node()
        if node is not None and "&" in text:  # an alias needs an anchor, and an anchor an '&'
            refused = _refuse_shape(path, text, node)
            if refused is not None:
                return None, [refused]
        try:
            data = _construct(node, loader, duplicates) if node is not None else None
        except _TooDeep as exc:
            return None, [_too_deep(path, exc.node)]
        except _Unusual:
            refused = _refuse_shape(path, text, node)  # PyYAML's constructor recurses: bound the depth first
            if refused is not None:
                return None, [refused]
            duplicates.clear()
            data = loader.construct_document(node)
            duplicates.extend(_duplicate_keys(node))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = exc.problem or "invalid YAML"
        if exc.context:
            where = exc.context_mark
            context_line = f" (line {where.line + 1})" if where and mark and where.line != mark.line else ""
            message = f"{message}, {exc.context}{context_line}"
        return None, [Problem(str(path), mark.line + 1 if mark else None, "", f"YAML syntax error: {message}")]
    except yaml.YAMLError as exc:
        return None, [Problem(str(path), None, "", f"YAML error: {exc}")]
    finally:
        loader.dispose()
    problems = [
        Problem(str(path), key.start_mark.line + 1, format_loc(_path_to(node, key)), "duplicate key: the later value would silently win")
        for key in duplicates
    ]
    return _Document(path, data, node), problems


def read_yaml(path: Path) -> tuple[Any, list[Problem]]:
    """The data of a YAML file that is not a scenario (a judge calibration set), parsed as scenario files are.

    Aliases, nesting deeper than :data:`MAX_DEPTH`, syntax errors and duplicate
    keys are problems (``file:line: what``), so a hostile or mistyped file costs
    one line, not gigabytes or a traceback. Returns ``(data, problems)``; the
    data is None when there are problems.
    """
    document, problems = _parse(path)
    return (None if problems or document is None else document.data), problems


@functools.lru_cache(maxsize=2)
def _compose(text: str) -> yaml.Node | None:
    """The node tree of text already parsed once (for line numbers only; the last two kept, for a file's several lines)."""
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _refuse_shape(path: Path, text: str, node: yaml.Node) -> Problem | None:
    """Refuse YAML aliases and deep nesting while the file is still a node tree.

    An alias makes its anchor's node appear twice in the tree, so a walk that
    meets a node a second time has found one, before anything is expanded: a
    billion-laughs file stays a few dozen nodes here, and an alias inside its
    own anchor (``a: &a [*a]``) is a cycle the walk stops at. Scenario files
    refuse aliases outright (the shipped suites use none, and a shared value
    belongs in a ``_defaults.yaml``). The walk is iterative, so it also
    refuses nesting deeper than :data:`MAX_DEPTH` before a recursive
    constructor could overflow the stack.
    """
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if id(current) in seen:
            return _alias_problem(path, text, current)
        seen.add(id(current))
        if current.__class__ is yaml.ScalarNode:
            continue
        if depth > MAX_DEPTH:
            return _too_deep(path, current)
        if current.__class__ is yaml.MappingNode:
            for key, value in current.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in current.value)
    return None


def _too_deep(path: Path, node: yaml.Node) -> Problem:
    return Problem(
        str(path),
        node.start_mark.line + 1,
        "",
        f"nested more than {MAX_DEPTH} levels deep: a scenario needs about 8; flatten this part of the file",  # any file
    )


def _alias_problem(path: Path, text: str, shared: yaml.Node) -> Problem:
    """The one-line refusal of the file's first alias, found by re-reading its events (nothing is expanded)."""
    anchors: dict[str, int] = {}
    open_anchors: list[str | None] = []
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            name = event.anchor
            where = f"anchor &{name} on line {anchors[name]}" if name in anchors else f"anchor &{name}"
            if name in open_anchors:
                why = "it sits inside its own anchor, so it would repeat forever"
            else:
                why = "an alias can expand without bound"
            return Problem(
                str(path),
                event.start_mark.line + 1,
                "",
                f"YAML alias *{name} ({where}) refused: {why}; this file takes no aliases: "
                "write the value out (values several scenario files share belong in a _defaults.yaml)",
            )
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            open_anchors.append(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            open_anchors.pop()
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            anchors.setdefault(event.anchor, event.start_mark.line + 1)
    return Problem(str(path), shared.start_mark.line + 1, "", "YAML alias refused: this file takes no aliases")


_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"


class _Unusual(Exception):
    """The document uses a YAML feature the fast constructor leaves to PyYAML (merge keys, custom tags)."""


class _TooDeep(Exception):
    """The document nests deeper than :data:`MAX_DEPTH`; ``node`` is where it crossed the limit."""

    def __init__(self, node: yaml.Node) -> None:
        super().__init__(node.start_mark.line + 1)
        self.node = node


def _construct(node: yaml.Node, loader: Any, duplicates: list[yaml.Node], depth: int = 1) -> Any:
    """Build plain data from the node tree, noting repeated mapping keys.

    Equivalent to PyYAML's safe constructor for plain documents (string keys,
    no ``<<`` merges, standard tags) and about three times faster; anything
    else raises :class:`_Unusual` so the caller falls back to PyYAML. Nesting
    deeper than :data:`MAX_DEPTH` raises :class:`_TooDeep` long before the
    recursion could exhaust the stack.
    """
    kind = node.__class__
    if kind is yaml.ScalarNode:
        if node.tag == _STR_TAG:
            return node.value
        constructor = loader.yaml_constructors.get(node.tag)
        if constructor is None:
            raise _Unusual(node.tag)
        return constructor(loader, node)
    if depth > MAX_DEPTH:
        raise _TooDeep(node)
    if kind is yaml.SequenceNode and node.tag == _SEQ_TAG:
        return [_construct(child, loader, duplicates, depth + 1) for child in node.value]
    if kind is yaml.MappingNode and node.tag == _MAP_TAG:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.__class__ is not yaml.ScalarNode or key_node.tag != _STR_TAG:
                raise _Unusual(key_node.tag)
            key = key_node.value
            if key in result:
                duplicates.append(key_node)
            result[key] = _construct(value_node, loader, duplicates, depth + 1)
        return result
    raise _Unusual(node.tag)


def _duplicate_keys(node: yaml.Node | None) -> list[yaml.Node]:
    """Key nodes that repeat an earlier key of their mapping (slow path)."""
    found: list[yaml.Node] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key)
            if name in seen:
                found.append(key)
            seen.add(name)
            found.extend(_duplicate_keys(value))
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            found.extend(_duplicate_keys(child))
    return found


def _path_to(node: yaml.Node | None, target: yaml.Node, loc: Loc = ()) -> Loc:
    """Field path of the mapping key ``target`` inside ``node`` (empty if absent)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
            if key is target:
                return (*loc, name)
            found = _path_to(value, target, (*loc, name))
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            found = _path_to(child, target, (*loc, index))
            if found:
                return found
    return ()


def _line_of(node: yaml.Node | None, loc: Loc) -> tuple[int | None, bool]:
    """Line of the node at ``loc`` (1-based) and whether the whole path was found.

    When the path stops early (a missing field) the line of the deepest
    existing parent is returned, or None for the document root.
    """
    line = None
    for depth, part in enumerate(loc):
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    child, line = value, key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            return line, False
        node = child
    return line, True

def _merge(base: Any, override: Any) -> Any:
    """Deep merge: mappings merge key by key; anything else in ``override`` replaces ``base``."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return override


def _schema_findings(errors: list[dict[str, Any]], root: type[BaseModel] = Scenario) -> list[Finding]:
    """pydantic's errors as findings; a missing field with a misspelled sibling says so.

    ``root`` is the model that failed (field suggestions come from its fields).
    """
    findings = []
    misspelled: dict[Loc, str] = {}
    for error in errors:
        if error["type"] == "extra_forbidden":
            loc = tuple(error["loc"])
            hint = _closest(str(loc[-1]), _known_fields(loc[:-1], root))
            if hint is not None:
                misspelled[(*loc[:-1], hint)] = str(loc[-1])
    for error in errors:
        loc = tuple(error["loc"])
        message = _error_message(error, root)
        if error["type"] == "missing" and loc in misspelled:
            message += f" (is {misspelled[loc]!r} beside it a misspelling?)"
        has_value = error["type"] != "missing" and "input" in error
        findings.append(Finding(loc, message, *((error["input"],) if has_value else ())))
    return findings


def _error_message(error: dict[str, Any], root: type[BaseModel] = Scenario) -> str:
    kind, message = error["type"], error["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        known = _known_fields(error["loc"][:-1], root)
        hint = _closest(str(error["loc"][-1]), known)
        return "unknown field" + (f"; did you mean {hint!r}?" if hint else f" (allowed: {', '.join(known)})" if known else "")
    if kind == "string_pattern_mismatch" and error.get("ctx", {}).get("pattern") == CATEGORY_PATTERN:
        hint = _closest(str(error.get("input")).lower(), [c.value for c in Category])
        return "must be a category name: lowercase ASCII letters, digits and '_', starting with a letter" + (
            f"; did you mean {hint!r}?" if hint else ""
        )
    if kind == "string_pattern_mismatch":
        return "must be an identifier: ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
    if kind == "value_error":
        return message.removeprefix("Value error, ")
    if kind in ("enum", "literal_error") and isinstance(error.get("input"), str):
        allowed = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
        hint = _closest(error["input"], allowed)  # the error's own allowed values: never another field's enum
        if hint is not None:
            return f"{message}; did you mean {hint!r}?"
    return message


def _known_fields(loc: Loc, root: type[BaseModel] = Scenario) -> list[str]:
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(str(part))
        model = _model_in(info.annotation) if info else None
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) + getattr(annotation, "__metadata__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _closest(word: str, choices: list[str]) -> str | None:
    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _locate(finding: Finding, document: _Document, defaults: Sequence[_Document], prefix: Loc = ()) -> Problem:
    """Turn a finding into a problem with the file and line its value came from.

    ``document`` is searched first (``prefix``: where its node sits in its file,
    e.g. ``("probes", 6)`` for a conversation's probe), then ``defaults``
    nearest first (a conversation's shared part, the ``_defaults.yaml`` files).
    """
    line, complete = document.line_of(finding.loc)
    file, loc = document.path, (*prefix, *finding.loc)
    if not complete:
        for default in reversed(defaults):
            default_line, found = default.line_of(finding.loc)
            if found:
                line, file, loc = default_line, default.path, finding.loc
                break
    value = format_value(finding.value) if finding.has_value else None
    return Problem(str(file), line, format_loc(loc), finding.message, value, finding.severity)

