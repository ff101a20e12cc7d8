"""Loading scenario suites: discovery, defaults, ids, filters, hashing, ``recall-eval list``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.scenarios import (
    Scenario,
    ScenarioError,
    Session,
    discover,
    load_scenarios,
    load_suite,
    scenario_hash,
    sessions_in_scope,
)
from harness.scenarios.commands import cli_list

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "scenarios"
SHIPPED = ROOT / "scenarios"


def test_every_shipped_scenario_validates() -> None:
    suite = load_suite([SHIPPED])
    assert suite.scenarios, "no shipped scenarios found"
    assert [str(p) for p in suite.errors] == []


def test_smoke_suite_has_five_scenarios_with_distractors() -> None:
    scenarios = load_scenarios([SHIPPED / "smoke"])
    assert len(scenarios) == 5
    for scenario in scenarios:
        assert any(item.role in ("distractor", "stale", "canary") for item in scenario.items), scenario.id


def test_discover_finds_yaml_recursively_and_skips_underscore_files() -> None:
    files = discover([FIXTURES / "defaults"])
    assert [f.name for f in files] == ["inner.yaml", "outer.yaml"]


def test_discover_missing_path_is_a_clear_error() -> None:
    with pytest.raises(ScenarioError) as caught:
        discover([FIXTURES / "nope"])
    assert "no such file or folder" in str(caught.value)
    assert caught.value.problems[0].file.endswith("nope")


def test_discover_rejects_non_yaml_file_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError) as caught:
        discover([tmp_path / "notes.txt", tmp_path / "empty"])
    messages = {p.message for p in caught.value.problems}
    assert any("expected a .yaml or .yml file" in m for m in messages)
    assert any("holds no scenario files" in m for m in messages)


def test_load_scenarios_sorted_by_id() -> None:
    ids = [s.id for s in load_scenarios([SHIPPED / "smoke"])]
    assert ids == sorted(ids)


def test_load_scenarios_collects_problems_of_all_files_before_raising() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([FIXTURES / "broken", FIXTURES / "good"])
    files = {Path(p.file).name for p in caught.value.problems}
    assert {"syntax.yaml", "field_type.yaml", "missing_session.yaml", "store_rule.yaml"} <= files


def test_warnings_alone_do_not_raise() -> None:
    scenarios = load_scenarios([FIXTURES / "warnings"])
    assert len(scenarios) == 3


def test_defaults_merge_nearest_folder_wins_and_mappings_merge() -> None:
    by_id = {s.id: s for s in load_scenarios([FIXTURES / "defaults"])}
    outer, inner = by_id["fx-defaults-outer"], by_id["fx-defaults-inner"]
    assert outer.category == "project_fact"
    assert inner.category == "preference"  # nested _defaults.yaml wins
    assert outer.probe.policy.agent_read_enabled is False
    assert inner.probe.policy.agent_read_enabled is True  # nested mapping merged key by key
    assert inner.probe.policy.enabled is True  # sibling key kept from the outer defaults
    assert inner.probe.workspace == "ws-a"  # from the outer defaults
    assert inner.probe.message == "Tabs or spaces?"  # the scenario's own value


def test_defaults_lists_and_scalars_in_the_scenario_replace() -> None:
    by_id = {s.id: s for s in load_scenarios([FIXTURES / "defaults"])}
    assert by_id["fx-defaults-inner"].tags == ["inner-tag"]
    assert by_id["fx-defaults-inner"].expect.must_contain_all == ["tabs"]
    assert by_id["fx-defaults-inner"].expect.must_not_contain == ["never"]
    assert by_id["fx-defaults-outer"].tags == ["outer-tag"]


def test_defaults_apply_when_a_single_file_is_loaded() -> None:
    [scenario] = load_scenarios([FIXTURES / "defaults" / "outer.yaml"])
    assert scenario.category == "project_fact"
    assert scenario.probe.started_at == 1769936400000


def test_defaults_lookup_stops_at_the_named_suite_root() -> None:
    """Naming defaults/nested makes it the suite root: defaults/_defaults.yaml (above it) is not read."""
    suite = load_suite([FIXTURES / "defaults" / "nested"])
    assert suite.scenarios == []
    assert {p.field for p in suite.errors} == {"description", "probe.started_at"}
    [scenario] = load_scenarios([FIXTURES / "defaults"], ids=["fx-defaults-inner"])
    assert scenario.description == "Relies on _defaults.yaml for most fields."


def test_defaults_above_the_named_root_are_never_read(tmp_path: Path) -> None:
    (tmp_path / "_defaults.yaml").write_text("not_a_field: 1\n", encoding="utf-8")
    suite_root = tmp_path / "suite"
    suite_root.mkdir()
    (suite_root / "case.yaml").write_text((FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    suite = load_suite([suite_root])
    assert suite.problems == [] and [s.id for s in suite.scenarios] == ["fx-valid"]
    assert load_suite([tmp_path]).errors  # named as the root, the outer defaults apply


def test_bad_value_from_defaults_points_at_the_defaults_file() -> None:
    """An undeclared category is a warning now (suites declare their own), still placed at the defaults file."""
    suite = load_suite([FIXTURES / "broken_defaults"])
    problem = next(p for p in suite.problems if p.field == "category")
    assert problem.file.endswith("broken_defaults/_defaults.yaml")
    assert problem.line == 1
    assert problem.value == "'projectfact'"
    assert problem.severity == "warning" and "did you mean 'project_fact'?" in problem.message


def test_duplicate_ids_name_both_files() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([FIXTURES / "duplicates"])
    [problem] = caught.value.problems
    assert problem.field == "id"
    assert "second.yaml" in problem.file
    assert "first.yaml" in problem.message


def test_turn_ids_default_by_position_in_sessions_and_history() -> None:
    [scenario] = load_scenarios([FIXTURES / "warnings" / "answer_in_history.yaml"])
    assert [t.id for t in scenario.sessions[0].turns] == ["t1", "t2"]
    assert [t.id for t in scenario.probe.history] == ["h1"]


def test_explicit_turn_ids_are_kept() -> None:
    session = Session.model_validate(
        {"id": "s", "started_at": 0, "turns": [{"role": "user", "content": "a"}, {"id": "x", "role": "user", "content": "b"}]}
    )
    assert [t.id for t in session.turns] == ["t1", "x"]


@pytest.mark.parametrize(
    ("raw", "millis"),
    [
        (0, 0),
        ("2026-03-02T10:00:00Z", 1772445600000),
        ("2026-03-02T11:00:00+01:00", 1772445600000),
        ("2026-03-02T10:00:00", 1772445600000),
        ("2026-03-02", 1772409600000),
    ],
)
def test_times_accept_millis_and_iso_timestamps(raw: object, millis: int) -> None:
    [scenario] = load_scenarios([FIXTURES / "good"])
    data = scenario.model_dump(by_alias=True)
    data["probe"]["started_at"] = raw
    data["sessions"] = []
    data["items"] = []
    data["expect"]["relevant_items"] = []
    assert Scenario.model_validate(data).probe.started_at == millis


def test_yaml_timestamps_become_utc_millis() -> None:
    [scenario] = load_scenarios([FIXTURES / "good"])
    assert scenario.sessions[0].started_at == 1767607200000  # 2026-01-05T10:00:00Z


def test_filters_by_id_glob_category_and_tag() -> None:
    paths = [SHIPPED / "smoke"]
    assert [s.id for s in load_scenarios(paths, ids=["smoke-0[12]*"])] == ["smoke-01-changelog-format", "smoke-02-ci-provider"]
    assert [s.id for s in load_scenarios(paths, categories=["abstention"])] == ["smoke-03-abstain-freeze-window"]
    assert [s.id for s in load_scenarios(paths, tags=["canary"])] == ["smoke-04-leak-pilot-customer"]
    assert load_scenarios(paths, ids=["nothing-*"]) == []


def test_unknown_category_filter_is_an_error() -> None:
    with pytest.raises(ScenarioError, match="unknown category"):
        load_scenarios([SHIPPED / "smoke"], categories=["prefs"])


def test_scenario_hash_is_stable_and_ignores_schema_hint() -> None:
    [scenario] = load_scenarios([FIXTURES / "good"])
    again = Scenario.model_validate(scenario.model_dump(by_alias=True) | {"$schema": "elsewhere.json"})
    assert scenario_hash(scenario) == scenario_hash(again)
    assert len(scenario_hash(scenario)) == 64


def test_scenario_hash_changes_when_content_changes() -> None:
    [scenario] = load_scenarios([FIXTURES / "good"])
    edited = scenario.model_copy(update={"title": "Another title"})
    assert scenario_hash(scenario) != scenario_hash(edited)


def test_sessions_in_scope_keeps_global_and_probe_workspace_sessions() -> None:
    [scenario] = load_scenarios([SHIPPED / "smoke" / "smoke-01-changelog-format.yaml"])
    assert [s.id for s in sessions_in_scope(scenario)] == ["s-changelog", "s-readme"]


def test_list_prints_table_and_count(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["list", str(SHIPPED / "smoke"), "--category", "leakage"])
    out = capsys.readouterr().out
    assert code == 0
    assert "smoke-04-leak-pilot-customer" in out and "leakage" in out and "smoke-01" not in out
    assert out.strip().endswith("1 scenario")


def test_list_reports_problems_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(paths=[str(FIXTURES / "duplicates")], id=[], category=[], tag=[])
    assert cli_list(args) == 1
    assert "duplicate scenario id" in capsys.readouterr().err


def test_readme_worked_example_is_a_valid_scenario(tmp_path: Path) -> None:
    import re

    readme = (SHIPPED / "README.md").read_text(encoding="utf-8")
    [example] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "\nid: " in b and "\nprobes:" not in b]
    (tmp_path / "example.yaml").write_text(example, encoding="utf-8")
    [scenario] = load_scenarios([tmp_path])
    assert scenario.items[0].revisions and scenario.expect.canaries


def test_readme_conversation_example_is_valid_with_its_declared_categories(tmp_path: Path) -> None:
    import re

    readme = (SHIPPED / "README.md").read_text(encoding="utf-8")
    [example] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "\nprobes:" in b]
    [categories] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if b.startswith("categories:")]
    (tmp_path / "conv-26.yaml").write_text(example, encoding="utf-8")
    (tmp_path / "_defaults.yaml").write_text(categories.replace("multi_hop", "adversarial"), encoding="utf-8")
    suite = load_suite([tmp_path])
    assert suite.problems == []
    assert [(s.id, s.category) for s in suite.scenarios] == [
        ("conv-26/q001", "temporal"), ("conv-26/q002", "single_hop"), ("conv-26/q003", "adversarial")]


def test_readme_shows_what_the_model_reads_of_a_speaker_and_of_now() -> None:
    """The README's renderings of a turn's ``speaker`` and of ``{now}`` are the ones the arms produce."""
    from harness.memory_systems.prompts import format_now, turn_text
    from harness.scenarios.models import Turn

    readme = " ".join((SHIPPED / "README.md").read_text(encoding="utf-8").split())
    turn = Turn(role="user", speaker="Caroline", content="I adopted a dog.")
    assert f"`{turn_text(turn)}`" in readme
    assert "`{now}`" in readme and format_now(1772445600000) in readme  # 2026-03-02T10:00:00Z


def _billion_laughs(levels: int = 9) -> str:
    lines = ['lol0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_recursive_alias_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "recursive.yaml").write_text("id: x\na: &a [*a]\n", encoding="utf-8")
    [problem] = load_suite([tmp_path]).problems
    assert problem.file.endswith("recursive.yaml") and problem.line == 2 and problem.field == ""
    assert problem.message.startswith("YAML alias *a (anchor &a on line 2) refused: it sits inside its own anchor")
    assert "\n" not in str(problem)


def test_billion_laughs_is_refused_before_anything_is_expanded(tmp_path: Path) -> None:
    import tracemalloc

    (tmp_path / "laughs.yaml").write_text(_billion_laughs(9), encoding="utf-8")
    tracemalloc.start()
    try:
        suite = load_suite([tmp_path])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [problem] = suite.problems
    assert problem.line == 2 and "YAML alias *a0 (anchor &a0 on line 1) refused" in problem.message
    assert peak < 50 * 1024 * 1024  # sanity bound: expanding it would take gigabytes


def test_a_single_alias_is_refused_too(tmp_path: Path) -> None:
    """Scenario files take no aliases at all: the shipped suites use none, and _defaults.yaml shares values."""
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8")
    text = text.replace("keys: [staging,", "keys: &staging-keys [staging,", 1)
    text = text.replace("keys: [production, {key: postgres, type: entity}]", "keys: *staging-keys")
    (tmp_path / "one_alias.yaml").write_text(text, encoding="utf-8")
    [problem] = load_suite([tmp_path]).problems
    assert problem.line == 27 and "YAML alias *staging-keys (anchor &staging-keys on line 20) refused" in problem.message
    assert "_defaults.yaml" in problem.message


def test_an_anchor_nobody_refers_to_and_an_ampersand_in_text_are_fine(tmp_path: Path) -> None:
    text = (FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8")
    text = text.replace("keys: [staging,", "keys: &unused [staging,", 1).replace("title: ", "title: R&D ", 1)
    (tmp_path / "anchor.yaml").write_text(text, encoding="utf-8")
    suite = load_suite([tmp_path])
    assert suite.problems == [] and suite.scenarios[0].title.startswith("R&D ")


def test_alias_in_defaults_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "_defaults.yaml").write_text("tags: &t [a]\nprobe: {history: *t}\n", encoding="utf-8")
    (tmp_path / "valid.yaml").write_text((FIXTURES / "good" / "valid.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    problems = load_suite([tmp_path]).problems
    assert [(Path(p.file).name, p.line) for p in problems] == [("_defaults.yaml", 2)]
    assert "YAML alias *t (anchor &t on line 1) refused" in problems[0].message


def _nested(depth: int, merge: bool = False) -> str:
    """A document whose deepest list sits ``depth`` levels down (the root mapping is level 1)."""
    head = "m: {<<: {k: 1}}\n" if merge else ""  # a merge key sends the file through PyYAML's constructor
    return head + "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


@pytest.mark.parametrize("merge", [False, True], ids=["fast-constructor", "pyyaml-constructor"])
def test_nesting_deeper_than_the_limit_is_refused_not_a_recursion_error(tmp_path: Path, merge: bool) -> None:
    from harness.scenarios.limits import MAX_DEPTH

    (tmp_path / "at_limit.yaml").write_text(_nested(MAX_DEPTH, merge), encoding="utf-8")
    (tmp_path / "over_limit.yaml").write_text(_nested(MAX_DEPTH + 1, merge), encoding="utf-8")
    (tmp_path / "far_over.yaml").write_text(_nested(990, merge), encoding="utf-8")
    problems = load_suite([tmp_path]).problems
    deep = {Path(p.file).name for p in problems if p.message.startswith(f"nested more than {MAX_DEPTH} levels deep")}
    assert deep == {"over_limit.yaml", "far_over.yaml"}


_TRICKY_SCALARS = ["yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "", "true", "False", "1e3", "1.0e+3", "0x1F",
                   "0o17", "017", "1_000", "-.inf", ".NaN", "2024-01-05", "2024-01-05T09:00:00Z", "=", "<<", "12:30:00",
                   "+12", "-0", "3.", "a: b", "plain text", "19:59", "1,000", ".5", "0b101", "!x", "&y"]


def _tags(node) -> list:  # noqa: ANN001 - a yaml node
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [node.tag] + [t for k, v in node.value for t in (*_tags(k), *_tags(v))]
    if isinstance(node, yaml.SequenceNode):
        return [node.tag] + [t for v in node.value for t in _tags(v)]
    return [(node.tag, node.value)]


def _same_tags_as_pyyaml(text: str) -> bool | None:
    """True when the scenario loader tags every node as PyYAML's safe loader does; None for text YAML refuses."""
    import yaml

    from harness.scenarios import yaml_loader

    try:
        expected = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    return _tags(yaml_loader.Loader(text).get_single_node()) == _tags(expected)


