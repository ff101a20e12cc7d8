"""``recall-eval import locomo``: the mapping of LoCoMo's published shape onto conversation files."""

from __future__ import annotations

from pathlib import Path

from harness.importers.answers import gold_text
from harness.importers.faults import FaultLog
from harness.importers.locomo import CATEGORIES, SYSTEM_PROMPT, convert_sample, parse_evidence
from tests.importers.importer_fixtures import LOCOMO, imported, locomo_sample, passes, probe, read_yaml, source


def _conv(tmp_path: Path, name: str = "conv-1") -> dict:
    out, _ = imported("locomo", tmp_path)
    return read_yaml(out / f"{name}.yaml")


def test_one_conversation_file_per_usable_sample(tmp_path: Path) -> None:
    out, lines = imported("locomo", tmp_path)
    assert sorted(p.name for p in out.glob("*.yaml")) == ["_defaults.yaml", "conv-1.yaml", "conv-2.yaml"]
    assert lines[0].startswith("imported 2 conversations, 9 probes, 8 items from locomo_mini.json")


def test_turns_keep_dia_ids_and_speaker_names_with_roles_by_speaker(tmp_path: Path) -> None:
    session = _conv(tmp_path)["sessions"][0]
    assert session["id"] == "session_1" and session["started_at"] == "2023-05-08T13:56:00Z"
    first, second = session["turns"][:2]
    assert first == {"id": "D1:1", "role": "user", "speaker": "Maya",
                     "content": "Guess what, I adopted a second dog yesterday! His name is Pixel."}
    assert (second["id"], second["role"], second["speaker"]) == ("D1:2", "assistant", "Tom")


def test_a_shared_photo_is_appended_to_the_turn_as_its_caption(tmp_path: Path) -> None:
    turns = _conv(tmp_path)["sessions"][0]["turns"]
    assert turns[1]["content"].endswith("in Sweden. [shares a photo: a photo of a mountain trail with a lake]")
    assert turns[3]["content"] == "[shares a photo: a dog sleeping on a couch]"  # a photo without text is a turn too


def test_observation_facts_become_items_citing_their_evidence_turns(tmp_path: Path) -> None:
    items = {item["id"]: item for item in _conv(tmp_path)["items"]}
    hike = items["obs-1-3"]
    assert hike["content"] == "Tom went hiking in Sweden and later in Canada."
    assert hike["sources"] == [{"session": "session_1", "turn": "D1:2"}, {"session": "session_2", "turn": "D2:1"}]
    assert {"key": "Tom", "type": "entity", "origin": "deterministic"} in hike["keys"]
    assert all(item["kind"] == "context" and item["role"] == "distractor" for item in items.values())


def test_an_item_is_observed_no_earlier_than_its_latest_source_session(tmp_path: Path) -> None:
    items = {item["id"]: item for item in _conv(tmp_path)["items"]}
    assert items["obs-1-1"]["observed_at"] == "2023-05-08T13:56:00Z"
    # a session-1 observation citing a session-2 turn cannot be observed before session 2 started
    assert items["obs-1-3"]["observed_at"] == "2023-06-27T10:37:00Z"


