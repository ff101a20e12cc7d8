"""``scripts/locomo_to_transcripts.py``: a LoCoMo-shaped file as logged sessions plus a store of its observations."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from harness.importers import import_transcripts
from harness.scenarios import load_scenarios, load_store, visible_counts, with_store
from harness.scenarios.field_types import to_millis
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


def test_every_locomo_turn_reaches_the_probes_to_the_letter_speaker_caption_order_and_session(tmp_path: Path) -> None:
    """Sessions, speakers, turn order and photo captions kept exactly; each probe is one turn, never a fused one."""
    sessions = {
        1: [("Ana", "I adopted a cat named Miso.", None), ("Ben", "Lovely!", "a grey cat on a sofa"),
            ("Ana", "She sleeps all day.", None)],
        2: [("Ben", "How is Miso?", None), ("Ana", "Miso learned to open doors.", None), ("Ben", "Ha, clever.", None)],
        3: [("Ana", "Guess what Miso did today?", None), ("Ben", "Opened the fridge?", None)],
    }
    dates = {1: "1:00 pm on 8 May, 2023", 2: "9:30 am on 20 May, 2023", 3: "6:15 pm on 2 June, 2023"}
    conversation: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, turns in sessions.items():
        conversation[f"session_{n}_date_time"] = dates[n]
        conversation[f"session_{n}"] = [{"speaker": who, "dia_id": f"D{n}:{i}", "text": text,
                                         **({"img_url": ["x.jpg"], "blip_caption": caption} if caption else {})}
                                        for i, (who, text, caption) in enumerate(turns, start=1)]
    source = tmp_path / "locomo.json"
    source.write_text(json.dumps([{"sample_id": "conv-7", "conversation": conversation, "observation": {},
                                   "session_summary": {}, "event_summary": {},
                                   "qa": [{"question": "What is the cat called?", "answer": "Miso", "evidence": ["D1:1"],
                                           "category": 4}]}]), encoding="utf-8")
    _converter().convert(source, tmp_path / "out")
    import_transcripts(tmp_path / "out" / "transcripts.jsonl", tmp_path / "suite", echo=lambda line: None)
    probes = {s.id: s for s in load_scenarios([tmp_path / "suite"])}
    assert sorted(probes) == ["conv-7.conv-7-session_2", "conv-7.conv-7-session_3"]

    def said(who: str, text: str, caption: str | None) -> tuple[str, str]:
        shown = f"{who}: {text}" + (f" [shares a photo: {caption}]" if caption else "")
        return ("user" if who == "Ana" else "assistant", shown)

    last = probes["conv-7.conv-7-session_3"]
    assert [s.id for s in last.sessions] == ["conv-7-session_1", "conv-7-session_2"]
    for session, n in zip(last.sessions, (1, 2), strict=True):
        assert [(t.role, t.content) for t in session.turns] == [said(*turn) for turn in sessions[n]]
    assert [s.started_at for s in last.sessions] == [to_millis("2023-05-08T13:00:00Z"), to_millis("2023-05-20T09:30:00Z")]
    assert last.probe.started_at == to_millis("2023-06-02T18:15:00Z")
    assert last.probe.message == "Ana: Guess what Miso did today?" and last.probe.history == []
    assert last.expect.logged_reply == "Ben: Opened the fridge?"
    second = probes["conv-7.conv-7-session_2"]  # Ben speaks first: his turn is the history, Ana's turn the probe
    assert [(t.role, t.content) for t in second.probe.history] == [("assistant", "Ben: How is Miso?")]
    assert second.probe.message == "Ana: Miso learned to open doors." and second.expect.logged_reply == "Ben: Ha, clever."
    assert [s.id for s in second.sessions] == ["conv-7-session_1"]
