"""Schema 2 items that quote their source turn load as the items that write the text out; a bad quote is one problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.scenarios import ScenarioError, load_scenarios, scenario_hash
from harness.scenarios.quotes import resolve_quotes

ROOT = Path(__file__).resolve().parents[2]
HEADER = "# Written by `recall-eval import` in JSON syntax (valid YAML, and fast to write); see docs/importers.md.\n"
TURN = "I adopted a dog called Biscuit last week. He is a beagle."


def _conversation(*, quoted: bool, version: int | None = 2) -> dict:
    """A one-probe conversation whose first item is turn t1 whole and second a piece inside it, quoted or written out."""
    whole = {"quote": [0, len(TURN)]} if quoted else {"content": TURN}
    piece = {"quote": [10, 30]} if quoted else {"content": "a dog called Biscuit"}
    data = {
        "id": "conv-q", "title": "Quotes", "description": "Items quoting their turns.", "category": "project_fact",
        "sessions": [{"id": "s1", "started_at": "2026-01-05T10:00:00Z",
                      "turns": [{"role": "user", "content": TURN}, {"role": "assistant", "content": "A beagle!"}]}],
        "items": [
            {"id": "s1.t1", **whole, "kind": "context", "keys": ["dog", "biscuit"],
             "sources": [{"session": "s1", "turn": "t1"}], "role": "answer"},
            {"id": "s1.t1.2", **piece, "kind": "context", "keys": ["beagle"], "sources": [{"session": "s1", "turn": "t1"}]},
        ],
        "probes": [{"id": "q", "probe": {"started_at": "2026-02-01T09:00:00Z", "message": "What is my dog called?"},
                    "expect": {"must_contain_any": ["Biscuit"], "relevant_items": ["s1.t1"]}}],
    }
    if version is not None:
        data = {"schema_version": version, **data}
    return data


def _write(folder: Path, data: dict, *, json_syntax: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "conv-q.yaml"
    if json_syntax:
        path.write_text(HEADER + json.dumps(data, indent=1), encoding="utf-8")
    else:
        import yaml

        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("json_syntax", [True, False], ids=["json", "yaml"])
def test_a_quoting_item_loads_as_the_item_writing_its_text_out_and_hashes_alike(tmp_path: Path, json_syntax: bool) -> None:
    _write(tmp_path / "quoted", _conversation(quoted=True), json_syntax=json_syntax)
    _write(tmp_path / "written", _conversation(quoted=False, version=1), json_syntax=json_syntax)
    quoted, = load_scenarios([tmp_path / "quoted"])
    written, = load_scenarios([tmp_path / "written"])
    assert [item.content for item in quoted.items] == [TURN, "a dog called Biscuit"]
    assert quoted.items == written.items
    assert quoted.schema_version == 2 and written.schema_version == 1
    assert scenario_hash(quoted) == scenario_hash(written)


def test_a_whole_turn_quote_shares_the_turns_string() -> None:
    data = _conversation(quoted=True)
    assert resolve_quotes(data) == []
    assert data["items"][0]["content"] is data["sessions"][0]["turns"][0]["content"]
    assert "quote" not in data["items"][0]


def test_a_file_without_quotes_is_left_untouched() -> None:
    data = _conversation(quoted=False, version=1)
    before = json.dumps(data)
    assert resolve_quotes(data) == []
    assert json.dumps(data) == before


def test_a_quote_reads_a_turn_by_its_explicit_id() -> None:
    data = _conversation(quoted=True)
    data["sessions"][0]["turns"][0]["id"] = "opening"
    data["items"][1]["sources"] = [{"session": "s1", "turn": "opening"}]
    findings = resolve_quotes(data)
    assert [f.loc for f in findings] == [("items", 0, "sources", 0)]  # t1 is no longer a turn id
    assert data["items"][1]["content"] == "a dog called Biscuit"


@pytest.mark.parametrize(("edit", "field", "words"), [
    (lambda d: d["items"][0].update(quote=[0, len(TURN) + 1]), "items[0].quote", "0 <= start < end <= 57"),
    (lambda d: d["items"][0].update(quote=[5, 5]), "items[0].quote", "0 <= start < end"),
    (lambda d: d["items"][0].update(quote=[True, 4]), "items[0].quote", "whole-number"),
    (lambda d: d["items"][0].update(quote="t1"), "items[0].quote", "must be [start, end]"),
    (lambda d: d["items"][0].update(content=TURN), "items[0].quote", "not both"),
    (lambda d: d["items"][0].update(sources=[{"session": "s1", "turn": "t9"}]), "items[0].sources[0]", "'t9' of session 's1'"),
    (lambda d: d["items"][0].update(sources=[{"session": "s1", "turn": "t1"}, {"session": "s1", "turn": "t2"}]),
     "items[0].sources", "exactly one source"),
    (lambda d: d.update(schema_version=1), "schema_version", "set schema_version: 2"),
])
def test_a_quote_that_cannot_be_read_is_one_problem_naming_the_item_field_and_value(tmp_path: Path, edit, field: str, words: str) -> None:  # noqa: ANN001
    data = _conversation(quoted=True)
    edit(data)
    path = _write(tmp_path, data)
    with pytest.raises(ScenarioError) as caught:
        load_scenarios([tmp_path])
    problems = caught.value.problems
    assert len(problems) == 1, problems
    assert problems[0].file == str(path) and problems[0].field == field and problems[0].line is not None
    assert words in problems[0].message
    assert problems[0].value is not None


def test_validate_names_a_bad_quote_and_exits_1_as_for_any_invalid_file(tmp_path: Path) -> None:
    data = _conversation(quoted=True)
    data["items"][1]["quote"] = [10, 99]
    path = _write(tmp_path, data)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "validate", str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert f"{path}:" in output and "items[1].quote" in output and "[10, 99]" in output
    assert "Traceback" not in output