def test_qa_categories_follow_the_scorers_numbering(tmp_path: Path) -> None:
    assert CATEGORIES == {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
    conv = _conv(tmp_path)
    questions = [qa for qa in source(LOCOMO)[0]["qa"]]
    for index, qa in enumerate(questions, start=1):
        found = [p for p in conv["probes"] if p["id"] == f"q{index:03d}"]
        if found:
            assert found[0]["category"] == CATEGORIES[qa["category"]], qa["question"]


def test_adversarial_question_abstains_with_the_adversarial_answer_as_someone_else_canary(tmp_path: Path) -> None:
    trap = probe(_conv(tmp_path), "q005")
    assert trap["category"] == "adversarial"
    assert trap["expect"]["abstain"] is True
    assert trap["expect"]["canaries"] == [{"text": "Pixel", "kind": "someone_else"}]
    assert "must_contain_any" not in trap["expect"] and "f1_reference" not in trap["expect"]


def test_suite_declares_its_categories_and_system_prompt_in_defaults(tmp_path: Path) -> None:
    out, _ = imported("locomo", tmp_path)
    defaults = read_yaml(out / "_defaults.yaml")
    assert set(defaults["categories"]) == set(CATEGORIES.values())
    assert defaults["system_prompt"] == SYSTEM_PROMPT
    assert "between two people" in SYSTEM_PROMPT and "answer" in SYSTEM_PROMPT


def test_a_date_gold_accepts_every_usual_date_order(tmp_path: Path) -> None:
    expect = probe(_conv(tmp_path), "q001")["expect"]
    for answer in ("On 7 May 2023.", "She adopted him on May 7, 2023", "2023-05-07", "7 May, 2023"):
        assert passes(answer, expect), answer
    assert not passes("On 8 May 2023.", expect)


def test_a_multi_hop_list_answer_needs_every_part_in_any_order(tmp_path: Path) -> None:
    expect = probe(_conv(tmp_path), "q002")["expect"]
    assert expect["must_contain_groups"] == [["Sweden"], ["Canada"]]
    assert passes("Canada and Sweden.", expect)
    assert not passes("Only Sweden.", expect)


def test_a_numeric_gold_is_text_with_its_word_and_matches_word_bounded(tmp_path: Path) -> None:
    expect = probe(_conv(tmp_path), "q003")["expect"]
    assert expect["must_contain_any"] == ["2", "two"] and expect["f1_reference"] == "2"
    assert passes("She has two dogs.", expect)
    assert not passes("She has 12 dogs.", expect)


def test_a_very_short_gold_is_not_found_inside_other_words(tmp_path: Path) -> None:
    expect = probe(_conv(tmp_path, "conv-2"), "q001")["expect"]
    assert expect["must_contain_any"] == ["No"]
    assert passes("No, she cannot swim.", expect)
    assert not passes("I don't know.", expect)


def test_every_answered_probe_has_the_published_gold_as_f1_reference_and_the_repaired_one_in_its_rubric(
        tmp_path: Path) -> None:
    """Bug planted: ``f1_reference`` the repaired gold (``filmmaker`` for ``filmmaker.``): the papers' metrics
    scored another gold than the published procedure does."""
    published = {f"q{n:03d}": qa.get("answer") for n, qa in enumerate(source(LOCOMO)[0]["qa"], start=1)}
    for p in _conv(tmp_path)["probes"]:
        if p["category"] != "adversarial":
            assert p["expect"]["f1_reference"] == str(published[p["id"]])
            assert repr(gold_text(published[p["id"]])) in p["expect"]["rubric"]


def test_the_probe_runs_a_day_after_the_last_session(tmp_path: Path) -> None:
    conv = _conv(tmp_path)
    last = max(s["started_at"] for s in conv["sessions"])
    assert last == "2023-06-27T11:37:00Z"
    assert {p["probe"]["started_at"] for p in conv["probes"]} == {"2023-06-28T11:37:00Z"}
    assert all(p["probe"]["message"] for p in conv["probes"])


def test_evidence_turns_give_relevant_items_and_their_answer_role_per_probe(tmp_path: Path) -> None:
    conv = _conv(tmp_path)
    both = probe(conv, "q010")
    assert both["expect"]["relevant_items"] == ["obs-1-1", "obs-1-3"]
    assert both["item_roles"] == {"obs-1-1": "answer", "obs-1-3": "answer"}
    assert "item_roles" not in probe(conv, "q005")  # the trap's evidence stays a distractor


def test_summaries_are_not_imported(tmp_path: Path) -> None:
    out, _ = imported("locomo", tmp_path)
    text = (out / "conv-1.yaml").read_text(encoding="utf-8")
    assert "Maya adopts Pixel" not in text and "Tom hiked in Canada; Maya plans Peru" not in text


def test_the_conversation_names_both_speakers(tmp_path: Path) -> None:
    conv = _conv(tmp_path)
    assert conv["id"] == "conv-1" and conv["title"] == "LoCoMo conv-1: Maya and Tom"
    assert conv["tags"] == ["locomo"] and "Maya and Tom" in conv["description"]


def test_a_sample_without_sample_id_or_a_duplicate_one_is_named_by_position() -> None:
    faults = FaultLog()
    sample = source(LOCOMO)[1]
    taken: set[str] = set()
    first = convert_sample(sample, 1, faults, taken)
    second = convert_sample(sample, 5, faults, taken)
    third = convert_sample({**sample, "sample_id": None}, 7, faults, taken)
    assert (first["id"], second["id"], third["id"]) == ("conv-2", "conv-2-5", "sample-7")
    assert faults.repairs == {"duplicate sample_id, renamed": 1, "sample without sample_id, named by position": 1}


# --- what the importer repairs and drops, and where it says it did ------------------------------------------------
# Every repair and drop is printed and written to _suite.json with its first examples, which name the place at fault
# (``conv-9 session_2 turn 3``, ``conv-9 qa[4] (q005)``): the kinds and examples below are what a user reads.

_ASK = {"question": "Where did Ana travel in April?", "answer": "Sweden", "evidence": ["D1:1"], "category": 4}


def _converted(sample: dict, index: int = 0) -> tuple[dict | None, FaultLog]:
    faults = FaultLog()
    return convert_sample(sample, index, faults, set()), faults


def _turn(speaker: str | None, dia_id: str | None, text: str) -> dict:
    turn = {"speaker": speaker, "dia_id": dia_id, "text": text}
    return {k: v for k, v in turn.items() if v is not None}


def test_evidence_ids_in_a_list_are_each_repaired_and_logged_where_they_were_found() -> None:
    faults = FaultLog()
    ids = parse_evidence(["D:1:3", "D8:6; D9:17", "d05:3", "", None], "conv-9 qa[0] (q001)", faults)
    assert ids == ["D1:3", "D8:6", "D9:17", "D5:3"]
    assert faults.examples == {
        "evidence id with a stray colon (D:11:26), repaired": ["conv-9 qa[0] (q001): 'D:1:3' -> 'D1:3'"],
        "several evidence ids in one string, split": ["conv-9 qa[0] (q001): 'D8:6; D9:17' -> D8:6, D9:17"],
        "evidence id with leading zeros (D30:05), repaired": ["conv-9 qa[0] (q001): 'd05:3' -> 'D5:3'"],
    }
    assert faults.drops == {}  # an empty id is no evidence, not a malformed one


def test_evidence_that_is_not_text_or_names_no_turn_is_dropped_and_logged() -> None:
    faults = FaultLog()
    assert parse_evidence([17, "see above"], "conv-9 qa[2] (q003)", faults) == []
    assert faults.drops == {"evidence that is not text": 1, "malformed evidence id (no D<session>:<turn> in it)": 1}
    assert faults.examples == {
        "evidence that is not text": ["conv-9 qa[2] (q003): 17"],
        "malformed evidence id (no D<session>:<turn> in it)": ["conv-9 qa[2] (q003): 'see above'"],
    }


def test_a_first_session_without_a_usable_date_is_dropped_and_the_next_one_kept() -> None:
    sample = locomo_sample([{**_ASK, "evidence": ["D2:1"]}])
    sample["conversation"]["session_1_date_time"] = "sometime in spring"
    conv, faults = _converted(sample)
    assert [s["id"] for s in conv["sessions"]] == ["session_2"]
    assert conv["sessions"][0]["started_at"] == "2023-12-20T14:00:00Z"
    assert faults.examples["session without a usable date and no earlier session"] == [
        "conv-9 session_1: 'sometime in spring'"]


def test_a_later_session_without_a_usable_date_is_placed_an_hour_after_the_previous_one() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_2_date_time"] = "later that day"
    conv, faults = _converted(sample)
    assert [s["started_at"] for s in conv["sessions"]] == ["2023-05-08T13:00:00Z", "2023-05-08T14:00:00Z"]
    assert faults.examples["session without a usable date, placed 1 hour after the previous one"] == [
        "conv-9 session_2: 'later that day' -> 2023-05-08T14:00:00Z"]


def test_a_dated_session_with_an_empty_turn_list_is_a_date_without_a_session() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"].update({"session_3_date_time": "4:04 pm on 21 December, 2023", "session_3": []})
    conv, faults = _converted(sample)
    assert [s["id"] for s in conv["sessions"]] == ["session_1", "session_2"]
    assert faults.drops == {"date without a session": 1}
    assert faults.examples["date without a session"] == ["conv-9 session_3_date_time '4:04 pm on 21 December, 2023'"]


def test_unusable_turns_and_a_session_left_without_one_are_dropped_and_the_rest_kept() -> None:
    sample = locomo_sample([_ASK])
    pasted = "Ben: " + "we talked about the cup for hours and hours, " * 6
    sample["conversation"].update({
        "session_2": [_turn("Ben", "D2:1", ""), pasted,
                      _turn("Ana", "D2:3", "Yes, my teammates won the cup in Canada."), _turn("Ben", "D2:4", "Wow!")],
        "session_3_date_time": "9:00 am on 21 December, 2023", "session_3": [_turn("Ana", "D3:1", "  ")],
        "session_4_date_time": "9:00 am on 22 December, 2023", "session_4": [_turn("Ben", "D4:1", "See you soon.")],
    })
    sample["observation"]["session_2_observation"]["Ben"][0][1] = "D2:3"
    conv, faults = _converted(sample)
    assert [s["id"] for s in conv["sessions"]] == ["session_1", "session_2", "session_4"]
    assert [t["id"] for t in conv["sessions"][1]["turns"]] == ["D2:3", "D2:4"]
    assert faults.drops == {"turn without text or photo caption": 2, "turn that is not an object": 1,
                            "session without a usable turn": 1}
    assert faults.examples["turn without text or photo caption"] == ["conv-9 session_2 turn 1 ('D2:1')",
                                                                      "conv-9 session_3 turn 1 ('D3:1')"]
    cut = faults.examples["turn that is not an object"][0]
    assert len(cut) == 200 and cut == f"conv-9 session_2 turn 2: {pasted!r}"[:200]
    assert faults.examples["session without a usable turn"] == ["conv-9 session_3"]


def test_a_turn_by_a_third_speaker_takes_the_role_its_position_alternates_to() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_1"].insert(1, _turn("Narrator", "D1:9", "They both laughed."))
    conv, faults = _converted(sample)
    turns = conv["sessions"][0]["turns"]
    assert [(t["speaker"], t["role"]) for t in turns] == [("Ana", "user"), ("Narrator", "assistant"),
                                                          ("Ben", "assistant")]
    assert faults.examples["turn speaker is neither speaker_a nor speaker_b, role by alternation"] == [
        "conv-9 session_1 turn 2: 'Narrator' -> assistant"]


def test_a_turn_without_a_speaker_name_is_kept_without_one() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_2"] += [_turn(None, "D2:2", "Who said that?"), _turn("  ", "D2:3", "Not me.")]
    conv, _ = _converted(sample)
    nameless = conv["sessions"][1]["turns"][1:]
    assert nameless == [{"id": "D2:2", "role": "assistant", "content": "Who said that?"},
                        {"id": "D2:3", "role": "user", "content": "Not me."}]


def test_a_dia_id_is_kept_as_written_even_out_of_step_with_the_turn_position() -> None:
    sample = locomo_sample([{**_ASK, "evidence": ["D1:3"]}])
    sample["conversation"]["session_1"][1]["dia_id"] = "D1:3"  # LoCoMo numbers its turns; a gap is not a fault
    conv, faults = _converted(sample)
    assert [t["id"] for t in conv["sessions"][0]["turns"]] == ["D1:1", "D1:3"]
    assert faults.repairs == {} and faults.drops == {}  # the question's evidence D1:3 names that turn


def test_an_unusable_dia_id_is_numbered_by_position_and_a_repairable_one_repaired() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_2"] += [_turn("Ben", "turn two", "Well done!"), _turn("Ana", "D2:03", "Thanks.")]
    conv, faults = _converted(sample)
    assert [t["id"] for t in conv["sessions"][1]["turns"]] == ["D2:1", "D2:2", "D2:3"]
    assert faults.examples["turn without a usable dia_id, numbered by position"] == [
        "conv-9 session_2 turn 2: 'turn two' -> 'D2:2'"]
    assert faults.examples["malformed evidence id (no D<session>:<turn> in it)"] == [
        "conv-9 session_2 turn 2: 'turn two'"]
    assert faults.examples["evidence id with leading zeros (D30:05), repaired"] == [
        "conv-9 session_2 turn 3: 'D2:03' -> 'D2:3'"]


def test_a_dia_id_that_is_not_text_is_logged_as_such_whatever_its_value() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_2"] += [_turn("Ben", None, "Well done!"), _turn("Ana", None, "Thanks.")]
    sample["conversation"]["session_2"][1]["dia_id"], sample["conversation"]["session_2"][2]["dia_id"] = 0, 7
    conv, faults = _converted(sample)
    assert [t["id"] for t in conv["sessions"][1]["turns"]] == ["D2:1", "D2:2", "D2:3"]
    assert faults.examples == {
        "evidence that is not text": ["conv-9 session_2 turn 2: 0", "conv-9 session_2 turn 3: 7"],
        "turn without a usable dia_id, numbered by position": ["conv-9 session_2 turn 2: 0 -> 'D2:2'",
                                                               "conv-9 session_2 turn 3: 7 -> 'D2:3'"],
    }


def test_a_dia_id_used_before_in_the_conversation_is_renamed_and_evidence_names_the_first() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["session_2"] += [_turn("Ben", "D1:1", "Sweden again?"), _turn("Ana", "D2:1", "Yes.")]
    conv, faults = _converted(sample)
    assert [t["id"] for t in conv["sessions"][1]["turns"]] == ["D2:1", "D1:1-2-2", "D2:1-2-3"]
    assert faults.examples["duplicate dia_id, renamed"] == ["conv-9 session_2 turn 2: 'D1:1' -> 'D1:1-2-2'",
                                                          "conv-9 session_2 turn 3: 'D2:1' -> 'D2:1-2-3'"]
    assert conv["items"][0]["sources"] == [{"session": "session_1", "turn": "D1:1"}]


def _entity_keys(item: dict) -> list[str]:
    return [key["key"] for key in item["keys"] if key.get("type") == "entity"]


def test_an_observation_item_is_keyed_by_the_speakers_it_names_or_else_by_its_speaker() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {
        "Ana": [["Ana visited Sweden.", "D1:1"], ["Pixel learned to fetch in Sweden.", "D1:1"],
                ["Ana told Ben about Sweden.", "D1:1"]],
        "": [["The lakes were cold.", "D1:1"]],  # a block under no name: no name key, and no key refused
    }
    conv, faults = _converted(sample)
    items = {item["content"]: item for item in conv["items"]}
    assert _entity_keys(items["Ana visited Sweden."]) == ["Ana", "Sweden"]  # Ben is not named: no Ben key
    assert _entity_keys(items["Pixel learned to fetch in Sweden."]) == ["Ana", "Sweden"]
    assert _entity_keys(items["Ana told Ben about Sweden."]) == ["Ana", "Ben", "Sweden"]
    assert [key["key"] for key in items["The lakes were cold."]["keys"]] == ["lakes", "cold"]
    assert faults.drops == {} and faults.repairs == {}


def test_an_item_is_observed_no_earlier_than_the_session_whose_observation_it_is() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_2_observation"]["Ana"] = [["Ana still talks about Sweden.", "D1:1"]]
    conv, _ = _converted(sample)
    recalled = next(item for item in conv["items"] if item["content"] == "Ana still talks about Sweden.")
    assert recalled["sources"] == [{"session": "session_1", "turn": "D1:1"}]
    assert recalled["observed_at"] == "2023-12-20T14:00:00Z"  # session 2's start, not session 1's


def test_an_observation_block_that_is_not_a_speaker_mapping_is_dropped_and_later_blocks_kept() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = [["Ana visited Sweden on 9 April 2023.", "D1:1"]]
    conv, faults = _converted(sample)
    assert [item["id"] for item in conv["items"]] == ["obs-2-1"]
    assert faults.drops == {"observation block that is not a speaker mapping": 1}
    assert faults.examples["observation block that is not a speaker mapping"] == ["conv-9 session_1_observation"]


def test_malformed_observation_entries_are_dropped_each_logged_and_the_speakers_other_facts_kept() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": [
        {"fact": "Ana visited Sweden."}, [], ["Ana loves Sweden."], "Ana visited Sweden in April.",
        [None, "D1:1"], ["", "D1:1"], ["Ana visited Sweden on 9 April 2023.", "D1:1"]]}
    conv, faults = _converted(sample)
    assert [(item["id"], item["content"]) for item in conv["items"]] == [
        ("obs-1-1", "Ana visited Sweden on 9 April 2023."), ("obs-2-1", "Ben's teammates won the cup.")]
    where = "conv-9 session_1_observation Ana"
    assert faults.drops == {"observation entry that is not [fact, evidence]": 2,
                            "observation fact with no evidence turn": 2, "observation fact without text": 2}
    assert faults.examples == {
        "observation entry that is not [fact, evidence]": [f"{where} #1: {{'fact': 'Ana visited Sweden.'}}",
                                                           f"{where} #2: []"],
        "observation fact with no evidence turn": [f"{where} #3: 'Ana loves Sweden.'",
                                                   f"{where} #4: 'Ana visited Sweden in April.'"],
        "observation fact without text": [f"{where} #5", f"{where} #6"],
    }


