"""Judge calls: reserved against the cap, counted and priced per phase (grading, calibration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run.budget import Budget, BudgetExceeded, Price
from harness.score.judge import Judge
from harness.score.judge_calls import JudgeReply, calibrating, usage_block


def _reply(cost: float) -> JudgeReply:
    return JudgeReply.of('{"verdict": "pass", "reason": "ok"}', 1000, 10, cost)


def _priced_judge(tmp_path: Path, limit_usd: float, cost: float) -> tuple[Judge, Budget, list[str]]:
    """A judge of model ``m`` ($0.001 per reply token: $0.30 of worst case) whose every reply costs ``cost``."""
    made: list[str] = []

    def complete(model: str, messages: list[dict[str, str]]) -> JudgeReply:
        made.append(model)
        return _reply(cost)

    budget = Budget(limit_usd, {"m": Price(input=0.0, output=0.001)})
    return Judge(model="m", cache_dir=tmp_path, complete=complete, budget=budget), budget, made


def test_a_judge_counts_its_calls_tokens_and_cost_per_phase(tmp_path: Path) -> None:
    judge = Judge(model="m", cache_dir=tmp_path, complete=lambda model, messages: _reply(0.002))
    judge("Q1?", "rubric", ["a"], "A1")
    with calibrating(judge):
        judge("Q2?", "rubric", ["a"], "A2")
        judge("Q3?", "rubric", ["a"], "A3")
    judge("Q1?", "rubric", ["a"], "A1")  # cached: no call, no cost
    assert usage_block(judge, "grading") == {"calls": 1, "prompt_tokens": 1000, "completion_tokens": 10,
                                             "cost_usd": 0.002, "unpriced_calls": 0}
    assert usage_block(judge, "calibration")["calls"] == 2 and usage_block(judge, "calibration")["cost_usd"] == pytest.approx(0.004)
    assert judge.phase == "grading"


def test_a_reply_without_usage_is_counted_unpriced_and_charged_its_whole_reservation(tmp_path: Path) -> None:
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})  # 300 tokens of worst case: $0.30
    judge = Judge(model="m", cache_dir=tmp_path, complete=lambda model, messages: '{"verdict": "fail", "reason": "x"}',
                  budget=budget)
    judge("Q1?", "rubric", ["a"], "A1")
    assert usage_block(judge, "grading") == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None,
                                             "unpriced_calls": 1}
    assert budget.recorded_usd == pytest.approx(0.3) and budget.in_flight == 0


def test_a_judge_call_whose_worst_case_does_not_fit_is_not_made(tmp_path: Path) -> None:
    judge, budget, made = _priced_judge(tmp_path, 0.5, 0.25)
    judge("Q1?", "rubric", ["a"], "A1")  # $0.30 reserved, $0.25 recorded
    with pytest.raises(BudgetExceeded):
        judge("Q2?", "rubric", ["a"], "A2")  # $0.25 + $0.30 > $0.50
    assert made == ["m"] and budget.recorded_usd == pytest.approx(0.25) and budget.exhausted


class _Usage:
    def __init__(self, prompt_tokens: object, completion_tokens: object) -> None:
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens


class _Response:
    def __init__(self, content: str | None, usage: object = None) -> None:
        from types import SimpleNamespace

        self.choices = [SimpleNamespace(message=SimpleNamespace(content=content))]
        if usage is not None:
            self.usage = usage


def test_a_providers_reply_carries_its_reported_usage_and_litellms_price_of_it() -> None:
    import litellm

    from harness.score.judge_calls import reply_of

    reply = reply_of(_Response("pass", _Usage(1200, 30)), "gpt-4o-mini", [{"role": "user", "content": "Q?"}])
    inp, out = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1200, completion_tokens=30)
    assert reply == "pass" and (reply.prompt_tokens, reply.completion_tokens) == (1200, 30)
    assert reply.cost_usd == pytest.approx(float(inp) + float(out)) and reply.cost_usd > 0


def test_a_reply_without_plausible_usage_is_counted_and_one_without_a_price_is_unpriced() -> None:
    """No usage, a negative count or a string count: the tokens are counted from the messages and the text; a model
    litellm has no price for (a local server) costs None; an empty reply is the empty string."""
    from harness.run import count_tokens
    from harness.score.judge_calls import reply_of

    messages = [{"role": "user", "content": "Was the answer right? " * 20}]
    counted = (count_tokens("gpt-4o-mini", messages=messages), count_tokens("gpt-4o-mini", text="fail, it was wrong"))
    for usage in (None, _Usage(-1, 5), _Usage(40, "5"), _Usage(None, None)):
        reply = reply_of(_Response("fail, it was wrong", usage), "gpt-4o-mini", messages)
        assert (reply.prompt_tokens, reply.completion_tokens) == counted, usage
    local = reply_of(_Response(None, _Usage(10, 0)), "my-local-server/judge-7b", messages)
    assert local == "" and local.cost_usd is None and (local.prompt_tokens, local.completion_tokens) == (10, 0)


def test_the_reservation_is_the_judges_own_tokenizers_count_of_the_messages_it_sends() -> None:
    """The worst case reserved is the prompt as the judge's model counts it (gpt-4o-mini's tokenizer is not the
    default one) plus ``max_tokens``; the completer gets those very messages."""
    from types import SimpleNamespace

    from harness.run import count_tokens
    from harness.score.judge_calls import judge_call

    messages = [{"role": "user", "content": "Was the answer right? Überprüfung 12345 " * 20}]
    budget = Budget(1.0, {"gpt-4o-mini": Price(input=0.0001, output=0.001)})
    judge = SimpleNamespace(model="gpt-4o-mini", phase="grading", usage={}, budget=budget)
    seen: list[tuple[str, object, float]] = []

    def complete(model: str, sent: list[dict[str, str]]) -> JudgeReply:
        seen.append((model, sent, budget.reserved_usd))
        return JudgeReply.of("pass", 5, 1, 0.01)

    assert judge_call(judge, messages, complete, max_tokens=50) == "pass"
    prompt = count_tokens("gpt-4o-mini", messages=messages)
    assert prompt != count_tokens("m", messages=messages)  # the test needs a model of its own tokenizer
    assert seen == [("gpt-4o-mini", messages, pytest.approx(prompt * 0.0001 + 50 * 0.001))]
    assert budget.recorded_usd == pytest.approx(0.01) and budget.in_flight == 0 and budget.reserved_usd == 0


def test_a_judge_without_a_budget_is_counted_without_reserving() -> None:
    from types import SimpleNamespace

    from harness.score.judge_calls import judge_call

    judge = SimpleNamespace(model="m", phase="grading", usage={})  # no budget attribute at all
    assert judge_call(judge, [{"role": "user", "content": "Q?"}], lambda m, msgs: _reply(0.5), max_tokens=10) == _reply(0.5)
    assert usage_block(judge, "grading")["cost_usd"] == 0.5


def test_a_failed_judge_call_gives_its_reservation_back_records_nothing_and_raises_its_own_error(tmp_path: Path) -> None:
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})

    def complete(model: str, messages: list[dict[str, str]]) -> str:
        raise ConnectionError("the judge's server is down")

    judge = Judge(model="m", cache_dir=tmp_path, complete=complete, budget=budget)
    with pytest.raises(ConnectionError, match="server is down"):
        judge("Q1?", "rubric", ["a"], "A1")
    assert (budget.in_flight, budget.reserved_usd, budget.recorded_usd, budget.exhausted) == (0, 0.0, 0.0, False)
    assert usage_block(judge, "grading")["calls"] == 0


def test_a_reply_costing_more_than_its_reservation_scales_the_judges_next_reservation(tmp_path: Path) -> None:
    """$0.30 reserved, $0.60 charged: the next call of the model reserves twice its worst case ($0.60), which no longer
    fits the $0.40 left, so it is not made."""
    judge, budget, made = _priced_judge(tmp_path, 1.0, 0.6)
    judge("Q1?", "rubric", ["a"], "A1")
    with pytest.raises(BudgetExceeded):
        judge("Q2?", "rubric", ["a"], "A2")
    assert made == ["m"] and budget.recorded_usd == pytest.approx(0.6)


@pytest.mark.parametrize("cost", [float("inf"), float("nan"), -0.01])
def test_an_implausible_reported_cost_is_unpriced_and_charged_its_reservation(tmp_path: Path, cost: float) -> None:
    judge, budget, _ = _priced_judge(tmp_path, 1.0, cost)
    judge("Q1?", "rubric", ["a"], "A1")
    assert usage_block(judge, "grading")["cost_usd"] is None and usage_block(judge, "grading")["unpriced_calls"] == 1
    assert budget.recorded_usd == pytest.approx(0.3)


def test_a_free_reply_is_priced_at_zero_not_unpriced(tmp_path: Path) -> None:
    judge, budget, _ = _priced_judge(tmp_path, 1.0, 0.0)
    judge("Q1?", "rubric", ["a"], "A1")
    assert usage_block(judge, "grading")["cost_usd"] == 0.0 and usage_block(judge, "grading")["unpriced_calls"] == 0
    assert budget.recorded_usd == 0.0


def test_a_phases_calls_add_up_and_a_phase_without_calls_reads_zeros(tmp_path: Path) -> None:
    replies = iter([_reply(0.123456789), '{"verdict": "pass", "reason": "ok"}', '{"verdict": "fail", "reason": "no"}'])
    judge = Judge(model="m", cache_dir=tmp_path, complete=lambda model, messages: next(replies))
    for question in ("Q1?", "Q2?", "Q3?"):
        judge(question, "rubric", ["a"], "A")
    assert usage_block(judge, "grading") == {"calls": 3, "prompt_tokens": 1000, "completion_tokens": 10,
                                             "cost_usd": 0.12345679, "unpriced_calls": 2}
    assert usage_block(judge, "calibration") == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                 "cost_usd": 0.0, "unpriced_calls": 0}
    first = iter([_reply(0.001), _reply(0.001)])
    twice = Judge(model="m", cache_dir=tmp_path / "twice", complete=lambda model, messages: next(first))
    twice("Q1?", "rubric", ["a"], "A")
    twice("Q2?", "rubric", ["a"], "A")
    assert usage_block(twice, "grading")["prompt_tokens"] == 2000 and usage_block(twice, "grading")["completion_tokens"] == 20


def test_a_reported_prompt_of_zero_tokens_is_kept_and_the_fallback_counts_with_the_models_tokenizer() -> None:
    from harness.run import count_tokens
    from harness.score.judge_calls import reply_of

    messages = [{"role": "user", "content": "Was the answer right? Überprüfung 12345 " * 20}]
    text = "fail, it was wrong — Überprüfung 1234567"
    assert reply_of(_Response(text, _Usage(0, 5)), "gpt-4o-mini", messages).prompt_tokens == 0
    counted = reply_of(_Response(text, None), "gpt-4o-mini", messages)
    expected = (count_tokens("gpt-4o-mini", messages=messages), count_tokens("gpt-4o-mini", text=text))
    assert expected[0] != count_tokens("m", messages=messages) and expected[1] != count_tokens("m", text=text)  # its own tokenizer
    assert (counted.prompt_tokens, counted.completion_tokens) == expected
