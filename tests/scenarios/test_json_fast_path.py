"""The JSON fast path of scenario loading: JSON-syntax files (what the importers write) load as before, only faster.

Each test compares the fast path with the YAML path it replaces (forced by
making the JSON attempt give up), so "as before" is checked, not restated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.scenarios import documents, json_fast_path, load_suite
from harness.scenarios.documents import parse_document
from harness.scenarios.limits import MAX_DEPTH
from tests.importers.importer_fixtures import imported

HEADER = "# Written by `recall-eval import` in JSON syntax (valid YAML, and fast to write); see docs/importers.md.\n"


def _yaml_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def give_up(text: str) -> Any:
        raise documents.NotPlainJson("forced")

    monkeypatch.setattr(documents, "parse_json", give_up)


def _conversation(tmp_path: Path, probes: int = 8) -> tuple[Path, dict[str, Any]]:
    """A suite folder with one imported LongMemEval conversation grown to ``probes`` probes; returns the folder and its data."""
    out, _ = imported("longmemeval", tmp_path)
    first = out / "0a995998.yaml"
    data = yaml.safe_load(first.read_text(encoding="utf-8"))
    for other in out.glob("[!_]*.yaml"):
        if other != first:
            other.unlink()
    template = data["probes"][0]
    data["probes"] = [{**template, "id": f"q{n + 1}"} for n in range(probes)]
    return out, data


def _write(path: Path, data: dict[str, Any]) -> None:
    """JSON syntax the way the importers write it: a comment line, then one top-level key or probe per line."""
    lines = [HEADER, "{\n"]
    keys = list(data)
    for number, key in enumerate(keys):
        comma = "," if number < len(keys) - 1 else ""
        if key == "probes":
            lines.append(' "probes": [\n')
            lines.extend("  " + json.dumps(p) + ("," if i < len(data["probes"]) - 1 else "") + "\n" for i, p in enumerate(data["probes"]))
            lines.append(f" ]{comma}\n")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(data[key])}{comma}\n")
    lines.append("}\n")
    path.write_text("".join(lines), encoding="utf-8")


def _problems(folder: Path) -> list[str]:
    return [str(p) for p in load_suite([folder]).problems]


def test_a_json_syntax_conversation_with_a_schema_error_in_probe_7_gives_the_same_message_and_line_as_the_yaml_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, data = _conversation(tmp_path)
    data["probes"][6]["expect"] = {**data["probes"][6]["expect"], "abstain": "perhaps"}
    path = out / "0a995998.yaml"
    _write(path, data)
    fast = _problems(out)
    probe_7_line = next(n for n, line in enumerate(path.read_text().splitlines(), 1) if '"id": "q7"' in line)
    assert any(f"0a995998.yaml:{probe_7_line}:" in p and "probes[6].expect.abstain" in p for p in fast), fast
    _yaml_only(monkeypatch)
    assert _problems(out) == fast


def test_a_clean_json_syntax_suite_loads_the_same_scenarios_without_composing_a_node_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, data = _conversation(tmp_path)
    _write(out / "0a995998.yaml", data)
    composed: list[str] = []
    real = documents._compose
    monkeypatch.setattr(documents, "_compose", lambda text: composed.append(text) or real(text))
    fast = load_suite([out])
    assert [s.id for s in fast.scenarios] == [f"0a995998/q{n}" for n in range(1, 9)]
    assert [p for p in fast.problems if p.file.endswith("0a995998.yaml")] == []
    assert composed == []
    _yaml_only(monkeypatch)
    slow = load_suite([out])
    assert [s.model_dump() for s in slow.scenarios] == [s.model_dump() for s in fast.scenarios]
    assert slow.problems == fast.problems


def test_duplicate_probe_and_scenario_ids_in_json_syntax_files_name_both_lines_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, data = _conversation(tmp_path)
    data["probes"][5]["id"] = "q2"
    _write(out / "0a995998.yaml", data)
    _write(out / "copy.yaml", {**data, "probes": data["probes"][:1]})  # same conversation id: 0a995998/q1 twice
    fast = _problems(out)
    assert any("duplicate probe id" in p and "0a995998.yaml:" in p for p in fast), fast
    assert any("duplicate scenario id" in p and ".yaml:" in p.split("uses it too")[0].split("id: ")[-1] for p in fast), fast
    _yaml_only(monkeypatch)
    assert _problems(out) == fast


def test_a_duplicate_key_in_a_json_syntax_file_is_refused_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, data = _conversation(tmp_path)
    path = out / "0a995998.yaml"
    _write(path, data)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(3, ' "title": "again",\n')
    path.write_text("".join(lines))
    fast = _problems(out)
    assert any("0a995998.yaml:6: title: duplicate key" in p for p in fast), fast  # the later of the two
    _yaml_only(monkeypatch)
    assert _problems(out) == fast


def test_json_syntax_nested_deeper_than_max_depth_is_refused_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(HEADER + '{"id": "deep",\n "x": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}\n")
    fast = _problems(tmp_path)
    assert any("deep.yaml:3:" in p and f"nested more than {MAX_DEPTH} levels" in p for p in fast), fast
    _yaml_only(monkeypatch)
    assert _problems(tmp_path) == fast


def test_json_syntax_nested_past_the_recursion_limit_is_refused_as_before_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deeper.yaml"
    path.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    problems = _problems(tmp_path)
    assert any(p.startswith(f"{path}:1: ") for p in problems), problems
    _yaml_only(monkeypatch)
    assert _problems(tmp_path) == problems


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1e5, "b": 1.0e5, "c": 1.5e+5, "d": -2.5E-3, "e": 0.5, "f": -0, "g": 12345678901234567890}',
        '{"a": NaN}',
        '{"a": Infinity, "b": -Infinity}',
        '{"a": "tab\\there \\u00e9 \\/ \\u00e9", "b": [true, false, null, {}], "c": "yes", "d": "2023-01-01"}',
        '{"a": "raw \x7f delete"}',
        '{"a": "raw \x85 next line \xa0 \u2028 separators \u2029"}',
        '{"a": "\\ud83d\\ude00 a surrogate pair YAML refuses"}',
        "# a comment\n\n  # another\n{\"a\": [1, 2.0]}",
        '\ufeff{"a": 1}',
        '{"a": {"b": 1, "b": 2}}',
        '{"a": "unterminated}',
        '[1, 2]',
        "{a: 1}",
    ],
)
def test_json_syntax_reads_exactly_what_the_yaml_path_reads(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text, encoding="utf-8")
    fast, fast_problems = parse_document(path)
    _yaml_only(monkeypatch)
    slow, slow_problems = parse_document(path)
    assert (fast is None) == (slow is None)
    assert fast_problems == slow_problems
    if fast is not None and slow is not None:
        assert repr(fast.data) == repr(slow.data)  # repr: 1e5 the string, not the float; NaN compares unequal


_KEYS = st.text(alphabet="ab\u00e9\u4e2d \"\\/\t", max_size=4)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.sampled_from([0.5, -2.25, 10.0]),
                     st.text(alphabet="xy\u00e9\U0001f600 \"\\\n\t:#{}[],&*", max_size=6))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
                     max_leaves=25)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``value``, and beside each container a few that leave it (a missing key, an index past the end)."""
    found = [prefix]
    if isinstance(value, dict):
        found += [(*prefix, "missing"), (*prefix, 0)]
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        found += [(*prefix, len(value)), (*prefix, "0")]
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    else:
        found.append((*prefix, "below a scalar"))
    return found


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(_KEYS, _JSON, max_size=5),
    indent=st.sampled_from([None, 0, 1, 2, "\t"]),
    separators=st.sampled_from([(", ", ": "), (",", ":"), (" ,  ", " :  "), (",\n", ":\n ")]),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    header=st.sampled_from(["", "# a comment\n", "\n# one\n  # two\n\n", "  "]),
)
def test_lines_read_from_json_text_are_the_lines_of_the_yaml_node_tree(
    data: dict[str, Any], indent: Any, separators: tuple[str, str], newline: str, header: str
) -> None:
    """Every path of a JSON-syntax file (and paths that leave it) gets the line, and found-or-not, the YAML tree gives."""
    text = header + json.dumps(data, indent=indent, separators=separators, ensure_ascii=False).replace("\n", newline) + "\n"
    try:
        documents.parse_json(text)
    except documents.NotPlainJson:
        assume(False)  # the YAML path reads this one: its lines come from the tree anyway
    lines, tree = json_fast_path._JsonLines(text), documents._compose(text)
    paths = _paths(data)
    for where in [()] + [p for p in paths if len(p) in (1, 2)][:6]:
        node = documents._node_at(tree, where)
        assert lines.start_line(where) == (node.start_mark.line + 1 if node is not None else None), where
        for loc in paths:
            assert lines.line_of(where, loc) == documents._line_of(node, loc), (where, loc)