def test_a_long_malformed_entry_and_a_long_unsupported_fact_are_cut_in_their_examples() -> None:
    long_fact = "Ana visited Sweden in April and hiked around the lakes near Stockholm with her old friends."
    entry = {"fact": long_fact, "evidence": "D1:1", "note": long_fact}
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": [entry, [long_fact, "D9:9"]]}
    _, faults = _converted(sample)
    cut = faults.examples["observation entry that is not [fact, evidence]"][0]
    assert len(cut) == 200 and cut == f"conv-9 session_1_observation Ana #1: {entry!r}"[:200]
    assert faults.examples["evidence id pointing at no turn"] == ["conv-9 session_1_observation Ana #2: 'D9:9'"]
    assert faults.examples["observation fact with no evidence turn"] == [
        f"conv-9 session_1_observation Ana #2: {long_fact[:60]!r}"]


def test_an_observations_repaired_evidence_is_logged_at_the_fact() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"]["Ana"][0][1] = "D:1:1"
    conv, faults = _converted(sample)
    assert conv["items"][0]["sources"] == [{"session": "session_1", "turn": "D1:1"}]
    assert faults.examples == {"evidence id with a stray colon (D:11:26), repaired": [
        "conv-9 session_1_observation Ana #1: 'D:1:1' -> 'D1:1'"]}


