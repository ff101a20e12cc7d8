"""The strict, blind, cached judge and its calibration (no network)."""

from __future__ import annotations

import json
import os

import pytest

from harness.score.judge import Judge, build_messages, calibrate, load_calibration, parse_verdict


class _Scripted:
    """A completer that passes exactly the answers containing one of ``needles``; records prompts."""

    def __init__(self, *needles: str) -> None:
        self.needles = needles
        self.prompts: list[list[dict[str, str]]] = []

    def __call__(self, model, messages):
        self.prompts.append(messages)
        answer = messages[-1]["content"].split("<<<")[-1]
        verdict = "pass" if any(n in answer for n in self.needles) else "fail"
        return json.dumps({"verdict": verdict, "reason": f"scripted {verdict}"})


def test_parse_verdict_tolerates_fences_and_prose():
    assert parse_verdict('```json\n{"verdict": "PASS", "reason": "states it"}\n```') == ("pass", "states it")
    assert parse_verdict('Sure. {"verdict": "fail", "reason": "vague"} Hope that helps')[0] == "fail"
    assert parse_verdict("verdict: pass")[0] == "pass"


def test_unparseable_reply_is_a_fail():
    verdict, reason = parse_verdict("I think it is fine")
    assert verdict == "fail" and "unparseable" in reason


def test_prompt_is_strict_and_blind_to_the_arm():
    messages = build_messages("Which port?", "Pass only if 5173.", ["5173"], "It is 5173.")
    text = json.dumps(messages)
    assert "vague" in text and "FAIL" in text
    for leak in ("recall", "history_only", "tool_calls", "memory_search"):
        assert leak not in text


def test_verdicts_are_cached_on_disk(tmp_path):
    completer = _Scripted("5173")
    judge = Judge(model="test/m", cache_dir=tmp_path, complete=completer)
    first = judge("Which port?", "Pass only if 5173.", ["5173"], "It is 5173.")
    again = Judge(model="test/m", cache_dir=tmp_path, complete=completer)("Which port?", "Pass only if 5173.",
                                                                           ["5173"], "It is 5173.")
    assert first.verdict == again.verdict == "pass" and again.cached and len(completer.prompts) == 1
    other_model = Judge(model="test/other", cache_dir=tmp_path, complete=completer)
    other_model("Which port?", "Pass only if 5173.", ["5173"], "It is 5173.")
    assert len(completer.prompts) == 2


def test_corrupt_cached_verdict_is_asked_again_and_rewritten(tmp_path):
    completer = _Scripted("5173")
    Judge(model="test/m", cache_dir=tmp_path, complete=completer)("Which port?", "R", ["5173"], "It is 5173.")
    (cached,) = tmp_path.glob("*.json")
    cached.write_text('{"verdict": "pa', encoding="utf-8")
    again = Judge(model="test/m", cache_dir=tmp_path, complete=completer)("Which port?", "R", ["5173"], "It is 5173.")
    assert again.verdict == "pass" and not again.cached and len(completer.prompts) == 2
    assert json.loads(cached.read_text(encoding="utf-8"))["verdict"] == "pass"

def test_calibration_reports_false_positive_and_negative_rates(tmp_path):
    items = load_calibration()
    assert len(items) >= 12 and sum(i["label"] == "fail" for i in items) >= 6
    generous = Judge(model="test/generous", cache_dir=tmp_path, complete=lambda m, msgs: '{"verdict":"pass","reason":"ok"}')
    result = calibrate(generous)
    assert result.false_positive_rate == 1.0 and result.false_negative_rate == 0.0 and result.n == len(items)


def test_judge_through_litellm_custom_provider(tmp_path):
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = pytest.importorskip("litellm")
    from litellm import CustomLLM

    class _Fail(CustomLLM):
        def completion(self, *args, **kwargs):
            return litellm.completion(model="gpt-3.5-turbo", messages=kwargs.get("messages") or args[1],
                                      mock_response='{"verdict": "fail", "reason": "vague"}')

    before = list(getattr(litellm, "custom_provider_map", None) or [])
    litellm.custom_provider_map = before + [{"provider": "judgetest", "custom_handler": _Fail()}]
    try:
        verdict = Judge(model="judgetest/strict", cache_dir=tmp_path)("Q?", "R", ["x"], "vague answer")
    finally:
        litellm.custom_provider_map = before
    assert verdict.verdict == "fail" and verdict.reason == "vague"


# ---- the rubric judge sees every positive check ----

