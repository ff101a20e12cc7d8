"""Reading what a provider's 200 response got wrong: lenient messages and the plausibility rule of usage."""

from __future__ import annotations

import pytest

from harness.run.responses import checked_usage, lenient_message, raw_response


@pytest.mark.parametrize(("prompt", "completion", "fault"), [
    (-1, 17, "usage prompt_tokens -1 is negative"),
    ("12", 17, "usage prompt_tokens '12' is not a whole number"),
    (True, 17, "usage prompt_tokens True is not a whole number"),
    (float("nan"), 17, "usage prompt_tokens nan is not a whole number"),
    (100, 10**15, "usage completion_tokens 1,000,000,000,000,000 is more than the request could hold (at most 2,624)"),
    (10**9, 17, "usage prompt_tokens 1,000,000,000 is more than the request could hold (at most 12,352)"),
])
def test_implausible_usage_is_rejected_with_the_reason(prompt, completion, fault) -> None:
    assert checked_usage(prompt, completion, request_chars=400, messages=2, max_tokens=2048) == (None, None, fault)


def test_usage_within_the_rule_is_kept_and_a_context_window_bounds_it() -> None:
    """12,000 prompt tokens pass the character rule for 400 characters but not a known 8,192-token window."""
    assert checked_usage(12_000, 17.0, request_chars=400, messages=2, max_tokens=2048) == (12_000, 17, None)
    assert checked_usage(12_000, 17, request_chars=400, messages=2, max_tokens=2048, max_input=8192)[2] is not None


def test_litellm_refusal_text_gives_back_the_response_and_a_lenient_message() -> None:
    """The raw response litellm quotes in its error is recovered; a tool call without function becomes a call of ``""``."""
    error = Exception("Invalid response object Traceback ...\n\nreceived_args={'response_object': {'choices': [{'message': "
                      "{'content': [{'type': 'text', 'text': 'hi }'}], 'tool_calls': [{'id': 'c1', 'type': 'function'}]}, "
                      "'finish_reason': 'tool_calls'}]}, 'model_response_object': ModelResponse(...)}")
    message, finish, faults = lenient_message(raw_response(error))
    assert message == {
        "role": "assistant",
        "content": "hi }",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "", "arguments": ""}}],
    }
    assert finish == "tool_calls" and faults == ["content is a list", "tool call 0 has no function"]
    assert lenient_message(None)[2] == ["no readable choice in the response"]
