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


def _recipe_commands(title: str) -> list[str]:
    """The ``recall-eval ...`` commands a recipe of the guide gives, in its order (inline code only)."""
    section = GUIDE.read_text(encoding="utf-8").split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [c for c in re.findall(r"`(recall-eval [^`]+)`", section.replace("\n   ", " "))]


def test_the_add_a_scenario_recipe_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    """The worked example of *Add a scenario*, each command as the guide prints it, in a project folder of its own:
    the skeleton is written, moved where step 2 says, validates with no error and no warning, and the run of step 4
    has only the memory arm answer it (history_only cannot: the answer is in an earlier session)."""
    import json
    import shlex

    from harness.cli import main

    commands = _recipe_commands("Add a scenario")
    new, _suite, validate, run = commands  # the recipe's four commands; a fifth or a missing one fails here
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(new)[1:]) == 0
    starter = tmp_path / "scenarios" / "starter"
    starter.mkdir(parents=True)
    (tmp_path / "fact-07-dev-port.yaml").rename(starter / "fact-07-dev-port.yaml")
    capsys.readouterr()
    assert main(shlex.split(validate)[1:]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out
    assert main([*shlex.split(run)[1:], "--no-progress", "--out", str(tmp_path / "run")]) in (0, 1)
    scores = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    outcome = {row["arm"]: row["outcome"] for row in scores}
    assert set(outcome) == {"history_only", "recall", "full_history"}
    assert outcome["recall"] == "correct" and outcome["history_only"] != "correct"
