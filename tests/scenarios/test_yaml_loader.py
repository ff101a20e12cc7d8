"""The scenario YAML loader: PyYAML's safe values, except that an impossible date stays the text it was written as."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.scenarios.documents import parse_document
from harness.scenarios.yaml_loader import Loader


def _load(text: str) -> object:
    loader = Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@pytest.mark.parametrize("text", ["2026-02-30T09:00:00Z", "2026-02-30", "2026-13-01T09:00:00Z", "2026-04-31 10:00:00",
                                  "2026-01-01T25:00:00Z", "2026-01-01T10:61:00Z"])
def test_an_impossible_unquoted_date_loads_as_the_text_written(text: str) -> None:
    assert _load(f"started_at: {text}\n") == {"started_at": text}


def test_a_real_unquoted_date_still_loads_as_pyyaml_loads_it() -> None:
    text = "a: 2026-03-02T10:00:00Z\nb: 2026-03-02\nc: 2024-02-29 23:59:59.5 +01:00\n"
    assert _load(text) == yaml.safe_load(text)
    assert _load(text)["a"] == datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC)


def test_the_loader_leaves_pyyamls_own_loaders_as_they_were() -> None:
    with pytest.raises(ValueError, match="day is out of range"):
        yaml.load("a: 2026-02-30T09:00:00Z\n", Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def test_parse_document_gives_data_not_a_traceback_for_an_impossible_date(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("id: x\nsessions:\n  - started_at: 2026-02-30T09:00:00Z\n", encoding="utf-8")
    document, problems = parse_document(path)
    assert problems == [] and document is not None
    assert document.data["sessions"][0]["started_at"] == "2026-02-30T09:00:00Z"


_STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


def _suite(tmp_path: Path, started_at: str) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir(parents=True)
    (suite / "_defaults.yaml").write_text((_STARTER / "_defaults.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    text = (_STARTER / "upd-03-api-rate-limit.yaml").read_text(encoding="utf-8")
    assert "started_at: 2026-01-20T11:00:00Z" in text
    (suite / "upd-03.yaml").write_text(text.replace("started_at: 2026-01-20T11:00:00Z", f"started_at: {started_at}", 1),
                                       encoding="utf-8")
    return suite


@pytest.mark.parametrize("command", [["validate", "{suite}"], ["list", "{suite}"],
                                     ["run", "--scenarios", "{suite}", "--out", "{out}", "--no-progress"]],
                         ids=lambda argv: argv[0])
def test_an_unquoted_impossible_date_gets_the_quoted_forms_file_line_error(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Feb 30 unquoted was a ValueError traceback (exit 1) in validate, list and run; now it reads as the quoted form."""
    outcomes = []
    for name, written in (("plain", "2026-02-30T09:00:00Z"), ("quoted", '"2026-02-30T09:00:00Z"')):
        suite = _suite(tmp_path / name, written)
        code = main([a.format(suite=suite, out=tmp_path / name / "out") for a in command])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and "ValueError" not in captured.err
        assert "upd-03.yaml:10: sessions[0].started_at: not a time" in captured.out + captured.err
        outcomes.append((code, (captured.out + captured.err).replace(str(suite), "SUITE")))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == (2 if command[0] == "run" else 1)
