"""Speakers, suite system prompts, categories and list answers: their schema and validation (what they do is scoring's and the agent's)."""

from __future__ import annotations

from pathlib import Path

from harness.scenarios import Problem, load_suite
from harness.scenarios.schema import scenario_schema

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "tests" / "fixtures" / "scenarios" / "good" / "valid.yaml"


def _suite(tmp_path: Path, text: str, defaults: str | None = None) -> tuple[list, dict[str, Problem]]:
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    if defaults is not None:
        (tmp_path / "_defaults.yaml").write_text(defaults, encoding="utf-8")
    suite = load_suite([tmp_path])
    return suite.scenarios, {p.field: p for p in suite.problems}


def _valid(**replacements: str) -> str:
    text = VALID.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


def test_turn_speaker_system_prompt_and_f1_reference_load(tmp_path: Path) -> None:
    text = _valid(**{
        "      - role: user\n": "      - role: user\n        speaker: Caroline\n",
        "description: Fixture": "system_prompt: You read a chat between two friends.\ndescription: Fixture",
        '  must_contain_all: ["16"]\n': '  must_contain_all: ["16"]\n  f1_reference: Postgres 16\n',
    })
    [scenario], problems = _suite(tmp_path, text)
    assert not problems
    assert scenario.sessions[0].turns[0].speaker == "Caroline"
    assert scenario.sessions[0].turns[1].speaker is None
    assert scenario.system_prompt == "You read a chat between two friends."
    assert scenario.expect.f1_reference == "Postgres 16"


def test_system_prompt_comes_from_defaults(tmp_path: Path) -> None:
    [scenario], _ = _suite(tmp_path, _valid(), defaults="system_prompt: Suite-wide prompt.\n")
    assert scenario.system_prompt == "Suite-wide prompt."


def test_empty_speaker_is_an_error_at_its_line(tmp_path: Path) -> None:
    _, problems = _suite(tmp_path, _valid(**{"      - role: user\n": "      - role: user\n        speaker: ''\n"}))
    problem = problems["sessions[0].turns[0].speaker"]
    assert problem.severity == "error" and problem.line == 12


def test_unknown_category_is_a_warning_naming_the_fix(tmp_path: Path) -> None:
    [scenario], problems = _suite(tmp_path, _valid(**{"category: project_fact": "category: single_hop"}))
    assert scenario.category == "single_hop"
    problem = problems["category"]
    assert problem.severity == "warning" and problem.line == 4
    assert "categories:" in problem.message and "_defaults.yaml" in problem.message


def test_category_declared_in_defaults_gives_no_warning(tmp_path: Path) -> None:
    defaults = "categories:\n  single_hop: One fact from one session.\n  multi_hop: Facts from several sessions.\n"
    [scenario], problems = _suite(tmp_path, _valid(**{"category: project_fact": "category: single_hop"}), defaults)
    assert problems == {}
    assert scenario.categories == {"single_hop": "One fact from one session.", "multi_hop": "Facts from several sessions."}


def test_category_must_be_a_lowercase_identifier(tmp_path: Path) -> None:
    _, problems = _suite(tmp_path, _valid(**{"category: project_fact": "category: Single-Hop"}))
    problem = problems["category"]
    assert problem.severity == "error" and "lowercase" in problem.message and problem.value == "'Single-Hop'"


def test_declared_category_names_must_be_lowercase_identifiers(tmp_path: Path) -> None:
    _, problems = _suite(tmp_path, _valid(), defaults="categories:\n  Multi Hop: bad name\n")
    assert any(p.field.startswith("categories") and p.severity == "error" for p in problems.values())


def test_must_contain_groups_load_and_empty_group_is_refused(tmp_path: Path) -> None:
    text = _valid(**{'  must_contain_all: ["16"]\n': "  must_contain_groups: [[Postgres], ['16', sixteen]]\n"})
    [scenario], problems = _suite(tmp_path, text)
    assert scenario.expect.must_contain_groups == [["Postgres"], ["16", "sixteen"]]
    assert not problems
    _, problems = _suite(tmp_path, _valid(**{'  must_contain_all: ["16"]\n': "  must_contain_groups: [[]]\n"}))
    assert problems["expect.must_contain_groups[0]"].severity == "error"


def test_group_whose_every_synonym_is_forbidden_is_an_error(tmp_path: Path) -> None:
    text = _valid(**{
        '  must_contain_all: ["16"]\n': "  must_contain_groups: [['16', sixteen]]\n  must_not_contain: [Sixteen, '16']\n"
    })
    _, problems = _suite(tmp_path, text)
    assert "no answer can pass" in problems["expect.must_contain_groups[0]"].message


def test_one_synonym_group_counts_as_required_text_for_canaries(tmp_path: Path) -> None:
    text = _valid(**{
        '  must_contain_all: ["16"]\n': "  must_contain_groups: [['16']]\n  canaries: [{text: '16', kind: invented}]\n"
    })
    _, problems = _suite(tmp_path, text)
    assert "no answer can pass" in problems["expect.canaries[0].text"].message


def test_group_already_in_history_is_a_warning(tmp_path: Path) -> None:
    text = _valid(**{
        "  message: Which": "  history: [{role: user, content: 'we moved to Postgres sixteen'}]\n  message: Which",
        '  must_contain_all: ["16"]\n': "  must_contain_groups: [['16', sixteen]]\n",
    })
    _, problems = _suite(tmp_path, text)
    assert problems["expect.must_contain_groups[0]"].severity == "warning"


def test_abstain_with_groups_is_a_warning(tmp_path: Path) -> None:
    text = _valid(**{'  must_contain_all: ["16"]\n': "  abstain: true\n  must_contain_groups: [['16']]\n"})
    _, problems = _suite(tmp_path, text)
    assert problems["expect.abstain"].severity == "warning"


def test_someone_else_canary_kind_is_accepted(tmp_path: Path) -> None:
    text = _valid(**{'  must_contain_all: ["16"]\n': "  canaries: [{text: 'Postgres 15', kind: someone_else}]\n"})
    [scenario], problems = _suite(tmp_path, text)
    assert scenario.expect.canaries[0].kind == "someone_else" and not problems


def test_schema_lists_the_new_fields() -> None:
    defs = scenario_schema()["$defs"]
    top = scenario_schema()["properties"]
    assert "speaker" in defs["Turn"]["properties"]
    assert "must_contain_groups" in defs["AnswerCheck"]["properties"]
    assert "f1_reference" in defs["Expect"]["properties"]
    assert "someone_else" in defs["Canary"]["properties"]["kind"]["enum"]
    assert {"system_prompt", "categories"} <= set(top)
    assert top["category"]["pattern"] == "^[a-z][a-z0-9_]*$"
