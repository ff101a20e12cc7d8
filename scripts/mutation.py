"""Mutation testing of the modules that decide the numbers (docs/mutation-testing.md).

Runs mutmut (``pip install -e '.[mutation]'``) on the given modules only, one
worker by default, then prints each module's kill rate and its surviving
mutants. Slow (minutes per module): run it by hand, never in ``.ci/run``.

Usage:
    python scripts/mutation.py                                   # all configured modules
    python scripts/mutation.py memory_tools/host.py harness/run/cache.py
    python scripts/mutation.py --report-only harness/run/cache.py    # results of the last run, no run
    python scripts/mutation.py --survivors harness/run/cache.py      # re-test only the last survivors
    python scripts/mutation.py --timeouts harness/run/cache.py       # re-test only the last timeouts, one at a time
    python scripts/mutation.py --resume harness/analysis/aggregate.py     # only the mutants an interrupted run left
    python scripts/mutation.py --children 2 harness/analysis/verdict.py
    python scripts/mutation.py --changed                              # only the functions your change touched
    python scripts/mutation.py --changed --base v0.1.0                # ... since another commit
    python scripts/mutation.py --tests tests/analysis/test_decision.py -- harness/analysis/decision.py
                                                                      # a narrow run: these tests only

A module is a path (``harness/run/cache.py``) or a dotted name (``harness.run.cache``)
listed under ``[tool.mutmut] only_mutate`` in pyproject.toml. Show one
survivor's diff with ``mutmut show <name>``; ``mutmut browse`` lists them all.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code). mutmut's score counts a timeout as killed;
# here it is neither killed nor survived: on a shared, loaded machine a mutant's ordinary test run passes the
# wall-clock limit, and such "kills" later survive (docs/mutation-testing.md, "Reading survivors"). --timeouts
# re-tests them one at a time until each is killed or survived.
_KILLED = {1, 3, 37}
_TIMEOUT = {36, 24, -24, 152, 255}
_SURVIVED = {0}
_NO_TESTS = {5, 33}
_SKIPPED = {34}
_NOT_CHECKED = {None}


class MutationUsageError(ValueError):
    """A module that is not configured for mutation testing."""


def configured_modules() -> list[str]:
    """The ``only_mutate`` paths of ``[tool.mutmut]`` in pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["mutmut"]["only_mutate"])


def module_path(name: str, known: list[str]) -> str:
    """``harness.run.cache`` or ``harness/run/cache.py`` -> ``harness/run/cache.py``, checked against ``known``."""
    path = name if name.endswith(".py") else name.replace(".", "/") + ".py"
    if path not in known:
        raise MutationUsageError(
            f"{name!r} is not configured for mutation testing; choose from {', '.join(known)} "
            "(or add it to [tool.mutmut] only_mutate in pyproject.toml)")
    return path


def _dotted(path: str) -> str:
    return path[: -len(".py")].replace("/", ".")


# mutmut regenerates its mutants (forgetting the results of functions whose source changed) only at the start
# of `mutmut run`; --resume needs that first, to know what is left. These are mutmut's own steps of that start
# (3.8), without the test runs that follow.
_REGENERATE = (
    "import json, os\n"
    "from mutmut.configuration import config\n"
    "from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants, set_mutant_under_test, setup_source_paths\n"
    "if 'RECALL_EVAL_MUTATION_MODULES' in os.environ:  # --tests: these modules alone (see _WITH_TESTS)\n"
    "    config().only_mutate = json.loads(os.environ['RECALL_EVAL_MUTATION_MODULES'])\n"
    "set_mutant_under_test('mutant_generation')\n"
    "os.makedirs('mutants', exist_ok=True)\n"
    "copy_src_dir(); copy_also_copy_files(); setup_source_paths(); create_mutants(1)\n"
)


def regenerate_mutants(env: dict[str, str] | None = None) -> None:
    """Bring ``mutants/`` up to the current source, as ``mutmut run`` does first (no tests are run)."""
    subprocess.run([sys.executable, "-c", _REGENERATE], cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)


# mutmut's map of which tests call which function. It is collected in full only when this file is missing; after
# that, only tests new since are traced. A function added or renamed since (say `cluster_quantile_cis`) is then
# mapped to the new tests alone, and its mutants "survive" tests that were never run against them. A re-test of a
# subset (--resume, --survivors) exists because the code changed, so it drops the map first (a full trace of the
# suite, a few minutes) rather than trust one that may be stale.
_TEST_MAP = ROOT / "mutants" / "mutmut-stats.json"


