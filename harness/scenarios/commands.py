"""The scenario commands: ``recall-eval validate`` and ``recall-eval list``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.defaults import available_cpus
from harness.scenarios.loading import load_scenarios, load_suite
from harness.scenarios.problems import ScenarioError
from harness.scenarios.provenance import incomplete_suites
from harness.wrapping import say, terminal_width, wrap


def _missing(command: str, paths: list[str]) -> bool:
    """Say so and return True when a path given does not exist: bad input, exit 2 as in every command."""
    missing = [p for p in paths if not Path(p).exists()]
    for path in missing:
        print(f"recall-eval {command}: {path}: no such file or folder (working directory {Path.cwd()})",
              file=sys.stderr)
    return bool(missing)


def cli_validate(args: argparse.Namespace) -> int:
    """``recall-eval validate [PATH ...]``: print every problem, then a summary; 0 when there are no errors,
    1 when a file has one, 2 when a path does not exist.

    An imported suite whose ``_suite.json`` says ``complete: false`` is an error
    (:mod:`harness.scenarios.provenance`): it validates file by file, but it is not the whole benchmark.
    """
    if _missing("validate", args.paths):
        return 2
    store = None
    if getattr(args, "store", None):
        from harness.scenarios.store_items import StoreError, load_store

        try:
            store = load_store(args.store)
        except StoreError as exc:
            print(f"recall-eval validate: {exc}", file=sys.stderr)
            return 2
    jobs = getattr(args, "jobs", None) or available_cpus()
    suite = load_suite(args.paths, keep=False, jobs=jobs)  # file by file: a suite of any size in the memory of one file per process
    suite.problems = sorted([*suite.problems, *incomplete_suites(args.paths)], key=lambda p: p.sort_key())
    for problem in suite.problems:  # file:line: field: message, its continuation indented when it is long
        say(str(problem))
    errors = sum(1 for p in suite.problems if p.severity == "error")
    warnings = len(suite.problems) - errors
    summary = f"{len(suite.files)} files, {suite.passed} scenarios, {errors} errors, {warnings} warnings"
    print(summary, file=sys.stdout)
    if store is not None and not errors:
        _store_lines(args.paths, store)
    return 1 if errors else 0


def _store_lines(paths: list[str], store: object) -> None:
    """What ``--store`` gives the probes: the items each one's store holds and those its Host scope shows."""
    from harness.scenarios.store_items import visible_counts, with_store

    counts = visible_counts(with_store(load_scenarios(paths), store))  # type: ignore[arg-type]
    seeded = [n for _, n, _ in counts]
    visible = [v for _, _, v in counts]
    print(f"store {store.path}: {len(store.items)} items, schema version {store.schema_version}, "  # type: ignore[attr-defined]
          f"sha256 {store.sha256[:12]}...; per probe {min(seeded, default=0)}-{max(seeded, default=0)} items created "  # type: ignore[attr-defined]
          f"before it, {min(visible, default=0)}-{max(visible, default=0)} in its scope (global or its workspace, "
          f"active); {sum(1 for v in visible if not v)} of {len(counts)} probes see none")


def cli_list(args: argparse.Namespace) -> int:
    """``recall-eval list``: a table of id, category, tags and title, then a count (exit 2: a path does not exist)."""
    if _missing("list", args.paths):
        return 2
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
    for line in list_lines(rows, terminal_width()):
        print(line)
    print(f"{len(rows)} scenario{'s' if len(rows) != 1 else ''}")
    return 0


def list_lines(rows: list[tuple[str, str, str, str]], width: int) -> list[str]:
    """``list``'s table: one line per scenario when it fits ``width``; else the title goes under its id, wrapped,
    and tags too long for what is left are cut with "…" (ids and categories are never cut)."""
    header = ("ID", "CATEGORY", "TAGS", "TITLE")
    widths = [max([len(header[i])] + [len(row[i]) for row in rows]) for i in range(3)]
    if sum(widths) + 6 + max([len(header[3])] + [len(row[3]) for row in rows]) <= width:
        return ["  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3] for row in [header, *rows]]
    room = max(len(header[2]), width - widths[0] - widths[1] - 4)

    def cut(tags: str) -> str:
        return tags if len(tags) <= room else tags[: room - 1] + "…"

    lines = ["  ".join((header[0].ljust(widths[0]), header[1].ljust(widths[1]), "TAGS")).rstrip(), "    TITLE"]
    for row in rows:
        lines.append("  ".join((row[0].ljust(widths[0]), row[1].ljust(widths[1]), cut(row[2]))).rstrip())
        lines += wrap("    " + row[3], width)
    return lines
