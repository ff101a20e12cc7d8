"""Finding scenario files: the files under the paths named, each with its suite root.

A folder is searched recursively for ``*.yaml``/``*.yml``; files whose name starts with ``_`` hold defaults
(``_defaults.yaml``) or a shared conversation (``_conversation.yaml``), never a scenario; dot-folders are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from harness.scenarios.problems import Problem, ScenarioError

SCENARIO_SUFFIXES = (".yaml", ".yml")


DEFAULTS_FILE = "_defaults.yaml"


CONVERSATION_FILE = "_conversation.yaml"


def is_scenario_file(path: Path) -> bool:
    return path.suffix in SCENARIO_SUFFIXES and not path.name.startswith("_")


def discover_files(paths: Sequence[str | Path]) -> tuple[dict[Path, Path], list[Problem]]:
    """Scenario files under ``paths``, each with its suite root (the folder named, or a named file's folder)."""
    found: dict[Path, Path] = {}
    problems: list[Problem] = []
    if isinstance(paths, (str, os.PathLike)):  # one path, not a sequence of one-character paths
        paths = [paths]

    def add(file: Path, root: Path) -> None:
        known = found.get(file)
        if known is None or resolved_folder(root) in resolved_folder(known).parents:
            found[file] = root  # named twice: the outer root (more defaults) wins

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = [p for p in path.rglob("*") if p.is_file() and is_scenario_file(p)]
            files = [p for p in files if not any(part.startswith(".") for part in p.relative_to(path).parts)]
            if not files:
                problems.append(Problem(str(path), None, "", "folder holds no scenario files (*.yaml, *.yml)"))
            for file in files:
                add(file, path)
        elif path.is_file():
            if path.suffix not in SCENARIO_SUFFIXES:
                problems.append(Problem(str(path), None, "", "not a scenario file: expected a .yaml or .yml file"))
            elif path.name.startswith("_"):
                problems.append(Problem(str(path), None, "", "files starting with '_' hold defaults or a shared conversation, not scenarios"))
            else:
                add(path, path.parent)
        else:
            problems.append(Problem(str(path), None, "", "no such file or folder"))
    return dict(sorted(found.items())), problems


def discover(paths: Sequence[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files or folders, recursively), sorted.

    Raises:
        ScenarioError: a path is missing, is not a YAML file, or a folder holds no scenario.
    """
    files, problems = discover_files(paths)
    if problems:
        raise ScenarioError(problems)
    return list(files)


@cache
def resolved_folder(folder: Path) -> Path:
    return folder.resolve()
