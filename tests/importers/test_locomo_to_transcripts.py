"""``scripts/locomo_to_transcripts.py``: a LoCoMo-shaped file as logged sessions plus a store of its observations."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from harness.importers import import_transcripts
from harness.scenarios import load_scenarios, load_store, visible_counts, with_store
from tests.importers.importer_fixtures import write_locomo

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "locomo_to_transcripts.py"


def _converter():
    spec = importlib.util.spec_from_file_location("locomo_to_transcripts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_converter_prints_sessions_probes_and_items_and_the_import_agrees(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_locomo(tmp_path / "locomo.json", samples=2, sessions=6)
    assert _converter().main([str(source), str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "2 conversations, 12 sessions, 60 messages -> 10 probes" in printed
    suite = tmp_path / "suite"
    result = import_transcripts(tmp_path / "out" / "transcripts.jsonl", suite, echo=lambda line: None)
    store = load_store(tmp_path / "out" / "store.sqlite")
    assert result.probes == 10 and f"{len(store.items)} items" in printed


def test_a_converted_probe_never_finds_the_facts_of_its_own_or_a_later_session(tmp_path: Path) -> None:
    source = write_locomo(tmp_path / "locomo.json", samples=2, sessions=6)
    _converter().convert(source, tmp_path / "out")
    import_transcripts(tmp_path / "out" / "transcripts.jsonl", tmp_path / "suite", echo=lambda line: None)
    store = load_store(tmp_path / "out" / "store.sqlite")
    scenarios = with_store(load_scenarios([tmp_path / "suite"]), store)
    for scenario in scenarios:
        probe_session = scenario.id.rsplit("session_", 1)[1]
        for item in scenario.items:
            assert all(int(s.session.rsplit("session_", 1)[1]) < int(probe_session) for s in item.sources)
    counts = visible_counts(scenarios)
    assert any(visible < seeded for _, seeded, visible in counts)  # the other conversation's items: seeded, hidden
