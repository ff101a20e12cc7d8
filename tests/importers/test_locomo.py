"""``recall-eval import locomo``: the mapping of LoCoMo's published shape onto conversation files."""

from __future__ import annotations

from pathlib import Path

from harness.importers.faults import FaultLog
from harness.importers.locomo import CATEGORIES, SYSTEM_PROMPT, convert_sample
from tests.importers.importer_fixtures import LOCOMO, imported, passes, probe, read_yaml, source


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


def test_every_answered_probe_has_the_gold_as_f1_reference_and_rubric(tmp_path: Path) -> None:
    for p in _conv(tmp_path)["probes"]:
        if p["category"] != "adversarial":
            gold = p["expect"]["f1_reference"]
            assert gold and repr(gold) in p["expect"]["rubric"]


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
