"""``recall-eval validate`` and the checks behind it: every class of error names its file, field and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
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


def _with_expect(tmp_path: Path, source: Path, expect: dict[str, object]) -> list[Problem]:
    """Problems of ``source`` with its ``expect`` replaced by ``expect`` (a variant written to ``tmp_path``)."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["expect"] = expect
    path = tmp_path / source.name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_suite([path]).problems


@pytest.mark.parametrize(
    "group",
    [["Postgres 16", "postgres  16"], ["It runs Postgres 16", "Postgres 16 on staging"]],
    ids=["every-synonym-equals", "every-synonym-holds"],
)
def test_canary_stated_by_every_synonym_of_a_group_is_an_error(tmp_path: Path, group: list[str]) -> None:
    problems = _with_expect(tmp_path, BROKEN / "canary_required.yaml",
                            {"must_contain_groups": [group], "canaries": [{"text": "Postgres 16", "kind": "stale"}]})
    [problem] = [p for p in problems if p.field == "expect.canaries[0].text"]
    assert problem.severity == "error" and "no answer can pass" in problem.message


@pytest.mark.parametrize(
    ("group", "canary"),
    [(["Postgres 16", "PG16"], "Postgres 16"), (["version 16 no", "16 now"], "no")],
    ids=["one-synonym-lacks-it", "short-canary-inside-a-word"],
)
def test_canary_a_passing_synonym_can_avoid_is_not_an_error(tmp_path: Path, group: list[str], canary: str) -> None:
    problems = _with_expect(tmp_path, BROKEN / "canary_required.yaml",
                            {"must_contain_groups": [group], "canaries": [{"text": canary, "kind": "stale"}]})
    assert [p for p in problems if p.field.startswith("expect.canaries")] == []


def test_must_contain_any_with_one_entry_an_answer_can_avoid_is_not_a_clash(tmp_path: Path) -> None:
    """``must_contain_any`` is one group: an answer holding only its other entry passes, so no error."""
    problems = _with_expect(tmp_path, BROKEN / "canary_required.yaml",
                            {"must_contain_any": ["Postgres 16", "PG 15"], "must_not_contain": ["PG 15"],
                             "canaries": [{"text": "PG 15", "kind": "stale"}]})
    assert [p for p in problems if p.severity == "error"] == []


def test_must_contain_any_whose_every_entry_is_forbidden_or_a_canary_is_an_error(tmp_path: Path) -> None:
    problems = _with_expect(tmp_path, BROKEN / "canary_required.yaml",
                            {"must_contain_any": ["PG 15", "Postgres 15"], "must_not_contain": ["pg 15", "postgres 15"]})
    assert [p.field for p in problems if p.severity == "error"] == ["expect.must_contain_any"]
    problems = _with_expect(tmp_path, BROKEN / "canary_required.yaml",
                            {"must_contain_any": ["16"], "canaries": [{"text": "16", "kind": "stale"}]})
    assert [p.field for p in problems if p.severity == "error"] == ["expect.canaries[0].text"]


def test_abstain_with_must_contain_groups_is_a_warning(tmp_path: Path) -> None:
    problems = _with_expect(tmp_path, FIXTURES / "warnings" / "abstain_must_contain.yaml",
                            {"abstain": True, "must_contain_groups": [["16"]]})
    [warning] = [p for p in problems if p.field == "expect.abstain"]
    assert warning.severity == "warning" and "abstain is true" in warning.message


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
    assert main(["validate", str(FIXTURES / "does-not-exist")]) == 2  # bad input: 2, as in every command
    captured = capsys.readouterr()
    out = captured.out + captured.err
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


ONE_PASS = FIXTURES / "one_pass"


def _problems(path: Path) -> dict[str, Problem]:
    suite = load_suite([path])
    return {p.field: p for p in suite.problems}


def test_one_pass_shows_schema_and_cross_field_errors_together() -> None:
    """A bad enum or a misspelled field no longer hides a dangling id until it is fixed."""
    problems = _problems(ONE_PASS / "everything_wrong.yaml")
    assert set(problems) == {
        "sessions[1].started_at",  # time order
        "items[0].kind",  # bad enum
        "items[0].keys[1].type",  # bad enum of another type
        "items[0].sources[0].session",  # dangling session
        "items[1].sources[0].turn",  # dangling turn
        "items[1].supersedes[0]",  # dangling item
        "items[2].id",  # duplicate id
        "probe.workspcae",  # misspelled field
        "expect.must_match[0]",  # bad regex
        "expect.relevant_items[0]",  # dangling relevant item
    }
    assert problems["expect.relevant_items[0]"].line == 50
    assert problems["items[2].id"].message == "duplicate id: items[1] already uses it"


def test_validate_prints_every_problem_of_a_file_sorted_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ONE_PASS / "everything_wrong.yaml")]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "1 files, 0 scenarios, 10 errors, 0 warnings"
    numbers = [int(line.split(":")[1]) for line in lines[:-1]]
    assert numbers == sorted(numbers) and len(numbers) == 10
    assert all(line.startswith(str(ONE_PASS / "everything_wrong.yaml") + ":") for line in lines[:-1])
    assert any(line.endswith("expect.relevant_items[0]: no item has this id; did you mean 'it-answer'? (value: 'it-anwser')") for line in lines)


def test_one_pass_checks_skip_values_the_models_refused() -> None:
    """The probe's workspace is not an identifier: reported once, not also as a relevant item it cannot see."""
    assert [p.field for p in _errors("bad_workspace.yaml")] == ["probe.workspace"]