@pytest.mark.parametrize("scalar", _TRICKY_SCALARS)
def test_scenario_files_resolve_every_scalar_tag_as_pyyaml_does(scalar: str) -> None:
    """The loader's shortcut tag resolution gives PyYAML's safe tags to plain, quoted, key and list scalars.

    Bugs planted: the first-character lookup on the whole value (never matching: "yes" read as text), and
    quoted scalars resolved as plain ones ("yes" in quotes read as a boolean).
    """
    quoted = json.dumps(scalar)
    assert _same_tags_as_pyyaml(f"quoted: {quoted}\n{quoted}: key\nlist: [{quoted}]\n") is True
    assert _same_tags_as_pyyaml(f"plain: {scalar}\n") in (True, None)
    assert _same_tags_as_pyyaml(f"- {scalar}\n") in (True, None)


@given(st.text(alphabet="0123456789.eE+-:_xXoObB nNyYtTfFlLuU~", min_size=1, max_size=10))
@settings(max_examples=300, deadline=None)
def test_generated_plain_scalars_get_pyyamls_tags(scalar: str) -> None:
    """Random number-, date- and boolean-like plain scalars: the same tags as PyYAML's safe loader."""
    assert _same_tags_as_pyyaml(f"value: {scalar}\n") in (True, None)


