"""YAML documents of a suite: safe parsing, field paths to lines, and problems placed at them.

Parsing refuses YAML aliases and nesting deeper than :data:`MAX_DEPTH` while
the file is still a node tree, so a hostile file costs a one-line error, not
a traceback or gigabytes. The node tree maps field paths to lines, so every
schema or cross-field finding becomes a :class:`Problem` at a file and line
(a ``_defaults.yaml``'s or a conversation's when the value came from there).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.memo import ByIdentity
from harness.scenarios import limits
from harness.scenarios.json_fast_path import NotPlainJson, json_lines, parse_json
from harness.scenarios.limits import MAX_DEPTH
from harness.scenarios.problems import Loc, Problem, format_loc
from harness.scenarios.yaml_loader import Loader


class Document:
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
            return json_lines(self._text).line_of(self._where, loc)
        return _line_of(self._node, loc)

    def start_line(self) -> int | None:
        """The line this document (a probe entry: its value in the ``probes`` list) starts on."""
        if self._text is not None:
            return json_lines(self._text).start_line(self._where)
        return self._node.start_mark.line + 1 if self._node is not None else None

    def entry(self, data: Any, key: str, index: int) -> Document:
        """The document of item ``index`` of this mapping's list ``key`` (lazy when this one is)."""
        if self._text is not None:
            return Document(self.path, data, text=self._text, where=(*self._where, key, index))
        return Document(self.path, data, _node_at(self._node, (key, index)))

    def line_getter(self, loc: Loc) -> Callable[[], int | None]:
        """The line of ``loc``, looked up when called (only a duplicate id asks).

        A lazy document's getter holds neither its data nor its text (a suite
        of large files would keep them all alive): it re-reads the file, and
        gives no line if the file changed since it was parsed. Either getter
        pickles, so a worker process of ``validate`` can hand it back.
        """
        if self._text is None:
            return _KnownLine(_line_of(self._node, loc)[0])
        return _LineInFile(self.path, _text_digest(self._text), self._where, loc)


@dataclass(frozen=True, slots=True)
class _KnownLine:
    """A line found when the document was parsed."""

    line: int | None

    def __call__(self) -> int | None:
        return self.line


@dataclass(frozen=True, slots=True)
class _LineInFile:
    """A line looked up in the file again, only if it still reads as it did (``digest``)."""

    path: Path
    digest: bytes
    where: Loc
    loc: Loc

    def __call__(self) -> int | None:
        text, _ = read_text(self.path)
        return json_lines(text).line_of(self.where, self.loc)[0] if text is not None and _digest(text) == self.digest else None


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


def display_path(path: Path) -> Path:
    """``path`` relative to the working folder when it lies below it, for messages."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def read_text(path: Path) -> tuple[str | None, list[Problem]]:
    """The file's text, or the problem: unreadable, not UTF-8, or larger than :func:`limits.max_file_bytes` (checked first)."""
    try:
        limit = limits.max_file_bytes()
    except limits.LimitSettingError as exc:
        return None, [Problem(str(path), None, "", f"cannot check the file's size: {exc}")]
    try:
        size = path.stat().st_size
    except OSError as exc:
        return None, [Problem(str(path), None, "", f"cannot read: {exc.strerror}")]
    if size > limit:
        return None, [Problem(str(path), None, "", f"{size / 2**20:,.1f} MiB is over the {limit / 2**20:g} MiB limit for a "
                              f"scenario file; refused before reading (split it, or raise {limits.MAX_FILE_MB_ENV})")]
    try:
        return path.read_text(encoding="utf-8"), []
    except UnicodeDecodeError as exc:
        return None, [Problem(str(path), None, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}")]
    except OSError as exc:
        return None, [Problem(str(path), None, "", f"cannot read: {exc.strerror}")]


def parse_document(path: Path, text: str | None = None) -> tuple[Document | None, list[Problem]]:
    """Parse ``path`` (or its already-read ``text``) into data and node tree, or problems."""
    if text is None:
        text, problems = read_text(path)
        if text is None:
            return None, problems
    if "{" in text[:4096]:
        try:
            data = parse_json(text)
        except NotPlainJson:
            pass
        else:
            return Document(path, data, text=text), []
    try:
        yaml_limit = limits.max_yaml_chars()
    except limits.LimitSettingError as exc:
        return None, [Problem(str(path), None, "", f"cannot check the file's size: {exc}")]
    if len(text) > yaml_limit:  # YAML's node tree costs tens of bytes of memory per byte of text: refuse before parsing
        return None, [Problem(str(path), None, "", f"{len(text) / 2**20:,.1f} MiB of YAML is over the {yaml_limit / 2**20:g} MiB "
                              f"limit for YAML syntax; refused before parsing (write it in JSON syntax, as `recall-eval "
                              f"import` does, or raise {limits.MAX_YAML_MB_ENV})")]
    loader = Loader(text)
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
    return Document(path, data, node), problems


def read_yaml(path: Path) -> tuple[Any, list[Problem]]:
    """The data of a YAML file that is not a scenario (a judge calibration set), parsed as scenario files are.

    Aliases, nesting deeper than :data:`MAX_DEPTH`, syntax errors and duplicate
    keys are problems (``file:line: what``), so a hostile or mistyped file costs
    one line, not gigabytes or a traceback. Returns ``(data, problems)``; the
    data is None when there are problems.
    """
    document, problems = parse_document(path)
    return (None if problems or document is None else document.data), problems


@functools.lru_cache(maxsize=2)
def _compose(text: str) -> yaml.Node | None:
    """The node tree of text already parsed once (for line numbers only; the last two kept, for a file's several lines)."""
    loader = Loader(text)
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
    for event in yaml.parse(text, Loader=Loader):
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
    for part in loc:
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
