"""Finding, reading and validating scenario files; ``recall-eval list``.

A suite is a folder of ``*.yaml``/``*.yml`` files, one scenario per file,
searched recursively. A ``_defaults.yaml`` in a folder is deep-merged under
every scenario in that folder and below: the nearest folder's defaults win
over outer ones, mappings merge key by key, and a list or scalar in the
scenario replaces the default. Files whose name starts with ``_`` are never
scenarios.

Loading collects every problem of every file (YAML syntax, schema, cross-field
checks, duplicate ids) before raising one :class:`ScenarioError`, each problem
placed at its file and line: the YAML node tree maps field paths to lines.
YAML aliases and nesting deeper than :data:`MAX_DEPTH` are refused while the
file is still a node tree, so a hostile file costs a one-line error, not a
traceback or gigabytes.

Example:
    >>> scenarios = load_scenarios(["scenarios/smoke"], categories=["preference"])
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from harness.scenarios.models import Category, Scenario
from harness.scenarios.validation import (
    Finding,
    Loc,
    Problem,
    ScenarioError,
    check_partial,
    check_scenario,
    format_loc,
    format_value,
)

SCENARIO_SUFFIXES = (".yaml", ".yml")
DEFAULTS_FILE = "_defaults.yaml"
MAX_DEPTH = 32
"""Deepest nesting of mappings and lists a scenario file may use (a scenario needs about 8)."""
_ROOT_MARKERS = (".git", "pyproject.toml")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class SuiteLoad:
    """Everything :func:`load_suite` found: what loaded, and what is wrong.

    Attributes:
        files: Scenario files read, sorted.
        scenarios: Scenarios that passed every check, sorted by id.
        paths: Scenario id -> the file it came from.
        problems: Errors and warnings, sorted by file and line.
    """

    files: list[Path] = field(default_factory=list)
    scenarios: list[Scenario] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


@dataclass(frozen=True)
class _Document:
    """One parsed YAML file: its data and its node tree (for line numbers)."""

    path: Path
    data: Any
    node: yaml.Node | None


def _is_scenario_file(path: Path) -> bool:
    return path.suffix in SCENARIO_SUFFIXES and not path.name.startswith("_")


def _discover(paths: Sequence[str | Path]) -> tuple[list[Path], list[Problem]]:
    found: set[Path] = set()
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = [p for p in path.rglob("*") if p.is_file() and _is_scenario_file(p)]
            files = [p for p in files if not any(part.startswith(".") for part in p.relative_to(path).parts)]
            if not files:
                problems.append(Problem(str(path), None, "", "folder holds no scenario files (*.yaml, *.yml)"))
            found.update(files)
        elif path.is_file():
            if path.suffix not in SCENARIO_SUFFIXES:
                problems.append(Problem(str(path), None, "", "not a scenario file: expected a .yaml or .yml file"))
            elif path.name.startswith("_"):
                problems.append(Problem(str(path), None, "", "files starting with '_' hold defaults, not scenarios"))
            else:
                found.add(path)
        else:
            problems.append(Problem(str(path), None, "", "no such file or folder"))
    return sorted(found), problems


def discover(paths: Sequence[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files or folders, recursively), sorted.

    Raises:
        ScenarioError: a path is missing, is not a YAML file, or a folder holds no scenario.
    """
    files, problems = _discover(paths)
    if problems:
        raise ScenarioError(problems)
    return files


