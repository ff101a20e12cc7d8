"""The committed JSON Schema is current, and editors using it accept every valid scenario file."""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.scenarios.schema import cli_schema, scenario_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "scenarios" / "scenario.schema.json"
FIXTURES = ROOT / "tests" / "fixtures" / "scenarios"


def _as_json(value: Any) -> Any:
    """YAML data as an editor's JSON view of it: timestamps are strings."""
    if isinstance(value, dict):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def _yaml_files() -> list[Path]:
    shipped = sorted((ROOT / "scenarios").rglob("*.yaml"))
    fixtures = [*(FIXTURES / "good").glob("*.yaml"), *(FIXTURES / "defaults").rglob("*.yaml")]
    return shipped + fixtures


def test_committed_schema_is_up_to_date() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == schema_text(), "run: recall-eval schema --out scenarios/scenario.schema.json"


def test_schema_has_id_title_and_accepts_the_schema_key() -> None:
    schema = scenario_schema()
    assert list(schema)[:4] == ["$schema", "$id", "title", "description"]
    assert "$schema" in schema["properties"]


def test_blocks_defaults_may_supply_have_no_required_fields_but_list_entries_keep_theirs() -> None:
    schema = scenario_schema()
    assert "required" not in schema
    for name in ("Probe", "Policy", "Expect"):
        assert "required" not in schema["$defs"][name], name
    assert set(schema["$defs"]["ItemSpec"]["required"]) >= {"id", "kind", "keys", "sources"}
    assert schema["$defs"]["ItemSpec"]["oneOf"] == [{"required": ["content"]}, {"required": ["quote"]}]
    assert schema["$defs"]["Turn"]["required"] == ["role", "content"]


@functools.cache
def _editor() -> Any:
    """One validator of the generated schema for every file (made afresh per file: 20 ms x 860 files)."""
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(scenario_schema())


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_editor_schema_accepts_every_valid_file(path: Path) -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml reads the same data, ten times faster
    data = _as_json(yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {})  # noqa: S506 - a safe loader
    _editor().validate(data)


def test_editor_schema_still_flags_a_wrong_enum() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = _as_json(yaml.safe_load((FIXTURES / "broken" / "field_type.yaml").read_text(encoding="utf-8")))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(scenario_schema()).validate(data)


def test_schema_command_prints_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_schema(argparse.Namespace(out=None)) == 0
    assert json.loads(capsys.readouterr().out)["$id"] == scenario_schema()["$id"]
    target = tmp_path / "schema.json"
    assert cli_schema(argparse.Namespace(out=str(target))) == 0
    assert target.read_text(encoding="utf-8") == schema_text()


def test_schema_command_unwritable_target_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_schema(argparse.Namespace(out=str(tmp_path / "missing" / "schema.json"))) == 2
    assert "cannot write the schema" in capsys.readouterr().err


def test_editor_schema_accepts_a_conversation_file_and_flags_a_probe_without_id() -> None:
    from tests.scenarios.conversation_factories import conversation_text

    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(scenario_schema())
    data = _as_json(yaml.safe_load(conversation_text(3)))
    validator.validate(data)
    del data["probes"][1]["id"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)