def test_warnings_of_one_line_json_files_are_placed_as_the_yaml_path_places_them_without_composing_a_node_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.score.scoring_factories import make_scenario

    for index in range(3):  # as plan_bench.py writes them: each with a workspace item citing another workspace's session
        data = make_scenario(f"one-line-{index}").model_dump(mode="json", exclude_none=True)
        (tmp_path / f"one-line-{index}.yaml").write_text(json.dumps(data), encoding="utf-8")
    composed: list[str] = []
    real = documents._compose
    monkeypatch.setattr(documents, "_compose", lambda text: composed.append(text) or real(text))
    fast = _problems(tmp_path)
    assert len(fast) == 3 and all(":1: items[2].sources[0].session: warning:" in p for p in fast), fast
    assert composed == []
    _yaml_only(monkeypatch)
    assert _problems(tmp_path) == fast


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_json_syntax_at_the_depth_limit_is_read_or_refused_exactly_as_the_yaml_path_does(
    levels: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "edge.yaml"
    path.write_text('{"x": ' + "[" * (levels - 1) + "]" * (levels - 1) + ', "y": {"z": []}}\n')  # levels counts the outer {}
    fast, fast_problems = parse_document(path)
    _yaml_only(monkeypatch)
    slow, slow_problems = parse_document(path)
    assert fast_problems == slow_problems and (fast is None) == (slow is None) == (levels > MAX_DEPTH)