@pytest.mark.parametrize("suite", ["duplicates", "warnings", "broken", "defaults", "good"])
def test_validate_file_by_file_finds_the_same_problems_and_counts_as_a_kept_load(suite: str) -> None:
    """``validate`` keeps no scenario (memory of one file, not the suite) yet reports exactly what a kept load does."""
    from harness.scenarios.loading import load_suite

    if not (FIXTURES / suite).exists():
        pytest.skip(f"no fixture folder {suite}")
    kept, streamed = load_suite([FIXTURES / suite]), load_suite([FIXTURES / suite], keep=False)
    assert [str(p) for p in streamed.problems] == [str(p) for p in kept.problems]
    assert streamed.passed == kept.passed == len(kept.scenarios) and not streamed.scenarios and not streamed.paths


def test_validate_keeps_no_scenario_alive_after_its_file(tmp_path: Path) -> None:
    """Each file's scenarios are gone before the next file is read (what let a 500-file suite take 3.2 GB)."""
    import gc
    import weakref

    from harness.scenarios import loading

    for n in range(3):
        (tmp_path / f"s{n}.yaml").write_text((FIXTURES / "good" / "valid.yaml").read_text().replace("id: fx-valid", f"id: fx-valid-{n}", 1))
    alive: list[weakref.ref] = []
    original = loading._load_file

    def watched(*args: object, **kwargs: object) -> object:
        gc.collect()
        assert not any(ref() is not None for ref in alive), "an earlier file's scenario is still alive"
        loaded = original(*args, **kwargs)
        alive.extend(weakref.ref(s[0]) for s in loaded.scenarios)
        return loaded

    loading._load_file = watched
    try:
        suite = loading.load_suite([tmp_path], keep=False)
    finally:
        loading._load_file = original
    assert suite.passed == 3 and not suite.problems and len(alive) == 3


def test_the_loading_modules_example_runs_from_the_repository_root(monkeypatch) -> None:  # noqa: ANN001
    import doctest
    from pathlib import Path

    from harness.scenarios import loading

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    outcome = doctest.testmod(loading)
    assert outcome.attempted >= 1 and outcome.failed == 0  # a reflowed example is no example (attempted 0)


def test_one_path_given_as_a_string_or_a_path_is_one_path_not_its_characters(monkeypatch) -> None:  # noqa: ANN001
    from pathlib import Path

    from harness.scenarios import load_scenarios

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    listed = [s.id for s in load_scenarios(["scenarios/smoke"])]
    assert [s.id for s in load_scenarios("scenarios/smoke")] == listed  # was: "s", "c", ... and "/" walked
    assert [s.id for s in load_scenarios(root / "scenarios" / "smoke")] == listed
