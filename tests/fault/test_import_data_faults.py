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
    assert drops["session dated on a day after the question"]["count"] == 1


def test_empty_turns_foreign_roles_and_unknown_speakers_are_handled(tmp_path: Path) -> None:
    """Empty turns and system turns are dropped, a turn by a third speaker keeps its name with a role by
    alternation, a turn without dia_id is numbered."""
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


# --- golds and evidence (issue 22) --------------------------------------------------------------------------------

def _locomo(tmp_path: Path, qa: list[dict], **kwargs: object) -> tuple[dict, dict, list[str]]:
    from tests.importers.importer_fixtures import locomo_sample, write_source

    source = write_source(tmp_path, "locomo10.json", [locomo_sample(qa, **kwargs)])
    out, lines = imported("locomo", tmp_path, source)
    return read_yaml(out / "conv-9.yaml"), _record(out), lines


def _longmemeval(tmp_path: Path, *questions: dict) -> tuple[Path, dict, list[str]]:
    from tests.importers.importer_fixtures import write_source

    source = write_source(tmp_path, "longmemeval_s.json", list(questions))
    out, lines = imported("longmemeval", tmp_path, source)
    return out, _record(out), lines


def test_a_date_inside_a_phrase_is_not_split_on_its_comma(tmp_path: Path) -> None:
    """LoCoMo's "on 9 April, 2023" and "Thursday before December 17, 2023" are one date each, matched in any usual spelling."""
    from tests.importers.importer_fixtures import passes

    conv, _, _ = _locomo(tmp_path, [
        {"question": "When did Ana visit Sweden?", "answer": "on 9 April, 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "When did the team win?", "answer": "Thursday before December 17, 2023", "evidence": ["D2:1"],
         "category": 2},
        {"question": "When did Ana visit Sweden?", "answer": "on 9 April, 2023", "evidence": ["D1:1"], "category": 1},
        {"question": "Where did they travel?", "answer": "Sweden, Canada", "evidence": ["D1:1"], "category": 1},
    ])
    on_date, before, multi_hop, countries = (probe(conv, f"q00{i}")["expect"] for i in range(1, 5))
    for expect in (on_date, multi_hop):
        assert "must_contain_groups" not in expect
        for answer in ("April 9, 2023", "On 9 April 2023.", "2023-04-09", "9 April, 2023"):
            assert passes(answer, expect), answer
        assert not passes("April 10, 2023", expect) and not passes("2023", expect)
    for answer in ("The Thursday before December 17, 2023", "Thursday before 17 December 2023", "December 14, 2023"):
        assert passes(answer, before), answer
    assert not passes("December 17, 2023", before) and not passes("Thursday", before)
    assert countries["must_contain_groups"] == [["Sweden"], ["Canada"]]  # a real list is still split


def test_a_number_with_thousands_separators_is_one_number(tmp_path: Path) -> None:
    """"$25,000" is one gold (not "$25" and "000"), also written without the separator; a list of such numbers splits between them."""
    from tests.importers.importer_fixtures import longmemeval_question, passes

    out, _, _ = _longmemeval(tmp_path, longmemeval_question("q-money", answer="$25,000"),
                             longmemeval_question("q-two", answer="$1,200, $25,000"))
    money = read_yaml(out / "q-money.yaml")["probes"][0]["expect"]
    assert money["must_contain_any"] == ["$25,000", "$25000"]
    assert passes("You paid $25,000.", money) and passes("About $25000", money)
    assert not passes("You paid $25.", money) and not passes("$125,000", money)
    two = read_yaml(out / "q-two.yaml")["probes"][0]["expect"]
    assert two["must_contain_groups"] == [["$1,200", "$1200"], ["$25,000", "$25000"]]


def test_glued_digits_are_repaired_and_glued_words_are_reported(tmp_path: Path) -> None:
    """"15April, 2022" becomes "15 April, 2022" (a logged repair); "watchingmovies" and "Yesteammates" are kept and reported with examples."""
    from tests.importers.importer_fixtures import passes

    conv, record, lines = _locomo(tmp_path, [
        {"question": "When?", "answer": "15April, 2022", "evidence": ["D1:1"], "category": 2},
        {"question": "What does Ben love?", "answer": "watchingmovies", "evidence": ["D1:2"], "category": 4},
        {"question": "Did the team win?", "answer": "Yesteammates won", "evidence": ["D2:1"], "category": 4},
    ])
    assert passes("On April 15, 2022.", probe(conv, "q001")["expect"])
    repaired = record["repairs"]["gold with a number glued to a word, spaced"]
    assert repaired["count"] == 1 and "'15April, 2022' -> '15 April, 2022'" in repaired["examples"][0]
    reported = record["reports"]["gold with glued words, kept (its check may be unpassable)"]
    assert reported["count"] == 2
    assert "'watchingmovies' (watching movies?)" in reported["examples"][0]
    assert "'Yesteammates' (Yes teammates?)" in reported["examples"][1]
    assert any(line.startswith("reported: 2") for line in lines)


