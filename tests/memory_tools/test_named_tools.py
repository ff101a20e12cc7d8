"""The named-memory model tools: admission, argument errors as tool errors, wire format, cold control."""

from __future__ import annotations

import doctest
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memory_tools.named_tools as tools_module
from memory_tools import MemoryPolicy, RunContext
from memory_tools.named import NamedMemoryStore
from memory_tools.named_model import MAX_RECALL_LIMIT
from memory_tools.named_tools import (
    NAMED_TOOL_NAMES,
    READ_TOOLS,
    RECALL_BUDGET_CHARS,
    WRITE_TOOLS,
    named_tool_specs,
    open_named_run,
)

READ = MemoryPolicy(enabled=True, agent_read_enabled=True)


def run(store: NamedMemoryStore, *, workspace: str | None = "ws-a", policy: MemoryPolicy = READ, **kw: Any):  # type: ignore[no-untyped-def]
    return open_named_run(store, policy, RunContext(workspace), application="recall-eval", now_ms=kw.pop("now_ms", 100), **kw)


def result(record: Any) -> dict[str, Any]:
    return json.loads(record.result_text)


@pytest.fixture()
def store() -> NamedMemoryStore:
    with NamedMemoryStore() as s:
        yield s


def test_doctests_of_the_tools_module_hold() -> None:
    globs = {"NamedMemoryStore": NamedMemoryStore, "MemoryPolicy": MemoryPolicy, "RunContext": RunContext}
    assert doctest.testmod(tools_module, extraglobs=globs).failed == 0


def test_specs_are_strict_objects_without_any_scope_identity() -> None:
    specs = named_tool_specs()
    assert [s["function"]["name"] for s in specs] == list(NAMED_TOOL_NAMES)
    for spec in specs:
        assert spec["type"] == "function" and set(spec["function"]) == {"name", "description", "parameters"}
        parameters = spec["function"]["parameters"]
        assert parameters["additionalProperties"] is False
        assert not {"workspace", "workspaceKey", "application", "namespace", "sessionId"} & set(parameters["properties"])
    assert specs[0]["function"]["parameters"]["required"] == ["name", "text", "scope"]


@pytest.mark.parametrize(
    "policy, context",
    [
        (MemoryPolicy(enabled=True, agent_read_enabled=False), RunContext("ws-a")),
        (MemoryPolicy(enabled=False, agent_read_enabled=True), RunContext("ws-a")),
        (READ, RunContext("ws-a", incognito=True)),
    ],
    ids=["agent_reads_off", "memory_disabled", "incognito"],
)
def test_denied_runs_offer_no_tools_and_touch_no_storage(policy: MemoryPolicy, context: RunContext) -> None:
    class NoStorage:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"storage touched: {name}")

    denied = open_named_run(NoStorage(), policy, context, application="a", now_ms=1)  # type: ignore[arg-type]
    assert (denied.admitted, denied.tool_names, denied.tool_specs()) == (False, (), [])
    record = denied.call("remember", '{"name": 5}')  # not even argument errors are revealed
    assert (record.status, record.storage_read) == ("policy_denied", False)
    assert result(record)["error"]["code"] == "policy_denied"


def test_write_and_read_phases_offer_only_their_tools(store: NamedMemoryStore) -> None:
    writer = run(store, tools=WRITE_TOOLS)
    assert [s["function"]["name"] for s in writer.tool_specs()] == ["remember", "forget"]
    record = writer.call("recall", '{"query": "port"}')
    assert record.status == "unknown_tool" and "available: remember, forget" in result(record)["error"]["message"]
    assert [s["function"]["name"] for s in run(store, tools=READ_TOOLS).tool_specs()] == ["recall"]
    with pytest.raises(ValueError, match="unknown named-memory tools"):
        run(store, tools=("remember", "update_memory"))


def test_remember_reports_created_updated_and_unchanged_on_the_wire(store: NamedMemoryStore) -> None:
    writer = run(store)
    args = {"name": "port", "text": "dev server on 5174", "scope": "project"}
    first = writer.call("remember", json.dumps(args))
    second = writer.call("remember", args)  # a dict is accepted too
    third = run(store, now_ms=200).call("remember", {**args, "text": "dev server on 5175"})
    assert [result(r)["event"] for r in (first, second, third)] == ["created", "unchanged", "updated"]
    assert result(third)["version"] == 2
    assert all(r.status == "ok" and r.storage_read and r.disclosed_item_ids == () for r in (first, second, third))
    assert second.arguments == json.dumps(args, separators=(",", ":"))