def test_a_fact_longer_than_the_store_allows_is_cut_to_its_first_sentences_and_one_at_the_limit_kept_whole() -> None:
    from harness.importers.extract import MAX_ITEM_CHARS, fact_chunks

    diary = " ".join(f"On day {d} Ana walked around lake number {d} in Sweden." for d in range(1, 80))
    at_limit = ("Ana walked around the lakes of Sweden. " * 50)[:MAX_ITEM_CHARS - 1] + "."
    assert len(at_limit) == MAX_ITEM_CHARS and len(diary) > MAX_ITEM_CHARS
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": [[diary, "D1:1"], [at_limit, "D1:1"]]}
    conv, faults = _converted(sample)
    first, whole = conv["items"][:2]
    assert first["content"] == fact_chunks(diary)[0] and first["content"].endswith("lake number 33 in Sweden.")
    assert whole["content"] == at_limit
    assert faults.repairs == {"observation fact too long for the store, cut": 1}
    assert faults.examples["observation fact too long for the store, cut"] == [
        f"conv-9 session_1_observation Ana #1: {len(diary)} characters"]


def test_a_key_the_store_would_refuse_is_left_out_of_the_item_and_logged_with_its_start() -> None:
    laugh = "ha" * 175
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": [[f"Ana laughed {laugh} about Sweden.", "D1:1"]]}
    conv, faults = _converted(sample)
    assert [key["key"] for key in conv["items"][0]["keys"]] == ["Ana", "Sweden", "laughed"]
    kind = "key the memory store would refuse (over 256 code points or unprintable), left out"
    assert faults.drops == {kind: 1}
    assert faults.examples[kind] == [f"conv-9 session_1_observation Ana #1: 350 characters {'ha' * 20!r}..."]