def test_rubric_judge_receives_every_positive_check(tmp_path):
    from harness.analysis.verdict import VerdictConfig
    from harness.records import RunManifest
    from harness.report import build_summary
    from tests.score.scoring_factories import make_record, make_scenario

    sc = make_scenario(expect={"rubric": "Pass only if it names sqlc and why.", "must_contain_any": ["n+1", "preload"],
                               "must_contain_all": ["sqlc"], "must_match": [r"gorm\s+preload"],
                               "adherence": {"must_match": [r"^- "], "must_contain_all": ["bullet"]}})
    completer = _Scripted("sqlc")
    judge = Judge(model="test/m", cache_dir=tmp_path, complete=completer)
    manifest = RunManifest(run_id="r", harness_version="0", status="complete", started_at="t", models=["m"],
                           arms=["recall"], epochs=1, seed=0, scenario_paths=[], scenario_ids=[sc.id],
                           suite_hash="x", sample_count=1)
    build_summary(manifest, [make_record(sc, "sqlc, because of N+1")], {sc.id: sc}, config=VerdictConfig(), judge=judge)
    prompt = completer.prompts[0][-1]["content"]
    assert 'states all of: "sqlc"' in prompt and 'states at least one of: "n+1" | "preload"' in prompt
    assert r"matches the regular expression /gorm\s+preload/ (case-insensitive)" in prompt
    assert r"its output matches the regular expression /^- /" in prompt
    assert 'its output states all of: "bullet"' in prompt


def test_expected_facts_show_regexes_as_regexes():
    from harness.scenarios.models import AnswerCheck
    from harness.score.judge import expected_facts

    lines = expected_facts(AnswerCheck(must_match=[r"indent_size\s*=\s*2"]))
    assert lines == [r"matches the regular expression /indent_size\s*=\s*2/ (case-insensitive)"]
    assert expected_facts(AnswerCheck(must_not_contain=["tabs"])) == []  # negative checks are not facts


# ---- Cohen's kappa ----

@pytest.mark.parametrize(("labels", "predictions", "kappa"), [
    ([1, 1, 0, 0], [1, 0, 0, 0], 0.5),
    ([1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], 0.0),          # never flags: 67% agreement, no skill
    ([1, 0, 1, 0], [0, 1, 0, 1], -1.0),
    ([1, 1, 1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0, 0, 0, 0], 1 - 0.2 / (1 - 0.58)),
])
def test_cohen_kappa_corrects_agreement_for_chance(labels, predictions, kappa):
    from harness.score.judge import cohen_kappa

    assert cohen_kappa([bool(x) for x in labels], [bool(x) for x in predictions]) == pytest.approx(kappa)


def test_cohen_kappa_is_none_when_undefined():
    from harness.score.judge import cohen_kappa

    assert cohen_kappa([], []) is None and cohen_kappa([True, True], [True, True]) is None


def test_rubric_calibration_reports_kappa(tmp_path):
    honest = Judge(model="test/honest", cache_dir=tmp_path, complete=_LabelJudge())
    result = calibrate(honest)
    assert result.as_dict() == {"false_positive_rate": 0.0, "false_negative_rate": 0.0, "cohen_kappa": 1.0,
                                "n": len(load_calibration())}


class _LabelJudge:
    """A rubric completer that returns each calibration item's own label (a perfect judge)."""

    def __init__(self) -> None:
        self.labels = {item["answer"]: item["label"] for item in load_calibration()}

    def __call__(self, model, messages):
        answer = messages[-1]["content"].split("<<<\n")[-1].rsplit("\n>>>", 1)[0]
        return json.dumps({"verdict": self.labels[answer], "reason": "label"})


# ---- the less-travelled branches (issue 29: each test named by the bug it catches) ----

def _calibration_file(tmp_path, items) -> os.PathLike[str]:
    path = tmp_path / "calibration.yaml"
    path.write_text(json.dumps({"items": items}), encoding="utf-8")  # JSON is YAML
    return path