def test_one_pass_still_asks_the_store_about_items_valid_on_their_own(tmp_path: Path) -> None:
    text = (BROKEN / "store_rule.yaml").read_text(encoding="utf-8").replace("category: project_fact", "category: project-fact")
    (tmp_path / "store_and_enum.yaml").write_text(text, encoding="utf-8")
    fields = {p.field for p in load_suite([tmp_path]).errors}
    assert fields == {"category", "items[0].event_ended_at"}


@pytest.mark.parametrize(
    ("field", "suggestion"),
    [
        ("items[0].kind", "'knowledge'"),  # Kind, not KeyType
        ("items[0].keys[1].type", "'concept'"),  # KeyType, not Kind
    ],
)
def test_enum_value_suggests_the_closest_value_of_its_own_field(field: str, suggestion: str) -> None:
    problem = _problems(ONE_PASS / "everything_wrong.yaml")[field]
    assert problem.message.endswith(f"; did you mean {suggestion}?")


def test_enum_suggestions_come_from_the_field_that_failed(tmp_path: Path) -> None:
    """'exactt' is close to a key type but to no item kind: the kind gets no guess, the key type gets 'exact'."""
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8")
    text = text.replace("kind: context", "kind: exactt", 1).replace("type: entity", "type: exactt", 1)
    (tmp_path / "kinds.yaml").write_text(text, encoding="utf-8")
    problems = {p.field: p for p in load_suite([tmp_path]).errors}
    assert "did you mean" not in problems["items[0].kind"].message and problems["items[0].kind"].value == "'exactt'"
    assert problems["items[0].keys[1].type"].message.endswith("; did you mean 'exact'?")


def test_category_and_literal_values_get_suggestions(tmp_path: Path) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8").replace("role: distractor", "role: distractr")
    text = text.replace("category: project_fact", "category: Project_Fact")
    (tmp_path / "literal.yaml").write_text(text, encoding="utf-8")
    problems = {p.field: p for p in load_suite([tmp_path]).errors}
    assert problems["category"].message.endswith("did you mean 'project_fact'?")
    role = next(p for f, p in problems.items() if f.endswith(".role"))
    assert role.message.endswith("did you mean 'distractor'?")


def test_a_value_far_from_every_choice_gets_no_guess(tmp_path: Path) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8").replace("kind: context", "kind: zzzz", 1)
    (tmp_path / "far.yaml").write_text(text, encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert "did you mean" not in problem.message and "'context'" in problem.message


def test_missing_field_names_its_misspelled_sibling(tmp_path: Path) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8").replace("  message:", "  mesage:")
    (tmp_path / "misspelled.yaml").write_text(text, encoding="utf-8")
    problems = {p.field: p for p in load_suite([tmp_path]).errors}
    assert problems["probe.mesage"].message == "unknown field; did you mean 'message'?"
    assert problems["probe.message"].message == "required field is missing (is 'mesage' beside it a misspelling?)"


def test_dangling_ids_suggest_the_closest_existing_id() -> None:
    problems = _problems(ONE_PASS / "everything_wrong.yaml")
    assert problems["expect.relevant_items[0]"].message == "no item has this id; did you mean 'it-answer'?"
    assert problems["items[1].supersedes[0]"].message == "no item has this id; did you mean 'it-answer'?"
    assert "did you mean 's-main'?" in problems["items[0].sources[0].session"].message
    assert _one("missing_items.yaml", "items[0].supersedes[0]").message == "no item has this id"  # nothing close


def test_time_order_error_sits_on_the_field_out_of_order_and_names_the_other() -> None:
    problems = _problems(ONE_PASS / "time_order.yaml")
    assert set(problems) == {"sessions[2].started_at", "items[0].observed_at", "items[1].revisions[1].at", "items[1].revisions[2].at"}
    earlier = problems["items[1].revisions[1].at"]
    assert earlier.line == 40 and earlier.value == "'1767614400000 (2026-01-05T12:00:00Z)'"
    assert earlier.message.startswith("must not precede items[1].revisions[0].at 1767693600000 (2026-01-06T10:00:00Z)")
    later = problems["items[1].revisions[2].at"]
    assert later.line == 42
    assert later.message.startswith("must not follow items[1].observed_at (by default sessions[1].started_at")
    observed = problems["items[0].observed_at"]
    assert observed.line == 29 and "must not precede sessions[1].started_at 1768903200000 (2026-01-20T10:00:00Z)" in observed.message


def test_a_defaulted_observed_at_is_not_blamed_for_a_late_session() -> None:
    """it-late takes its observed_at from s-after, which starts after the probe: only s-after's line is at fault."""
    problems = _problems(ONE_PASS / "time_order.yaml")
    late = problems["sessions[2].started_at"]
    assert late.line == 19 and "probe.started_at 1769936400000 (2026-02-01T09:00:00Z)" in late.message
    assert "items[2].observed_at" not in problems


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_one_pass_checks_survive_any_value_in_any_place(data: st.DataObject) -> None:
    """Cross-field checks run on data the models refused: any value anywhere gives problems, never an exception."""
    import yaml

    from harness.scenarios.validation import check_partial

    raw = yaml.safe_load((ONE_PASS / "time_order.yaml").read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(raw)[1:]))
        target = raw
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = data.draw(_JUNK)
    for finding in check_partial(raw):
        assert finding.loc and finding.message


def test_a_time_beyond_the_calendar_is_reported_not_a_traceback(tmp_path: Path) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8")
    (tmp_path / "huge.yaml").write_text(text.replace("started_at: 2026-01-05T10:00:00Z", "started_at: 99999999999999999999"), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "sessions[0].started_at" and (problem.value or "").endswith("(past year 9999)'")
