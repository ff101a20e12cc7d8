"""Faults in the benchmark files the importers read: repaired where possible, dropped otherwise, always printed.

The data faults come from ``tests/fixtures/importers/*_mini.json``, written in
the published shapes with the faults found in the real files (malformed and
dangling evidence ids, several ids in one string, dates without sessions).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers import run_import
from harness.importers.faults import FaultLog
from harness.importers.locomo import parse_evidence
from tests.fault.conftest import RECALL_EVAL, cli_env
from tests.importers.importer_fixtures import LOCOMO, LONGMEMEVAL, imported, probe, read_yaml


def _record(out: Path) -> dict:
    return json.loads((out / "_suite.json").read_text(encoding="utf-8"))


def test_malformed_evidence_ids_are_repaired_and_printed(tmp_path: Path) -> None:
    """An evidence id with a stray colon (D:11:26) or leading zeros (D30:05) is rewritten to D11:26 / D30:5 and each repair is printed."""
    faults = FaultLog()
    assert parse_evidence(["D:11:26", "D30:05", "d1: 3"], "q", faults) == ["D11:26", "D30:5", "D1:3"]
    assert sorted(faults.repairs) == ["evidence id in a non-standard form, repaired",
                                      "evidence id with a stray colon (D:11:26), repaired",
                                      "evidence id with leading zeros (D30:05), repaired"]
    out, lines = imported("locomo", tmp_path)
    assert any("'D:1:3' -> 'D1:3'" in line for line in lines)
    assert read_yaml(out / "conv-1.yaml")["items"][1]["sources"] == [{"session": "session_1", "turn": "D1:3"}]


def test_several_evidence_ids_in_one_string_are_split(tmp_path: Path) -> None:
    """One evidence string holding several ids ("D8:6; D9:17", "D1:1 D1:2") becomes one source per id, printed as a repair."""
    out, lines = imported("locomo", tmp_path)
    assert any(line.strip().startswith("2  several evidence ids in one string, split") for line in lines)
    assert probe(read_yaml(out / "conv-1.yaml"), "q010")["expect"]["relevant_items"] == ["obs-1-1", "obs-1-3"]


def test_evidence_pointing_at_no_turn_is_dropped_and_an_unsupported_fact_with_it(tmp_path: Path) -> None:
    """An evidence id naming no turn (D9:9) is dropped; a fact left with no evidence is dropped, not given invented provenance."""
    out, _ = imported("locomo", tmp_path)
    drops = _record(out)["drops"]
    assert drops["evidence id pointing at no turn"]["count"] == 2
    assert drops["observation fact with no evidence turn"]["count"] == 2
    contents = [item["content"] for item in read_yaml(out / "conv-1.yaml")["items"]]
    assert not any("points nowhere" in c or "no evidence id" in c for c in contents)
    # the question citing one good and one dangling id keeps the good one
    assert probe(read_yaml(out / "conv-1.yaml"), "q006")["expect"]["relevant_items"] == ["obs-2-1"]


def test_dates_without_sessions_are_dropped_in_both_benchmarks(tmp_path: Path) -> None:
    """A session date with no session (LoCoMo's session_3_date_time, LongMemEval's extra haystack_dates) is dropped and printed."""
    locomo, _ = imported("locomo", tmp_path)
    assert _record(locomo)["drops"]["date without a session"]["count"] == 2
    assert [s["id"] for s in read_yaml(locomo / "conv-1.yaml")["sessions"]] == ["session_1", "session_2", "session_4"]
    extra = json.loads(LONGMEMEVAL.read_text())[:1]
    extra[0]["haystack_dates"].append("2023/05/26 (Fri) 09:00")
    source = tmp_path / "extra.json"
    source.write_text(json.dumps(extra))
    longmemeval, _ = imported("longmemeval", tmp_path, source)
    assert _record(longmemeval)["drops"]["date without a session"]["examples"] == ["e47becba: '2023/05/26 (Fri) 09:00'"]


def test_a_session_without_a_usable_date_is_placed_after_the_previous_one_or_dropped(tmp_path: Path) -> None:
    """LoCoMo's undated session follows the previous one by an hour (a repair); LongMemEval's undated or post-question session is dropped."""
    locomo, _ = imported("locomo", tmp_path)
    assert read_yaml(locomo / "conv-1.yaml")["sessions"][2]["started_at"] == "2023-06-27T11:37:00Z"
    longmemeval, _ = imported("longmemeval", tmp_path)
    drops = _record(longmemeval)["drops"]
    assert drops["session without a usable date"]["count"] == 1
    assert drops["session dated at or after the question"]["count"] == 1


def test_empty_turns_foreign_roles_and_unknown_speakers_are_handled(tmp_path: Path) -> None:
    """Empty turns and system turns are dropped, a turn by a third speaker keeps its name with a role by alternation, a turn without dia_id is numbered."""
    locomo, _ = imported("locomo", tmp_path)
    turns = read_yaml(locomo / "conv-1.yaml")["sessions"][1]["turns"]
    assert turns[2] == {"id": "D2:3", "role": "user", "speaker": "Narrator", "content": "They both laughed."}
    assert turns[3]["id"] == "D2:4"
    longmemeval, _ = imported("longmemeval", tmp_path)
    drops = _record(longmemeval)["drops"]
    assert drops["turn with a role other than user or assistant"]["count"] == 1
    assert drops["turn without content"]["count"] == 1


def test_unusable_questions_and_samples_are_dropped_with_a_reason(tmp_path: Path) -> None:
    """A question with an unknown category, no answer or no text, a sample that is not an object or has no session: dropped, each counted."""
    out, _ = imported("locomo", tmp_path)
    drops = _record(out)["drops"]
    for kind in ("question with an unknown category", "question without an answer", "question without text",
                 "sample without a conversation object", "sample without a usable session"):
        assert drops[kind]["count"] == 1, kind
    assert [p["id"] for p in read_yaml(out / "conv-1.yaml")["probes"]] == ["q001", "q002", "q003", "q004", "q005",
                                                                           "q006", "q009", "q010"]


@pytest.mark.parametrize(("text", "message"), [
    ('[{"sample_id": "a"}, {"sample_id": "b", ', "the file ends inside element 1: is it truncated?"),
    ('[{"sample_id": "a"}, ', "the file ends inside the array after element 1"),
    ('{"sample_id": "a"}', "expected a JSON array"),
    ('[{"a": 1} {"b": 2}]', "expected ',' or ']' after element 0"),
    ('[{"a": 1}, {"b": nope}]', "element 1 is not valid JSON at character"),
    ('[{"a": 1}] trailing', "extra data after the array"),
    ('', "found an empty file"),
])
def test_a_damaged_json_file_is_one_error_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          text: str, message: str) -> None:
    """A truncated, non-array, garbled or empty file stops the import with one line naming the element and position, exit 2."""
    source = tmp_path / "locomo10.json"
    source.write_text(text)
    assert main(["import", "locomo", str(source), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_truncated_file_leaves_a_suite_marked_incomplete(tmp_path: Path) -> None:
    """An import cut short by a truncated file leaves _suite.json saying complete: false, so nobody mistakes it for the whole set."""
    text = LOCOMO.read_text()
    source = tmp_path / "locomo10.json"
    source.write_text(text[: text.index('"sample_id": "conv-2"')])
    out = tmp_path / "out"
    assert main(["import", "locomo", str(source), str(out)]) == 2
    assert _record(out)["complete"] is False and "Incomplete" in (out / "SUITE.md").read_text()


def test_a_file_that_is_not_utf8_is_one_error_line(tmp_path: Path) -> None:
    """A binary or Latin-1 file is refused with one line saying it is not UTF-8 text, not a traceback."""
    source = tmp_path / "longmemeval_s.json"
    source.write_bytes(b'[{"question": "caf\xe9"}]')
    result = subprocess.run([str(RECALL_EVAL), "import", "longmemeval", str(source), str(tmp_path / "out")],
                            capture_output=True, text=True, env=cli_env(), timeout=120)
    assert result.returncode == 2 and "not UTF-8 text" in result.stderr and "Traceback" not in result.stderr


def test_the_other_benchmarks_file_is_refused(tmp_path: Path) -> None:
    """A LoCoMo file given to the LongMemEval importer yields no usable question: refused with the drops listed, exit 2."""
    with pytest.raises(Exception, match="no usable longmemeval element"):
        run_import("longmemeval", LOCOMO, tmp_path / "out", echo=lambda line: None)


def test_text_the_memory_store_refuses_makes_no_item(tmp_path: Path) -> None:
    """A turn or fact that is only zero-width characters is kept as conversation text where allowed but makes no item the store would refuse."""
    from harness.importers.locomo import convert_sample
    from harness.importers.longmemeval import convert_question

    faults = FaultLog()
    question = json.loads(LONGMEMEVAL.read_text())[0]
    question["haystack_sessions"][0][0]["content"] = "\u200b\u200b"
    conv = convert_question(question, 0, faults, set())
    assert "sharegpt_yywfJrU_0.t1" not in [i["id"] for i in conv["items"]]
    assert faults.drops == {"turn the memory store refuses as item content (no item)": 1}
    sample = json.loads(LOCOMO.read_text())[1]
    sample["observation"]["session_1_observation"]["Lena"][0][0] = "\u200b"
    faults = FaultLog()
    assert convert_sample(sample, 0, faults, set())["items"] == []
    assert faults.drops["observation fact without text"] == 1