def forget_test_map() -> None:
    """Make the next ``mutmut run`` trace the whole suite again (see :data:`_TEST_MAP`)."""
    _TEST_MAP.unlink(missing_ok=True)


# ``--tests``: mutmut reads its test selection from pyproject.toml alone. A narrow run (one module's mutants
# against the tests that exercise it, when the whole selection's trace costs too long on a shared machine)
# replaces the selection in mutmut's own process before its command runs; the workers fork from that process
# and inherit it. It also mutates the given modules alone: mutmut otherwise generates every configured
# module's mutants first (about 80 modules, half an hour on a loaded machine) and traces through them all. Its
# test map is dropped before and after (see ``main``), so its results stay: a kill is a
# test that failed, whatever the selection; a survivor may still die to a test outside it (``--survivors``
# on the configured selection re-tests exactly those).
_WITH_TESTS = (
    "import json, os, sys\n"
    "from mutmut.configuration import config\n"
    "from mutmut.__main__ import cli\n"
    "config().pytest_add_cli_args_test_selection = json.loads(os.environ['RECALL_EVAL_MUTATION_TESTS'])\n"
    "config().only_mutate = json.loads(os.environ['RECALL_EVAL_MUTATION_MODULES'])\n"
    "cli(sys.argv[1:], prog_name='mutmut')\n"
)


def drop_unmutated_copies(paths: list[str]) -> list[str]:
    """Remove ``mutants/``'s plain copies of ``paths`` (no mutant in them); returns those removed.

    A narrow run mutates its modules alone and copies every other one as is. mutmut regenerates a module only when
    its source is newer than the copy, so a later narrow run of one of those modules (``--survivors``,
    ``--timeouts``) found no mutant in it and stopped: "could not find any test case for any mutant".
    """
    removed = []
    for path in paths:
        copy = ROOT / "mutants" / path
        if copy.is_file() and "__mutmut_" not in copy.read_text(encoding="utf-8"):
            copy.unlink()
            removed.append(path)
    return removed