def test_recall_by_name_and_query_disclose_the_memories_they_return(store: NamedMemoryStore) -> None:
    writer = run(store)
    writer.call("remember", {"name": "deploy route", "text": "make ship ENV=prod", "scope": "project"})
    writer.call("remember", {"name": "editor", "text": "vim", "scope": "user"})
    by_name = writer.call("recall", {"name": "Deploy Route"})
    body = result(by_name)
    assert body["memories"] == [
        {"name": "deploy route", "scope": "project", "text": "make ship ENV=prod", "createdAt": 100, "updatedAt": 100}
    ]
    assert (body["limit"], body["limitCapped"], body["truncated"], body["omittedCount"]) == (5, False, False, 0)
    assert len(by_name.disclosed_item_ids) == 1
    by_query = writer.call("recall", {"query": "which editor do I use", "limit": 500})
    assert [m["text"] for m in result(by_query)["memories"]] == ["vim"]
    assert (result(by_query)["limit"], result(by_query)["limitCapped"]) == (MAX_RECALL_LIMIT, True)


def test_another_workspace_never_reaches_a_project_memory(store: NamedMemoryStore) -> None:
    run(store, workspace="ws-b").call("remember", {"name": "customer", "text": "CANARY Northwind", "scope": "project"})
    for reader in (run(store, workspace="ws-a"), run(store, workspace=None)):
        for args in ({"name": "customer"}, {"query": "customer northwind"}):
            record = reader.call("recall", args)
            assert "CANARY" not in record.result_text and record.disclosed_item_ids == ()


def test_forget_deletes_and_a_missing_name_is_not_found(store: NamedMemoryStore) -> None:
    writer = run(store)
    writer.call("remember", {"name": "port", "text": "5174", "scope": "project"})
    forgotten = writer.call("forget", {"name": "port", "scope": "project"})
    assert (forgotten.status, result(forgotten)) == ("ok", {"event": "forgotten", "name": "port", "scope": "project"})
    again = writer.call("forget", {"name": "port", "scope": "project"})
    assert again.status == "not_found" and "no memory named" in result(again)["error"]["message"]
    assert result(writer.call("recall", {"name": "port"}))["memories"] == []


def test_recall_disabled_is_the_cold_control(store: NamedMemoryStore) -> None:
    run(store).call("remember", {"name": "port", "text": "5174", "scope": "project"})
    cold = run(store, recall_enabled=False)
    assert cold.admitted and [s["function"]["name"] for s in cold.tool_specs()] == list(NAMED_TOOL_NAMES)
    for args in ({"name": "port"}, {"query": "port"}):
        record = cold.call("recall", args)
        assert (record.status, result(record)["memories"], record.storage_read) == ("ok", [], False)
    assert result(cold.call("remember", {"name": "port", "text": "5175", "scope": "project"}))["event"] == "updated"
    assert result(run(store).call("recall", {"name": "port"}))["memories"][0]["text"] == "5175"


