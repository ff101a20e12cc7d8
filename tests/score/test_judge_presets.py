"""Judge presets that follow LoCoMo's and LongMemEval's grading protocols, and --judge-prompt FILE (no network)."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.score import JUDGE_PRESETS, Judge, JudgePromptError, judge_prompt
from harness.score.judge_presets import JudgeCase, fill_template, from_file, preset, read_reply


class _Scripted:
    """A judge completer that records every prompt and replies with ``reply``."""

    def __init__(self, reply: str = '{"label": "CORRECT", "reason": "scripted"}') -> None:
        self.reply = reply
        self.prompts: list[list[dict[str, str]]] = []

    def __call__(self, model, messages):
        self.prompts.append(messages)
        return self.reply


def _text(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages)


def test_locomo_preset_shows_question_gold_and_answer_and_reads_correct_or_wrong(tmp_path) -> None:
    completer = _Scripted()
    judge = Judge(model="test/j", cache_dir=tmp_path, complete=completer, prompt=preset("locomo"))
    got = judge("When did Caroline go hiking?", "rubric", ["7 May 2023"], "On May 7th, 2023.", gold="7 May 2023",
                category="temporal")
    sent = _text(completer.prompts[0])
    assert got.verdict == "pass" and got.prompt_version == "locomo-v1"
    assert "When did Caroline go hiking?" in sent and "Gold answer: 7 May 2023" in sent and "On May 7th, 2023." in sent
    assert "CORRECT" in sent and "WRONG" in sent and "another format" in sent
    for leak in ("recall", "history_only", "memory_search"):
        assert leak not in sent
    completer.reply = '{"label": "WRONG", "reason": "other date"}'
    assert judge("Q?", "r", [], "In June.", gold="7 May 2023").verdict == "fail"


def test_locomo_preset_grades_an_adversarial_question_on_saying_it_is_not_mentioned(tmp_path) -> None:
    completer = _Scripted()
    judge = Judge(model="test/j", cache_dir=tmp_path, complete=completer, prompt=preset("locomo"))
    judge("Did Melanie adopt a dog?", "A trap question", [], "The conversation does not say.", abstain=True)
    sent = _text(completer.prompts[0])
    assert "never says" in sent and "Gold answer" not in sent


@pytest.mark.parametrize(("category", "abstain", "present", "absent"), [
    ("temporal", False, "off-by-one", "earlier value"),
    ("knowledge_update", False, "earlier value", "off-by-one"),
    ("single_session_preference", False, "Rubric: wants vegan recipes", "Correct answer"),
    ("multi_session", True, "says it cannot answer", "Correct answer"),
    ("multi_session", False, "Correct answer: 3", "off-by-one"),
])
def test_longmemeval_preset_instruction_depends_on_the_question_type(tmp_path, category, abstain, present,
                                                                      absent) -> None:
    """Bug planted: one instruction for every type (the category ignored): the type's rule goes missing."""
    completer = _Scripted('{"label": "yes", "reason": "scripted"}')
    judge = Judge(model="test/j", cache_dir=tmp_path, complete=completer, prompt=preset("longmemeval"))
    gold = "wants vegan recipes" if category == "single_session_preference" else "3"
    got = judge("How many?", "wants vegan recipes", [], "Three.", gold=None if abstain else gold,
                category=category, abstain=abstain)
    sent = _text(completer.prompts[0])
    assert got.verdict == "pass" and present in sent and absent not in sent


def test_protocol_replies_are_read_by_label_or_first_word() -> None:
    """Bug planted: 'No' read as a pass (any reply with a word in it) or 'yes' in JSON ignored."""
    assert read_reply("Yes.")[0] == "pass" and read_reply("no")[0] == "fail"
    assert read_reply('{"label": "WRONG"}')[0] == "fail" and read_reply('```json\n{"label": "yes"}\n```')[0] == "pass"
    assert read_reply("The label is CORRECT")[0] == "pass"
    verdict, reason = read_reply("I cannot decide")
    assert verdict == "fail" and "unparseable" in reason


def test_judge_prompt_file_is_used_verbatim_and_recorded_by_sha256(tmp_path) -> None:
    text = 'I will give you a question, a correct answer and a response.\nQuestion: {}\nCorrect Answer: {}\n' \
           'Model Response: {}\nAnswer yes or no only. {"keep": "these braces"}'
    path = tmp_path / "official.txt"
    path.write_text(text, encoding="utf-8")
    prompt = from_file(path)
    completer = _Scripted("yes")
    judge = Judge(model="test/j", cache_dir=tmp_path / "cache", complete=completer, prompt=prompt)
    assert judge("How many?", "r", [], "Three.", gold="3").verdict == "pass"
    sent = completer.prompts[0]
    assert sent == [{"role": "user", "content": text.replace("{}", "How many?", 1).replace("{}", "3", 1)
                     .replace("{}", "Three.", 1)}]
    assert prompt.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert judge.describe_prompt() == {"name": "file official.txt", "version": f"file-{prompt.sha256[:16]}",
                                       "sha256": prompt.sha256, "file": str(path)}