def mutmut_command(tests: list[str] | None, paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command that starts mutmut and its environment: with ``tests``, mutmut on that selection alone and
    mutating ``paths`` alone."""
    env = dict(os.environ)
    # With bytecode writing forbidden, tests/conftest.py compiles harness and memory_tools in every pytest session
    # (for the child processes tests start), so in every mutant's forked run too: on a module with fast tests that
    # was most of each mutant's time (embeddings.py: about 8 mutants a minute with it, 60 without, one loaded
    # machine). Python writes its own bytecode once here instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not tests:
        return [sys.executable, "-m", "mutmut"], env
    env["RECALL_EVAL_MUTATION_TESTS"] = json.dumps(list(tests))
    env["RECALL_EVAL_MUTATION_MODULES"] = json.dumps(list(paths))
    return [sys.executable, "-c", _WITH_TESTS], env


def exit_codes(meta: Path, attempts: int = 40, pause: float = 0.05) -> dict[str, int | None]:
    """One module's ``exit_code_by_key`` from mutmut's ``.meta`` file.

    A running mutmut rewrites the file in place after each mutant, so a reader (``--report-only`` beside a run)
    can find it empty or cut short: it is read again until it parses, then a clear error names the file.
    """
    for attempt in range(attempts):
        try:
            return json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        except json.JSONDecodeError:
            if attempt + 1 < attempts:
                time.sleep(pause)
    raise MutationUsageError(f"{meta} does not parse as JSON after {attempts} reads: a mutmut run is writing it "
                             "or was killed while writing it; wait for the run, or run the module again")


def mutants_with(path: str, statuses: set[int | None]) -> list[str]:
    """Names of one module's mutants whose last exit code is in ``statuses`` (none for a never-run module)."""
    meta = ROOT / "mutants" / f"{path}.meta"
    if not meta.exists():
        return []
    codes = exit_codes(meta)
    return sorted(name for name, code in codes.items() if code in statuses)


def unchecked(path: str) -> list[str]:
    """Names of one module's mutants that have no result yet (an interrupted or never-run module)."""
    return mutants_with(path, _NOT_CHECKED)


def timed_out(path: str) -> list[str]:
    """Names of one module's mutants whose last run passed mutmut's time limit (not decided: see ``_TIMEOUT``)."""
    return mutants_with(path, _TIMEOUT)


def summary(path: str, globs: list[str] | None = None) -> tuple[Counter[str], list[str]]:
    """(counts by status, surviving mutant names) of one module from mutmut's ``.meta`` file.

    ``globs`` (``module.x_name__mutmut_*``) limits it to those functions' mutants.
    """
    meta = ROOT / "mutants" / f"{path}.meta"
    counts: Counter[str] = Counter()
    survivors: list[str] = []
    if not meta.exists():
        return counts, survivors
    codes = exit_codes(meta)
    if globs is not None:
        prefixes = tuple(glob.rstrip("*") for glob in globs)
        codes = {name: code for name, code in codes.items() if name.startswith(prefixes)}
    for name, code in sorted(codes.items()):
        if code in _KILLED:
            counts["killed"] += 1
        elif code in _TIMEOUT:
            counts["timeouts"] += 1
        elif code in _SKIPPED:
            counts["skipped"] += 1
        elif code in _NOT_CHECKED:
            counts["not checked"] += 1
        else:
            counts["survived" if code in _SURVIVED else "no tests" if code in _NO_TESTS else "suspicious"] += 1
            survivors.append(f"{name} ({'survived' if code in _SURVIVED else f'exit {code}'})")
    return counts, survivors


# mutmut's name for a function's mutants: ``x_name`` for a module function, ``xǁClassǁname`` for a method
# (mutmut.mutation.trampoline_templates.mangle_function_name; nested classes joined by dots).
_CLASS_SEPARATOR = "\u01c1"
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def touched_lines(diff: str) -> set[int]:
    """Line numbers of the new file that a unified diff (``-U0``) adds or changes.

    A hunk that only deletes lines (``+c,0``) touches line ``c``, the line after which they were removed, so a
    function that lost a line counts as changed.
    """
    lines: set[int] = set()
    for match in _HUNK.finditer(diff):
        start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
        lines.update(range(start, start + count) if count else (max(start, 1),))
    return lines


def touched_functions(source: str, lines: set[int]) -> list[str]:
    """mutmut's mangled names of the functions and methods whose source spans one of ``lines``.

    mutmut mutates top-level functions and the methods of (nested) classes; a nested function is part of the
    function that holds it. Decorators count as the function's lines.
    """
    names: list[str] = []

    def visit(body: list[ast.stmt], class_name: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if any(first <= line <= (node.end_lineno or node.lineno) for line in lines):
                    prefix = f"x{_CLASS_SEPARATOR}{class_name}{_CLASS_SEPARATOR}" if class_name else "x_"
                    names.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{class_name}.{node.name}" if class_name else node.name)

    visit(ast.parse(source).body, "")
    return names


def default_base() -> str:
    """What ``--changed`` compares against: the fork point from ``main`` on a branch, ``HEAD`` on main itself."""
    branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    if branch == "main":
        return "HEAD"
    fork = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
    return fork.stdout.strip() if fork.returncode == 0 and fork.stdout.strip() else "HEAD"


def changed_mutants(paths: list[str], base: str) -> dict[str, list[str]]:
    """For each configured module the working tree changed since ``base``, its touched functions' mutant globs."""
    globs: dict[str, list[str]] = {}
    for path in paths:
        diff = subprocess.run(["git", "diff", "-U0", base, "--", path], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        lines = touched_lines(diff)
        if not lines or not (ROOT / path).exists():
            continue
        source = (ROOT / path).read_text(encoding="utf-8")
        names = touched_functions(source, lines)
        if names:
            globs[path] = [f"{_dotted(path)}.{name}__mutmut_*" for name in names]
    return globs


def report(paths: list[str], only: dict[str, list[str]] | None = None) -> int:
    """Print each module's kill rate, its timeouts apart, and its survivors; returns the number of survivors.

    A timeout is not decided: it is in neither the killed count nor the rate's denominator, and has its own column.
    ``only`` (module -> mutant globs) limits each module's figures to those mutants (``--changed``).
    """
    total_survivors = 0
    for path in paths:
        counts, survivors = summary(path, only.get(path) if only is not None else None)
        decided = counts["killed"] + len(survivors)
        rate = f"{100 * counts['killed'] / decided:.1f}%" if decided else "n/a"
        extra = ", ".join(f"{counts[k]} {k}" for k in ("not checked", "skipped") if counts[k])
        print(f"{path}: {counts['killed']}/{decided} killed ({rate}); {counts['timeouts']} timeouts"
              f"{' (re-test with --timeouts)' if counts['timeouts'] else ''}{'; ' + extra if extra else ''}")
        for name in survivors:
            print(f"    {name}")
        total_survivors += len(survivors)
    return total_survivors


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except MutationUsageError as exc:  # a results file mid-write: one line, not a traceback
        print(f"mutation.py: {exc}", file=sys.stderr)
        return 2


def _run(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: every configured one)")
    parser.add_argument("--children", type=int, default=1, help="mutmut worker processes (default 1: shared CPU)")
    parser.add_argument("--report-only", action="store_true", help="print the last run's results without running")
    parser.add_argument("--survivors", action="store_true",
                        help="re-test only the mutants that survived the last run (after adding tests)")
    parser.add_argument("--timeouts", action="store_true",
                        help="re-test only the mutants that timed out in the last run, one at a time (one worker "
                             "whatever --children says), so each becomes killed or survived")
    parser.add_argument("--resume", action="store_true",
                        help="test only the mutants without a result: those an interrupted run left, and those of "
                             "functions edited since (mutmut forgets their results)")
    parser.add_argument("--changed", action="store_true",
                        help="test only the mutants of functions changed since --base (the habit before stopping)")
    parser.add_argument("--base", help="the commit --changed compares the working tree with (default: the fork "
                                       "point from main on a branch, HEAD on main)")
    parser.add_argument("--tests", nargs="+", metavar="TEST",
                        help="test files or node ids to run instead of [tool.mutmut]'s selection: a narrow run "
                             "of one module against the tests that exercise it; end the list with --")
    args = parser.parse_args(argv)
    if sum((args.resume, args.survivors, args.timeouts, args.changed)) > 1:
        parser.error("--resume, --survivors, --timeouts and --changed re-test different mutants; give one")
    if args.base and not args.changed:
        parser.error("--base only applies to --changed")
    missing = [test for test in args.tests or () if not (ROOT / test.split("::")[0]).exists()]
    if missing:  # else mutmut's stats pass fails with pytest's "file not found" buried under its own traceback
        parser.error(f"--tests: no such test file: {', '.join(missing)}")
    known = configured_modules()
    try:
        paths = [module_path(m, known) for m in args.modules] or known
    except MutationUsageError as exc:
        parser.error(str(exc))
    only = None
    if args.changed:
        base = args.base or default_base()
        try:
            only = changed_mutants(paths, base)
        except subprocess.CalledProcessError as exc:
            parser.error(f"cannot diff against {base!r}: {(exc.stderr or '').strip() or exc}")
        print(f"changed since {base}: " + (", ".join(f"{p} ({len(g)} functions)" for p, g in only.items())
                                           or "no function of a mutation-tested module"))
        paths = [path for path in paths if path in only]
        if not paths:
            return 0
    if not args.report_only:
        if args.tests:  # before --resume regenerates: a plain copy would stay unmutated
            drop_unmutated_copies(paths)
        patterns = [f"{_dotted(path)}.*" for path in paths]
        if only is not None:
            patterns = [glob for path in paths for glob in only[path]]
        if args.survivors:
            patterns = [name.split(" ")[0] for path in paths for name in summary(path)[1]]
            if not patterns:
                print("no survivors to re-test")
                report(paths)
                return 0
        elif args.timeouts:
            patterns = [name for path in paths for name in timed_out(path)]
            if not patterns:
                print("no timeouts to re-test")
                report(paths)
                return 0
            # a timeout is a run slowed past the limit: a second worker beside it is what slowed it
            args.children = 1
        elif args.resume:
            # an edited function's old results are forgotten: it is left to test again
            regenerate_mutants(mutmut_command(args.tests, paths)[1])
            patterns = [name for path in paths for name in unchecked(path)]
            if not patterns:
                print("nothing left unchecked (run without --resume to re-test every mutant)")
                report(paths)
                return 0
        # --timeouts alone keeps the map: the code and tests are those of the run that timed out
        if args.survivors or args.resume or args.changed or args.tests:
            forget_test_map()  # --tests: a map traced on other tests would hide or invent tests of a function
        mutmut, env = mutmut_command(args.tests, paths)
        completed = subprocess.run([*mutmut, "run", "--max-children", str(args.children), *patterns], cwd=ROOT,
                                   env=env)
        if args.tests:
            forget_test_map()  # a later run on the configured selection must not trust a map of these tests
        if completed.returncode not in (0, 1):
            return completed.returncode
    report(paths, only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
