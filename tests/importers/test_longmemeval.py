"""``recall-eval import longmemeval``: one conversation per question over the baseline extraction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.importers.extract import MAX_ITEM_CHARS
from harness.importers.faults import FaultLog
from harness.importers.longmemeval import EXTRACTION_NOTE, QUESTION_TYPES, convert_question
from harness.scenarios.quotes import resolve_quotes
from tests.importers.importer_fixtures import LONGMEMEVAL, imported, longmemeval_question, passes, read_yaml, source


def _question(qid: str) -> dict:
    return next(q for q in source(LONGMEMEVAL) if q["question_id"] == qid)


def _convert(qid: str, **changes: object) -> tuple[dict, FaultLog]:
    faults = FaultLog()
    data = convert_question({**_question(qid), **changes}, 0, faults, set())
    assert data is not None
    return data, faults


def _resolved(conv: dict) -> dict:
    """The conversation as the loader reads it: each quoting item given its text."""
    assert resolve_quotes(conv) == []
    return conv


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
    text = "I just got back from a weekend at Lake Tahoe with my sister."
    assert conv["schema_version"] == 2 and item["quote"] == [0, len(text)] and "content" not in item
    item = next(i for i in _resolved(conv)["items"] if i["id"] == "answer_280352e9.t1")
    assert item["content"] == text
    assert item["observed_at"] == "2023-05-22T14:03:00Z" and item["kind"] == "context"
    assert item["sources"] == [{"session": "answer_280352e9", "turn": "t1"}]
    assert {"key": "Lake Tahoe", "type": "entity", "origin": "deterministic"} in item["keys"]
    assert {"key": "sister", "origin": "deterministic"} in item["keys"]


def test_a_long_turn_is_cut_at_sentence_ends_into_items_citing_the_same_turn() -> None:
    conv, _ = _convert("0a995998")
    original = conv["sessions"][1]["turns"][0]["content"]
    quotes = [i["quote"] for i in conv["items"] if i["id"].startswith("s4.t1.")]
    assert quotes[0][0] == 0 and quotes[-1][1] == len(original) and quotes[0][1] < quotes[1][0]  # two slices, in order
    pieces = [i for i in _resolved(conv)["items"] if i["id"].startswith("s4.t1.")]
    assert [i["id"] for i in pieces] == ["s4.t1.1", "s4.t1.2"]
    assert all(len(i["content"]) <= MAX_ITEM_CHARS and i["content"].endswith("balcony.") for i in pieces)
    assert all(i["sources"] == [{"session": "s4", "turn": "t1"}] for i in pieces)
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
    item = next(i for i in _resolved(conv)["items"] if i["id"] == "answer_sa1.t2")
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


# --- what each fault does to the question, and what the log says (mutation testing, issue 29) -------------------

def _fresh(question: object, index: int = 0, taken: set[str] | None = None) -> tuple[dict | None, FaultLog]:
    faults = FaultLog()
    return convert_question(question, index, faults, set() if taken is None else taken), faults


_THREE_DAYS = ("2023/05/20 (Sat) 09:00", "2023/05/22 (Mon) 09:00", "2023/05/24 (Wed) 09:00")


@pytest.mark.parametrize("value", [True, 1, "true", "True ", " TRUE"])
def test_has_answer_written_as_true_one_or_the_text_true_marks_the_turn(value: object) -> None:
    question = longmemeval_question(dates=_THREE_DAYS)
    question["haystack_sessions"][1][0]["has_answer"] = value
    conv, faults = _fresh(question)
    assert conv["probes"][0]["expect"]["relevant_items"] == ["sess_2.t1"]
    assert "no has_answer turn: relevant items are the answer sessions' items" not in faults.repairs


@pytest.mark.parametrize("value", [False, 0, 2, "yes", "false", "", None])
def test_has_answer_outside_true_one_and_the_text_true_marks_nothing(value: object) -> None:
    """A turn marked "yes" or 2 is not taken as evidence; the answer session's items stand in (a logged repair)."""
    question = longmemeval_question(dates=_THREE_DAYS)
    question["haystack_sessions"][1][0]["has_answer"] = value
    conv, faults = _fresh(question)
    assert conv["probes"][0]["expect"]["relevant_items"] == ["sess_2.t1", "sess_2.t2"]
    assert faults.repairs["no has_answer turn: relevant items are the answer sessions' items"] == 1


def test_a_turn_marked_has_answer_false_is_not_relevant() -> None:
    conv, _ = _convert("e47becba")
    assert conv["probes"][0]["expect"]["relevant_items"] == ["answer_280352e9.t1"]
    assert next(i for i in conv["items"] if i["id"] == "answer_280352e9.t2")["role"] == "distractor"


def test_dropped_turns_are_named_by_their_published_position_and_the_turns_after_them_are_kept() -> None:
    conv, faults = _convert("0a995998")
    assert faults.examples["turn with a role other than user or assistant"] == ["0a995998 session 1 (s1) turn 1: 'system'"]
    assert faults.examples["turn without content"] == ["0a995998 session 1 (s1) turn 3"]
    assert [t["content"] for t in conv["sessions"][0]["turns"]] == [
        "I need to return a pair of boots to Zara and pick up my dry cleaning.",
        "Noted: the boots for Zara and the dry cleaning."]


def test_a_session_or_a_turn_that_is_not_an_object_is_dropped_and_the_rest_is_read() -> None:
    """A session written as a bare string and turns written as a string or null are dropped, each counted, and the next sessions are kept."""
    question = longmemeval_question(dates=_THREE_DAYS)
    question["haystack_sessions"][0] = "Let us talk about recipes."
    question["haystack_sessions"][2] = ["Hello again.", None, {"role": "user", "content": "Back from the trip."}]
    conv, faults = _fresh(question)
    assert [s["id"] for s in conv["sessions"]] == ["sess_2", "sess_3"]
    assert conv["sessions"][1]["turns"] == [{"role": "user", "content": "Back from the trip."}]
    assert faults.drops == {"session without a usable turn": 1, "turn with a role other than user or assistant": 2}
    assert faults.examples["session without a usable turn"] == ["q-1 session 1 (sess_1)"]
    assert faults.examples["turn with a role other than user or assistant"] == [
        "q-1 session 3 (sess_3) turn 1: None", "q-1 session 3 (sess_3) turn 2: None"]


def test_an_evidence_session_left_with_no_usable_turn_drops_its_question() -> None:
    """The has_answer turn is empty, so its session is dropped: the question is not scored as answerable."""
    question = longmemeval_question(dates=_THREE_DAYS)
    question["haystack_sessions"][1] = [{"role": "user", "content": " ", "has_answer": True}]
    question["answer_session_ids"] = []  # the evidence is known only by the has_answer mark
    conv, faults = _fresh(question)
    assert conv is None
    assert faults.examples["question whose evidence session was dropped (not scored as answerable)"] == ["q-1: sess_2"]


def test_an_undated_evidence_session_drops_its_question_and_the_log_quotes_the_date() -> None:
    question = longmemeval_question(dates=(*_THREE_DAYS[:2], "sometime in May"), answer_session=3)
    question["answer_session_ids"] = []  # the evidence is known only by the has_answer mark
    conv, faults = _fresh(question)
    assert conv is None
    assert faults.examples["session without a usable date"] == ["q-1 session 3 (sess_3): 'sometime in May'"]
    assert faults.examples["question whose evidence session was dropped (not scored as answerable)"] == ["q-1: sess_3"]
    conv, faults = _convert("0a995998")
    assert faults.examples["session without a usable date"] == ["0a995998 session 2 (s2): 'not a date'"]


def test_every_dropped_evidence_session_is_named() -> None:
    question = longmemeval_question(dates=(_THREE_DAYS[0], "not a date", "2023/13/24 (Wed) 09:00"), answer_session=2)
    question["answer_session_ids"] = ["sess_2", "sess_3"]
    assert _fresh(question)[1].examples["question whose evidence session was dropped (not scored as answerable)"] == [
        "q-1: sess_2, sess_3"]


def test_a_session_past_the_end_of_haystack_dates_is_dropped_as_undated() -> None:
    question = longmemeval_question(dates=_THREE_DAYS, answer_session=1)
    question["haystack_dates"] = question["haystack_dates"][:2]
    conv, faults = _fresh(question)
    assert [s["id"] for s in conv["sessions"]] == ["sess_1", "sess_2"]
    assert faults.examples["session without a usable date"] == ["q-1 session 3 (sess_3): None"]
    assert "date without a session" not in faults.drops


def test_a_date_past_the_end_of_haystack_sessions_is_dropped_and_quoted() -> None:
    question = longmemeval_question()
    question["haystack_dates"].append("2023/05/21 (Sun) 09:00")
    conv, faults = _fresh(question)
    assert [s["id"] for s in conv["sessions"]] == ["sess_1", "sess_2"]
    assert faults.examples["date without a session"] == ["q-1: '2023/05/21 (Sun) 09:00'"]


def test_a_session_on_a_day_after_the_question_is_dropped_and_its_marked_turn_drops_the_question() -> None:
    """Evidence known only by the has_answer mark still counts when its session is dated after the question."""
    question = longmemeval_question(dates=(_THREE_DAYS[0], "2023/05/31 (Wed) 09:00"))
    question["answer_session_ids"] = []
    conv, faults = _fresh(question)
    assert conv is None
    assert faults.examples["session dated on a day after the question"] == [
        "q-1 session 2 (sess_2): 2023-05-31T09:00:00Z > 2023-05-30T10:00:00Z"]
    assert faults.examples["question whose evidence session was dropped (not scored as answerable)"] == ["q-1: sess_2"]


def test_ids_or_dates_that_are_not_lists_are_read_as_absent() -> None:
    """haystack_session_ids as one string numbers the sessions; haystack_dates as one string leaves every session undated."""
    question = longmemeval_question(dates=_THREE_DAYS[:2], answer_session=1)
    question["haystack_session_ids"] = "sess_1,sess_2"
    conv, faults = _fresh(question)
    assert [s["id"] for s in conv["sessions"]] == ["s1", "s2"]
    assert faults.examples["question without haystack_session_ids, sessions numbered"] == ["q-1"]
    question = longmemeval_question(dates=_THREE_DAYS[:2], answer_session=1)
    question["haystack_dates"] = _THREE_DAYS[0]
    conv, faults = _fresh(question)
    assert conv is None
    assert faults.examples["session without a usable date"] == ["q-1 session 1 (sess_1): None", "q-1 session 2 (sess_2): None"]
    assert "date without a session" not in faults.drops


def test_published_haystack_session_ids_are_kept_without_a_repair() -> None:
    _, faults = _convert("e47becba")
    assert faults.repairs == {} and faults.drops == {}


def test_a_question_without_haystack_sessions_is_dropped_with_a_reason() -> None:
    for sessions in ("missing", None, "two sessions", []):
        question = longmemeval_question()
        if sessions == "missing":
            del question["haystack_sessions"]
        else:
            question["haystack_sessions"] = sessions
        conv, faults = _fresh(question)
        assert conv is None, sessions
        assert faults.examples["question without a usable haystack session"] == ["q-1"]


def test_an_empty_haystack_session_id_is_numbered_by_position() -> None:
    question = longmemeval_question(dates=_THREE_DAYS)
    question["haystack_session_ids"][0] = ""
    conv, _ = _fresh(question)
    assert [s["id"] for s in conv["sessions"]] == ["s1", "sess_2", "sess_3"]
    assert conv["items"][0]["id"] == "s1.t1"


def test_a_duplicate_haystack_session_id_is_renamed_with_its_position() -> None:
    conv, faults = _convert("71017276")
    assert [s["id"] for s in conv["sessions"]] == ["answer_d1", "answer_d2", "answer_d2-3"]
    assert faults.examples["duplicate haystack session id, renamed"] == ["71017276 session 3 (answer_d2) -> 'answer_d2-3'"]


@pytest.mark.parametrize(("session", "probe"), [
    ("2023/05/30 (Tue) 10:00", "2023-05-30T10:01:00Z"),  # at the very minute of the question
    ("2023/05/30 (Tue) 15:59", "2023-05-30T16:00:00Z"),
    ("2023/05/30 (Tue) 23:30", "2023-05-30T23:31:00Z"),
    ("2023/05/30 (Tue) 23:59", "2023-05-30T23:59:59Z"),
    ("2023-05-30T23:59:59Z", "2023-05-31T00:00:00Z"),  # no second is left on that day
])
def test_the_probe_follows_a_session_dated_at_or_after_the_question_time_on_its_day(session: str, probe: str) -> None:
    conv, faults = _fresh(longmemeval_question(dates=("2023/05/20 (Sat) 09:00", session)))
    assert conv["probes"][0]["probe"]["started_at"] == probe
    assert conv["sessions"][1]["id"] == "sess_2" and conv["probes"][0]["expect"]["relevant_items"] == ["sess_2.t1"]
    assert faults.examples["session dated later on the question's day, kept (the probe follows it)"] == [
        f"q-1 session 2 (sess_2): {conv['sessions'][1]['started_at']} >= 2023-05-30T10:00:00Z"]
    assert faults.examples["question asked before a session of its own day, probe moved after that session"] == [
        f"q-1: 2023-05-30T10:00:00Z -> {probe}"]


def test_a_question_without_question_id_is_named_by_its_position() -> None:
    question = longmemeval_question()
    del question["question_id"]
    conv, faults = _fresh(question, index=3)
    assert conv["id"] == "question-3" and "abstention" not in conv["tags"]
    assert faults.examples["question without question_id, named by position"] == ["element 3 -> 'question-3'"]
    _, faults = _fresh(longmemeval_question())
    assert "question without question_id, named by position" not in faults.repairs


def test_a_duplicate_question_id_is_renamed_with_its_position() -> None:
    taken: set[str] = set()
    first, _ = _fresh(longmemeval_question("q-7"), 0, taken)
    second, faults = _fresh(longmemeval_question("q-7"), 5, taken)
    assert (first["id"], second["id"]) == ("q-7", "q-7-5") and taken == {"q-7", "q-7-5"}
    assert faults.examples["duplicate question_id, renamed"] == ["'q-7' -> 'q-7-5'"]


def test_an_element_that_is_not_an_object_is_dropped_with_its_position() -> None:
    conv, faults = _fresh(["q-1", "Where did I go?"], index=4)
    assert conv is None and faults.examples["question that is not an object"] == ["element 4"]


@pytest.mark.parametrize("text", [None, "", "   "])
def test_a_question_without_text_is_dropped(text: object) -> None:
    question = longmemeval_question()
    question["question"] = text
    conv, faults = _fresh(question)
    assert conv is None and faults.examples["question without text"] == ["q-1"]


def test_the_tags_and_description_name_the_benchmark_and_the_question_type() -> None:
    conv, _ = _convert("e47becba")
    assert conv["tags"] == ["longmemeval", "single-session-user"]
    assert conv["description"] == ("A LongMemEval single-session-user over a haystack of 3 sessions; "
                                   "memory items are the importer's baseline extraction.")
    assert _convert("gpt4_2655b836_abs")[0]["tags"] == ["longmemeval", "multi-session", "abstention"]


def test_a_question_without_question_type_is_of_category_other_and_tagged_unknown_type() -> None:
    question = longmemeval_question()
    del question["question_type"]
    conv, faults = _fresh(question)
    assert conv["probes"][0]["category"] == "other"
    assert conv["tags"] == ["longmemeval", "unknown-type"]
    assert conv["description"].startswith("A LongMemEval question over a haystack of 2 sessions;")
    assert faults.examples["unknown question_type, category other"] == ["q-1: ''"]


@pytest.mark.parametrize("answer", ["", None, "  "])
def test_a_question_without_an_answer_is_dropped_but_an_abstention_question_keeps_its_probe(answer: object) -> None:
    conv, faults = _fresh(longmemeval_question(answer=answer))
    assert conv is None and faults.examples["question without an answer"] == ["q-1"]
    conv, faults = _fresh(longmemeval_question("q-1_abs", answer=answer))
    expect = conv["probes"][0]["expect"]
    assert expect["abstain"] is True and expect["rubric"].endswith("Reference: not answerable")
    assert faults.drops == {}


def test_a_dropped_answer_is_quoted_in_the_log_up_to_60_characters() -> None:
    answer = {"answer": "Lake Tahoe", "note": "the annotators disagreed on this one"}
    _, faults = _fresh(longmemeval_question("q-dict", answer=answer))
    assert faults.examples["question whose answer is not text or a number"] == [
        "q-dict: a dict \"{'answer': 'Lake Tahoe', 'note': 'the annotators disagreed o\""]


def test_a_plain_gold_is_not_logged_as_having_alternatives() -> None:
    _, faults = _fresh(longmemeval_question())
    assert "gold naming other acceptable answers, parsed into alternatives" not in faults.repairs


def test_a_gold_with_a_day_glued_to_its_month_is_spaced_before_it_is_scored() -> None:
    conv, faults = _fresh(longmemeval_question(answer="15April, 2022", qtype="temporal-reasoning"))
    expect = conv["probes"][0]["expect"]
    assert expect["f1_reference"] == "15 April, 2022" and "2022-04-15" in expect["must_contain_any"]
    assert faults.examples["gold with a number glued to a month, spaced"] == ["q-1: '15April, 2022' -> '15 April, 2022'"]


def test_the_alternatives_repair_shows_the_gold_and_its_parts() -> None:
    gold = "30 days. 31 days (including the last day) is also acceptable."
    _, faults = _fresh(longmemeval_question(answer=gold, qtype="temporal-reasoning"))
    assert faults.examples["gold naming other acceptable answers, parsed into alternatives"] == [
        "q-1: '30 days. 31 days (including the last day) is also acceptable' -> 30 days | 31 days"]  # final stop dropped


def test_an_unusable_question_date_is_quoted_in_the_repair() -> None:
    _, faults = _convert("x-unknown-type")
    assert faults.examples["question without a usable question_date, set 1 day after the last session"] == [
        "x-unknown-type: 'not a date' -> 2023-01-02T09:00:00Z"]


def test_a_refused_key_is_logged_with_its_item_its_length_and_its_first_40_characters() -> None:
    laugh = "ha" * 175
    _, faults = _fresh(longmemeval_question("q-laugh", contents=(f"lol {laugh}",)))
    assert faults.examples["key the memory store would refuse (over 256 code points or unprintable), left out"] == [
        f"q-laugh sess_1.t3: 350 characters '{'ha' * 20}'..."]


def test_a_turn_the_store_refuses_as_content_is_logged_with_its_session_and_turn() -> None:
    question = longmemeval_question()
    question["haystack_sessions"][0][1]["content"] = "\u200b\u200b"
    conv, faults = _fresh(question)
    assert faults.examples["turn the memory store refuses as item content (no item)"] == ["q-1 sess_1 t2"]
    assert [i["id"] for i in conv["items"]] == ["sess_1.t1", "sess_2.t1", "sess_2.t2"]