def test_named_placeholders_fill_and_other_braces_stay() -> None:
    case = JudgeCase(question="q?", gold="Paris", answer="paris", rubric="R", category="single_hop")
    assert fill_template("{question}|{gold_answer}|{generated_answer}|{rubric}|{category}|{other}", case) == \
        "q?|Paris|paris|R|single_hop|{other}"


def test_grades_are_cached_per_prompt_hash(tmp_path) -> None:
    """Bug planted: the cache keyed without the prompt version: a second prompt replayed the first's grades."""
    completer = _Scripted("yes")
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("Q {question} G {gold} A {answer}? yes or no", encoding="utf-8")
    two.write_text("Q {question} G {gold} A {answer}? yes or no", encoding="utf-8")
    args = ("How many?", "r", [], "Three.")
    Judge(model="test/j", cache_dir=tmp_path / "c", complete=completer, prompt=from_file(one))(*args, gold="3")
    again = Judge(model="test/j", cache_dir=tmp_path / "c", complete=completer, prompt=from_file(two))(*args, gold="3")
    assert len(completer.prompts) == 1 and again.cached  # same text, same hash: one grade
    two.write_text("Different wording. Q {question} G {gold} A {answer}", encoding="utf-8")
    Judge(model="test/j", cache_dir=tmp_path / "c", complete=completer, prompt=from_file(two))(*args, gold="3")
    assert len(completer.prompts) == 2


