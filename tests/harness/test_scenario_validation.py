"""``recall-eval validate`` and the checks behind it: every class of error names its file, field and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.scenarios import Problem, load_suite

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "scenarios"
BROKEN = FIXTURES / "broken"


def _errors(name: str) -> list[Problem]:
    suite = load_suite([BROKEN / name])
    assert suite.scenarios == []
    return suite.errors


def _one(name: str, field: str) -> Problem:
    matches = [p for p in _errors(name) if p.field == field]
    assert matches, f"no problem at {field}: {[str(p) for p in _errors(name)]}"
    assert matches[0].file.endswith(name)
    return matches[0]


def test_yaml_syntax_error_names_file_and_line() -> None:
    [problem] = _errors("syntax.yaml")
    assert problem.file.endswith("syntax.yaml")
    assert problem.line == 21
    assert "YAML syntax error" in problem.message and "line 20" in problem.message


def test_wrong_enum_value_names_field_path_line_and_value() -> None:
    problem = _one("field_type.yaml", "items[1].keys[1].type")
    assert problem.line == 27
    assert problem.value == "'entitty'"
    assert "'entity'" in problem.message


def test_unknown_field_suggests_the_close_name() -> None:
    problem = _one("unknown_field.yaml", "probe.workspcae")
    assert problem.line == 33
    assert "did you mean 'workspace'" in problem.message


def test_missing_required_field_points_at_its_parent() -> None:
    problem = _one("missing_field.yaml", "items[1].kind")
    assert problem.line == 23
    assert problem.message == "required field is missing"
    assert problem.value is None


def test_unparseable_time_says_what_a_time_looks_like() -> None:
    problem = _one("bad_time.yaml", "probe.started_at")
    assert problem.line == 32
    assert "ISO 8601" in problem.message and problem.value == "'next tuesday'"


def test_probe_workspace_must_be_an_identifier() -> None:
    problem = _one("bad_workspace.yaml", "probe.workspace")
    assert problem.line == 31
    assert "identifier" in problem.message


def test_source_pointing_at_missing_session_or_turn() -> None:
    session = _one("missing_session.yaml", "items[1].sources[0].session")
    turn = _one("missing_session.yaml", "items[1].sources[1].turn")
    assert session.line == turn.line == 28
    assert session.value == "'s9'" and "no session" in session.message
    assert turn.value == "'t7'" and "t1, t2" in turn.message


def test_relevant_items_and_supersedes_must_exist() -> None:
    relevant = _one("missing_items.yaml", "expect.relevant_items[0]")
    supersedes = _one("missing_items.yaml", "items[0].supersedes[0]")
    assert relevant.value == "'it-answr'" and relevant.line == 37
    assert supersedes.value == "'it-nothing'" and supersedes.line == 22


def test_relevant_item_must_be_visible_from_the_probe() -> None:
    problem = _one("other_workspace_relevant.yaml", "expect.relevant_items[0]")
    assert "ws-b" in problem.message


def test_store_rules_are_the_store_own() -> None:
    problem = _one("store_rule.yaml", "items[0].event_ended_at")
    assert "memory store refuses" in problem.message
    assert "event_ended_at is required for an interval item" in problem.message
    assert problem.line == 16


def test_regex_must_compile() -> None:
    problem = _one("bad_regex.yaml", "expect.must_match[0]")
    assert problem.line == 36 and "regular expression" in problem.message


def test_sessions_must_precede_the_probe() -> None:
    problem = _one("late_session.yaml", "sessions[0].started_at")
    assert problem.line == 9 and "2026-03-05T10:00:00Z" in (problem.value or "")


def test_canary_that_is_also_required_is_an_error() -> None:
    problem = _one("canary_required.yaml", "expect.canaries[0].text")
    assert "no answer can pass" in problem.message


@pytest.mark.parametrize(
    ("name", "field", "words"),
    [
        ("abstain_must_contain.yaml", "expect.abstain", "abstain is true"),
        ("no_distractor.yaml", "items", "no distractor"),
        ("answer_in_history.yaml", "expect.must_contain_all[0]", "probe.history"),
    ],
)
def test_smells_are_warnings_not_errors(name: str, field: str, words: str) -> None:
    suite = load_suite([FIXTURES / "warnings" / name])
    assert suite.errors == [] and len(suite.scenarios) == 1
    [warning] = suite.problems
    assert warning.severity == "warning" and warning.field == field and words in warning.message


def test_problem_line_format() -> None:
    problem = Problem("a.yaml", 3, "items[0].kind", "bad kind", "'x'")
    assert str(problem) == "a.yaml:3: items[0].kind: bad kind (value: 'x')"
    assert str(Problem("a.yaml", None, "", "no such file or folder")) == "a.yaml: no such file or folder"


def test_validate_exit_0_when_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(FIXTURES / "good")]) == 0
    assert capsys.readouterr().out.strip() == "1 files, 1 scenarios, 0 errors, 0 warnings"


def test_validate_exit_0_with_only_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(FIXTURES / "warnings")]) == 0
    assert "3 files, 3 scenarios, 0 errors, 3 warnings" in capsys.readouterr().out


def test_validate_exit_1_prints_one_line_per_problem_then_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(BROKEN / "missing_session.yaml"), str(FIXTURES / "good")]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "2 files, 1 scenarios, 2 errors, 0 warnings"
    assert all("missing_session.yaml:28: items[1].sources[" in line for line in lines[:-1])


def test_validate_missing_path_is_an_error_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(FIXTURES / "does-not-exist")]) == 1
    out = capsys.readouterr().out
    assert "does-not-exist: no such file or folder" in out and "Traceback" not in out


def test_validate_never_imports_litellm() -> None:
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"main(['validate', {str(ROOT / 'scenarios')!r}])\n"
        "assert 'litellm' not in sys.modules, 'validate imported litellm'\n"
        "print('clean')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("clean")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=2000), junk=st.text(max_size=12))
def test_any_mangled_file_gives_problems_never_a_traceback(tmp_path: Path, cut: int, junk: str) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8")
    cut = min(cut, len(text))
    target = tmp_path / "mangled.yaml"
    target.write_text(text[:cut] + junk + text[cut + len(junk) :], encoding="utf-8")
    suite = load_suite([target])
    assert len(suite.scenarios) + len(suite.errors) >= 1
    for problem in suite.problems:
        assert problem.file.endswith("mangled.yaml") and str(problem)
