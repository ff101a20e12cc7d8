"""The offline reference model, exercised through litellm as the harness calls it."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.offline_model import ABSTAIN_ANSWER, MAX_TOOL_ROUNDS, register, respond

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")

MODEL = "offline/reference"

SEARCH_SPEC = {
    "type": "function",
    "function": {
        "name": "memory_search",
        "description": "Search long-term memory by keys.",
        "parameters": {
            "type": "object",
            "properties": {
                "terms": {"type": "array", "items": {"type": "string", "maxLength": 256}, "maxItems": 32},
                "match": {"type": "string", "enum": ["exact", "prefix"]},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["terms"],
            "additionalProperties": False,
        },
    },
}
GET_SPEC = {
    "type": "function",
    "function": {
        "name": "memory_get",
        "description": "Read one memory item.",
        "parameters": {
            "type": "object",
            "properties": {"itemId": {"type": "string"}},
            "required": ["itemId"],
            "additionalProperties": False,
        },
    },
}
BOTH = [SEARCH_SPEC, GET_SPEC]
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    register()


def _complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Any:
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    return litellm.completion(model=MODEL, messages=messages, temperature=0, **kwargs)


def _acomplete(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Any:
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    return asyncio.run(litellm.acompletion(model=MODEL, messages=messages, **kwargs))


def _item(item_id: str, content: str, keys: list[str], observed_at: int = 1_000) -> dict[str, Any]:
    return {
        "itemId": item_id,
        "version": 1,
        "content": content,
        "kind": "preference",
        "statementType": "fact",
        "temporalType": "undated",
        "eventStartedAt": None,
        "eventEndedAt": None,
        "observedAt": observed_at,
        "matchedKeys": keys,
        "sourceCount": 1,
    }


def _with_tool_round(messages: list[dict[str, Any]], name: str, args: dict[str, Any], result: Any) -> list[dict]:
    """The transcript after one tool round: the assistant's call and the tool's reply."""
    call_id = f"call_{len(messages)}"
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return [
        *messages,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, ensure_ascii=False)},
    ]


def _search_result(*items: dict[str, Any]) -> dict[str, Any]:
    return {"results": list(items), "truncated": False, "omittedCount": 0, "limitCapped": False}


def _tool_call(response: Any) -> tuple[str, dict[str, Any]]:
    assert response.choices[0].finish_reason == "tool_calls"
    call = response.choices[0].message.tool_calls[0]
    assert call.type == "function" and call.id
    return call.function.name, json.loads(call.function.arguments)


def _answer(response: Any) -> str:
    assert response.choices[0].finish_reason == "stop"
    message = response.choices[0].message
    assert not message.tool_calls
    return message.content


def test_calls_memory_search_with_cjk_windows_identifiers_and_content_words() -> None:
    question = "我的部署偏好是什么？ And which editor theme applies to MemoryItemStore.searchByKeys?"
    name, args = _tool_call(_acomplete([SYSTEM, {"role": "user", "content": question}], BOTH))
    assert name == "memory_search"
    terms = args["terms"]
    assert {"部署", "偏好", "MemoryItemStore.searchByKeys", "editor", "theme", "editor theme"} <= set(terms)
    assert not {"which", "and", "to", "what"} & {t.lower() for t in terms}
    assert args["match"] == "prefix" and args["limit"] == 10
    assert 0 < len(terms) <= 32 and all(t.strip() for t in terms)


def test_search_terms_are_capped_at_32_and_never_empty() -> None:
    words = " ".join(f"topic{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60))
    _, args = _tool_call(_complete([{"role": "user", "content": f"What about {words}?"}], BOTH))
    assert len(args["terms"]) == 32
    assert all(t.strip() for t in args["terms"])
    assert args["terms"][0] == "topicaa"


def test_short_latin_terms_are_dropped_from_prefix_search() -> None:
    _, args = _tool_call(_complete([{"role": "user", "content": "Which db host does staging use?"}], BOTH))
    assert args["match"] == "prefix"
    assert "db" not in args["terms"] and {"host", "staging"} <= set(args["terms"])


def test_short_salient_terms_switch_the_search_to_exact() -> None:
    _, args = _tool_call(_complete([{"role": "user", "content": "What CI do we use?"}], BOTH))
    assert args["match"] == "exact" and "ci" in args["terms"]


def test_answers_from_search_result() -> None:
    question = [SYSTEM, {"role": "user", "content": "Which editor theme do I prefer?"}]
    result = _search_result(_item("i-theme", "The user prefers the Solarized Dark editor theme.", ["editor theme"]))
    messages = _with_tool_round(question, "memory_search", {"terms": ["editor"]}, result)
    answer = _answer(_acomplete(messages, [SEARCH_SPEC]))
    assert "Solarized Dark" in answer and "I don't know" not in answer


def test_calls_memory_get_on_best_item() -> None:
    question = [SYSTEM, {"role": "user", "content": "Which editor theme do I prefer?"}]
    result = _search_result(
        _item("i-font", "The user's terminal font is Fira Code.", ["editor"]),
        _item("i-theme", "The user prefers the Solarized Dark editor theme.", ["editor theme", "theme"]),
    )
    messages = _with_tool_round(question, "memory_search", {"terms": ["editor", "theme"]}, result)
    name, args = _tool_call(_acomplete(messages, BOTH))
    assert (name, args) == ("memory_get", {"itemId": "i-theme"})


def test_answers_after_memory_get_with_the_current_content() -> None:
    question = [SYSTEM, {"role": "user", "content": "Which editor theme do I prefer?"}]
    found = _search_result(_item("i-theme", "The user prefers the Solarized Dark editor theme.", ["editor theme"]))
    messages = _with_tool_round(question, "memory_search", {"terms": ["editor"]}, found)
    current = {"item": {**_item("i-theme", "The user prefers the Gruvbox editor theme.", []), "version": 2}}
    messages = _with_tool_round(messages, "memory_get", {"itemId": "i-theme"}, current)
    answer = _answer(_acomplete(messages, BOTH))
    assert "Gruvbox" in answer and "Solarized" not in answer


def test_abstains_when_search_returns_nothing_and_history_is_empty() -> None:
    question = [SYSTEM, {"role": "user", "content": "What is my dog's name?"}]
    messages = _with_tool_round(question, "memory_search", {"terms": ["dog"]}, _search_result())
    assert _answer(_acomplete(messages, BOTH)) == ABSTAIN_ANSWER
    assert "I don't know" in ABSTAIN_ANSWER


def test_abstains_when_no_result_shares_a_salient_term() -> None:
    question = [SYSTEM, {"role": "user", "content": "What is my dog's name?"}]
    result = _search_result(_item("i-cat", "The user's cat is named Miso.", ["name"]))
    messages = _with_tool_round(question, "memory_search", {"terms": ["dog", "name"]}, result)
    assert _answer(_acomplete(messages, BOTH)) == ABSTAIN_ANSWER


def test_answers_from_history_when_no_tools_are_offered() -> None:
    messages = [
        SYSTEM,
        {"role": "user", "content": "By the way, I use the Dracula theme in my editor."},
        {"role": "assistant", "content": "Noted, thanks."},
        {"role": "user", "content": "Which editor theme do I use?"},
    ]
    answer = _answer(_complete(messages))
    assert "Dracula" in answer and "I don't know" not in answer


def test_prefers_the_most_recent_statement_in_history() -> None:
    messages = [
        {"role": "user", "content": "My editor theme is Solarized."},
        {"role": "assistant", "content": "Got it."},
        {"role": "user", "content": "Update: my editor theme is now Dracula."},
        {"role": "assistant", "content": "Updated."},
        {"role": "user", "content": "Which editor theme do I use?"},
    ]
    answer = _answer(_complete(messages))
    assert "Dracula" in answer and "Solarized" not in answer


def test_ignores_the_system_prompt_when_answering_from_history() -> None:
    messages = [
        {"role": "system", "content": "The user's editor theme is Monokai."},
        {"role": "user", "content": "Which editor theme do I use?"},
    ]
    assert _answer(_complete(messages)) == ABSTAIN_ANSWER


def test_prefers_the_newest_item_when_items_conflict_on_the_same_keys() -> None:
    question = [{"role": "user", "content": "How do we deploy the service?"}]
    result = _search_result(
        _item("old", "The team deploys the service with Jenkins.", ["deploy"], observed_at=1_000),
        _item("new", "The team deploys with GitHub Actions.", ["deploy"], observed_at=2_000),
    )
    messages = _with_tool_round(question, "memory_search", {"terms": ["deploy"]}, result)
    answer = _answer(_complete(messages, [SEARCH_SPEC]))
    assert "GitHub Actions" in answer and "Jenkins" not in answer


def test_never_calls_a_tool_that_is_not_offered() -> None:
    other = {"type": "function", "function": {"name": "web_search", "parameters": {"type": "object"}}}
    question = [{"role": "user", "content": "Which editor theme do I prefer?"}]
    assert _answer(_complete(question, [other])) == ABSTAIN_ANSWER
    assert _answer(_complete(question, [GET_SPEC])) == ABSTAIN_ANSWER  # no search: no ids to get
    found = _search_result(_item("i-theme", "The user prefers the Solarized Dark editor theme.", ["editor theme"]))
    after_search = _with_tool_round(question, "memory_search", {"terms": ["editor"]}, found)
    assert "Solarized" in _answer(_complete(after_search, [SEARCH_SPEC]))  # memory_get not offered


_TOOL_SETS = st.sampled_from([[], [SEARCH_SPEC], [GET_SPEC], BOTH])
_RESULTS = st.lists(
    st.builds(_item, st.sampled_from(["a", "b", "c"]), st.text(min_size=1, max_size=40), st.lists(st.text(max_size=8))),
    max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(question=st.text(max_size=80), tools=_TOOL_SETS, results=_RESULTS)
def test_calls_only_offered_tools_and_only_returned_item_ids(question: str, tools: list, results: list) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question or "?"}]
    offered = {t["function"]["name"] for t in tools}
    for _ in range(MAX_TOOL_ROUNDS + 1):
        reply = respond(messages, tools)
        if not reply.get("tool_calls"):
            assert isinstance(reply["content"], str) and reply["content"]
            return
        call = reply["tool_calls"][0]["function"]
        assert call["name"] in offered
        args = json.loads(call["arguments"])
        if call["name"] == "memory_get":
            assert args["itemId"] in {r["itemId"] for r in results}
        else:
            assert 0 < len(args["terms"]) <= 32 and all(t.strip() for t in args["terms"])
        messages = _with_tool_round(messages, call["name"], args, _search_result(*results))
    pytest.fail("the model kept calling tools past the round limit")


def test_retries_once_with_a_corrected_call_after_an_error() -> None:
    words = " ".join(f"subject{chr(97 + i)}" for i in range(12))
    question = [{"role": "user", "content": f"Tell me about {words} please"}]
    _, first = _tool_call(_complete(question, BOTH))
    error = {"error": {"code": "invalid_arguments", "message": "limit must be at most 5"}}
    after_error = _with_tool_round(question, "memory_search", first, error)
    name, retry = _tool_call(_complete(after_error, BOTH))
    assert name == "memory_search" and retry != first
    assert "limit" not in retry and len(retry["terms"]) <= 8
    after_second_error = _with_tool_round(after_error, "memory_search", retry, error)
    assert _answer(_complete(after_second_error, BOTH)) == ABSTAIN_ANSWER


def test_recovers_from_an_error_by_answering_from_history() -> None:
    history = [
        {"role": "user", "content": "Our staging database runs Postgres 16."},
        {"role": "assistant", "content": "Good to know."},
        {"role": "user", "content": "Which database does staging run?"},
    ]
    denied = {"error": {"code": "policy_denied", "message": "memory tools are not available"}}
    messages = _with_tool_round(history, "memory_search", {"terms": ["database"]}, denied)
    assert "Postgres 16" in _answer(_complete(messages, BOTH))  # no retry after a policy denial


def test_unreadable_tool_result_does_not_break_the_model() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Which editor theme do I prefer?"}]}]
    name, args = _tool_call(_complete(messages, BOTH))
    messages = [*messages, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "<html>502</html>"}]
    assert _answer(_complete(messages, BOTH)) == ABSTAIN_ANSWER


def test_stops_calling_tools_after_three_rounds() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which editor theme do I prefer?"}]
    found = _search_result(_item("i-theme", "The user prefers the Solarized Dark editor theme.", ["editor theme"]))
    for _ in range(MAX_TOOL_ROUNDS):
        messages = _with_tool_round(messages, "web_search", {"q": "x"}, {"error": {"code": "unknown_tool"}})
    assert _answer(_complete(messages, BOTH)) == ABSTAIN_ANSWER
    messages = [messages[0]]
    for _ in range(MAX_TOOL_ROUNDS):
        messages = _with_tool_round(messages, "memory_search", {"terms": ["editor"]}, found)
    assert "Solarized" in _answer(_complete(messages, BOTH))


def test_reports_usage() -> None:
    short = _complete([{"role": "user", "content": "Which editor theme?"}])
    long = _complete([{"role": "user", "content": "Which editor theme? " + "Some context here. " * 50}])
    for response in (short, long):
        usage = response.usage
        assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert long.usage.prompt_tokens > short.usage.prompt_tokens
    with_tools = _complete([{"role": "user", "content": "Which editor theme?"}], BOTH)
    assert with_tools.usage.prompt_tokens > short.usage.prompt_tokens


def test_same_input_gives_same_output() -> None:
    question = [SYSTEM, {"role": "user", "content": "我的部署偏好是什么？ Which editor theme do I prefer?"}]
    first, second = _complete(question, BOTH), _acomplete(question, BOTH)
    assert first.choices[0].message.model_dump() == second.choices[0].message.model_dump()
    assert respond(question, BOTH) == respond(question, BOTH)


def test_register_is_idempotent_and_keeps_other_providers() -> None:
    saved = list(litellm.custom_provider_map)
    try:
        other = {"provider": "someone-else", "custom_handler": object()}
        litellm.custom_provider_map = [other]
        register()
        register()
        providers = [entry["provider"] for entry in litellm.custom_provider_map]
        assert providers == ["someone-else", "offline"]
    finally:
        litellm.custom_provider_map = saved


def test_unknown_offline_model_is_a_clear_error() -> None:
    with pytest.raises(litellm.BadRequestError, match="known models: offline/abstain, offline/reference"):
        litellm.completion(model="offline/nonexistent", messages=[{"role": "user", "content": "hi"}])


def test_abstain_model_always_abstains() -> None:
    messages = [{"role": "user", "content": "I use Dracula."}, {"role": "user", "content": "Which theme do I use?"}]
    response = litellm.completion(model="offline/abstain", messages=messages, tools=BOTH)
    assert _answer(response) == ABSTAIN_ANSWER


def test_answers_through_the_real_host_end_to_end() -> None:
    from memory_tools import (
        Host,
        ItemInput,
        KeyInput,
        Kind,
        MemoryItemSource,
        MemoryItemStore,
        MemoryPolicy,
        RunContext,
    )

    store = MemoryItemStore()
    source = (MemoryItemSource("s1", "r1", "t1", "e1"),)
    store.create(ItemInput("部署偏好：使用蓝绿部署。", Kind.PREFERENCE, (KeyInput("部署"), KeyInput("偏好")), source, now=1))
    store.create(ItemInput("The user drinks green tea.", Kind.PREFERENCE, (KeyInput("tea"),), source, now=1))
    run = Host(store, MemoryPolicy(enabled=True, agent_read_enabled=True)).open_run(RunContext())
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "我的部署偏好是什么？"}]
    names = []
    for _ in range(MAX_TOOL_ROUNDS + 1):
        message = _acomplete(messages, run.tool_specs()).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            names.append(call.function.name)
            record = run.call(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": record.result_text})
    assert names == ["memory_search", "memory_get"]
    assert "蓝绿部署" in messages[-1]["content"] and "tea" not in messages[-1]["content"]



def test_litellms_zero_cost_diagnostic_runs_on_every_offline_call_and_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stated cost 0.0 skips litellm's price calculation, not its zero-cost diagnostic: that still looks the
    model's price up on every call (twice), to tell a free model from a missing price. For the offline models it
    must conclude nothing (no rate above 0), so no "Billable request priced at $0" warning is ever logged; a run
    skips it altogether by calling them in-process (``harness.run.direct``)."""
    from litellm.litellm_core_utils import litellm_logging

    from harness.offline_model import register_offline

    register_offline()
    findings: list[Any] = []
    real = litellm_logging.Logging._zero_cost_finding

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        findings.append(real(self, *args, **kwargs))
        return findings[-1]

    monkeypatch.setattr(litellm_logging.Logging, "_zero_cost_finding", spy)
    messages = [{"role": "user", "content": "What did we decide about the deploy window?"}]
    for model in ("offline/reference", "offline/abstain"):
        response = litellm.completion(model=model, messages=messages, tools=[SEARCH_SPEC, GET_SPEC] if model == MODEL else None)
        assert response._hidden_params["response_cost"] == 0.0
    assert len(findings) >= 2 and findings == [None] * len(findings)