def _display(path: Path) -> Path:
    """``path`` relative to the working folder when it lies below it, for messages."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _parse(path: Path) -> tuple[_Document | None, list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(str(path), None, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}")]
    except OSError as exc:
        return None, [Problem(str(path), None, "", f"cannot read: {exc.strerror}")]
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
        f"nested more than {MAX_DEPTH} levels deep: a scenario needs about 8; flatten this part of the file",
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
                f"YAML alias *{name} ({where}) refused: {why}; scenario files take no aliases: "
                "write the value out, or put values shared by several files in a _defaults.yaml",
            )
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            open_anchors.append(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            open_anchors.pop()
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            anchors.setdefault(event.anchor, event.start_mark.line + 1)
    return Problem(str(path), shared.start_mark.line + 1, "", "YAML alias refused: scenario files take no aliases")


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


@lru_cache(maxsize=None)
def _resolved(folder: Path) -> Path:
    return folder.resolve()


@lru_cache(maxsize=None)
def _defaults_for(folder: Path) -> tuple[tuple[_Document, ...], tuple[Problem, ...]]:
    """The ``_defaults.yaml`` documents that apply in ``folder``, outermost first.

    Defaults are looked up from the folder upwards to the project root (a
    folder holding ``.git`` or ``pyproject.toml``), whatever path was given.
    """
    parent_docs: tuple[_Document, ...] = ()
    parent_problems: tuple[Problem, ...] = ()
    at_root = any((folder / marker).exists() for marker in _ROOT_MARKERS) or folder.parent == folder
    if not at_root:
        parent_docs, parent_problems = _defaults_for(folder.parent)
    path = folder / DEFAULTS_FILE
    if not path.is_file():
        return parent_docs, parent_problems
    path = _display(path)
    document, problems = _parse(path)
    if document is not None and document.data is not None and not isinstance(document.data, dict):
        problems.append(Problem(str(path), 1, "", f"defaults must be a mapping, not a {type(document.data).__name__}"))
        document = None
    docs = parent_docs + ((document,) if document is not None and document.data is not None else ())
    return docs, parent_problems + tuple(problems)


def _merge(base: Any, override: Any) -> Any:
    """Deep merge: mappings merge key by key; anything else in ``override`` replaces ``base``."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return override


def _schema_findings(errors: list[dict[str, Any]]) -> list[Finding]:
    """pydantic's errors as findings; a missing field with a misspelled sibling says so."""
    findings = []
    misspelled: dict[Loc, str] = {}
    for error in errors:
        if error["type"] == "extra_forbidden":
            loc = tuple(error["loc"])
            hint = _closest(str(loc[-1]), _known_fields(loc[:-1]))
            if hint is not None:
                misspelled[(*loc[:-1], hint)] = str(loc[-1])
    for error in errors:
        loc = tuple(error["loc"])
        message = _error_message(error)
        if error["type"] == "missing" and loc in misspelled:
            message += f" (is {misspelled[loc]!r} beside it a misspelling?)"
        has_value = error["type"] != "missing" and "input" in error
        findings.append(Finding(loc, message, *((error["input"],) if has_value else ())))
    return findings


