"""``scripts/mutation.py --tests``: one module's mutants against a narrow test selection, not the configured one."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("mutation_script", Path(__file__).parents[2] / "scripts" / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(mutation)

PYPROJECT = """\
[tool.mutmut]
source_paths = ["pkg"]
only_mutate = ["pkg/mod.py", "pkg/other.py"]
pytest_add_cli_args_test_selection = ["tests/everything"]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose configured selection is ``tests/everything``; mutmut's config read afresh from it."""
    from mutmut.configuration import reset_config

    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "a.py").write_text("", encoding="utf-8")  # --tests must name files that exist
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "_TEST_MAP", tmp_path / "mutants" / "mutmut-stats.json")
    reset_config()
    yield tmp_path
    reset_config()


def test_the_narrow_selection_is_what_mutmut_runs_its_command_with(project, monkeypatch):
    """The bootstrap replaces the configured selection before mutmut's command starts, so its stats trace and
    every mutant's run use the given tests and never the configured ones; and only the given modules are mutated."""
    import mutmut.__main__
    from mutmut.configuration import config

    seen = {}
    monkeypatch.setattr(mutmut.__main__, "cli", lambda args, prog_name: seen.update(
        args=args, selection=list(config().pytest_add_cli_args_test_selection),
        mutated=[path for path in ("pkg/mod.py", "pkg/other.py") if config().should_mutate(path)]))
    command, env = mutation.mutmut_command(["tests/a.py", "tests/b.py::test_one"], ["pkg/mod.py"])
    assert command[:2] == [mutation.sys.executable, "-c"]
    for name in ("RECALL_EVAL_MUTATION_TESTS", "RECALL_EVAL_MUTATION_MODULES"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setattr(mutation.sys, "argv", ["-c", "run", "--max-children", "1"])
    exec(command[2], {})  # noqa: S102 - the bootstrap as mutmut's process runs it
    assert seen == {"args": ["run", "--max-children", "1"], "selection": ["tests/a.py", "tests/b.py::test_one"],
                    "mutated": ["pkg/mod.py"]}


def test_without_tests_mutmut_runs_as_configured():
    command, env = mutation.mutmut_command(None, ["pkg/mod.py"])
    assert command == [mutation.sys.executable, "-m", "mutmut"] and "RECALL_EVAL_MUTATION_TESTS" not in env


def test_mutmut_runs_with_python_writing_its_own_bytecode(monkeypatch):
    """Bug this guards: with PYTHONDONTWRITEBYTECODE set (as on the shared machine) every mutant's pytest session
    compiled the packages again (tests/conftest.py does it for child processes), most of a fast module's time."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    for tests in (None, ["tests/a.py"]):
        assert "PYTHONDONTWRITEBYTECODE" not in mutation.mutmut_command(tests, ["pkg/mod.py"])[1]


def test_a_narrow_run_drops_the_test_map_before_and_after(project, monkeypatch):
    """A map traced on other tests would send a mutant to the wrong tests; a map traced on these few, kept, would
    let a later configured run test each mutant against them alone."""
    test_map = project / "mutants" / "mutmut-stats.json"
    test_map.parent.mkdir()
    test_map.write_text("{}", encoding="utf-8")
    runs = []

    def run(command, cwd, env):
        runs.append((test_map.exists(), env.get("RECALL_EVAL_MUTATION_TESTS")))
        test_map.write_text("{}", encoding="utf-8")  # what mutmut's trace leaves
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(mutation.subprocess, "run", run)
    assert mutation.main(["--tests", "tests/a.py", "--", "pkg/mod.py"]) == 0
    assert runs == [(False, '["tests/a.py"]')] and not test_map.exists()


def test_resuming_a_narrow_run_regenerates_the_given_modules_alone(project, monkeypatch):
    """``--resume`` first brings ``mutants/`` up to the source; on a narrow run that must not generate every
    configured module's mutants (half an hour on a loaded machine) when one module is being tested."""
    calls = []
    monkeypatch.setattr(mutation.subprocess, "run", lambda command, **kw: calls.append(kw.get("env")))
    mutation.main(["--resume", "--tests", "tests/a.py", "--", "pkg/mod.py"])
    assert len(calls) == 1 and calls[0]["RECALL_EVAL_MUTATION_MODULES"] == '["pkg/mod.py"]'
    assert "RECALL_EVAL_MUTATION_MODULES" in mutation._REGENERATE


def test_a_narrow_rerun_of_a_module_another_narrow_run_copied_plain_mutates_it_again(project, monkeypatch):
    """Bug this guards: after a narrow run of another module, ``mutants/`` held this module as a plain copy newer
    than its source; mutmut kept it, found no mutant and stopped ("could not find any test case for any mutant"),
    so ``--survivors --tests`` re-tested nothing. A copy holding mutants is kept (its results stay)."""
    plain, mutated = project / "mutants" / "pkg" / "mod.py", project / "mutants" / "pkg" / "other.py"
    plain.parent.mkdir(parents=True)
    plain.write_text("def f():\n    return 1\n", encoding="utf-8")
    mutated.write_text("def x_f__mutmut_orig():\n    return 1\n", encoding="utf-8")
    monkeypatch.setattr(mutation.subprocess, "run",
                        lambda command, **kw: subprocess.CompletedProcess(command, 0))
    mutation.main(["--tests", "tests/a.py", "--", "pkg/mod.py", "pkg/other.py"])
    assert not plain.exists() and mutated.exists()