def test_calibration_shows_the_judge_each_items_expected_facts_and_lists_exactly_its_mistakes(tmp_path):
    from harness.score.judge import calibrate

    items = [
        {"id": "port", "question": "Which port?", "rubric": "Names the port.", "expected": ['states all of: "5173"'],
         "answer": "It runs on 5173.", "label": "pass"},
        {"id": "vague", "question": "Which port?", "rubric": "Names the port.", "expected": ['states all of: "5173"'],
         "answer": "The usual dev port.", "label": "fail"},
        {"id": "bare", "question": "Which editor?", "rubric": "Says it does not know.",  # no expected facts
         "answer": "I do not know.", "label": "pass"},
    ]

    asked = []

    def completer(model, messages):  # passes when the prompt's expected facts name a number the answer states
        user = messages[-1]["content"]
        asked.append(user.split("\n\nExpected facts:")[0])
        facts, answer = user.split("Expected facts:")[1].split("Answer to grade:")
        verdict = "pass" if "5173" in facts and "5173" in answer else "fail"
        return json.dumps({"verdict": verdict, "reason": f"facts said {facts.strip()[:20]}"})

    result = calibrate(Judge(model="test/m", cache_dir=tmp_path, complete=completer), _calibration_file(tmp_path, items))
    assert result.n == 3
    assert result.mistakes == [{"id": "bare", "label": "pass", "verdict": "fail", "reason": "facts said - (see rubric)"}]
    assert (result.false_positive_rate, result.false_negative_rate) == (0.0, 0.5)
    assert asked == [f"Question asked:\n{i['question']}\n\nRubric:\n{i['rubric']}" for i in items]


def test_a_calibration_label_outside_pass_and_fail_is_refused_naming_the_item(tmp_path):
    from harness.score.judge import JudgeError, load_calibration

    path = _calibration_file(tmp_path, [{"question": "q", "rubric": "r", "answer": "a", "label": "pass"},
                                        {"question": "q", "rubric": "r", "answer": "a", "label": "PASS"}])
    with pytest.raises(JudgeError) as caught:
        load_calibration(path)
    assert str(caught.value) == f"{path}: items[1].label is 'PASS'; use 'pass' or 'fail'"


def test_a_calibration_file_without_items_is_empty_and_a_broken_one_names_its_first_problem(tmp_path):
    from harness.score.judge import JudgeError, load_labelled

    empty = tmp_path / "empty.yaml"
    empty.write_text("version: 1\n", encoding="utf-8")
    assert load_labelled(empty, ("ungrounded", "grounded")) == []
    listed = tmp_path / "list.yaml"
    listed.write_text("- label: pass\n", encoding="utf-8")  # not a mapping: no items
    assert load_labelled(listed, ("pass", "fail")) == []
    broken = tmp_path / "broken.yaml"
    broken.write_text("items: []\nitems: []\nversion: 1\nversion: 2\n", encoding="utf-8")  # two duplicate keys
    with pytest.raises(JudgeError) as caught:
        load_labelled(broken, ("pass", "fail"))
    assert "broken.yaml" in str(caught.value) and "items" in str(caught.value) and "version" not in str(caught.value)


def test_rates_divide_by_the_count_of_each_class_and_are_unknown_without_one():
    from harness.score.judge import rates

    # 3 positives, 2 missed; 2 negatives, 1 flagged
    fp, fn, _ = rates([True, True, True, False, False], [True, False, False, True, False])
    assert (fp, fn) == (0.5, pytest.approx(2 / 3))
    assert rates([True, True], [True, False])[:2] == (None, 0.5)   # no negatives: FP rate unknown, not 0
    assert rates([False, False], [True, False])[:2] == (0.5, None)  # no positives: FN rate unknown
    with pytest.raises(ValueError):  # labels and predictions out of step are a bug, never a shorter count
        rates([True, False, True], [True, False])


def test_the_strict_prompt_is_described_by_its_name_version_and_hash_with_no_file():
    import hashlib

    from harness.score.judge import _SYSTEM, PROMPT_VERSION

    assert Judge(model="test/m").describe_prompt() == {
        "name": "strict", "version": PROMPT_VERSION, "sha256": hashlib.sha256(_SYSTEM.encode("utf-8")).hexdigest(),
        "file": None}


def test_expected_facts_keep_non_ascii_words_and_write_groups_and_an_adherence_output_apart():
    from harness.scenarios.models import AnswerCheck
    from harness.score.judge import expected_facts

    check = AnswerCheck(must_contain_all=["Café Müller", "Zürich"], must_contain_any=["Łódź", "Lodz"],
                        must_contain_groups=[["Paris"], ["Köln", "Cologne"]])
    assert expected_facts(check, AnswerCheck(must_contain_all=["naïve"], must_match=["^ok$"])) == [
        'states all of: "Café Müller", "Zürich"',
        'states at least one of: "Łódź" | "Lodz"',
        'states every one of these, in any order (one wording per bracket): ("Paris"), ("Köln" | "Cologne")',
        'its output states all of: "naïve"',
        "its output matches the regular expression /^ok$/ (case-insensitive)",
    ]
    assert expected_facts(None, AnswerCheck(must_contain_any=["x"])) == ['its output states at least one of: "x"']


