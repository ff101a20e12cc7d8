"""An imported suite's provenance file (``_suite.json``): is the suite the whole benchmark, or a truncated part?

``recall-eval import`` writes ``_suite.json`` with ``"complete": false``
before the first conversation and ``true`` only after the last one, so an
import stopped by a truncated or damaged source file (or by Ctrl-C) leaves a
suite that loads and validates but holds only part of the benchmark: its
numbers are not the benchmark's. The rule (docs/importers.md):

- ``recall-eval validate`` reports it as an **error** (exit 1), on the
  ``_suite.json`` file's ``complete`` field;
- ``recall-eval run`` runs it, prints a warning, and records the files in
  ``run.json`` (``parameters.incomplete_suites``); the report leads with it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from harness.scenarios.problems import Problem

SUITE_JSON = "_suite.json"
"""The provenance file ``recall-eval import`` writes into a suite folder."""


def suite_files(paths: Sequence[str | Path]) -> list[Path]:
    """The ``_suite.json`` files under ``paths`` (outside hidden folders), or beside a file named alone."""
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_file() and (path.parent / SUITE_JSON).is_file():  # a file of an imported suite, named alone
            found.add(path.parent / SUITE_JSON)
        if path.is_dir():
            found.update(p for p in path.rglob(SUITE_JSON)
                         if not any(part.startswith(".") for part in p.relative_to(path).parts[:-1]))
    return sorted(found)


def incomplete_suites(paths: Sequence[str | Path]) -> list[Problem]:
    """One error per ``_suite.json`` under ``paths`` (or beside a named file) that says ``"complete": false``.

    A ``_suite.json`` that is not readable JSON is a warning: the suite's
    completeness is then unknown, which a reader must be told too.
    """
    problems = []
    for file in suite_files(paths):
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(Problem(str(file), None, "", f"unreadable provenance file, completeness unknown: {exc}",
                                    severity="warning"))
            continue
        if isinstance(record, dict) and record.get("complete") is False:
            source = (record.get("source") or {}).get("file") if isinstance(record.get("source"), dict) else None
            problems.append(Problem(
                str(file), None, "complete",
                f"incomplete suite: the import of {source or 'its source file'} stopped before the end, so the suite "
                "holds only the part written before it stopped; its "
                "numbers are not the benchmark's. Import the whole file again (`recall-eval import`)", "false"))
    return problems