def test_a_month_glued_to_a_number_is_spaced_in_longmemeval_golds_too(tmp_path: Path) -> None:
    """LongMemEval's "15April, 2022" is repaired as LoCoMo's is, so the date check accepts "April 15, 2022"."""
    from tests.importers.importer_fixtures import longmemeval_question, passes

    out, record, _ = _longmemeval(tmp_path, longmemeval_question("q-glued", answer="15April, 2022"))
    assert passes("April 15, 2022", read_yaml(out / "q-glued.yaml")["probes"][0]["expect"])
    assert record["repairs"]["gold with a number glued to a month, spaced"]["count"] == 1


def test_an_adversarial_question_with_a_real_answer_is_scored_as_that_answer(tmp_path: Path) -> None:
    """A category-5 question whose gold is a real "No" is scored as that answer, not as an abstention probe with canary "Yes"."""
    from tests.importers.importer_fixtures import passes

    conv, record, _ = _locomo(tmp_path, [
        {"question": "Did Ana make the black and white bowl?", "answer": "No", "adversarial_answer": "Yes",
         "evidence": ["D1:1"], "category": 5},
        {"question": "What did Ben name his dog?", "adversarial_answer": "Pixel", "evidence": ["D1:1"], "category": 5},
    ])
    real, trap = probe(conv, "q001"), probe(conv, "q002")
    assert real["category"] == "adversarial" and real["tags"] == ["adversarial-with-answer"]
    assert "abstain" not in real["expect"] and "canaries" not in real["expect"]
    assert real["expect"]["f1_reference"] == "No"
    assert passes("No, she did not make it.", real["expect"]) and not passes("Yes, she did.", real["expect"])
    assert trap["expect"]["abstain"] is True  # an ordinary trap stays an abstention probe
    assert record["repairs"]["adversarial question with a real gold answer, scored as that answer "
                             "(not as abstention)"]["count"] == 1


def test_an_evidence_session_later_on_the_question_day_is_kept_and_the_probe_follows_it(tmp_path: Path) -> None:
    """LongMemEval's evidence session dated later on the question's own day is kept; the probe moves after it; the suite validates."""
    from harness.scenarios import load_suite
    from tests.importers.importer_fixtures import longmemeval_question

    out, record, _ = _longmemeval(tmp_path, longmemeval_question("q-same-day"))
    conv = read_yaml(out / "q-same-day.yaml")
    assert [s["id"] for s in conv["sessions"]] == ["sess_1", "sess_2"]
    assert conv["probes"][0]["probe"]["started_at"] == "2023-05-30T15:01:00Z"
    assert conv["probes"][0]["expect"]["relevant_items"] == ["sess_2.t1"]
    assert record["repairs"]["session dated later on the question's day, kept (the probe follows it)"]["count"] == 1
    assert "session dated on a day after the question" not in record["drops"]
    loaded = load_suite([out])
    assert [s.id for s in loaded.scenarios] == ["q-same-day/q"] and not loaded.problems
    late = longmemeval_question("q-late", dates=("2023/05/20 (Sat) 09:00", "2023/05/30 (Tue) 23:59"))
    (tmp_path / "late").mkdir()
    out, _, _ = _longmemeval(tmp_path / "late", late)
    assert read_yaml(out / "q-late.yaml")["probes"][0]["probe"]["started_at"] == "2023-05-30T23:59:59Z"  # same day


