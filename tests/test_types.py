"""The types hold: memory_tools has no type error, and no harness module gains one.

mypy runs as the README's test command runs everything else, with the settings in
pyproject.toml (``[tool.mypy]``): memory_tools under ``--strict``'s flags,
harness under mypy's defaults. harness had 185 type errors in 59 modules when
the checker came in; all are fixed and ``HARNESS_ERRORS`` is empty. It stays as
the ratchet for a debt taken on knowingly: a module listed with a count may lose
errors, never gain one, and once it has fewer its count must come down. A module
not listed may have none.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_ERROR = re.compile(r"^(?P<path>[^:\n]+\.pyi?):\d+(?::\d+)?: error: ", re.MULTILINE)

# module path -> its mypy errors when listed (mypy 2.4, pydantic plugin); each entry is a debt with a ceiling.
# `python tests/test_types.py` prints the counts of the tree as it is (after a merge moved or split modules).
HARNESS_ERRORS: dict[str, int] = {
}


def mypy_errors(output: str) -> dict[str, int]:
    """Errors per file in mypy's output (notes and the summary line are not errors)."""
    counts: dict[str, int] = {}
    for match in _ERROR.finditer(output):
        path = match["path"].replace("\\", "/")
        counts[path] = counts.get(path, 0) + 1
    return counts


def type_problems(counts: dict[str, int], listed: dict[str, int]) -> list[str]:
    """What breaks the rule: any error in memory_tools, a harness module over its listed count, a listed count too high."""
    problems = []
    for module, errors in sorted(counts.items()):
        ceiling = 0 if module.startswith("memory_tools/") else listed.get(module, 0)
        if errors > ceiling:
            problems.append(f"{module}: {errors} type errors, {ceiling} allowed; run `python -m mypy {module}` and fix them")
    for module, ceiling in sorted(listed.items()):
        if counts.get(module, 0) < ceiling:
            problems.append(f"{module}: down to {counts.get(module, 0)} type errors from {ceiling}; "
                            "lower its count in HARNESS_ERRORS (remove it at 0)")
    return problems


def run_mypy(*paths: str) -> subprocess.CompletedProcess[str]:
    """mypy on ``paths`` from the project root, with pyproject.toml's settings (its cache in ``.mypy_cache``)."""
    return subprocess.run([sys.executable, "-m", "mypy", *paths], cwd=ROOT, capture_output=True, text=True, timeout=1800)


@pytest.mark.slow
def test_memory_tools_has_no_type_error_and_no_harness_module_gains_one() -> None:
    """One mypy run over both packages (harness imports memory_tools; about half a minute without a cache)."""
    done = run_mypy("memory_tools", "harness")
    assert done.returncode in (0, 1) and "error: " not in done.stderr, done.stdout + done.stderr  # 2: mypy itself failed
    assert type_problems(mypy_errors(done.stdout), HARNESS_ERRORS) == []  # the errors: `python -m mypy MODULE`


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({}, []),
        ({"memory_tools/store.py": 1}, ["memory_tools/store.py: 1 type errors, 0 allowed; run `python -m mypy memory_tools/store.py` and fix them"]),
        ({"harness/new.py": 1}, ["harness/new.py: 1 type errors, 0 allowed; run `python -m mypy harness/new.py` and fix them"]),
        ({"harness/old.py": 3}, []),
        ({"harness/old.py": 4}, ["harness/old.py: 4 type errors, 3 allowed; run `python -m mypy harness/old.py` and fix them"]),
        ({"harness/old.py": 2}, ["harness/old.py: down to 2 type errors from 3; lower its count in HARNESS_ERRORS (remove it at 0)"]),
    ],
)
def test_the_rule_names_each_way_a_module_breaks_it(counts: dict[str, int], expected: list[str]) -> None:
    listed = {"harness/old.py": 3}
    assert type_problems({"harness/old.py": 3, **counts}, listed) == expected


def test_errors_are_counted_per_file_from_mypys_output() -> None:
    output = (
        "harness/a.py:3: error: Missing return  [return]\n"
        "harness/a.py:3: note: See https://mypy.rtfd.io\n"
        "harness/a.py:9:5: error: Incompatible types  [assignment]\n"
        "memory_tools/b.py:1: error: Name \"x\" is not defined  [name-defined]\n"
        "Found 3 errors in 2 files (checked 2 source files)\n"
    )
    assert mypy_errors(output) == {"harness/a.py": 2, "memory_tools/b.py": 1}


def test_a_planted_type_error_in_memory_tools_fails_the_check(tmp_path: Path) -> None:
    """The strict settings reach memory_tools: a function that returns a str where it promises an int is an error."""
    (tmp_path / "memory_tools").mkdir()
    (tmp_path / "memory_tools" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "memory_tools" / "planted.py").write_text(
        "def count(text: str) -> int:\n    return text\n\n\ndef untyped(x):\n    return x\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / "cache"), "memory_tools"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    counts = mypy_errors(done.stdout)
    assert counts == {"memory_tools/planted.py": 2}, done.stdout + done.stderr  # the wrong return, the untyped def
    assert type_problems(counts, HARNESS_ERRORS) != []


if __name__ == "__main__":  # `python tests/test_types.py`: today's counts, to paste over HARNESS_ERRORS after a merge
    for path, errors in sorted(mypy_errors(run_mypy("memory_tools", "harness").stdout).items()):
        print(f'    "{path}": {errors},')