def test_recall_result_is_cut_to_the_budget_by_whole_memories(store: NamedMemoryStore) -> None:
    writer = run(store)
    for n in range(6):
        writer.call("remember", {"name": f"note {n}", "text": f"deploy {n} " + "x" * 3_900, "scope": "project"})
    record = writer.call("recall", {"query": "deploy", "limit": 6})
    body = result(record)
    assert len(record.result_text) <= RECALL_BUDGET_CHARS
    assert body["truncated"] and body["omittedCount"] == 6 - len(body["memories"]) > 0
    assert len(record.disclosed_item_ids) == len(body["memories"])


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("remember", "{", "not valid JSON"),
        ("remember", "[1]", "must be a JSON object"),
        ("remember", 7, "must be a JSON object"),
        ("remember", {"name": "port", "text": "5174"}, "scope is required"),
        ("remember", {"name": "port", "text": "5174", "scope": "global"}, 'scope must be "user" or "project"'),
        ("remember", {"name": "", "text": "5174", "scope": "user"}, "name must be a non-empty string"),
        ("remember", {"name": ["port"], "text": "5174", "scope": "user"}, "name must be a non-empty string"),
        ("remember", {"name": "port", "text": None, "scope": "user"}, "text is required"),
        ("remember", {"name": "port", "text": "x", "scope": "user", "workspaceKey": "ws-b"}, "scope is set by the host"),
        ("remember", {"name": "port\nx", "text": "5174", "scope": "user"}, "must not contain control"),
        ("remember", {"name": "p" * 200, "text": "5174", "scope": "user"}, "at most"),
        ("remember", {"name": "port", "text": "x" * 5_000, "scope": "user"}, "at most 4000"),
        ("recall", {}, "give name"),
        ("recall", {"name": "a", "query": "b"}, "not both"),
        ("recall", {"query": "a", "limit": 0}, "at least 1"),
        ("recall", {"query": "a", "limit": "5"}, "limit must be an integer"),
        ("recall", {"query": "a", "limit": True}, "limit must be an integer"),
        ("recall", {"query": "a", "color": "red"}, "unknown property"),
        ("forget", {"name": "port"}, "scope is required"),
    ],
)
def test_malformed_arguments_are_tool_errors_never_exceptions(
    store: NamedMemoryStore, tool: str, arguments: Any, message: str
) -> None:
    record = run(store).call(tool, arguments)
    assert record.status == "invalid_arguments"
    assert message in result(record)["error"]["message"]


@pytest.mark.parametrize("tool", ["remember", "recall", "forget"])
def test_undecodable_arguments_are_answered_with_a_call_of_that_tool_that_it_accepts(
    store: NamedMemoryStore, tool: str
) -> None:
    """A model that sent broken JSON is shown how a call of this tool looks, not ``{}`` (which it would refuse)."""
    message = result(run(store).call(tool, '{"name": '))["error"]["message"]
    example = message.split("such as ", 1)[1]
    assert run(store).call(tool, example).status in {"ok", "not_found"}  # forget of a name never stored


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("remember", {"name": "port", "text": "5174", "scope": "global"}),
        ("forget", {"name": "port", "scope": "workspace"}),
        ("recall", {"query": "port", "scope": "team"}),
    ],
)
def test_the_host_alone_refuses_a_scope_outside_user_and_project(tool: str, arguments: dict[str, Any]) -> None:
    """The store refuses these too; here no store is reachable, so the refusal is the Host's own."""

    class NoStorage:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"storage touched: {name}")

    host = open_named_run(NoStorage(), READ, RunContext("ws-a"), application="a", now_ms=1)  # type: ignore[arg-type]
    record = host.call(tool, arguments)
    assert (record.status, record.storage_read) == ("invalid_arguments", False)
    assert 'scope must be "user" or "project"' in result(record)["error"]["message"]


def test_project_scope_without_a_workspace_is_a_tool_error(store: NamedMemoryStore) -> None:
    record = run(store, workspace=None).call("remember", {"name": "port", "text": "5174", "scope": "project"})
    assert record.status == "invalid_arguments" and 'use "user"' in result(record)["error"]["message"]
    assert run(store, workspace=None).call("recall", {"name": "x", "scope": "project"}).status == "invalid_arguments"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(NAMED_TOOL_NAMES) + ["nope"]),
    st.one_of(
        st.text(max_size=40),
        st.dictionaries(
            st.sampled_from(["name", "text", "scope", "query", "limit", "x"]),
            st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), st.lists(st.integers())),
            max_size=5,
        ),
    ),
)
def test_any_model_input_gives_a_record_never_an_exception(tool: str, arguments: Any) -> None:
    with NamedMemoryStore() as store:
        record = run(store).call(tool, arguments)
    assert record.status in {"ok", "invalid_arguments", "unknown_tool", "not_found"}
    assert isinstance(json.loads(record.result_text), dict)


