"""``recall-eval import longmemeval``: one conversation per question over the baseline extraction."""

from __future__ import annotations

import json
from pathlib import Path

from harness.importers.extract import MAX_ITEM_CHARS
from harness.importers.faults import FaultLog
from harness.importers.longmemeval import EXTRACTION_NOTE, QUESTION_TYPES, convert_question
from tests.importers.importer_fixtures import LONGMEMEVAL, imported, passes, read_yaml, source


def _question(qid: str) -> dict:
    return next(q for q in source(LONGMEMEVAL) if q["question_id"] == qid)


def _convert(qid: str, **changes: object) -> tuple[dict, FaultLog]:
    faults = FaultLog()
    data = convert_question({**_question(qid), **changes}, 0, faults, set())
    assert data is not None
    return data, faults


def test_each_question_is_its_own_conversation_file_with_one_probe(tmp_path: Path) -> None:
    out, lines = imported("longmemeval", tmp_path)
    files = sorted(p.stem for p in out.glob("*.yaml") if p.stem != "_defaults")
    assert files == sorted(q["question_id"] for q in source(LONGMEMEVAL) if q["question_id"] != "no-haystack")
    for name in files:
        conv = read_yaml(out / f"{name}.yaml")
        assert conv["id"] == name and len(conv["probes"]) == 1 and conv["probes"][0]["id"] == "q"
    assert lines[0].startswith("imported 8 conversations, 8 probes,")


def test_sessions_keep_the_haystack_ids_dates_and_turns() -> None:
    conv, _ = _convert("e47becba")
    assert [s["id"] for s in conv["sessions"]] == ["sharegpt_yywfJrU_0", "answer_280352e9", "ultrachat_448601"]
    assert [s["started_at"] for s in conv["sessions"]] == ["2023-05-20T02:21:00Z", "2023-05-22T14:03:00Z", "2023-05-25T09:10:00Z"]
    assert conv["sessions"][1]["turns"][0] == {"role": "user", "content": "I just got back from a weekend at Lake Tahoe with my sister."}


def test_the_extractor_makes_one_item_per_turn_observed_at_its_session_date() -> None:
    conv, _ = _convert("e47becba")
    turns = sum(len(s["turns"]) for s in conv["sessions"])
    assert len(conv["items"]) == turns == 7
    item = next(i for i in conv["items"] if i["id"] == "answer_280352e9.t1")
    assert item["content"] == "I just got back from a weekend at Lake Tahoe with my sister."
    assert item["observed_at"] == "2023-05-22T14:03:00Z" and item["kind"] == "context"
    assert item["sources"] == [{"session": "answer_280352e9", "turn": "t1"}]
    assert {"key": "Lake Tahoe", "type": "entity", "origin": "deterministic"} in item["keys"]
    assert {"key": "sister", "origin": "deterministic"} in item["keys"]


def test_a_long_turn_is_cut_at_sentence_ends_into_items_citing_the_same_turn() -> None:
    conv, _ = _convert("0a995998")
    pieces = [i for i in conv["items"] if i["id"].startswith("s4.t1.")]
    assert len(pieces) == 2
    assert all(len(i["content"]) <= MAX_ITEM_CHARS and i["content"].endswith("balcony.") for i in pieces)
    assert all(i["sources"] == [{"session": "s4", "turn": "t1"}] for i in pieces)
    original = conv["sessions"][1]["turns"][0]["content"]
    assert " ".join(i["content"] for i in pieces) == original


def test_has_answer_turns_give_the_relevant_items_with_the_answer_role() -> None:
    conv, _ = _convert("0a995998")  # has_answer written as the string "true" here
    expect = conv["probes"][0]["expect"]
    assert expect["relevant_items"] == ["s1.t1", "s5.t1"]
    roles = {i["id"]: i["role"] for i in conv["items"]}
    assert roles["s1.t1"] == roles["s5.t1"] == "answer"
    assert {r for i, r in roles.items() if i not in ("s1.t1", "s5.t1")} == {"distractor"}


def test_without_has_answer_turns_the_answer_sessions_items_are_relevant() -> None:
    conv, faults = _convert("71017276")
    assert conv["probes"][0]["expect"]["relevant_items"] == ["answer_d1.t1", "answer_d2.t1"]
    assert faults.repairs["no has_answer turn: relevant items are the answer sessions' items"] == 1


