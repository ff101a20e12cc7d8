"""The tree draws the flow: every import points down it, and no module imports itself round a circle.

The stages, lowest first (``README.md``, "Layout"). A module may import its
own stage and any stage below it, never one above; imports inside functions
and under ``TYPE_CHECKING`` count, because a lazy import is still a
dependency (it only moves the cost). Outside its own package a module
imports a stage through the package (``from harness.score import ...``) or
one of its public modules, never an underscore module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. Stages on one line share a level: neither may import the other.
STAGES: tuple[tuple[str, ...], ...] = (
    ("memory_tools",),
    ("harness.secret_detectors",),
    ("harness", "harness.atomic", "harness.bulk_allocation", "harness.defaults", "harness.memo", "harness.redaction",
     "harness.regular_files", "harness.word_bounds", "harness.wrapping"),
    ("harness.offline_model",),
    ("harness.scenarios",),
    ("harness.importers",),
    ("harness.memory_systems",),
    ("harness.records",),
    ("harness.run",),
    ("harness.score",),
    ("harness.analysis",),
    ("harness.report",),
    ("harness.runs",),
    ("harness.cli",),
)
LEVEL = {stage: level for level, names in enumerate(STAGES) for stage in names}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def stage_of(module: str) -> str:
    """The longest stage name that ``module`` is or lies inside."""
    best = ""
    for stage in LEVEL:
        inside = module == stage or (stage != "harness" and module.startswith(stage + "."))  # harness itself: its __init__ only
        if inside and len(stage) > len(best):
            best = stage
    return best


def _modules() -> dict[str, Path]:
    return {module_name(p): p for top in ("harness", "memory_tools") for p in sorted((ROOT / top).rglob("*.py"))}


MODULES = _modules()


def imports_of(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import of ours in ``path``, wherever it stands.

    ``from harness.score import grounding`` names the module ``harness.score.grounding``;
    ``from harness.score import score_sample`` names ``harness.score``.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                child = f"{target}.{alias.name}"
                yield (child if child in MODULES else target), node.lineno


def edges() -> list[tuple[str, str, int]]:
    found = []
    for module, path in MODULES.items():
        for target, line in imports_of(module, path):
            if target.split(".")[0] in ("harness", "memory_tools") and target != module:
                found.append((module, target, line))
    return found


def test_every_module_belongs_to_a_stage() -> None:
    assert [m for m in MODULES if stage_of(m) == ""] == []


def upward(found: list[tuple[str, str, int]]) -> list[str]:
    """Imports of a higher stage, or of another stage on the same level (the base package excepted)."""
    bad = []
    for module, target, line in found:
        here, there = stage_of(module), stage_of(target)
        if LEVEL[there] > LEVEL[here] or (LEVEL[there] == LEVEL[here] and there not in (here, "harness")):
            bad.append(f"{module}:{line} imports {target} ({here} is below {there})")
    return bad


def private(found: list[tuple[str, str, int]]) -> list[str]:
    """Imports of another package's underscore module."""
    return [
        f"{module}:{line} imports {target}"
        for module, target, line in found
        if stage_of(module) != stage_of(target) and any(part.startswith("_") for part in target.split(".")[1:])
    ]


def through_submodules(found: list[tuple[str, str, str, int]]) -> list[str]:
    """Imports of another stage that name one of its modules (``from harness.score.scoring import ...``), not its package."""
    return [
        f"{module}:{line} imports from {written}; import from {stage_of(written)}"
        for module, written, _, line in found
        if stage_of(module) != stage_of(written) and written != stage_of(written)
    ]


def written_imports() -> list[tuple[str, str, str, int]]:
    """(module, the module a ``from X import`` names, what it resolves to, line) of every from-import of ours."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                if node.module.split(".")[0] in ("harness", "memory_tools"):
                    found.append((module, node.module, node.module, node.lineno))
    return found


def test_every_import_points_down_the_flow() -> None:
    assert upward(edges()) == []


def test_no_module_imports_another_packages_private_module() -> None:
    assert private(edges()) == []


def test_another_stage_is_imported_through_its_package() -> None:
    """Each package's ``__init__`` is its public surface: callers outside it use that, so a module can move or split inside."""
    assert through_submodules(written_imports()) == []


def test_the_package_check_names_an_import_of_another_stages_module() -> None:
    planted = [
        ("harness.report.html", "harness.score.scoring", "harness.score.scoring", 5),
        ("harness.report.html", "harness.score", "harness.score", 6),
        ("harness.report.html", "harness.report.formatting", "harness.report.formatting", 7),
    ]
    assert through_submodules(planted) == ["harness.report.html:5 imports from harness.score.scoring; import from harness.score"]


def test_the_checks_name_an_upward_import_a_sideways_one_and_a_private_one() -> None:
    planted = [
        ("harness.score.scoring", "harness.report.html", 7),  # a scorer importing the report
        ("harness.defaults", "harness.memo", 3),  # two base modules on one level
        ("harness.report.html", "harness.score.scoring", 9),  # down: fine
        ("harness.runs.compare", "harness.offline_model._policy", 4),  # another package's private module
    ]
    assert upward(planted) == [
        "harness.score.scoring:7 imports harness.report.html (harness.score is below harness.report)",
        "harness.defaults:3 imports harness.memo (harness.defaults is below harness.memo)",
    ]
    assert private(planted) == ["harness.runs.compare:4 imports harness.offline_model._policy"]


def test_a_new_top_level_module_has_no_stage_until_one_is_named() -> None:
    assert stage_of("harness.helpers") == ""
    assert stage_of("harness") == "harness"
    assert stage_of("harness.runs.compare") == "harness.runs"
    assert stage_of("harness.run.agent") == "harness.run"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles_between_modules() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, target, _ in edges():
        # a package's __init__ re-exporting its own modules is not a circle through them
        if target in MODULES and not (module.startswith(target + ".") and MODULES[target].name == "__init__.py"):
            graph[module].add(target)
    assert _cycles(graph) == []


def test_no_import_circles_between_stages() -> None:
    graph: dict[str, set[str]] = {stage: set() for stage in LEVEL}
    for module, target, _ in edges():
        if stage_of(module) != stage_of(target):
            graph[stage_of(module)].add(stage_of(target))
    assert _cycles(graph) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
])
def test_the_circle_finder_finds_circles_and_only_circles(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected
