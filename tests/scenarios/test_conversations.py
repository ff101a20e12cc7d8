"""Conversation files: one conversation, many probes, each a scenario ``<conversation>/<probe>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.scenarios import ScenarioError, load_scenarios, load_suite, scenario_hash
from tests.scenarios.conversation_factories import conversation_text, line_of, probes_text, write_conversation

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "tests" / "fixtures" / "scenarios" / "good" / "valid.yaml"


def test_conversation_file_loads_as_one_scenario_per_probe_sharing_sessions_and_items(tmp_path: Path) -> None:
    write_conversation(tmp_path, probes=4)
    scenarios = load_scenarios([tmp_path])
    assert [s.id for s in scenarios] == ["conv-1/q1", "conv-1/q2", "conv-1/q3", "conv-1/q4"]
    first, *others = scenarios
    for other in others:
        assert other.sessions is first.sessions and other.items is first.items
    assert first.title == "Caroline and Melanie / q1"
    assert first.description == "Two friends catch up over several sessions."
    assert first.category == "project_fact" and first.tags == ["conv"]
    assert first.sessions[0].turns[0].speaker == "Caroline"
    assert first.probe.message == "What is the name of Caroline's dog? (1)"
    assert first.expect.relevant_items == ["it-dog"]


def test_a_conversation_probe_is_an_ordinary_scenario(tmp_path: Path) -> None:
    """The probe's scenario dumps, hashes and re-validates like a one-story scenario with the same content."""
    from harness.scenarios import Scenario

    write_conversation(tmp_path, probes=2)
    probe = load_scenarios([tmp_path])[1]
    again = Scenario.model_validate(probe.model_dump(by_alias=True))
    assert again == probe
    assert scenario_hash(again) == scenario_hash(probe)


def test_probe_fields_override_and_extend_the_conversation(tmp_path: Path) -> None:
    text = conversation_text(2).replace(
        "  - id: q2\n",
        "  - id: q2\n    title: Own title\n    description: Own description.\n    category: temporal\n"
        "    tags: [extra, conv]\n    item_roles: {it-move: distractor}\n",
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    q1, q2 = load_scenarios([tmp_path])
    assert (q2.title, q2.description, q2.category) == ("Own title", "Own description.", "temporal")
    assert q2.tags == ["conv", "extra"]
    assert q2.items is not q1.items  # roles overridden: its own list ...
    assert q2.items[1].role == "distractor" and q1.items[1].role == "other"
    assert q2.items[0] is q1.items[0]  # ... sharing every item it does not override
    assert q2.sessions is q1.sessions


def test_conversation_probe_and_expect_blocks_are_defaults_for_every_probe(tmp_path: Path) -> None:
    text = conversation_text(2).replace("probes:\n", "probe:\n  workspace: null\n  history: [{role: user, content: "
                                                     "hi}]\nexpect:\n  must_not_contain: [Rex]\nprobes:\n")
    text = text.replace("(2)\n    expect:\n", "(2)\n    expect:\n      must_not_contain: [Max]\n", 1)
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    q1, q2 = load_scenarios([tmp_path])
    assert q1.expect.must_not_contain == ["Rex"] and q2.expect.must_not_contain == ["Max"]
    assert q2.expect.must_contain_any == ["Biscuit"]  # mappings merge key by key
    assert q1.probe.history[0].content == "hi"


def test_a_problem_in_probe_7_names_its_file_line_and_field(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=10)
    text = path.read_text(encoding="utf-8")
    text = text.replace("message: What is the name of Caroline's dog? (7)\n    expect:\n      must_contain_any: "
                        "[Biscuit]\n      relevant_items: [it-dog]",
                        "message: What is the name of Caroline's dog? (7)\n    expect:\n      must_contain_any: "
                        "[Biscuit]\n      relevant_items: [it-dgo]")
    path.write_text(text, encoding="utf-8")
    suite = load_suite([tmp_path])
    [problem] = suite.errors
    assert problem.file == str(path)
    assert problem.field == "probes[6].expect.relevant_items[0]"
    assert problem.line == line_of(path, "[it-dgo]")
    assert "did you mean 'it-dog'?" in problem.message
    assert len(suite.scenarios) == 9  # the other probes load


def test_a_schema_error_in_a_probe_is_placed_in_that_probe(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=3)
    text = path.read_text(encoding="utf-8").replace("  - id: q2\n    probe:\n      started_at: 2026-02-01T09:00:00Z",
                                                     "  - id: q2\n    probe:\n      started_at: next tuesday")
    path.write_text(text, encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "probes[1].probe.started_at" and problem.line == line_of(path, "next tuesday")


def test_a_probe_before_a_session_is_blamed_on_the_probe(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=2)
    text = path.read_text(encoding="utf-8")
    head, _, tail = text.partition("  - id: q2\n")
    path.write_text(head + "  - id: q2\n" + tail.replace("2026-02-01T09:00:00Z", "2026-01-10T09:00:00Z", 1), encoding="utf-8")
    suite = load_suite([tmp_path])
    [problem] = suite.errors  # s2 starts after it; the sessions are right for q1
    assert problem.field == "probes[1].probe.started_at" and "sessions[1].started_at" in problem.message
    assert [s.id for s in suite.scenarios] == ["conv-1/q1"]


def test_a_shared_problem_is_reported_once_not_per_probe(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=5)
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "sources: [{session: s2, turn: t2}]", "sources: [{session: s9, turn: t2}]"
        ),
        encoding="utf-8",
    )
    suite = load_suite([tmp_path])
    [problem] = suite.errors
    assert problem.field == "items[2].sources[0].session" and problem.line == line_of(path, "session: s9")
    assert suite.scenarios == []  # every probe shares the broken store