def test_an_abs_question_abstains_and_names_no_relevant_item() -> None:
    conv, _ = _convert("gpt4_2655b836_abs")
    probe = conv["probes"][0]
    assert probe["expect"]["abstain"] is True
    assert "relevant_items" not in probe["expect"] and "must_contain_any" not in probe["expect"]
    assert "abstention" in conv["tags"] and probe["category"] == "multi_session"
    assert {i["role"] for i in conv["items"]} == {"distractor"}


def test_question_types_map_to_categories_and_an_unknown_one_to_other() -> None:
    assert QUESTION_TYPES["temporal-reasoning"] == "temporal" and QUESTION_TYPES["knowledge-update"] == "knowledge_update"
    for qid, category in (("e47becba", "single_session_user"), ("71017276", "temporal"),
                          ("6a1eabeb", "knowledge_update"), ("8a2466db", "single_session_preference"),
                          ("7161e7e2", "single_session_assistant"), ("x-unknown-type", "other")):
        assert _convert(qid)[0]["probes"][0]["category"] == category, qid


def test_the_suite_declares_every_category_it_uses(tmp_path: Path) -> None:
    out, _ = imported("longmemeval", tmp_path)
    declared = set(read_yaml(out / "_defaults.yaml")["categories"])
    used = {read_yaml(p)["probes"][0]["category"] for p in out.glob("*.yaml") if p.name != "_defaults.yaml"}
    assert used <= declared and set(QUESTION_TYPES.values()) <= declared


def test_a_preference_question_is_scored_by_its_rubric_only() -> None:
    expect = _convert("8a2466db")[0]["probes"][0]["expect"]
    assert set(expect) == {"rubric", "relevant_items"}
    assert "Adobe Premiere Pro" in expect["rubric"]


def test_the_probe_runs_at_the_question_date() -> None:
    probe = _convert("e47becba")[0]["probes"][0]["probe"]
    assert probe == {"started_at": "2023-05-30T21:56:00Z", "message": "Where did I go on my last weekend trip?"}


def test_an_unusable_question_date_puts_the_probe_a_day_after_the_last_session() -> None:
    conv, faults = _convert("x-unknown-type")
    assert conv["probes"][0]["probe"]["started_at"] == "2023-01-02T09:00:00Z"
    assert faults.repairs["question without a usable question_date, set 1 day after the last session"] == 1


def test_cleaned_release_variants_are_accepted() -> None:
    """Numeric and list answers, no haystack_session_ids, has_answer as text, extra fields: all read."""
    numeric, faults = _convert("0a995998")
    assert [s["id"] for s in numeric["sessions"]] == ["s1", "s4", "s5"]
    assert numeric["probes"][0]["expect"]["must_contain_any"] == ["3", "three"]
    listed, _ = _convert("71017276")
    assert listed["probes"][0]["expect"]["f1_reference"] == "7 days, one week"
    assert faults.repairs["question without haystack_session_ids, sessions numbered"] == 1


def test_an_assistant_turn_is_an_item_so_assistant_questions_have_relevant_items() -> None:
    conv, _ = _convert("7161e7e2")
    expect = conv["probes"][0]["expect"]
    assert expect["relevant_items"] == ["answer_sa1.t2"]
    item = next(i for i in conv["items"] if i["id"] == "answer_sa1.t2")
    assert item["kind"] == "knowledge" and "Manteigaria" in item["content"]
    assert passes("It was Manteigaria, in Chiado.", expect)


def test_the_suite_says_retrieval_runs_over_the_baseline_extraction(tmp_path: Path) -> None:
    out, _ = imported("longmemeval", tmp_path)
    assert "baseline extraction" in EXTRACTION_NOTE
    assert EXTRACTION_NOTE in (out / "SUITE.md").read_text(encoding="utf-8")
    assert EXTRACTION_NOTE in json.loads((out / "_suite.json").read_text(encoding="utf-8"))["notes"]
    assert "baseline extraction" in read_yaml(out / "e47becba.yaml")["description"]


def test_the_release_is_recorded_from_the_file_name(tmp_path: Path) -> None:
    cleaned = tmp_path / "longmemeval_s_cleaned.json"
    cleaned.write_bytes(LONGMEMEVAL.read_bytes())
    out, _ = imported("longmemeval", tmp_path, cleaned)
    assert "Source release by file name: 2025 cleaned release." in json.loads((out / "_suite.json").read_text())["notes"]
