"""``summary.json`` as the viewer and ``history`` read it: a regular file of strict JSON whose blocks have their shapes.

Both show many runs at once, so one hand-edited or damaged summary must cost
one row (the viewer: a row saying why; ``history``: the run left out with a
warning), never the page. :func:`read_summary_file` refuses, naming the file
and the field, what would otherwise crash them later or make their output
invalid: a FIFO or device instead of a file (it would hang), ``NaN`` or
``Infinity`` (not JSON: ``/_runs.json`` would be unparseable, a chart's axis
undefined), and a block of another type (``"verdict": "pass"`` where an object
belongs). A number too large for a float (``1e400``) parses as infinity; the
readers show it as no value (n/a), as they show any number that is not finite.
Floats are not checked one by one at parse time: that tripled the cost of the
viewer's first index of 2,000 runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.regular_files import read_regular_text

__all__ = ["SummaryFileError", "read_summary_file"]

#: Blocks that must be JSON objects when present (null is absent).
_OBJECTS = ("run", "verdict", "judge")
#: Blocks that must be lists of JSON objects when present.
_ROW_LISTS = ("metrics", "paired")
#: Fields of ``run`` that must be lists when present, and the one that must be an object.
_RUN_LISTS = ("models", "arms", "excluded_scenarios", "warnings")


class SummaryFileError(Exception):
    """A ``summary.json`` cannot be shown; the message names the file, the field and how to fix it."""


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__.replace("dict", "object").replace("str", "string")


def shape_problem(summary: dict[str, Any]) -> str | None:
    """The first field of ``summary`` whose type the viewer or history cannot read, in words; None when none."""
    for key in _OBJECTS:
        if summary.get(key) is not None and not isinstance(summary[key], dict):
            return f"{key} is a {_kind(summary[key])}, not an object"
    verdict = summary.get("verdict") or {}
    if verdict.get("status") is not None and not isinstance(verdict["status"], str):
        return f"verdict.status is a {_kind(verdict['status'])}, not text"
    if verdict.get("config") is not None and not isinstance(verdict["config"], dict):
        return f"verdict.config is a {_kind(verdict['config'])}, not an object"
    for key in _ROW_LISTS:
        rows = summary.get(key)
        if rows is None:
            continue
        if not isinstance(rows, list):
            return f"{key} is a {_kind(rows)}, not a list"
        bad = next((i for i, row in enumerate(rows) if not isinstance(row, dict)), None)
        if bad is not None:
            return f"{key}[{bad}] is a {_kind(rows[bad])}, not an object"
    run = summary.get("run") or {}
    for key in _RUN_LISTS:
        if run.get(key) is not None and not isinstance(run[key], list):
            return f"run.{key} is a {_kind(run[key])}, not a list"
    if run.get("parameters") is not None and not isinstance(run["parameters"], dict):
        return f"run.parameters is a {_kind(run['parameters'])}, not an object"
    return None


def read_summary_file(path: Path) -> dict[str, Any]:
    """``path`` (a ``summary.json``) as a dict whose blocks have the shapes ``docs/summary-json.md`` gives.

    Raises:
        SummaryFileError: not a regular file, unreadable, not UTF-8, not strict JSON (NaN, Infinity),
            not an object, or a block of another type; the message says which and how to rebuild it.
        OSError: it vanished or cannot be opened (the caller decides whether that is a gone run or a fault).
    """
    fix = f"rebuild it with `recall-eval report {path.parent}`"
    try:
        data = json.loads(read_regular_text(path), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise SummaryFileError(f"{path}: not UTF-8 text (byte {exc.start}); {fix}") from None
    except json.JSONDecodeError as exc:
        raise SummaryFileError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); {fix}") from None
    except ValueError as exc:  # NaN or Infinity
        raise SummaryFileError(f"{path}: not valid JSON ({exc}); {fix}") from None
    except RecursionError:
        raise SummaryFileError(f"{path}: nested too deeply to be a summary; {fix}") from None
    if not isinstance(data, dict):
        raise SummaryFileError(f"{path}: a JSON {_kind(data)}, not an object; {fix}")
    problem = shape_problem(data)
    if problem is not None:
        raise SummaryFileError(f"{path}: {problem}; {fix}")
    return data