def test_duplicate_probe_ids_name_both_lines(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=3)
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: q3\n", "  - id: q1\n"), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "probes[2].id" and f"{path}:{line_of(path, '- id: q1')}" in problem.message


def test_a_probe_without_any_category_is_an_error(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=1)
    path.write_text(path.read_text(encoding="utf-8").replace("category: project_fact\n", ""), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "probes[0].category" and "conversation" in problem.message


def test_item_roles_must_name_items(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=1)
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: q1\n", "  - id: q1\n    item_roles: {it-mvoe: answer}\n"), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "probes[0].item_roles.it-mvoe" and "did you mean 'it-move'?" in problem.message


def test_folder_form_spreads_probes_over_files(tmp_path: Path) -> None:
    folder = tmp_path / "conv-1"
    folder.mkdir()
    (folder / "_conversation.yaml").write_text(conversation_text(folder=True), encoding="utf-8")
    (folder / "part-a.yaml").write_text(probes_text(range(1, 3)), encoding="utf-8")
    (folder / "part-b.yaml").write_text(probes_text(range(3, 5)), encoding="utf-8")
    suite = load_suite([tmp_path])
    assert suite.problems == []
    assert [s.id for s in suite.scenarios] == ["conv-1/q1", "conv-1/q2", "conv-1/q3", "conv-1/q4"]
    assert suite.scenarios[0].items is suite.scenarios[3].items
    assert suite.paths["conv-1/q3"] == folder / "part-b.yaml"


def test_folder_form_probe_file_holds_only_probes(tmp_path: Path) -> None:
    folder = tmp_path / "conv-1"
    folder.mkdir()
    (folder / "_conversation.yaml").write_text(conversation_text(folder=True), encoding="utf-8")
    (folder / "part-a.yaml").write_text("title: stray\n" + probes_text(range(1, 3)), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.file.endswith("part-a.yaml") and problem.field == "title" and "_conversation.yaml" in problem.message


def test_defaults_merge_under_a_conversation(tmp_path: Path) -> None:
    (tmp_path / "_defaults.yaml").write_text(
        "system_prompt: You read a chat between friends.\ncategories: {single_hop: One session.}\nexpect: {must_not_contain: [Rex]}\n",
        encoding="utf-8",
    )
    write_conversation(tmp_path, probes=2, category="single_hop")
    suite = load_suite([tmp_path])
    assert suite.problems == []
    assert all(s.system_prompt == "You read a chat between friends." for s in suite.scenarios)
    assert all(s.expect.must_not_contain == ["Rex"] for s in suite.scenarios)
    assert suite.scenarios[0].categories == {"single_hop": "One session."}


def test_one_story_files_stay_valid_beside_conversations(tmp_path: Path) -> None:
    write_conversation(tmp_path, probes=2)
    (tmp_path / "story.yaml").write_text(VALID.read_text(encoding="utf-8"), encoding="utf-8")
    assert [s.id for s in load_scenarios([tmp_path])] == ["conv-1/q1", "conv-1/q2", "fx-valid"]


def test_a_one_story_file_id_takes_no_slash(tmp_path: Path) -> None:
    (tmp_path / "story.yaml").write_text(VALID.read_text(encoding="utf-8").replace("id: fx-valid", "id: fx/valid"), encoding="utf-8")
    [problem] = load_suite([tmp_path]).errors
    assert problem.field == "id" and "conversation" in problem.message


def test_a_probe_id_clashing_with_a_story_id_is_a_duplicate(tmp_path: Path) -> None:
    write_conversation(tmp_path, probes=1, conv_id="fx")
    (tmp_path / "story.yaml").write_text(VALID.read_text(encoding="utf-8").replace("id: fx-valid", "id: fx-q1"), encoding="utf-8")
    assert load_suite([tmp_path]).errors == []  # 'fx/q1' and 'fx-q1' differ
    write_conversation(tmp_path, probes=1, conv_id="fx", name="again.yaml")
    [problem] = load_suite([tmp_path]).errors
    assert "duplicate scenario id" in problem.message


# -- selection before validation ------------------------------------------------------------------


def _broken_story(folder: Path) -> Path:
    path = folder / "broken.yaml"
    path.write_text(
        VALID.read_text(encoding="utf-8")
        .replace("id: fx-valid", "id: fx-broken")
        .replace("kind: context", "kind: contxt", 1),
        encoding="utf-8",
    )
    return path


def test_a_broken_unselected_file_does_not_stop_a_filtered_load(tmp_path: Path) -> None:
    write_conversation(tmp_path, probes=3)
    _broken_story(tmp_path)
    (tmp_path / "syntax.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    [scenario] = load_scenarios([tmp_path], ids=["conv-1/q2"])
    assert scenario.id == "conv-1/q2"
    with pytest.raises(ScenarioError):
        load_scenarios([tmp_path])  # what validate sees: everything checked
    assert {Path(p.file).name for p in load_suite([tmp_path]).errors} == {"broken.yaml", "syntax.yaml"}


def test_a_broken_unselected_probe_does_not_stop_selecting_another(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=3)
    path.write_text(path.read_text(encoding="utf-8").replace("(3)\n    expect:\n      must_contain_any: [Biscuit]\n      relevant_items: [it-dog]",
                                                          "(3)\n    expect:\n      must_contain_any: [Biscuit]\n   "
                                                          "   relevant_items: [nothing]"), encoding="utf-8")
    assert [s.id for s in load_scenarios([tmp_path], ids=["conv-1/q1"])] == ["conv-1/q1"]
    with pytest.raises(ScenarioError):
        load_scenarios([tmp_path], ids=["conv-1/*"])


def test_selected_files_are_still_fully_checked(tmp_path: Path) -> None:
    _broken_story(tmp_path)
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([tmp_path], ids=["fx-broken"])
    assert [p.field for p in caught.value.problems] == ["items[0].kind"]


def test_category_and_tag_filters_see_inherited_values(tmp_path: Path) -> None:
    path = write_conversation(tmp_path, probes=3)
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: q2\n", "  - id: q2\n    category: temporal\n "
                                                                             "   tags: [hard]\n"), encoding="utf-8")
    assert [s.id for s in load_scenarios([tmp_path], categories=["project_fact"])] == ["conv-1/q1", "conv-1/q3"]
    assert [s.id for s in load_scenarios([tmp_path], categories=["temporal"])] == ["conv-1/q2"]
    assert [s.id for s in load_scenarios([tmp_path], tags=["conv"])] == ["conv-1/q1", "conv-1/q2", "conv-1/q3"]
    assert [s.id for s in load_scenarios([tmp_path], tags=["hard"])] == ["conv-1/q2"]


def test_unknown_category_filter_is_an_error(tmp_path: Path) -> None:
    write_conversation(tmp_path, probes=1)
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([tmp_path], categories=["nonsense"])
    assert caught.value.problems[0].file == "--category"


def _reference_hash(scenario) -> str:  # noqa: ANN001 - the definition: sha256 of the whole canonical JSON
    import hashlib
    import json

    data = scenario.model_dump(mode="json", by_alias=True, exclude={"schema_"})
    if data["schema_version"] == 2:  # schema 2 only lets a file quote a turn: hashed as its schema 1 form
        data["schema_version"] = 1
    for optional in ("protocol", "retrieval_budget"):  # unset: hashed as before the field existed
        if data[optional] is None:
            del data[optional]
    if not data["expect"]["unlabelled"]:  # a labelled probe: hashed as before unlabelled probes existed
        del data["expect"]["unlabelled"]
    if data["expect"]["logged_reply"] is None:
        del data["expect"]["logged_reply"]
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def test_scenario_hash_is_the_hash_of_the_canonical_json(tmp_path: Path) -> None:
    """The piecewise hash (shared parts serialized once) equals the plain definition, for stories and probes."""
    path = write_conversation(tmp_path, probes=3)
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: q2\n", "  - id: q2\n    item_roles: {it-move: answer}\n"), encoding="utf-8")
    (tmp_path / "story.yaml").write_text(VALID.read_text(encoding="utf-8"), encoding="utf-8")
    scenarios = load_scenarios([tmp_path, ROOT / "scenarios" / "smoke"])
    for scenario in scenarios:
        assert scenario_hash(scenario) == _reference_hash(scenario)
        assert scenario_hash(scenario) == _reference_hash(scenario)  # served from the cache
    assert len({scenario_hash(s) for s in scenarios}) == len(scenarios)


def test_scenario_hash_is_the_plain_definition_even_when_a_text_holds_the_hash_stand_in(tmp_path: Path) -> None:
    """A probe message equal to the stand-in the piecewise hash splices at is hashed as the plain definition says."""
    from harness.scenarios import hashing

    write_conversation(tmp_path, probes=2)
    scenario = load_scenarios([tmp_path])[0]
    for mark in hashing._MARKS.values():
        tricky = scenario.model_copy(update={"title": mark, "probe": scenario.probe.model_copy(update={"message": mark})})
        assert scenario_hash(tricky) == _reference_hash(tricky) != scenario_hash(scenario)
    both = scenario.model_copy(update={"tags": list(hashing._MARKS.values())})
    assert scenario_hash(both) == _reference_hash(both)


@pytest.mark.parametrize(
    ("glob", "skipped"),
    [("conv-2/q1", True), ("conv-1/q1", False), ("conv-1/*", False), ("conv-?/q1", False), ("*q1", False),
     ("conv-1?q1", False), ("fx-*", True), ("[c]onv-2/q1", False), ("conv-2/*", True), ("a/b/c", True)],
)
def test_an_id_filter_skips_parsing_files_that_cannot_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, glob: str, skipped: bool) -> None:
    """Files whose top-level id rules them out are not even parsed; any doubt parses (conv-1 is the file here)."""
    from harness.scenarios import loading

    write_conversation(tmp_path, probes=2)
    parsed: list[Path] = []
    real = loading.parse_document
    monkeypatch.setattr(loading, "parse_document", lambda path, text=None: parsed.append(path) or real(path, text))
    load_suite([tmp_path], loading.Selection(ids=(glob,)))
    assert (parsed == []) is skipped