def test_a_question_whose_evidence_session_was_dropped_is_not_scored_as_answerable(tmp_path: Path) -> None:
    """An evidence session dated on a later day than the question is dropped, and its question with it (counted), never scored as answerable."""
    from tests.importers.importer_fixtures import longmemeval_question

    late = longmemeval_question("q-late", dates=("2023/05/20 (Sat) 09:00", "2023/06/02 (Fri) 09:00"))
    kept = longmemeval_question("q-kept", dates=("2023/05/20 (Sat) 09:00", "2023/05/21 (Sun) 09:00"))
    out, record, _ = _longmemeval(tmp_path, late, kept)
    assert sorted(p.stem for p in out.glob("q-*.yaml")) == ["q-kept"]
    drops = record["drops"]
    assert drops["question whose evidence session was dropped (not scored as answerable)"] == {
        "count": 1, "examples": ["q-late: sess_2"]}
    assert drops["session dated on a day after the question"]["count"] == 1
    marked = longmemeval_question("q-marked", dates=("2023/05/20 (Sat) 09:00", "2023/06/02 (Fri) 09:00"))
    marked["answer_session_ids"] = []  # its evidence is known only by the has_answer turn
    (tmp_path / "marked").mkdir()
    out, record, _ = _longmemeval(tmp_path / "marked", marked, kept)
    assert record["drops"]["question whose evidence session was dropped (not scored as answerable)"]["count"] == 1


def test_an_also_acceptable_gold_is_parsed_into_alternatives(tmp_path: Path) -> None:
    """"30 days. 31 days (including the last day) is also acceptable." accepts either number of days, not only an answer with every word."""
    from tests.importers.importer_fixtures import longmemeval_question, passes

    gold = "30 days. 31 days (including the last day) is also acceptable."
    out, record, _ = _longmemeval(tmp_path, longmemeval_question("q-alt", answer=gold, qtype="temporal-reasoning"))
    expect = read_yaml(out / "q-alt.yaml")["probes"][0]["expect"]
    assert expect["must_contain_any"] == ["30 days", "31 days"] and expect["f1_reference"] == "30 days"
    assert passes("It took 30 days.", expect) and passes("31 days", expect)
    assert not passes("29 days", expect) and not passes("including the last day", expect)
    assert gold.rstrip(".") in expect["rubric"]
    assert record["repairs"]["gold naming other acceptable answers, parsed into alternatives"]["count"] == 1


def test_a_dict_answer_is_dropped_with_a_count_and_a_number_answer_becomes_text(tmp_path: Path) -> None:
    """A gold that is a dict would become the text "{'a': 1}": the question is dropped and counted; 3 becomes "3"."""
    from tests.importers.importer_fixtures import longmemeval_question

    out, record, _ = _longmemeval(tmp_path, longmemeval_question("q-dict", answer={"a": 1}),
                                  longmemeval_question("q-list", answer=["Tahoe", {"b": 2}]),
                                  longmemeval_question("q-number", answer=3))
    assert sorted(p.stem for p in out.glob("q-*.yaml")) == ["q-number"]
    assert read_yaml(out / "q-number.yaml")["probes"][0]["expect"]["must_contain_any"] == ["3", "three"]
    dropped = record["drops"]["question whose answer is not text or a number"]
    assert dropped["count"] == 2 and dropped["examples"][0].startswith("q-dict: a dict")
    assert "{'a': 1}" not in (out / "q-number.yaml").read_text()


def test_the_extractor_never_writes_a_key_the_store_refuses(tmp_path: Path) -> None:
    """A 350-character run of repeated syllables is no key (the store's limit is 256): left out, counted, and the suite validates."""
    from harness.importers.extract import keys_for, storable_key
    from harness.scenarios import load_suite
    from tests.importers.importer_fixtures import longmemeval_question

    laugh = "ha" * 175
    refused: list[str] = []
    keys = keys_for(f"That was so funny {laugh} really", refused=refused)
    assert refused == [laugh] and all(storable_key(k["key"]) for k in keys)
    out, record, lines = _longmemeval(tmp_path, longmemeval_question("q-laugh", contents=(f"lol {laugh}",)))
    text = (out / "q-laugh.yaml").read_text()
    assert f'"key": "{laugh}"' not in text
    kind = "key the memory store would refuse (over 256 code points or unprintable), left out"
    assert record["drops"][kind]["count"] == 1 and any(kind in line for line in lines)
    assert not load_suite([out]).problems


def test_the_audit_of_a_missing_or_damaged_suite_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    """`recall-eval audit` on a missing folder or a file that is not YAML exits 2 with one `error:` line naming it, no traceback."""
    broken = tmp_path / "suite"
    broken.mkdir()
    (broken / "conv-1.yaml").write_text("probes: [unclosed\n", encoding="utf-8")
    for target in (tmp_path / "missing", broken):
        result = subprocess.run([str(RECALL_EVAL), "audit", str(target)], capture_output=True, text=True,
                                env=cli_env(), timeout=120)
        assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and target.name in result.stderr
