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


def _refusal(literal: str) -> Exception:
    return Exception(f"Invalid response object Traceback ...\n\nreceived_args={{'response_object': {literal}, "
                     "'model_response_object': ModelResponse(...)}")


def test_the_response_is_recovered_whole_past_quoted_braces_escaped_quotes_and_nested_brackets() -> None:
    got = raw_response(_refusal("{'choices': [{'message': {'content': 'it\\'s } done ) ]', 'x': (1, [2])}}]}"))
    assert got == {"choices": [{"message": {"content": "it's } done ) ]", "x": (1, [2])}}]}
    assert raw_response(_refusal('{"a": "say \\"}\\" please"}')) == {"a": 'say "}" please'}


@pytest.mark.parametrize("error", [
    Exception("Connection reset by peer"),  # no quoted response at all
    Exception("Invalid response object received_args={'response_object': {'choices': [{'message'"),  # cut off
    _refusal("{'choices': ModelResponse(x=1)}"),  # not a literal
    Exception("Invalid response object received_args={'response_object': ['a list'], 'm': 1}"),  # not a dict
])
def test_an_error_without_a_whole_readable_response_gives_nothing_back(error) -> None:
    assert raw_response(error) is None


def test_a_malformed_answer_is_recognised_by_litellms_words_not_by_any_error() -> None:
    from harness.run.responses import is_malformed_response

    assert is_malformed_response(Exception("litellm.APIError: Invalid response object Traceback"))
    assert not is_malformed_response(Exception("RateLimitError: 429"))


def _message(message: object, finish: object = "stop") -> dict:
    return {"choices": [{"message": message, "finish_reason": finish}]}


@pytest.mark.parametrize(("content", "text", "faults"), [
    (None, None, []),
    ("plain", "plain", []),
    (["a", {"type": "text", "text": "b"}, {"type": "image"}, 3], "ab", ["content is a list"]),
    ([{"type": "image"}], '[{"type": "image"}]', ["content is a list"]),
    (42, "42", ["content is a int"]),
    (2.5, "2.5", ["content is a float"]),
    (True, "True", ["content is a bool"]),
    ({"text": "x"}, '{"text": "x"}', ["content is a dict"]),
])
def test_content_is_read_as_a_person_would_read_it(content, text, faults) -> None:
    message, finish, found = lenient_message(_message({"content": content}))
    assert message == {"role": "assistant", "content": text} and finish == "stop" and found == faults


def test_each_tool_call_fault_is_named_and_the_call_still_reaches_the_host() -> None:
    calls = [
        "memory_search",
        {"id": 7, "function": {"name": 12, "arguments": ["x"]}},
        {"id": "c3", "function": {"name": "memory_get", "arguments": {"itemId": "é"}}},
        {"id": "c4", "function": {"name": "memory_get"}},
    ]
    message, _, faults = lenient_message(_message({"content": None, "tool_calls": calls}))
    assert message["tool_calls"] == [
        {"id": "", "type": "function", "function": {"name": "", "arguments": '"memory_search"'}},
        {"id": "", "type": "function", "function": {"name": "12", "arguments": '["x"]'}},
        {"id": "c3", "type": "function", "function": {"name": "memory_get", "arguments": '{"itemId": "é"}'}},
        {"id": "c4", "type": "function", "function": {"name": "memory_get", "arguments": ""}},
    ]
    assert faults == ["tool call 0 is a str", "tool call 1 name is a int", "tool call 1 arguments are a list"]


def test_a_single_tool_call_not_in_a_list_is_read_as_one_call() -> None:
    message, finish, faults = lenient_message(_message(
        {"tool_calls": {"id": "c1", "function": {"name": "memory_search", "arguments": "{}"}}}, finish=3))
    assert message["tool_calls"] == [{"id": "c1", "type": "function", "function": {"name": "memory_search", "arguments": "{}"}}]
    assert message["content"] is None and finish is None and faults == ["tool_calls is a dict"]
    assert "tool_calls" not in lenient_message(_message({"content": "x", "tool_calls": []}))[0]


@pytest.mark.parametrize("raw", [{}, {"choices": []}, {"choices": "x"}, {"choices": ["not a dict"]}])
def test_a_response_without_a_readable_choice_is_an_empty_answer(raw) -> None:
    assert lenient_message(raw) == ({"role": "assistant", "content": None}, None, ["no readable choice in the response"])


def test_a_choice_whose_message_is_not_an_object_has_no_content() -> None:
    assert lenient_message(_message("hello")) == ({"role": "assistant", "content": None}, "stop", [])


def test_a_value_too_deep_to_show_is_named_not_raised() -> None:
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    message, _, faults = lenient_message(_message({"content": {"deep": deep}}))
    assert message["content"] == "<dict nested too deeply to show>" and faults == ["content is a dict"]


def test_usage_exactly_at_the_caps_is_kept_and_one_over_is_not() -> None:
    prompt_cap = 10 * (400 + 8 * 2) + 8192
    completion_cap = int(2048 * 1.25) + 64
    kept = checked_usage(prompt_cap, completion_cap, request_chars=400, messages=2, max_tokens=2048)
    assert kept == (prompt_cap, completion_cap, None)
    assert checked_usage(prompt_cap + 1, 1, request_chars=400, messages=2, max_tokens=2048)[2] == \
        f"usage prompt_tokens {prompt_cap + 1:,} is more than the request could hold (at most {prompt_cap:,})"
    assert checked_usage(1, completion_cap + 1, request_chars=400, messages=2, max_tokens=2048)[2] is not None
    window = checked_usage(9011, 1, request_chars=400, messages=2, max_tokens=2048, max_input=8192)
    assert window == (9011, 1, None)  # 1.1 x 8,192 = 9,011
    assert checked_usage(9012, 1, request_chars=400, messages=2, max_tokens=2048, max_input=8192)[2] is not None