@pytest.mark.parametrize(("glob", "skipped"), [("conv-2/q1", True), ("conv-1/q1", False), ("conv-?/*", False), ("fx-*", True)])
def test_an_id_filter_skips_parsing_imported_json_files_that_cannot_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          glob: str, skipped: bool) -> None:
    """A file an importer wrote in JSON syntax is ruled out by its top-level id line too (a LongMemEval S run --filter)."""
    import yaml

    from harness.importers.output import dump_yaml
    from harness.scenarios import loading

    path = write_conversation(tmp_path, probes=2)
    data = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")), default=lambda moment: moment.isoformat()))
    path.write_text(dump_yaml(data), encoding="utf-8")
    parsed: list[Path] = []
    real = loading.parse_document
    monkeypatch.setattr(loading, "parse_document", lambda path, text=None: parsed.append(path) or real(path, text))
    found = load_suite([tmp_path], loading.Selection(ids=(glob,)))
    assert (parsed == []) is skipped and bool(found.scenarios) is not skipped


def test_an_imported_json_file_with_a_second_one_space_id_line_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any doubt parses: an edited file whose lines no longer show one top-level id is read whole."""
    from harness.importers.output import HEADER
    from harness.scenarios import loading

    path = tmp_path / "odd.yaml"
    path.write_text(HEADER + '{\n "id": "conv-2",\n "title": "t",\n "x": {\n "id": "conv-1"\n }\n}\n', encoding="utf-8")
    parsed: list[Path] = []
    real = loading.parse_document
    monkeypatch.setattr(loading, "parse_document", lambda path, text=None: parsed.append(path) or real(path, text))
    load_suite([tmp_path], loading.Selection(ids=("conv-1/*",)))
    assert parsed == [path]


def test_a_quoted_or_flow_id_is_always_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    path = write_conversation(tmp_path, probes=2)
    path.write_text(path.read_text(encoding="utf-8").replace("id: conv-1\n", 'id: "conv-1"\n', 1), encoding="utf-8")
    assert [s.id for s in load_scenarios([tmp_path], ids=["conv-1/q2"])] == ["conv-1/q2"]


@pytest.mark.parametrize("how", ["category", "tag", "quoted id"])
def test_a_broken_story_left_out_by_category_or_tag_is_never_validated(tmp_path: Path, how: str) -> None:
    """Category and tag filters read the story's raw values (its id alone cannot rule it out) and skip its validation."""
    write_conversation(tmp_path, probes=2)
    broken = _broken_story(tmp_path)
    text = broken.read_text(encoding="utf-8").replace("category: project_fact", "category: temporal")
    broken.write_text(text.replace("id: fx-broken", 'id: "fx-broken"'), encoding="utf-8")
    if how == "category":
        loaded = load_scenarios([tmp_path], categories=["project_fact"])
    elif how == "tag":
        loaded = load_scenarios([tmp_path], tags=["conv"])
    else:
        loaded = load_scenarios([tmp_path], ids=["conv-1/*"])
    assert [s.id for s in loaded] == ["conv-1/q1", "conv-1/q2"]
