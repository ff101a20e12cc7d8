"""``scripts/mutation.py --changed``: only the functions a change touched are mutation-tested."""

from __future__ import annotations

import importlib.util
import subprocess
import textwrap
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("mutation_script", Path(__file__).parents[2] / "scripts" / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(mutation)

SOURCE = textwrap.dedent('''\
    """A module."""
    import functools


    def first(x):
        return x + 1


    @functools.cache
    def cached(x):
        return x * 2


    class Outer:
        def method(self):
            return 1

        class Inner:
            def deep(self):
                def helper():
                    return 3
                return helper()


    def last():
        return 0
    ''')


def test_a_changed_line_names_the_function_holding_it():
    assert mutation.touched_functions(SOURCE, {6}) == ["x_first"]


def test_a_changed_decorator_counts_as_its_function():
    assert mutation.touched_functions(SOURCE, {9}) == ["x_cached"]


def test_methods_are_named_as_mutmut_names_them_with_nested_classes_dotted():
    sep = "\u01c1"
    assert mutation.touched_functions(SOURCE, {16}) == [f"x{sep}Outer{sep}method"]
    assert mutation.touched_functions(SOURCE, {21}) == [f"x{sep}Outer.Inner{sep}deep"]


def test_lines_outside_every_function_touch_nothing():
    assert mutation.touched_functions(SOURCE, {1, 2, 3, 13}) == []


def test_hunks_give_added_lines_and_a_pure_deletion_the_line_it_follows():
    diff = "@@ -4,0 +5,2 @@\n+a\n+b\n@@ -10 +12 @@\n-x\n+y\n@@ -20,3 +21,0 @@\n-gone\n"
    assert mutation.touched_lines(diff) == {5, 6, 12, 21}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "pkg" / "other.py").write_text("def untouched():\n    return 1\n", encoding="utf-8")
    git("init", "-q", "-b", "main")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "start")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    return tmp_path


def test_changed_mutants_cover_only_the_edited_functions_of_the_edited_modules(repo):
    edited = SOURCE.replace("return x * 2", "return x * 3").replace("return 0", "return -1")
    (repo / "pkg" / "mod.py").write_text(edited, encoding="utf-8")
    globs = mutation.changed_mutants(["pkg/mod.py", "pkg/other.py"], "HEAD")
    assert globs == {"pkg/mod.py": ["pkg.mod.x_cached__mutmut_*", "pkg.mod.x_last__mutmut_*"]}


def test_the_default_base_on_main_is_the_working_tree_against_head(repo):
    assert mutation.default_base() == "HEAD"


def test_report_with_changed_globs_counts_only_those_mutants(repo, capsys):
    meta = repo / "mutants" / "pkg" / "mod.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text('{"exit_code_by_key": {"pkg.mod.x_first__mutmut_1": 0, "pkg.mod.x_cached__mutmut_1": 1,'
                    ' "pkg.mod.x_cached__mutmut_2": 0}}', encoding="utf-8")
    survivors = mutation.report(["pkg/mod.py"], {"pkg/mod.py": ["pkg.mod.x_cached__mutmut_*"]})
    out = capsys.readouterr().out
    assert survivors == 1
    assert "1/2 killed (50.0%)" in out and "x_cached__mutmut_2" in out and "x_first" not in out


def _meta(tmp_path: Path) -> Path:
    meta = tmp_path / "mutants" / "harness" / "m.py.meta"
    meta.parent.mkdir(parents=True)
    return meta


def test_a_results_file_cut_short_by_a_running_mutmut_is_read_once_it_is_whole(tmp_path, monkeypatch):
    import json
    import threading

    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    meta = _meta(tmp_path)
    whole = json.dumps({"exit_code_by_key": {"harness.m.x_f__mutmut_1": 1, "harness.m.x_f__mutmut_2": 0}})
    meta.write_text(whole[:17], encoding="utf-8")  # what a reader sees while mutmut rewrites the file
    finisher = threading.Timer(0.2, meta.write_text, args=(whole,), kwargs={"encoding": "utf-8"})
    finisher.start()
    try:
        counts, survivors = mutation.summary("harness/m.py")
    finally:
        finisher.join()
    assert counts["killed"] == 1
    assert survivors == ["harness.m.x_f__mutmut_2 (survived)"]


def test_a_results_file_that_never_parses_is_one_clear_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation.time, "sleep", lambda _seconds: None)
    monkeypatch.setattr(mutation, "configured_modules", lambda: ["harness/m.py"])
    _meta(tmp_path).write_text('{"exit_code_by_key": {"harness.m.x', encoding="utf-8")
    assert mutation.main(["--report-only", "harness/m.py"]) == 2
    err = capsys.readouterr().err
    assert "m.py.meta does not parse as JSON" in err
    assert "Traceback" not in err


def test_a_narrow_run_naming_a_test_file_that_does_not_exist_stops_before_mutmut(capsys):
    with pytest.raises(SystemExit) as stopped:
        mutation.main(["--tests", "tests/score/test_no_such_file.py::test_x", "--", "harness/score/scoring.py"])
    assert stopped.value.code == 2
    assert "--tests: no such test file: tests/score/test_no_such_file.py::test_x" in capsys.readouterr().err
