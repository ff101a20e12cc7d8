"""The MCP server config: validation naming the field, templates, the config hash and the committed JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.memory_systems.mcp.config import (
    CONFIG_PATH_ENV,
    McpConfigError,
    expand_env,
    fill,
    find_config,
    load_config,
    schema_text,
)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "mcp"
GOOD = {
    "name": "notes", "description": "a test server",
    "server": {"command": "python", "args": ["server.py"], "env": {"STORE": "{data_dir}/notes.json"}},
    "write": {"unit": "item", "tool": "save_note", "arguments": {"text": "{content}", "workspace": "{workspace}"}},
    "forget": {"tool": "delete_note", "arguments": {"text": "{content}", "workspace": "{workspace}"}},
    "probe": {"tools": ["search_notes"], "fixed_arguments": {"workspace": "{workspace}"}},
}


def write(tmp_path: Path, data: dict, name: str = "notes") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_valid_config_loads_and_its_hash_ignores_key_order_and_comments(tmp_path: Path) -> None:
    first = load_config(write(tmp_path, GOOD))
    reordered = tmp_path / "other" / "notes.yaml"
    reordered.parent.mkdir()
    reordered.write_text("# a comment\n" + yaml.safe_dump(dict(reversed(list(GOOD.items())))), encoding="utf-8")
    assert load_config(reordered).digest() == first.digest()
    changed = load_config(write(tmp_path / "other", {**GOOD, "probe": {"tools": ["search_notes", "delete_note"]}}))
    assert changed.digest() != first.digest()


@pytest.mark.parametrize(("change", "expected"), [
    ({"write": {**GOOD["write"], "arguments": {"text": "{contents}"}}}, "write.arguments.text: unknown placeholder {contents}"),
    ({"server": {"command": "x", "url": "http://127.0.0.1:1/mcp"}}, "exactly one of command (stdio) or url"),
    ({"probe": {}}, "offer the product's tools"),
    ({"write": {"unit": "session", "tool": "save_note", "arguments": {"text": "{transcript}"}}}, "forget applies to unit item"),
    ({"isolation": "none"}, "isolation"),
    ({"probe": {"tools": ["x"], "fixed_arguments": {"project": "{query}"}}}, "probe.fixed_arguments.project: unknown placeholder {query}"),
])
def test_a_bad_config_is_refused_naming_the_field(tmp_path: Path, change: dict, expected: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        load_config(write(tmp_path, {**GOOD, **change}))
    assert expected in str(caught.value) and "notes.yaml" in str(caught.value)


def test_a_name_that_differs_from_the_file_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="name the file notes.yaml"):
        load_config(write(tmp_path, GOOD, name="other"))


def test_a_file_that_is_not_a_mapping_or_not_yaml_gets_one_message(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("- a list\n", encoding="utf-8")
    with pytest.raises(McpConfigError, match="is a mapping"):
        load_config(tmp_path / "notes.yaml")
    (tmp_path / "notes.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(McpConfigError, match="not valid YAML"):
        load_config(tmp_path / "notes.yaml")


def test_a_whole_placeholder_keeps_its_type_and_a_partial_one_is_text() -> None:
    template = {"tags": "{keys}", "title": "{key} ({item_id})", "list": ["{content}"], "n": 3, "other": "{unknown}"}
    values = {"keys": ["a", "b"], "key": "a", "item_id": "it-1", "content": "text"}
    assert fill(template, values) == {"tags": ["a", "b"], "title": "a (it-1)", "list": ["text"], "n": 3, "other": "{unknown}"}


def test_environment_variables_expand_and_an_unset_one_names_the_field() -> None:
    assert expand_env({"args": ["${PREFIX}/x.js"]}, "server", {"PREFIX": "/opt"}) == {"args": ["/opt/x.js"]}
    with pytest.raises(McpConfigError, match=r"server.args\[0\]: environment variable PREFIX is not set"):
        expand_env({"args": ["${PREFIX}/x.js"]}, "server", {})


def test_configs_are_found_by_name_in_the_search_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, GOOD)
    monkeypatch.setenv(CONFIG_PATH_ENV, str(tmp_path))
    assert find_config("notes") == tmp_path / "notes.yaml"
    assert find_config("server-memory") == EXAMPLES / "server-memory.yaml"  # the shipped examples come last
    assert find_config("../notes") is None


def test_committed_schema_is_up_to_date() -> None:
    assert (EXAMPLES / "mcp-server.schema.json").read_text(encoding="utf-8") == schema_text(), (
        "regenerate: python -c \"from harness.memory_systems.mcp.config import schema_text; "
        "open('examples/mcp/mcp-server.schema.json','w').write(schema_text())\"")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_is_valid_and_matches_the_schema(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_config(path)
    schema = json.loads((EXAMPLES / "mcp-server.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


def test_an_unknown_or_broken_config_is_an_unknown_arm_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.memory_systems import UnknownArmError, resolve_arm

    monkeypatch.setenv(CONFIG_PATH_ENV, str(tmp_path))
    with pytest.raises(UnknownArmError, match="no MCP server config nope.yaml"):
        resolve_arm("mcp:nope")
    write(tmp_path, {**GOOD, "probe": {}})
    with pytest.raises(UnknownArmError, match=r"notes.yaml: probe: offer the product's tools"):
        resolve_arm("mcp:notes")
    write(tmp_path, GOOD)
    arm = resolve_arm("notes")  # the config's bare name, when no other arm has it
    assert arm.name == "notes" and arm.write_mode == "agent"


def test_a_config_whose_environment_variable_is_unset_stops_run_with_exit_2(capsys: pytest.CaptureFixture[str],
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    from harness.cli import main

    monkeypatch.delenv("RECALL_EVAL_NPM_PREFIX", raising=False)
    code = main(["run", "--arms", "mcp:server-memory", "--filter", "fact-01*", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "environment variable RECALL_EVAL_NPM_PREFIX is not set" in err and "Traceback" not in err