def test_facts_under_a_speaker_that_are_not_a_list_make_no_item_and_are_logged() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": None, "Ben": "Ben paid $25,000 for his car."}
    conv, faults = _converted(sample)
    assert [item["id"] for item in conv["items"]] == ["obs-2-1"]
    assert faults.drops == {"observation facts of a speaker that are not a list": 2}
    assert faults.examples["observation facts of a speaker that are not a list"] == [
        "conv-9 session_1_observation Ana: None", "conv-9 session_1_observation Ben: 'Ben paid $25,000 for his car.'"]


def test_unusable_questions_are_dropped_each_logged_at_its_place_and_later_questions_kept() -> None:
    sample = locomo_sample([
        "Where did Ana travel?",
        {**_ASK, "question": "  "},
        {**_ASK, "answer": {"text": "Sweden, where Ana hiked around the lakes with her old friends in April"}},
        {**_ASK, "category": 7},
        {**_ASK, "question": "Where  did Ana\ntravel in April?"},
    ])
    conv, faults = _converted(sample)
    assert [(p["id"], p["probe"]["message"]) for p in conv["probes"]] == [("q005", "Where did Ana travel in April?")]
    assert faults.examples == {
        "QA entry that is not an object": ["conv-9 qa[0] (q001)"],
        "question without text": ["conv-9 qa[1] (q002)"],
        "question whose answer is not text or a number": [
            "conv-9 qa[2] (q003): a dict \"{'text': 'Sweden, where Ana hiked around the lakes with her \""],
        "question with an unknown category": ["conv-9 qa[3] (q004): 7"],
    }


