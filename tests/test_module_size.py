"""No module of the product grows past 450 lines, so each stays one thing a reader can hold.

A module that has passed the line is split along a seam a reader would name
(``git log --grep 'split:'`` shows how). Until it is, it is listed in
``OVER_THE_LINE`` with the length it had when listed: it may shrink, never grow,
and once it is back under the line it must leave the list (so the list only
gets shorter).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 450
PACKAGES = ("harness", "memory_tools")

# module path -> its length when listed; each entry is a debt with a ceiling, not a licence.
OVER_THE_LINE: dict[str, int] = {}


def line_counts(root: Path = ROOT) -> dict[str, int]:
    """Lines of every ``.py`` file of the product packages, by path relative to ``root``."""
    counts = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            with path.open("rb") as handle:
                counts[path.relative_to(root).as_posix()] = sum(1 for _ in handle)
    return counts


def size_problems(counts: dict[str, int], listed: dict[str, int], limit: int = LIMIT) -> list[str]:
    """What breaks the rule: a module over the limit and not listed, a listed one grown, a listed one no longer over."""
    problems = []
    for module, lines in sorted(counts.items()):
        ceiling = listed.get(module)
        if ceiling is None and lines > limit:
            problems.append(f"{module}: {lines} lines, over the {limit}-line limit; split it along a seam a reader would name")
        elif ceiling is not None and lines > ceiling:
            problems.append(f"{module}: grew to {lines} lines while listed over the limit at {ceiling}; split it instead")
        elif ceiling is not None and lines <= limit:
            problems.append(f"{module}: back under the limit ({lines} lines); remove it from OVER_THE_LINE")
    problems += [f"{module}: listed in OVER_THE_LINE but no such module" for module in sorted(set(listed) - set(counts))]
    return problems


def test_no_product_module_is_over_the_line_or_grows_while_listed() -> None:
    assert size_problems(line_counts(), OVER_THE_LINE) == []


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({"harness/a.py": 450}, []),
        ({"harness/a.py": 451}, ["harness/a.py: 451 lines, over the 450-line limit; split it along a seam a reader would name"]),
        ({"memory_tools/store.py": 478}, ["memory_tools/store.py: grew to 478 lines while listed over the limit at 477; split it instead"]),
        ({"memory_tools/store.py": 477}, []),
        ({"memory_tools/store.py": 300}, ["memory_tools/store.py: back under the limit (300 lines); remove it from OVER_THE_LINE"]),
    ],
)
def test_the_rule_names_each_way_a_module_breaks_it(counts: dict[str, int], expected: list[str]) -> None:
    listed = {"memory_tools/store.py": 477}
    extra = [] if "memory_tools/store.py" in counts else ["memory_tools/store.py: listed in OVER_THE_LINE but no such module"]
    assert size_problems(counts, listed) == expected + extra


def test_every_product_module_is_counted(tmp_path: Path) -> None:
    """The walk reaches nested packages and counts a last line without a newline."""
    (tmp_path / "harness" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "memory_tools").mkdir()
    (tmp_path / "harness" / "deep" / "er" / "m.py").write_text("a = 1\nb = 2", encoding="utf-8")
    (tmp_path / "memory_tools" / "n.py").write_text("x = 1\n", encoding="utf-8")
    assert line_counts(tmp_path) == {"harness/deep/er/m.py": 2, "memory_tools/n.py": 1}
