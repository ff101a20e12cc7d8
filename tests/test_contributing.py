"""CONTRIBUTING.md's recipes name only files, commands and flags that exist, so a newcomer's first step never fails."""

from __future__ import annotations

import re
from pathlib import Path

from harness.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "CONTRIBUTING.md"
_TOP = ("harness/", "memory_tools/", "tests/", "docs/", "scenarios/", "examples/", "benchmarks/", "scripts/", ".ci/")
_TOPS = "|".join(re.escape(t) for t in _TOP)
_PATH = re.compile(rf"(?<![\w./-])(?:{_TOPS})[\w./-]*[\w/]")
#: Names the recipes create (the scenario they add), not files of the repository.
_MADE_BY_THE_RECIPE = ("fact-07-dev-port",)


def named_paths(text: str) -> list[str]:
    """Every repository path the text names (``harness/score/models.py``, ``scenarios/smoke``), in order, once."""
    found = [p.rstrip("/.") for p in _PATH.findall(text)]
    return list(dict.fromkeys(p for p in found if not any(made in p for made in _MADE_BY_THE_RECIPE)))


def test_every_path_the_guide_names_exists() -> None:
    paths = named_paths(GUIDE.read_text(encoding="utf-8"))
    assert len(paths) > 30  # the recipes name real files; an extractor that finds none proves nothing
    assert [p for p in paths if not (ROOT / p).exists()] == []


def test_every_recall_eval_command_the_guide_runs_exists() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    commands = set(re.findall(r"recall-eval (\w+)", text))
    parser = build_parser()
    known = set(next(a for a in parser._subparsers._group_actions).choices)  # the COMMAND choices
    assert commands and commands <= known, sorted(commands - known)


def test_every_mutation_script_flag_the_guide_uses_exists() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    flags = set(re.findall(r"scripts/mutation\.py (--[\w-]+)", text))
    script = (ROOT / "scripts" / "mutation.py").read_text(encoding="utf-8")
    assert flags and [f for f in sorted(flags) if f'"{f}"' not in script] == []


def test_the_path_extractor_finds_paths_and_leaves_other_words() -> None:
    text = "see `harness/score/models.py`, `scenarios/smoke`, tests/fault/ and .ci/run; not xharness/a.py or docs."
    assert named_paths(text) == ["harness/score/models.py", "scenarios/smoke", "tests/fault", ".ci/run"]