def test_a_questions_evidence_faults_are_logged_at_the_question_and_its_good_id_kept() -> None:
    conv, faults = _converted(locomo_sample([{**_ASK, "evidence": ["D:1:1", "D9:9"]}]))
    assert probe(conv, "q001")["expect"]["relevant_items"] == ["obs-1-1"]
    assert faults.examples == {
        "evidence id with a stray colon (D:11:26), repaired": ["conv-9 qa[0] (q001): 'D:1:1' -> 'D1:1'"],
        "evidence id pointing at no turn": ["conv-9 qa[0] (q001): 'D9:9'"],
    }


def test_a_gold_number_glued_to_a_word_of_the_conversation_is_spaced_and_logged() -> None:
    sample = locomo_sample([{"question": "How many dogs does Ben have?", "answer": "3dogs", "evidence": ["D2:2"],
                             "category": 4}], texts=("I walk my dogs every morning.",))
    conv, faults = _converted(sample)
    expect = probe(conv, "q001")["expect"]
    assert passes("Ben has 3 dogs.", expect) and "'3 dogs'" in expect["rubric"]
    assert expect["f1_reference"] == "3dogs"  # the papers' metrics score the published gold
    assert faults.examples == {
        "gold with a number glued to a word, spaced": ["conv-9 qa[0] (q001): '3dogs' -> '3 dogs'"]}


def test_an_adversarial_questions_real_answer_is_repaired_like_any_gold_and_both_answers_logged() -> None:
    conv, faults = _converted(locomo_sample([
        {"question": "Did Ana visit Sweden in April?", "answer": "Yes, in Sweden on 9April, 2023",
         "adversarial_answer": "No", "evidence": ["D1:1"], "category": 5}]))
    real = probe(conv, "q001")
    assert real["expect"]["f1_reference"] == "Yes, in Sweden on 9April, 2023" and "abstain" not in real["expect"]
    assert "'Yes, in Sweden on 9 April, 2023'" in real["expect"]["rubric"]
    assert faults.examples == {
        "gold with a number glued to a word, spaced": [
            "conv-9 qa[0] (q001): 'Yes, in Sweden on 9April, 2023' -> 'Yes, in Sweden on 9 April, 2023'"],
        "adversarial question with a real gold answer, scored as that answer (not as abstention)": [
            "conv-9 qa[0] (q001): answer 'Yes, in Sweden on 9 April, 2023', adversarial_answer 'No'"],
    }


def test_a_trap_questions_rubric_tells_the_judge_what_the_conversation_says_of_someone_else() -> None:
    trap = {"question": "What did Ben name his dog?", "evidence": ["D1:1"], "category": 5}
    conv, faults = _converted(locomo_sample([{**trap, "adversarial_answer": "Pixel"}, trap]))
    assert probe(conv, "q001")["expect"]["rubric"] == (
        "A trap question: the conversation never says this of the person asked about (it says 'Pixel' of someone "
        "else). A correct answer says it is not mentioned.")
    bare = probe(conv, "q002")["expect"]
    assert bare == {"abstain": True, "rubric": "A trap question: the conversation never says this of the person "
                                               "asked about. A correct answer says it is not mentioned.",
                    "relevant_items": ["obs-1-1"]}
    assert faults.examples == {
        "adversarial question without adversarial_answer (kept, no canary)": ["conv-9 qa[1] (q002)"]}


def test_only_a_multi_hop_gold_is_split_on_a_lone_and() -> None:
    question = {"question": "What did Ana and Ben talk about?", "answer": "Sweden and movies", "evidence": ["D1:1"]}
    conv, _ = _converted(locomo_sample([{**question, "category": 1}, {**question, "category": 4},
                                        {**question, "category": 2}]))
    assert probe(conv, "q001")["expect"]["must_contain_groups"] == [["Sweden"], ["movies"]]
    for pid in ("q002", "q003"):
        expect = probe(conv, pid)["expect"]
        assert "must_contain_groups" not in expect and expect["must_contain_any"] == ["Sweden and movies"], pid


def test_a_sample_whose_questions_are_all_unusable_is_dropped_by_its_id() -> None:
    conv, faults = _converted(locomo_sample([{**_ASK, "category": 7}]))
    assert conv is None
    assert faults.examples["sample without a usable question"] == ["conv-9"]


def test_a_conversation_without_speaker_names_is_between_two_people() -> None:
    sample = locomo_sample([_ASK])
    del sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]
    conv, _ = _converted(sample)
    assert conv["title"] == "LoCoMo conv-9: two people"
    assert conv["description"] == ("A conversation between two people over 2 sessions; "
                                   "the LoCoMo benchmark's questions about it.")


def test_an_empty_speaker_name_is_left_out_of_the_title() -> None:
    sample = locomo_sample([_ASK])
    sample["conversation"]["speaker_b"] = ""
    conv, _ = _converted(sample)
    assert conv["title"] == "LoCoMo conv-9: Ana"
    assert conv["description"].startswith("A conversation between Ana over 2 sessions;")


def test_a_sample_without_sample_id_is_logged_with_the_name_it_was_given() -> None:
    sample = locomo_sample([_ASK])
    del sample["sample_id"]
    conv, faults = _converted(sample, index=7)
    assert conv["id"] == "sample-7"
    assert faults.examples == {"sample without sample_id, named by position": ["sample 7 -> 'sample-7'"]}


# --- the fault kinds and examples mutmut found unread (issue 29) ----------------------------------------------------

