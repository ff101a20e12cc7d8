"""CONTRIBUTING.md's recipes name only files, commands and flags that exist, and each worked example runs as written."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

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


def _section(title: str) -> str:
    """One recipe of the guide, from its heading to the next."""
    return GUIDE.read_text(encoding="utf-8").split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _recipe_commands(title: str) -> list[str]:
    """The ``recall-eval ...`` commands a recipe of the guide gives, in its order (inline code only)."""
    return [c for c in re.findall(r"`(recall-eval [^`]+)`", _section(title).replace("\n   ", " "))]


def _code_blocks(title: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of a recipe, dedented (a block inside a numbered step is indented)."""
    import textwrap

    return [textwrap.dedent(b) for b in re.findall(rf"^ *```{language}\n(.*?)^ *```$", _section(title), re.S | re.M)]


def _run(command: str, out: Path, *extra: str) -> int:
    """A recipe's ``recall-eval run ...`` in this process, its outputs in ``out``, no cache, no progress lines."""
    import shlex

    from harness.cli import main

    return main([*shlex.split(command)[1:], "--no-progress", "--no-cache", "--out", str(out), *extra])


def _jsonl(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


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


_PLUGIN = "Add a memory system (a plug-in)"


def _pinboard_site(site: Path, source: str) -> Path:
    """The recipe's plug-in as an installed distribution in ``site``, under the entry points its ``toml`` block declares."""
    import tomllib

    from tests.integration.plugin_packages import write_distribution

    (toml,) = _code_blocks(_PLUGIN, "toml")
    declared = tomllib.loads(toml)["project"]["entry-points"]["recall_eval.memory_systems"]
    modules = {value.split(":")[0] for value in declared.values()}
    assert len(modules) == 1, declared  # the one module of the python block
    module = modules.pop()
    sys.modules.pop(module, None)  # an earlier variant's module, imported by an earlier run, is not this one
    return write_distribution(site, "pinboard", module, source, declared)


def _smoke_leaks(tmp_path: Path, source: str, name: str, command: str) -> dict[str, list[str]]:
    """Tool-level leak kinds of the plug-in's arm per smoke scenario, ``source`` installed as the recipe says."""
    from tests.integration.plugin_packages import on_path

    with on_path(_pinboard_site(tmp_path / f"site-{name}", source)):
        assert _run(command, tmp_path / name) in (0, 1)
    rows = _jsonl(tmp_path / name / "scores.jsonl")
    return {r["scenario_id"]: sorted({leak["kind"] for leak in r["tool_leaks"]}) for r in rows if r["arm"] == "pinboard"}


@pytest.fixture()
def _forget_the_plugin_module():
    """The recipe's plug-in module leaves ``sys.modules`` with the test (its sites are gone)."""
    yield
    sys.modules.pop("pinboard", None)


@pytest.mark.usefixtures("_forget_the_plugin_module")
def test_the_add_a_memory_system_recipe_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    """The worked plug-in of *Add a memory system*: its python block installed under the entry point of its toml block,
    run with the recipe's command on the starter scenario it names (both memory arms answer, history_only cannot),
    then on the smoke leak traps: no leak as written; the scope filter dropped is caught as another workspace's item
    and canary, the policy gate dropped as a read under a denying policy, as step 5 says."""
    from tests.integration.plugin_packages import on_path

    (source,) = _code_blocks(_PLUGIN, "python")
    run, traps = _recipe_commands(_PLUGIN)  # step 4's run, step 5's leak traps
    monkeypatch.chdir(tmp_path)
    with on_path(_pinboard_site(tmp_path / "site", source)):
        assert _run(run, tmp_path / "run") in (0, 1)
    outcome = {r["arm"]: r["outcome"] for r in _jsonl(tmp_path / "run" / "scores.jsonl")}
    assert outcome == {"history_only": "abstained_wrongly", "recall": "correct", "pinboard": "correct"}

    capsys.readouterr()
    assert set(map(tuple, _smoke_leaks(tmp_path, source, "traps", traps).values())) == {()}
    assert "tool-level leaks 0" in capsys.readouterr().out
    scope, gate = "i.workspace in (None, context.workspace_key)", "if policy_denial(policy, context) is not None:"
    assert scope in source and gate in source and f"`{scope}`" in _section(_PLUGIN)
    unscoped = _smoke_leaks(tmp_path, source.replace(scope, "True"), "unscoped", traps)
    assert unscoped["smoke-04-leak-pilot-customer"] == ["leakage_canary", "out_of_scope_item"]
    assert "✗ fail  tool-level leaks" in capsys.readouterr().out
    ungated = _smoke_leaks(tmp_path, source.replace(gate, "if False:"), "ungated", traps)
    assert ungated["smoke-05-policy-reads-off"] == ["policy_denied_read"]


_SCORER = "Add a scorer (a metric or a check)"


def test_the_add_a_scorer_recipe_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    """The worked example of *Add a scorer*: the recipe's run, then its python block, which follows bleu1 from each
    sample's score (the pure function of answer and gold) to its aggregate row, its labelled table row and a verdict
    it never changes, while a gating aggregate row (a tool-level leak) fails the verdict. Its asserts are the test."""
    (command,) = _recipe_commands(_SCORER)
    (code,) = _code_blocks(_SCORER, "python")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the recipe runs from the checkout's root
    out = tmp_path / re.search(r"--out (\S+)", command)[1]
    assert _run(command.split(" --out ")[0], out) in (0, 1)
    capsys.readouterr()
    exec(compile(code, "CONTRIBUTING.md", "exec"), {"__name__": "recipe"})
    shown = capsys.readouterr().out
    assert shown.startswith("BLEU-1 (LoCoMo papers' metric, informational) {'history_only': ")


_IMPORTER = "Add a benchmark importer"


def test_the_add_a_benchmark_importer_recipe_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    """The worked example of *Add a benchmark importer*, from a checkout folder of its own: the python block writes a
    file in LoCoMo's published shape, the import turns one conversation into a suite, the audit reads it as SUITE.md
    does, and the run reports by the protocol the importer declares (four headline categories, adversarial apart)."""
    import shlex

    from harness.cli import main
    from harness.importers.locomo import defaults

    (code,) = _code_blocks(_IMPORTER, "python")
    convert, audit, run = _recipe_commands(_IMPORTER)  # the example's three commands, in order
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    exec(compile(code, "CONTRIBUTING.md", "exec"), {"__name__": "recipe"})
    assert "'conversations': 10, 'turns': 5882, 'questions': 19" in capsys.readouterr().out
    assert main(shlex.split(convert)[1:]) == 0
    suite = tmp_path / "locomo-shape"
    assert sorted(p.name for p in suite.iterdir()) == ["SUITE.md", "_defaults.yaml", "_suite.json", "conv-1.yaml"]
    capsys.readouterr()
    assert main(shlex.split(audit)[1:]) in (0, 1)  # 1: findings listed
    audited = capsys.readouterr().out.strip().splitlines()[-1]
    assert audited.startswith("gold audit: ") and audited in (suite / "SUITE.md").read_text(encoding="utf-8")
    out = tmp_path / re.search(r"--out (\S+)", run)[1]
    assert _run(run.split(" --out ")[0], out) in (0, 1)
    assert "by category, as the suite's protocol reports it" in capsys.readouterr().out
    protocol = json.loads((out / "summary.json").read_text(encoding="utf-8"))["protocol"]
    declared = defaults()["protocol"]
    assert (protocol["headline"], protocol["reported_apart"]) == (declared["headline"], declared["reported_apart"])
    assert protocol["reported_apart"] == ["adversarial"] and len(protocol["headline"]) == 4
    groups = {row["category"]: row["group"] for row in protocol["tables"][0]["rows"]}
    assert groups["adversarial"] == "apart" and {groups[c] for c in declared["headline"]} == {"headline"}
