"""The scenario commands: ``recall-eval validate`` and ``recall-eval list``.
"""

from __future__ import annotations

import argparse
import sys

from harness.scenarios.loading import load_scenarios, load_suite
from harness.scenarios.problems import ScenarioError


def cli_validate(args: argparse.Namespace) -> int:
    """``recall-eval validate [PATH ...]``: print every problem, then a summary; 0 when there are no errors."""
    suite = load_suite(args.paths, keep=False)  # file by file: a suite of any size in the memory of one file
    for problem in suite.problems:
        print(problem)
    errors = sum(1 for p in suite.problems if p.severity == "error")
    warnings = len(suite.problems) - errors
    summary = f"{len(suite.files)} files, {suite.passed} scenarios, {errors} errors, {warnings} warnings"
    print(summary, file=sys.stdout)
    return 1 if errors else 0


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
    rows = [(s.id, s.category, ",".join(s.tags), s.title) for s in scenarios]
    header = ("ID", "CATEGORY", "TAGS", "TITLE")
    widths = [max([len(header[i])] + [len(row[i]) for row in rows]) for i in range(3)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3])
    print(f"{len(rows)} scenario{'s' if len(rows) != 1 else ''}")
    return 0