def test_a_sample_without_a_conversation_or_without_a_usable_session_is_dropped_by_name() -> None:
    for raw in ("not a sample", {"sample_id": "conv-9", "qa": []}, {"sample_id": "conv-9", "conversation": "text"}):
        conv, faults = _converted(raw, 3)
        assert conv is None and faults.examples == {"sample without a conversation object": ["sample 3"]}
    conv, faults = _converted({"sample_id": "conv-9", "conversation": {"speaker_a": "Ana"}, "qa": [_ASK]})
    assert conv is None and faults.examples == {"sample without a usable session": ["conv-9"]}


def test_an_evidence_id_written_another_way_is_repaired_under_its_own_kind() -> None:
    """Not a stray colon, not leading zeros: ``d1 : 3`` is D1:3 written loosely, and is said to be."""
    faults = FaultLog()
    assert parse_evidence("d1 : 3", "conv-9 qa[0] (q001)", faults) == ["D1:3"]
    assert faults.examples == {"evidence id in a non-standard form, repaired": ["conv-9 qa[0] (q001): 'd1 : 3' -> 'D1:3'"]}


def test_a_gold_of_two_glued_words_is_kept_and_reported_with_the_split_it_may_mean() -> None:
    from harness.importers.locomo import repaired_gold

    faults = FaultLog()
    assert repaired_gold("watchingmovies", {"watching", "movies"}, "conv-9 qa[0] (q001)", faults) == "watchingmovies"
    assert faults.examples == {"gold with glued words, kept (its check may be unpassable)": [
        "conv-9 qa[0] (q001): 'watchingmovies' (watching movies?)"]}


def test_a_misspelled_gold_is_kept_and_reported_with_the_spelling_an_answer_would_use_and_an_english_word_is_not(
        ) -> None:
    """LoCoMo conv-42/q004 ``21Janury`` and conv-42/q086 ``filmmaker``. Bug planted: the importer still reported
    every gold word absent from the conversation that splits in two ('filmmaker' (film maker?) was its example)."""
    from harness.importers.locomo import repaired_gold

    faults = FaultLog()
    words = {"film", "maker", "2022"}
    assert repaired_gold("21Janury, 2022", words, "conv-42 qa[3] (q004)", faults) == "21Janury, 2022"
    assert repaired_gold("filmmaker.", words, "conv-42 qa[85] (q086)", faults) == "filmmaker"
    assert faults.examples == {"misspelled gold, kept (its check is unpassable as written)": [
        "conv-42 qa[3] (q004): '21Janury' (an answer would write '21 January')"]}


def test_a_question_whose_answer_is_empty_text_is_dropped_as_without_an_answer() -> None:
    conv, faults = _converted(locomo_sample([{**_ASK, "answer": "  "}, _ASK]))
    assert [p["id"] for p in conv["probes"]] == ["q002"]
    assert faults.examples == {"question without an answer": ["conv-9 qa[0] (q001)"]}


def test_an_adversarial_question_scored_as_its_real_answer_is_tagged_so_and_no_other_probe_is() -> None:
    conv, _ = _converted(locomo_sample([
        {"question": "Did Ana visit Sweden?", "answer": "Yes", "adversarial_answer": "No", "evidence": ["D1:1"],
         "category": 5},
        {"question": "Did Ben visit Peru?", "adversarial_answer": "Yes", "evidence": ["D1:2"], "category": 5},
        _ASK]))
    assert [p.get("tags") for p in conv["probes"]] == [["adversarial-with-answer"], None, None]


def test_facts_under_a_speaker_that_are_not_a_list_are_quoted_in_an_example_cut_at_200_characters() -> None:
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": "x" * 500}
    _, faults = _converted(sample)
    (example,) = faults.examples["observation facts of a speaker that are not a list"]
    assert example == f"conv-9 session_1_observation Ana: {'x' * 500!r}"[:200] and len(example) == 200


def test_an_observation_fact_of_invisible_characters_only_is_a_fact_without_text() -> None:
    """Not empty as written, but empty once the store drops its zero-width characters: dropped, not an item."""
    sample = locomo_sample([_ASK])
    sample["observation"]["session_1_observation"] = {"Ana": [["\u200b\u200d\u200b", "D1:1"],
                                                              ["Ana visited Sweden on 9 April 2023.", "D1:1"]]}
    conv, faults = _converted(sample)
    assert faults.examples["observation fact without text"] == ["conv-9 session_1_observation Ana #1"]
    assert [item["content"] for item in conv["items"]][0] == "Ana visited Sweden on 9 April 2023."