def test_specs_state_the_runs_top_k_as_recalls_ceiling_and_default() -> None:
    full = json.dumps(named_tool_specs())
    assert f"at most {MAX_RECALL_LIMIT}" in full and "default 5," in full
    ten = named_tool_specs(("recall",), max_limit=10)
    recall = ten[0]["function"]
    assert "(default 5, at most 10)" in recall["description"]
    assert recall["parameters"]["properties"]["limit"]["description"] == "Most memories to return; at most 10."
    assert "(default 3, at most 3)" in named_tool_specs(("recall",), max_limit=3)[0]["function"]["description"]
    assert named_tool_specs(("forget", "remember"))[0]["function"]["parameters"] == {
        "type": "object", "additionalProperties": False, "required": ["name", "scope"],
        "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 120, "description": "Exact memory name."},
                       "scope": {"type": "string", "enum": ["user", "project"], "description": (
                           "'user': about the user, true in every project; 'project': about the current project only.")}}}
    first = named_tool_specs()
    first[0]["function"]["parameters"]["properties"]["name"]["maxLength"] = 1  # a caller's edit stays its own
    assert named_tool_specs()[0]["function"]["parameters"]["properties"]["name"]["maxLength"] == 120


def test_each_argument_error_says_what_the_argument_is_for_and_all_of_them_come_back_at_once(store: NamedMemoryStore) -> None:
    writer = run(store)
    remember = result(writer.call("remember", {"name": "  ", "scope": 3}))["error"]["message"]
    assert 'name must be a non-empty string (a short stable name such as "deploy route"), got blank text' in remember
    assert "text is required: the memory's full text" in remember
    assert 'scope must be "user" or "project", got 3' in remember
    forget = result(writer.call("forget", {"name": 7}))["error"]["message"]
    assert "name must be a non-empty string (the exact name of the memory to delete), got a number" in forget
    assert 'scope is required: "user" (about the user) or "project" (this project only)' in forget
    recall = result(writer.call("recall", {"name": "", "scope": "team", "limit": -1}))["error"]["message"]
    assert "name must be a non-empty string (the exact memory name), got blank text" in recall
    assert 'scope must be "user" or "project", got "team"' in recall and "limit must be at least 1, got -1" in recall
    query = result(writer.call("recall", {"query": False}))["error"]["message"]
    assert query.startswith("query must be a non-empty string (a few words about the topic), got a boolean")
    both = result(writer.call("recall", {"name": "a", "query": "b", "scope": "user"}))["error"]["message"]
    assert both == "give either name or query, not both"
    neither = result(writer.call("recall", {"scope": "user"}))["error"]["message"]
    assert neither == 'give name (one memory by its exact name) or query (topic words), e.g. {"query": "deploy"}'


def test_recall_by_name_or_query_in_one_scope_and_a_limit_up_to_the_runs_top_k(store: NamedMemoryStore) -> None:
    writer = run(store, recall_limit=3)
    for n in range(4):
        writer.call("remember", {"name": f"deploy {n}", "text": f"deploy step {n}", "scope": "project"})
    writer.call("remember", {"name": "deploy user", "text": "deploy as me", "scope": "user"})
    default = result(writer.call("recall", {"query": "deploy"}))
    assert (default["limit"], default["limitCapped"], len(default["memories"])) == (3, False, 3)
    capped = result(writer.call("recall", {"query": "deploy", "limit": 4}))
    assert (capped["limit"], capped["limitCapped"], len(capped["memories"])) == (3, True, 3)
    mine = result(writer.call("recall", {"query": "deploy", "scope": "user"}))["memories"]
    assert [m["text"] for m in mine] == ["deploy as me"]
    named = result(writer.call("recall", {"name": "deploy 2", "scope": "project"}))["memories"]
    assert [m["text"] for m in named] == ["deploy step 2"]
    assert result(writer.call("recall", {"name": "deploy 2", "scope": "user"}))["memories"] == []


def test_a_call_record_names_the_tool_and_arguments_as_the_model_sent_them(store: NamedMemoryStore) -> None:
    writer = run(store, tools=READ_TOOLS)
    odd = writer.call(7, None)  # type: ignore[arg-type]
    assert (odd.name, odd.arguments, odd.status, odd.storage_read) == ("7", "", "unknown_tool", False)
    assert result(odd)["error"]["message"] == "unknown tool 7; available: recall"
    long_name = writer.call("x" * 200, "{}")
    message = result(long_name)["error"]["message"]
    assert message == f'unknown tool "{"x" * 79}; available: recall' and long_name.arguments == "{}"
    assert long_name.result_chars == len(long_name.result_text) and long_name.elapsed_s >= 0
    accented = writer.call("recall", {"query": "café ☕"})
    assert accented.arguments == '{"query":"café ☕"}' and accented.status == "ok"


