"""Placing findings at a file and line: schema errors and cross-field findings become :class:`~harness.scenarios.problems.Problem` records.

A value that came from a ``_defaults.yaml`` or a conversation's shared part
is placed in that file. Schema errors get a readable message and, for an
unknown field, the closest known one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from harness.scenarios.documents import Document
from harness.scenarios.field_types import CATEGORY_PATTERN
from harness.scenarios.models import Category, Scenario
from harness.scenarios.problems import Finding, Loc, Problem, format_loc, format_value


def merge_defaults(base: Any, override: Any) -> Any:
    """Deep merge: mappings merge key by key; anything else in ``override`` replaces ``base``."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge_defaults(base[key], value) if key in base else value
        return merged
    return override


def schema_findings(errors: Sequence[Mapping[str, Any]], root: type[BaseModel] = Scenario) -> list[Finding]:
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


def _error_message(error: Mapping[str, Any], root: type[BaseModel] = Scenario) -> str:
    kind, message = error["type"], error["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        known = _known_fields(error["loc"][:-1], root)
        word = str(error["loc"][-1])
        if len(completions := _completions(word, known)) > 1:
            return f"unknown field; did you mean one of {', '.join(map(repr, completions))}?"
        hint = completions[0] if completions else _closest(word, known)
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
    """The known name nearest ``word``, never one of the opposite sense (``must_contain`` is not ``must_not_contain``)."""
    negated = _negated(word)
    same_sense = [c for c in choices if _negated(c) == negated]
    matches = difflib.get_close_matches(word, same_sense, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _negated(name: str) -> bool:
    return bool({"not", "no"} & set(name.lower().split("_")))


def _completions(word: str, choices: list[str]) -> list[str]:
    """Known names that ``word`` begins (``must_contain`` -> ``must_contain_all``, ``_any``, ``_groups``)."""
    return [c for c in choices if c.startswith(f"{word}_")]


def locate(finding: Finding, document: Document, defaults: Sequence[Document], prefix: Loc = ()) -> Problem:
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