def test_without_max_tokens_the_models_output_limit_caps_completions_and_without_either_nothing_does() -> None:
    assert checked_usage(10, 1314, request_chars=400, messages=2, max_tokens=None, max_output=1000) == (10, 1314, None)
    assert checked_usage(10, 1315, request_chars=400, messages=2, max_tokens=None, max_output=1000)[2] is not None
    assert checked_usage(10, 10**9, request_chars=400, messages=2, max_tokens=None) == (10, 10**9, None)


def test_no_usage_passes_through_and_one_missing_count_is_left_for_the_caller() -> None:
    assert checked_usage(None, None, request_chars=1, messages=1, max_tokens=10) == (None, None, None)
    assert checked_usage(None, 5.0, request_chars=1, messages=1, max_tokens=10) == (None, 5, None)
    assert checked_usage(3, None, request_chars=1, messages=1, max_tokens=10) == (3, None, None)
    assert checked_usage(3, 1.5, request_chars=1, messages=1, max_tokens=10)[2] == \
        "usage completion_tokens 1.5 is not a whole number"
    assert checked_usage(3, float("inf"), request_chars=1, messages=1, max_tokens=10)[2] == \
        "usage completion_tokens inf is not a whole number"


def _record(*faults: str | None, write: tuple[str | None, ...] | None = None) -> object:
    from types import SimpleNamespace

    calls = tuple(SimpleNamespace(provider_fault=f) for f in faults)
    phase = None if write is None else SimpleNamespace(model_calls=tuple(SimpleNamespace(provider_fault=f) for f in write))
    return SimpleNamespace(model_calls=calls, write_phase=phase)


def test_the_fault_note_counts_samples_per_family_and_names_the_commonest_kinds_first() -> None:
    from harness.run.responses import fault_note

    records = [
        _record("content is a list; tool call 0 has no function", "content is a list"),
        _record(None, write=("content is a list; usage prompt_tokens -1 is negative: counted instead",)),
        _record("tool call 0 is a str", "cost nan replaced by the counted tokens' price"),
        _record(None),
    ]
    assert fault_note(records) == (
        "note: 3 samples had a malformed model response (content is a list; tool call 0 has no function; tool call 0 "
        "is a str): read as the model's answer, not retried; 2 samples had implausible provider usage (cost nan "
        "replaced by the counted tokens' price; usage prompt_tokens -1 is negative): counted tokens recorded and "
        "priced instead")


def test_the_fault_note_says_one_sample_and_shows_at_most_three_kinds() -> None:
    from harness.run.responses import fault_note

    one = fault_note([_record("content is a int; content is a list; tool call 0 is a str; tool_calls is a dict")])
    assert one == ("note: 1 sample had a malformed model response (content is a int; content is a list; tool call 0 "
                   "is a str ...): read as the model's answer, not retried")
    assert fault_note([_record("usage completion_tokens 1.5 is not a whole number: counted instead")]) == (
        "note: 1 sample had implausible provider usage (usage completion_tokens 1.5 is not a whole number): counted "
        "tokens recorded and priced instead")
    assert fault_note([_record(None, None), _record()]) is None
    assert fault_note([]) is None


def test_the_fault_note_keeps_the_commonest_kinds_whatever_their_names_and_reads_records_without_a_write_phase() -> None:
    from types import SimpleNamespace

    from harness.run.responses import fault_note

    old = SimpleNamespace(model_calls=(SimpleNamespace(provider_fault="tool_calls is a dict"),))  # no write_phase
    records = [old, _record("tool_calls is a dict; content is a list"), _record("tool_calls is a dict; content is a int"),
               _record("tool call 0 is a str; content is a list"), _record("content is a bool")]
    assert fault_note(records) == (
        "note: 5 samples had a malformed model response (tool_calls is a dict; content is a list; content is a bool "
        "...): read as the model's answer, not retried")


def test_a_quoted_value_ending_in_a_backslash_closes_where_it_ends() -> None:
    """An escaped backslash is one character: the quote after it closes the string (a Windows path as content)."""
    assert raw_response(_refusal("{'content': 'C:\\\\', 'n': 1}")) == {"content": "C:\\", "n": 1}


def test_the_response_is_read_from_the_first_marker_even_when_its_content_quotes_the_marker() -> None:
    quoted = "received_args={'response_object': "
    got = raw_response(_refusal("{'content': " + repr(quoted + "{'x': 1}") + "}"))
    assert got == {"content": quoted + "{'x': 1}"}
    assert raw_response(Exception(quoted + "{'a': 1}, 'b': 2}")) == {"a": 1}  # the marker opening the text


def test_zero_tokens_are_plausible_and_a_missing_prompt_count_does_not_skip_the_completion_check() -> None:
    assert checked_usage(0, 0, request_chars=400, messages=2, max_tokens=2048) == (0, 0, None)  # an empty reply
    assert checked_usage(None, 10**9, request_chars=400, messages=2, max_tokens=2048)[2] == \
        "usage completion_tokens 1,000,000,000 is more than the request could hold (at most 2,624)"


def test_content_json_cannot_hold_is_shown_as_its_text_not_raised() -> None:
    """A literal litellm quotes may hold bytes or a set (``ast.literal_eval`` reads both): shown, never a crash."""
    message, _, faults = lenient_message(raw_response(_refusal("{'choices': [{'message': {'content': b'hi'}}]}")))
    assert message["content"] == '"b\'hi\'"' and faults == ["content is a bytes"]
    message, _, _ = lenient_message(_message({"content": [{"text": None}, {1}]}))
    assert message["content"] == '[{"text": null}, "{1}"]'