def test_the_strict_prompt_is_exactly_a_system_message_and_the_case_under_its_headings():
    from harness.score.judge import _SYSTEM

    assert build_messages("Which port?", "Names it.", ['states all of: "5173"', "matches /51\\d\\d/"], "5173.") == [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": 'Question asked:\nWhich port?\n\nRubric:\nNames it.\n\nExpected facts:\n'
                                    '- states all of: "5173"\n- matches /51\\d\\d/\n\nAnswer to grade:\n<<<\n5173.\n>>>'}]
    assert "Expected facts:\n- (see rubric)\n\n" in build_messages("q", "r", [], "a")[1]["content"]


def test_the_cache_key_is_stable_across_versions_and_blind_to_the_order_of_a_messages_keys():
    from harness.score.judge import cache_key

    messages = [{"role": "user", "content": "Which port?"}]
    # a persisted format: verdicts cached by an earlier release must still be found (and this digest changes only
    # with the fields the key covers: model, prompt version, messages)
    key = cache_key("openai/gpt-x", "strict-v2", messages)
    assert key == "cd31f776b651c1c206608990af6c402ccf54036ddb033b86e9a2a4e010e4b7f4"
    assert cache_key("openai/gpt-x", "strict-v2", [{"content": "Which port?", "role": "user"}]) == key
    assert len({key, cache_key("openai/gpt-y", "strict-v2", messages), cache_key("openai/gpt-x", "strict-v3", messages),
                cache_key("openai/gpt-x", "strict-v2", [{"role": "user", "content": "Which editor?"}])}) == 4


def test_a_judge_counts_its_calls_and_cache_hits_and_files_each_verdict_under_its_prompt_version(tmp_path):
    from harness.score.judge import PROMPT_VERSION, cache_key

    completer = _Scripted("5173")
    judge = Judge(model="test/m", cache_dir=tmp_path, complete=completer)
    judge("Which port?", "Names it.", ["5173"], "It is 5173.")
    judge("Which editor?", "Names it.", ["vim"], "Emacs.")
    assert (judge.calls, judge.cached) == (2, 0)
    judge("Which port?", "Names it.", ["5173"], "It is 5173.")
    judge("Which editor?", "Names it.", ["vim"], "Emacs.")
    assert (judge.calls, judge.cached) == (2, 2)
    assert completer.prompts[0] == build_messages("Which port?", "Names it.", ["5173"], "It is 5173.")
    key = cache_key("test/m", PROMPT_VERSION, completer.prompts[0])
    assert json.loads((tmp_path / f"{key}.json").read_text(encoding="utf-8"))["verdict"] == "pass"


def test_a_preset_judge_sees_the_rubric_the_gold_or_the_expected_facts_and_no_invented_category(tmp_path):
    from harness.score.judge_presets import JudgePrompt

    cases = []
    prompt = JudgePrompt(name="probe", version="probe-v1", sha256="0" * 64,
                         build=lambda case: cases.append(case) or [{"role": "user", "content": repr(case)}],
                         parse=lambda raw: ("pass", raw))
    judge = Judge(model="test/m", cache_dir=tmp_path, complete=lambda m, msgs: "ok", prompt=prompt)
    judge("Which port?", "Names the port.", ["5173", "5174"], "5173")
    judge("Which port?", "Names the port.", [], "5173", gold="5173", category="single_hop", abstain=True)
    judge("Which port?", "Names the port.", [], "5173")
    assert [(c.gold, c.rubric, c.category, c.abstain) for c in cases] == [
        ("5173; 5174", "Names the port.", "", False),       # no gold: the expected facts are the reference
        ("5173", "Names the port.", "single_hop", True),
        ("Names the port.", "Names the port.", "", False),  # neither: the rubric is
    ]