def _error_message(error: dict[str, Any]) -> str:
    kind, message = error["type"], error["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        known = _known_fields(error["loc"][:-1])
        hint = _closest(str(error["loc"][-1]), known)
        return "unknown field" + (f"; did you mean {hint!r}?" if hint else f" (allowed: {', '.join(known)})" if known else "")
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


def _known_fields(loc: Loc) -> list[str]:
    model: type[BaseModel] | None = Scenario
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


def _locate(finding: Finding, document: _Document, defaults: Sequence[_Document]) -> Problem:
    """Turn a finding into a problem with the file and line its value came from."""
    line, complete = _line_of(document.node, finding.loc)
    file = document.path
    if not complete:
        for default in reversed(defaults):
            default_line, found = _line_of(default.node, finding.loc)
            if found:
                line, file = default_line, default.path
                break
    value = format_value(finding.value) if finding.has_value else None
    return Problem(str(file), line, format_loc(finding.loc), finding.message, value, finding.severity)


def _load_file(path: Path) -> tuple[Scenario | None, list[Problem], int | None]:
    """Read, merge and check one scenario file; returns the scenario, problems, and the id's line."""
    document, problems = _parse(path)
    defaults, default_problems = _defaults_for(_resolved(path.parent))
    problems.extend(default_problems)
    if document is None:
        return None, problems, None
    if not isinstance(document.data, dict):
        kind = "an empty file" if document.data is None else f"a {type(document.data).__name__}"
        problems.append(Problem(str(path), 1, "", f"a scenario file must hold one mapping, not {kind}"))
        return None, problems, None
    data = document.data
    for default in reversed(defaults):
        data = _merge(default.data, data)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        findings = _schema_findings(exc.errors(include_url=False))
        findings.extend(check_partial(data))  # one pass: the cross-field checks still run on what parsed
        problems.extend(_locate(finding, document, defaults) for finding in findings)
        return None, problems, None
    problems.extend(_locate(finding, document, defaults) for finding in check_scenario(scenario))
    return scenario, problems, _line_of(document.node, ("id",))[0]


def load_suite(paths: Sequence[str | Path]) -> SuiteLoad:
    """Load every scenario under ``paths`` and collect every problem; never raises for bad input."""
    _defaults_for.cache_clear()
    _resolved.cache_clear()
    files, problems = _discover(paths)
    suite = SuiteLoad(files=files)
    seen_problems: set[Problem] = set()
    first_seen: dict[str, tuple[Path, int | None]] = {}
    for path in files:
        scenario, file_problems, id_line = _load_file(path)
        for problem in file_problems:  # defaults problems repeat for every file below them
            if problem not in seen_problems:
                seen_problems.add(problem)
                problems.append(problem)
        if scenario is None:
            continue
        if scenario.id in first_seen:
            other, other_line = first_seen[scenario.id]
            where = f"{other}:{other_line}" if other_line else str(other)
            problems.append(Problem(str(path), id_line, "id", f"duplicate scenario id: {where} uses it too", format_value(scenario.id)))
            continue
        first_seen[scenario.id] = (path, id_line)
        if not any(p.severity == "error" for p in file_problems):
            suite.scenarios.append(scenario)
            suite.paths[scenario.id] = path
    suite.scenarios.sort(key=lambda s: s.id)
    suite.problems = sorted(problems, key=Problem.sort_key)
    return suite


def _filter_problems(categories: Iterable[str]) -> list[Problem]:
    known = {c.value for c in Category}
    return [
        Problem("--category", None, "", f"unknown category; choose from {', '.join(sorted(known))}", format_value(c))
        for c in categories
        if c not in known
    ]


def select(scenarios: Iterable[Scenario], *, ids: Sequence[str] = (), categories: Sequence[str] = (), tags: Sequence[str] = ()) -> list[Scenario]:
    """Scenarios matching any id glob, any category and any tag (an empty filter matches all)."""
    return [
        s
        for s in scenarios
        if (not ids or any(fnmatch.fnmatchcase(s.id, glob) for glob in ids))
        and (not categories or s.category.value in categories)
        and (not tags or any(tag in s.tags for tag in tags))
    ]


def load_scenarios(
    paths: Sequence[str | Path],
    *,
    ids: Sequence[str] = (),
    categories: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> list[Scenario]:
    """Load and check every scenario under ``paths``; return those matching the filters, sorted by id.

    Args:
        paths: Scenario files or suite folders.
        ids: fnmatch globs on scenario ids (any may match).
        categories: Category names (any may match).
        tags: Tags (a scenario matches when it has any of them).

    Raises:
        ScenarioError: with every error of every file (warnings alone never raise).
    """
    suite = load_suite(paths)
    errors = suite.errors + _filter_problems(categories)
    if errors:
        raise ScenarioError(errors)
    return select(suite.scenarios, ids=ids, categories=categories, tags=tags)


def scenario_hash(scenario: Scenario) -> str:
    """SHA-256 of the scenario's canonical JSON, to spot edited fixtures.

    The ``$schema`` editor hint is left out, so moving a file does not change its hash.
    """
    data = scenario.model_dump(mode="json", by_alias=True, exclude={"schema_"})
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cli_list(args: argparse.Namespace) -> int:
    """``recall-eval list``: a table of id, category, tags and title, then a count."""
    try:
        scenarios = load_scenarios(args.paths, ids=args.id, categories=args.category, tags=args.tag)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        in_files = [p for p in exc.problems if not str(p).startswith("--")]  # not a bad --category value
        n = len(exc.problems)
        hint = "; run `recall-eval validate` for details" if in_files else ""
        print(f"{n} error{'s' if n != 1 else ''}{hint}", file=sys.stderr)
        return 1
    rows = [(s.id, s.category.value, ",".join(s.tags), s.title) for s in scenarios]
    header = ("ID", "CATEGORY", "TAGS", "TITLE")
    widths = [max([len(header[i])] + [len(row[i]) for row in rows]) for i in range(3)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3])
    print(f"{len(rows)} scenario{'s' if len(rows) != 1 else ''}")
    return 0
