"""The strict, blind, cached judge and its calibration (no network)."""

from __future__ import annotations

import json
import os

import pytest

from harness.judge import Judge, build_messages, calibrate, load_calibration, parse_verdict


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