def test_a_reply_is_read_past_broken_json_and_prose_and_anything_unclear_is_a_fail_that_says_why():
    from harness.score.judge import parse_verdict

    assert parse_verdict('I think {not json} but then {"verdict": "pass", "reason": "names 5173"}') == (
        "pass", "names 5173")
    assert parse_verdict('Here:\n{"verdict":\n "fail",\n "reason": "vague"}\nThanks') == ("fail", "vague")
    assert parse_verdict('{"verdict": "PASS"}') == ("pass", "(no reason given)")
    assert parse_verdict('{"verdict": "pass", "reason": null}') == ("pass", "(no reason given)")  # not "None"
    assert parse_verdict("Verdict: PASS, it names the port") == ("pass", "verdict read from a malformed reply")
    assert parse_verdict('["pass"]') == ("fail", "unparseable judge reply: '[\"pass\"]'")
    assert parse_verdict('"pass"') == ("fail", "unparseable judge reply: '\"pass\"'")
    assert parse_verdict('{"verdict": "maybe"}') == ("fail", "unparseable judge reply: '{\"verdict\": \"maybe\"}'")
    assert parse_verdict("") == ("fail", "unparseable judge reply: ''")
    assert parse_verdict("x" * 500) == ("fail", f"unparseable judge reply: {'x' * 200!r}")


class _FakeLitellm:
    """Stands in for the litellm module: records each completion's keywords, replies or raises."""

    def __init__(self, content="{}", error=None):
        self.content, self.error, self.calls = content, error, []

    def completion(self, **kwargs):
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        message = type("M", (), {"content": self.content})()
        return type("R", (), {"choices": [type("C", (), {"message": message})()]})()


def test_the_judge_calls_litellm_at_temperature_zero_with_its_token_cap_and_endpoint(monkeypatch):
    import sys

    from harness.score.judge import litellm_complete

    fake = _FakeLitellm('{"verdict": "pass"}')
    monkeypatch.setitem(sys.modules, "litellm", fake)
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    messages = [{"role": "user", "content": "q"}]
    assert litellm_complete("openai/local", messages, api_base="http://127.0.0.1:8012/v1") == '{"verdict": "pass"}'
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"  # no price-map download
    litellm_complete("openai/gpt-x", messages)
    assert fake.calls == [
        {"model": "openai/local", "messages": messages, "temperature": 0, "max_tokens": 300, "max_retries": 0,
         "api_base": "http://127.0.0.1:8012/v1"},
        {"model": "openai/gpt-x", "messages": messages, "temperature": 0, "max_tokens": 300, "max_retries": 0}]
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")  # the user's choice is kept
    litellm_complete("openai/gpt-x", messages)
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "False"
    fake.content = None
    assert litellm_complete("openai/gpt-x", messages) == ""  # an empty reply is empty: parse_verdict fails it


def test_a_provider_error_names_the_model_and_its_class(monkeypatch):
    import sys

    from harness.score.judge import JudgeError, litellm_complete

    monkeypatch.setitem(sys.modules, "litellm", _FakeLitellm(error=TimeoutError("read timed out")))
    with pytest.raises(JudgeError) as caught:
        litellm_complete("openai/local", [{"role": "user", "content": "q"}])
    assert str(caught.value) == "judge model 'openai/local' failed: TimeoutError: read timed out"


def test_a_cached_verdict_written_in_utf8_is_read_back_on_a_machine_whose_locale_is_ascii(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    def completer(model, messages):  # a reply in the answer's language, not escaped
        return '{"verdict": "pass", "reason": "nennt Frau Müller"}'

    Judge(model="test/m", cache_dir=tmp_path, complete=completer)("Who?", "Names her.", ["Müller"], "Frau Müller.")
    assert "Müller".encode() in next(tmp_path.glob("*.json")).read_bytes()  # the cache file is UTF-8, not ASCII
    script = ("import sys, json; from harness.score.judge import Judge\n"
              "def refuse(model, messages): raise SystemExit('the judge was asked again')\n"
              "v = Judge(model='test/m', cache_dir=sys.argv[1], complete=refuse)('Who?', 'Names her.', ['M\\u00fcller'], "
              "'Frau M\\u00fcller.')\n"
              "print(json.dumps([v.verdict, v.cached]))\n")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                          encoding="utf-8", check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["pass", True]


def test_a_judge_without_a_completer_calls_litellm_at_its_own_endpoint(monkeypatch, tmp_path):
    """``--judge-api-base``: the judge's endpoint reaches litellm (a local server), not litellm's default."""
    import sys

    fake = _FakeLitellm('{"verdict": "fail", "reason": "no port"}')
    monkeypatch.setitem(sys.modules, "litellm", fake)
    judge = Judge(model="openai/local", cache_dir=tmp_path, api_base="http://127.0.0.1:8012/v1")
    verdict = judge("Which port?", "Pass only if 5173.", ["5173"], "It runs on 8080.")
    assert (verdict.verdict, verdict.reason) == ("fail", "no port")
    assert [call.get("api_base") for call in fake.calls] == ["http://127.0.0.1:8012/v1"]