def test_forgetting_a_missing_name_reads_storage_and_says_how_to_find_the_names(store: NamedMemoryStore) -> None:
    record = run(store).call("forget", {"name": "port", "scope": "user"})
    assert (record.status, record.storage_read, record.disclosed_item_ids) == ("not_found", True, ())
    assert result(record) == {"error": {"code": "not_found", "message": (
        'no memory named "port" in scope user; recall lists the saved names')}}
    assert result(run(store).call("remember", {"name": "port", "text": "5174", "scope": "user"})) == {
        "event": "created", "name": "port", "scope": "user", "version": 1}


def test_recall_within_a_content_budget_shows_whole_memories_whose_texts_fit_and_iso_times_on_request(
        store: NamedMemoryStore) -> None:
    writer = run(store, now_ms=86_400_000)
    for n, size in enumerate((10, 10, 10)):
        writer.call("remember", {"name": f"deploy {n}", "text": f"deploy {n} " + "x" * size, "scope": "project"})
    budgeted = run(store, recall_content_chars=40, iso_times=True)
    record = budgeted.call("recall", {"query": "deploy"})
    body = result(record)
    assert (body["truncated"], body["omittedCount"], len(body["memories"])) == (True, 1, 2)
    assert record.disclosed_item_ids and len(record.disclosed_item_ids) == 2 and record.storage_read
    assert body["memories"][0]["createdAtIso"] == "1970-01-02T00:00:00Z"
    assert "createdAtIso" not in result(run(store).call("recall", {"query": "deploy"}))["memories"][0]
    for n in range(3):
        writer.call("remember", {"name": f"deploy {n}", "text": f"deploy {n} " + "x" * 100, "scope": "project"})
    wide = run(store, recall_budget_chars=256, recall_content_chars=1_000).call("recall", {"query": "deploy"})
    assert len(wide.result_text) > 256 and not result(wide)["truncated"]  # the content budget replaces the ceiling


def test_a_recall_result_over_the_budget_drops_whole_memories_from_the_end_until_it_fits(store: NamedMemoryStore) -> None:
    writer = run(store)
    for n in range(3):
        writer.call("remember", {"name": f"deploy {n}", "text": f"deploy {n} " + "x" * 100, "scope": "project"})
    whole = run(store).call("recall", {"query": "deploy"})
    cut = run(store, recall_budget_chars=len(whole.result_text) - 1).call("recall", {"query": "deploy"})
    assert [m["name"] for m in result(cut)["memories"]] == [m["name"] for m in result(whole)["memories"]][:2]
    assert (result(cut)["truncated"], result(cut)["omittedCount"]) == (True, 1)
    exact = run(store, recall_budget_chars=len(whole.result_text)).call("recall", {"query": "deploy"})
    assert exact.result_text == whole.result_text and not result(exact)["truncated"]


@pytest.mark.parametrize("setting, value, message", [
    ("recall_limit", 0, "recall_limit must be an integer from 1 to 50 (got 0)"),
    ("recall_limit", 51, "recall_limit must be an integer from 1 to 50 (got 51)"),
    ("recall_limit", True, "recall_limit must be an integer from 1 to 50 (got True)"),
    ("recall_limit", 5.0, "recall_limit must be an integer from 1 to 50 (got 5.0)"),
    ("recall_budget_chars", 255, "recall_budget_chars must be an integer of at least 256 (got 255)"),
    ("recall_budget_chars", True, "recall_budget_chars must be an integer of at least 256 (got True)"),
    ("recall_budget_chars", 300.0, "recall_budget_chars must be an integer of at least 256 (got 300.0)"),
])
def test_a_run_refuses_a_top_k_or_result_budget_out_of_range(store: NamedMemoryStore, setting: str, value: Any,
                                                              message: str) -> None:
    with pytest.raises(ValueError) as caught:
        run(store, **{setting: value})
    assert str(caught.value) == message


def test_the_edges_of_top_k_and_the_result_budget_are_allowed(store: NamedMemoryStore) -> None:
    assert run(store, recall_limit=1).call("recall", {"query": "x"}).status == "ok"
    assert result(run(store, recall_limit=50).call("recall", {"query": "x", "limit": 50}))["limitCapped"] is False
    assert run(store, recall_budget_chars=256).call("recall", {"query": "x"}).status == "ok"


