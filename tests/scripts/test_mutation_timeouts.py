"""``scripts/mutation.py``: a mutant that ran past mutmut's time limit is shown apart, never counted as killed.

On the shared 2-core machine an ordinary test run under load passes mutmut's wall-clock limit; mutmut's own
score counts that as a kill, and many such "kills" survived when re-tested alone (docs/mutation-testing.md).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
from mutmut.stats import status_by_exit_code

_SPEC = importlib.util.spec_from_file_location("mutation_script", Path(__file__).parents[2] / "scripts" / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(mutation)

MUTMUT_TIMEOUTS = sorted(code for code, status in status_by_exit_code.items() if status == "timeout")


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A configured module ``pkg/mod.py`` whose last results are written by the returned function."""
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "_TEST_MAP", tmp_path / "mutants" / "mutmut-stats.json")
    monkeypatch.setattr(mutation, "configured_modules", lambda: ["pkg/mod.py"])
    meta = tmp_path / "mutants" / "pkg" / "mod.py.meta"
    meta.parent.mkdir(parents=True)

    def results(codes: dict[str, int | None]) -> None:
        meta.write_text(json.dumps({"exit_code_by_key": {f"pkg.mod.x_f__mutmut_{k}": v for k, v in codes.items()}}),
                        encoding="utf-8")
    return results


def test_every_exit_code_mutmut_calls_a_timeout_is_a_timeout_here_and_never_a_kill(module):
    """Read from mutmut's own table, so a timeout code added by a later mutmut is caught too."""
    assert MUTMUT_TIMEOUTS  # the table this test reads still names timeouts
    module({str(i): code for i, code in enumerate(MUTMUT_TIMEOUTS)})
    counts, survivors = mutation.summary("pkg/mod.py")
    assert counts["killed"] == 0
    assert counts["timeouts"] == len(MUTMUT_TIMEOUTS)
    assert survivors == []


def test_only_what_mutmut_calls_killed_or_caught_by_its_type_check_counts_as_killed():
    killing = {code for code, status in status_by_exit_code.items() if status in ("killed", "caught by type check")}
    assert mutation._KILLED == killing
    assert not mutation._KILLED & mutation._TIMEOUT


def test_the_report_shows_timeouts_in_their_own_column_outside_the_kill_rate(module, capsys):
    module({"1": 1, "2": 0, "3": 36, "4": -24})
    survivors = mutation.report(["pkg/mod.py"])
    out = capsys.readouterr().out
    assert survivors == 1
    assert "pkg/mod.py: 1/2 killed (50.0%); 2 timeouts (re-test with --timeouts)" in out


def test_a_module_of_timeouts_alone_has_no_kill_rate(module, capsys):
    module({"1": 152, "2": 255})
    mutation.report(["pkg/mod.py"])
    assert "pkg/mod.py: 0/0 killed (n/a); 2 timeouts" in capsys.readouterr().out


def test_a_module_without_timeouts_says_none(module, capsys):
    module({"1": 1})
    mutation.report(["pkg/mod.py"])
    assert "pkg/mod.py: 1/1 killed (100.0%); 0 timeouts\n" in capsys.readouterr().out


def test_timeouts_re_tests_the_last_timeouts_alone_with_one_worker(module, monkeypatch):
    """``--children 2`` beside them is what slowed them; the re-test runs them one at a time."""
    module({"1": 1, "2": 0, "3": 36, "4": 24, "5": None})
    runs = []
    monkeypatch.setattr(mutation.subprocess, "run",
                        lambda command, **kw: runs.append(command) or subprocess.CompletedProcess(command, 0))
    assert mutation.main(["--timeouts", "--children", "2", "pkg/mod.py"]) == 0
    (command,) = runs
    assert command[command.index("run"):] == ["run", "--max-children", "1",
                                              "pkg.mod.x_f__mutmut_3", "pkg.mod.x_f__mutmut_4"]


def test_timeouts_without_any_runs_nothing(module, monkeypatch, capsys):
    module({"1": 1, "2": 0})
    monkeypatch.setattr(mutation.subprocess, "run", lambda *a, **kw: pytest.fail("mutmut started"))
    assert mutation.main(["--timeouts", "pkg/mod.py"]) == 0
    assert "no timeouts to re-test" in capsys.readouterr().out


def test_timeouts_and_survivors_together_is_a_usage_error(module, capsys):
    with pytest.raises(SystemExit) as stopped:
        mutation.main(["--timeouts", "--survivors", "pkg/mod.py"])
    assert stopped.value.code == 2
    assert "give one" in capsys.readouterr().err


def test_survivors_does_not_re_test_timeouts(module, monkeypatch):
    module({"1": 0, "2": 36})
    runs = []
    monkeypatch.setattr(mutation.subprocess, "run",
                        lambda command, **kw: runs.append(command) or subprocess.CompletedProcess(command, 0))
    mutation.main(["--survivors", "pkg/mod.py"])
    assert runs[0][-1] == "pkg.mod.x_f__mutmut_1" and "pkg.mod.x_f__mutmut_2" not in runs[0]