def test_preset_and_prompt_file_mistakes_are_one_line_errors_naming_the_file(tmp_path) -> None:
    with pytest.raises(JudgePromptError, match="missing.txt: cannot read it"):
        judge_prompt(None, tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(JudgePromptError, match="empty.txt: the file is empty"):
        judge_prompt(None, empty)
    blind = tmp_path / "blind.txt"
    blind.write_text("Grade {question} against {gold}.", encoding="utf-8")
    with pytest.raises(JudgePromptError, match="no placeholder for the answer"):
        judge_prompt(None, blind)
    with pytest.raises(JudgePromptError, match="both given"):
        judge_prompt("locomo", blind)
    with pytest.raises(JudgePromptError, match="use one of locomo, longmemeval"):
        judge_prompt("mem0", None)
    assert judge_prompt(None, None) is None


def test_cli_preset_choices_are_the_presets() -> None:
    from harness.cli.flags import JUDGE_PRESET_CHOICES

    assert JUDGE_PRESET_CHOICES == JUDGE_PRESETS


def test_strict_judge_records_its_prompt_hash_too(tmp_path) -> None:
    judge = Judge(model="test/j", cache_dir=tmp_path, complete=_Scripted(json.dumps({"verdict": "pass"})))
    described = judge.describe_prompt()
    assert described["name"] == "strict" and described["version"] == "strict-v2" and len(described["sha256"]) == 64


@pytest.mark.parametrize("name", ["locomo", "longmemeval"])
def test_each_preset_sends_its_instructions_as_the_system_message_then_the_case_as_the_user_message(name) -> None:
    case = JudgeCase(question="Which port?", gold="5433", answer="Port 5433.", category="single_session_user")
    messages = preset(name).messages(case)
    assert [m["role"] for m in messages] == ["system", "user"] and sorted(messages[0]) == ["content", "role"]
    assert "Which port?" in messages[1]["content"] and "Which port?" not in messages[0]["content"]


def test_longmemeval_falls_back_to_whichever_reference_the_case_has() -> None:
    """An unanswerable case without an explanation shows its rubric; a preference case without a rubric its gold;
    a preference case gets the preference instruction, any other type the base one and nothing more."""
    lme = preset("longmemeval")
    unanswerable = lme.messages(JudgeCase(question="Q?", gold="", answer="A.", rubric="never said", abstain=True))
    assert "Explanation of why it cannot be answered: never said" in unanswerable[1]["content"]
    preference = lme.messages(JudgeCase(question="Q?", gold="likes tea", answer="A.", category="single_session_preference"))
    assert "Rubric: likes tea" in preference[1]["content"]
    other = lme.messages(JudgeCase(question="Q?", gold="g", answer="A.", category="not_a_longmemeval_type"))
    base = lme.messages(JudgeCase(question="Q?", gold="g", answer="A.", category="single_session_user"))
    assert preference[0]["content"] != other[0]["content"] and other[0]["content"] == base[0]["content"]
    assert "XX" not in other[0]["content"]


def test_a_replys_reason_comes_from_reason_then_reasoning_else_the_label_word() -> None:
    """The reason a report shows beside a protocol grade: the judge's own words when it gave any."""
    assert read_reply('{"label": "CORRECT", "reason": "  same date "}') == ("pass", "same date")
    assert read_reply('{"label": "WRONG", "reasoning": "another city"}') == ("fail", "another city")
    assert read_reply('{"label": "yes", "reason": "first", "reasoning": "second"}') == ("pass", "first")
    assert read_reply('{"label": "WRONG"}') == ("fail", "wrong")
    assert read_reply('{"label": "no", "reason": ""}') == ("fail", "no")
    assert read_reply('{"verdict": "pass", "reason": "ok"}') == ("pass", "ok")
    assert read_reply("Yes, the same port.") == ("pass", "yes")


def test_a_pretty_printed_json_reply_is_read_across_its_lines() -> None:
    reply = '{\n  "verdict": "pass",\n  "reason": "Wrong format, same day"\n}'
    assert read_reply(reply) == ("pass", "Wrong format, same day")


def test_braces_before_the_json_reply_do_not_hide_it() -> None:
    """A judge that quotes a template's ``{gold}`` before its JSON verdict is still read by the JSON."""
    assert read_reply('Comparing {gold} with the response: {"label": "yes", "reason": "same"}') == ("pass", "same")
    assert read_reply('{"note": "no label here"} {"label": "yes", "reason": "second object"}') == \
        ("pass", "second object")


def test_an_unreadable_reply_is_a_fail_quoting_at_most_200_characters() -> None:
    assert read_reply("") == ("fail", "unparseable judge reply: ''")
    assert read_reply(None) == ("fail", "unparseable judge reply: ''")  # type: ignore[arg-type]
    assert read_reply("x" * 300) == ("fail", f"unparseable judge reply: {'x' * 200!r}")


def test_an_unreadable_prompt_file_says_why_in_the_systems_words(tmp_path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(JudgePromptError) as raised:
        from_file(missing)
    assert str(raised.value) == f"--judge-prompt {missing}: cannot read it (No such file or directory); " \
                                "pass a UTF-8 text file"
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("Réponse: {answer}".encode("latin-1"))
    with pytest.raises(JudgePromptError, match=r"latin1.txt: cannot read it \('utf-8' codec can't decode"):
        from_file(latin)


def test_prompt_file_and_preset_mistakes_say_how_to_fix_them(tmp_path) -> None:
    blind = tmp_path / "blind.txt"
    blind.write_text("Grade {question} against {gold}.", encoding="utf-8")
    with pytest.raises(JudgePromptError) as raised:
        judge_prompt(None, blind)
    assert str(raised.value) == f"--judge-prompt {blind}: no placeholder for the answer to grade; write {{answer}} " \
                                "(or three {} for question, gold and answer) where it goes"
    with pytest.raises(JudgePromptError) as raised:
        judge_prompt("locomo", blind)
    assert str(raised.value) == "--judge-preset and --judge-prompt both given; pass one (a prompt file replaces the " \
                                "preset's prompts for every question)"


@pytest.mark.parametrize("name", ["locomo", "longmemeval"])
def test_a_preset_asked_for_by_name_describes_itself_by_that_name_version_and_hash(name) -> None:
    described = judge_prompt(name, None).describe()
    assert described["name"] == name and described["version"] == f"{name}-v1" and described["file"] is None
    assert len(described["sha256"]) == 64 and int(described["sha256"], 16) >= 0


def test_the_preset_hashes_are_pinned_so_a_changed_prompt_never_reuses_old_grades() -> None:
    """The hash names the prompt in the judge cache and summary.json: a preset whose texts (or their joining)
    changed without a new version would silently mix grades of two prompts. Update these only with a new version."""
    assert preset("locomo").sha256 == "92a0466e385a8719b26670ba0eca43bb8959d0c2b712b59ae1f89944dc1a2d52"
    assert preset("longmemeval").sha256 == "ad1bb2152553dc12c0f21cb821f7691f7ced3e3d679d226220bf913050307599"


@pytest.mark.parametrize("text", ["_LOCOMO_SYSTEM", "_LOCOMO_ABSTAIN"])
def test_the_locomo_hash_covers_both_of_its_instructions(monkeypatch, text) -> None:
    from harness.score import judge_presets

    before = preset("locomo").sha256
    monkeypatch.setattr(judge_presets, text, getattr(judge_presets, text) + " Be strict.")
    assert preset("locomo").sha256 != before


def test_a_fourth_bare_placeholder_is_left_as_written() -> None:
    case = JudgeCase(question="q?", gold="Paris", answer="paris")
    assert fill_template("{} | {} | {} | {}", case) == "q? | Paris | paris | {}"