def test_a_denied_run_has_no_workspace_and_says_why_to_the_harness_only(store: NamedMemoryStore) -> None:
    denied = run(store, policy=MemoryPolicy(enabled=True, agent_read_enabled=False))
    assert denied.identity.workspace_key is None and denied.denial_reason == "agent_reads_disabled"
    admitted = run(store)
    assert admitted.identity.workspace_key == "ws-a" and admitted.denial_reason is None
    assert admitted.identity.application == "recall-eval" and admitted.identity.recall_enabled is True
    assert run(store, namespace="team-1").identity.namespace == "team-1"
    assert run(store, recall_enabled=False).identity.recall_enabled is False
    record = denied.call("recall", {"query": "x"})
    assert result(record)["error"]["message"] == "memory tools are not available in this conversation"


def test_a_lone_surrogate_or_a_value_json_cannot_hold_in_dict_arguments_gives_a_record_never_an_exception(
        store: NamedMemoryStore) -> None:
    """A dict of arguments (an SDK's parsed call) is logged as JSON text: a lone surrogate kept as its escape, a value
    JSON has no type for (bytes, a set) shown by its repr, and the model still gets its tool error."""
    writer = run(store)
    surrogate = writer.call("remember", {"name": "p\ud800", "text": "x", "scope": "user"})
    assert surrogate.arguments == '{"name":"p\\ud800","text":"x","scope":"user"}'
    assert surrogate.status == "invalid_arguments" and "lone surrogate" in result(surrogate)["error"]["message"]
    odd = writer.call("recall", {"query": b"deploy", "limit": {1}})
    assert odd.arguments == '{"query":"b\'deploy\'","limit":"{1}"}' and odd.status == "invalid_arguments"
    assert result(odd)["error"]["message"] == (
        "query must be a non-empty string (a few words about the topic), got bytes; "
        "limit must be an integer from 1 to 50, got set")


def test_an_unknown_tool_is_named_back_as_the_model_spelled_it(store: NamedMemoryStore) -> None:
    """The model reads its own tool name back: JSON-quoted text with its accents, a non-text name by its repr."""
    reader = run(store, tools=READ_TOOLS)
    accented = reader.call("recherché", None)
    assert result(accented)["error"]["message"] == 'unknown tool "recherché"; available: recall'
    nameless = reader.call(None, None)  # type: ignore[arg-type]
    assert (nameless.name, result(nameless)["error"]["message"]) == ("None", "unknown tool None; available: recall")
    assert reader.call("recall", {"query": "x"}).name == "recall"


def test_a_call_record_times_the_call_alone(store: NamedMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([1_000.0, 1_000.25])
    monkeypatch.setattr(tools_module, "time", type("Clock", (), {"perf_counter": staticmethod(lambda: next(ticks))}))
    assert run(store).call("recall", {"query": "x"}).elapsed_s == 0.25


def test_a_runs_specs_state_its_own_top_k(store: NamedMemoryStore) -> None:
    recall = run(store, recall_limit=3, tools=READ_TOOLS).tool_specs()[0]["function"]
    assert "(default 3, at most 3)" in recall["description"]
    assert recall["parameters"]["properties"]["limit"]["description"] == "Most memories to return; at most 3."


def test_a_forget_reads_storage_and_a_missing_scope_says_what_each_scope_means(store: NamedMemoryStore) -> None:
    writer = run(store)
    writer.call("remember", {"name": "port", "text": "5174", "scope": "user"})
    forgotten = writer.call("forget", {"name": "port", "scope": "user"})
    assert (forgotten.status, forgotten.storage_read, forgotten.disclosed_item_ids) == ("ok", True, ())
    scopeless = result(writer.call("forget", {"name": "port"}))["error"]["message"]
    assert scopeless == 'scope is required: "user" (about the user) or "project" (this project only)'


def test_a_run_opened_without_a_namespace_is_in_the_empty_one_and_a_wrong_tool_list_names_the_choices(
        store: NamedMemoryStore) -> None:
    assert run(store).identity.namespace == ""
    with pytest.raises(ValueError) as caught:
        run(store, tools=("remember", "update_memory"))
    assert str(caught.value) == "unknown named-memory tools ['update_memory']; choose from remember, recall, forget"
