"""The proposal's deterministic CI gates for memory_search / memory_get, one test each."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from memory_tools.host import Host, HostConfigurationError, MemoryRun, ToolCallRecord
from memory_tools.model import MemoryItemSource
from memory_tools.policy import TOOL_NAMES, MemoryPolicy, RunContext
from memory_tools.store import MemoryItemStore
from tests.memory_tools.conftest import READ_POLICY, CountingStore, item

SEARCH_FIELDS = [
    "itemId", "version", "content", "kind", "statementType", "temporalType",
    "eventStartedAt", "eventEndedAt", "observedAt", "matchedKeys", "sourceCount",
]


def open_run(store: Any, workspace: str | None = "ws-a", policy: MemoryPolicy = READ_POLICY, **host: Any) -> MemoryRun:
    return Host(store, policy, **host).open_run(RunContext(workspace_key=workspace))


def search(run: MemoryRun, **arguments: Any) -> tuple[ToolCallRecord, dict[str, Any]]:
    record = run.call("memory_search", json.dumps(arguments, ensure_ascii=False))
    return record, json.loads(record.result_text)


def ids(result: dict[str, Any]) -> list[str]:
    return [r["itemId"] for r in result["results"]]


def assert_error(record: ToolCallRecord, code: str, *, read: bool = False) -> str:
    assert record.status == code
    assert record.storage_read is read
    assert record.disclosed_item_ids == ()
    body = json.loads(record.result_text)
    assert list(body) == ["error"] and body["error"]["code"] == code
    return body["error"]["message"]


# --- search order ---------------------------------------------------------------------------------------------


def test_exact_search_returns_expected_active_items_in_deterministic_order(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    record, result = search(run, terms=["coffee", "drink", "drink preference", "tea"])
    # g-coffee and g-tea match 2 terms (g-tea newer first); g-coffee-old is archived.
    assert ids(result) == ["g-tea", "g-coffee"]
    assert record.disclosed_item_ids == ("g-tea", "g-coffee")
    assert record.status == "ok" and record.storage_read
    assert search(run, terms=["tea", "drink", "coffee", "drink preference"])[1] == result  # term order irrelevant


def test_prefix_search_returns_expected_active_items_in_deterministic_order(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    _, result = search(run, terms=["dr", "co"], match="prefix")
    # g-coffee: "coffee" and "drink preference" (2); g-tea: "drink" (1); a-code: no key starts with "co".
    assert ids(result) == ["g-coffee", "g-tea"]
    _, result = search(run, terms=["deploy"], match="prefix")
    assert ids(result) == ["a-deploy"]
    assert result["results"][0]["matchedKeys"] == ["deploy", "deploy target"]
    _, exact = search(run, terms=["dr"])
    assert ids(exact) == []  # exact needs the whole key


def test_match_defaults_to_exact(counting_store: CountingStore) -> None:
    run = open_run(counting_store)
    _, result = search(run, terms=["deplo"])
    assert result["match"] == "exact" and ids(result) == []


# --- scope ----------------------------------------------------------------------------------------------------


def test_global_items_visible_from_any_workspace(counting_store: CountingStore) -> None:
    for workspace in ("ws-a", "ws-b", "ws-c", None):
        _, result = search(open_run(counting_store, workspace), terms=["coffee"])
        assert ids(result) == ["g-coffee"], workspace


def test_workspace_items_visible_only_from_owning_workspace(counting_store: CountingStore) -> None:
    assert ids(search(open_run(counting_store, "ws-a"), terms=["deploy target"])[1]) == ["a-deploy"]
    assert ids(search(open_run(counting_store, "ws-b"), terms=["deploy target"])[1]) == ["b-deploy"]
    assert ids(search(open_run(counting_store, "ws-c"), terms=["deploy target"])[1]) == []
    assert ids(search(open_run(counting_store, "WS-A"), terms=["deploy target"])[1]) == []  # case-sensitive identity


def test_no_workspace_identity_searches_global_items_only(counting_store: CountingStore) -> None:
    run = open_run(counting_store, None)
    _, result = search(run, terms=["deploy target", "deploy", "coffee", "parseConfig"], limit=10)
    assert ids(result) == ["g-coffee"]
    assert run.call("memory_get", {"itemId": "a-deploy"}).status == "not_found"


def test_get_returns_items_of_global_and_own_workspace_only(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    assert run.call("memory_get", {"itemId": "g-coffee"}).disclosed_item_ids == ("g-coffee",)
    assert run.call("memory_get", {"itemId": "a-deploy"}).disclosed_item_ids == ("a-deploy",)
    assert run.call("memory_get", {"itemId": "b-deploy"}).status == "not_found"


# --- policy gates ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "incognito", "reason"),
    [
        (READ_POLICY, True, "incognito"),
        (MemoryPolicy(enabled=False, agent_read_enabled=True), False, "memory_disabled"),
        (MemoryPolicy(enabled=True, agent_read_enabled=False), False, "agent_reads_disabled"),
        (MemoryPolicy(), False, "agent_reads_disabled"),
    ],
)
def test_incognito_and_policy_gates_prevent_storage_reads(
    counting_store: CountingStore, policy: MemoryPolicy, incognito: bool, reason: str
) -> None:
    run = Host(counting_store, policy).open_run(RunContext(workspace_key="ws-a", incognito=incognito))
    assert not run.admitted and run.denial_reason == reason
    assert run.tool_specs() == [] and run.tool_names == ()
    texts = set()
    for name, arguments in [
        ("memory_search", '{"terms": ["coffee"]}'),
        ("memory_get", '{"itemId": "g-coffee"}'),
        ("memory_search", "not json"),  # a denied run reveals not even argument errors
        ("memory_get", {"itemId": "g-coffee", "workspaceKey": "ws-b"}),
        ("other_tool", "{}"),
    ]:
        record = run.call(name, arguments)
        assert_error(record, "policy_denied")
        assert reason not in record.result_text  # the model is not told why
        texts.add(record.result_text)
    assert len(texts) == 1
    assert counting_store.reads == 0


@pytest.mark.parametrize("value", ["true", 1, None, "yes", [True]])
def test_non_boolean_policy_values_fail_closed(counting_store: CountingStore, value: Any) -> None:
    for policy in (MemoryPolicy(agent_read_enabled=value), MemoryPolicy(enabled=value, agent_read_enabled=True)):
        run = Host(counting_store, policy).open_run(RunContext("ws-a"))
        assert not run.admitted
        assert run.call("memory_search", '{"terms": ["coffee"]}').status == "policy_denied"
    assert counting_store.reads == 0


@pytest.mark.parametrize("value", ["false", 0, None, "", []])
def test_non_boolean_incognito_fails_closed(counting_store: CountingStore, value: Any) -> None:
    run = Host(counting_store, READ_POLICY).open_run(RunContext("ws-a", incognito=value))
    assert not run.admitted and run.denial_reason == "incognito"
    assert run.call("memory_get", '{"itemId": "g-coffee"}').status == "policy_denied"
    assert counting_store.reads == 0


@pytest.mark.parametrize("workspace", ["", " ws-a", "x" * 513, 7])
def test_invalid_workspace_identity_denies_the_run(counting_store: CountingStore, workspace: Any) -> None:
    run = Host(counting_store, READ_POLICY).open_run(RunContext(workspace_key=workspace))
    assert not run.admitted and run.denial_reason == "invalid_workspace_key"
    assert run.call("memory_search", '{"terms": ["coffee"]}').status == "policy_denied"
    assert counting_store.reads == 0


def test_admitted_run_offers_both_tools_in_function_format(counting_store: CountingStore) -> None:
    specs = open_run(counting_store).tool_specs()
    assert [s["function"]["name"] for s in specs] == list(TOOL_NAMES)
    for spec in specs:
        assert spec["type"] == "function"
        assert spec["function"]["parameters"]["additionalProperties"] is False
        assert len(spec["function"]["description"]) > 100
    search_spec = specs[0]["function"]
    assert "'exact' (the default)" in search_spec["description"]
    assert "default 5, at most 10" in search_spec["description"]
    assert set(search_spec["parameters"]["properties"]) == {"terms", "match", "limit"}
    assert set(specs[1]["function"]["parameters"]["properties"]) == {"itemId"}
    json.dumps(specs)  # serializable as sent to litellm
    assert counting_store.reads == 0


# --- lifecycle --------------------------------------------------------------------------------------------------


def test_archived_items_absent_from_search(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    _, result = search(run, terms=["coffee", "deploy target"], limit=10)
    assert ids(result) == ["a-deploy", "g-coffee"]
    assert "superseded" not in json.dumps(result) and "Heroku" not in json.dumps(result)


def test_get_of_archived_missing_and_other_workspace_items_is_byte_identical(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    archived = run.call("memory_get", {"itemId": "a-deploy-old"})
    archived_global = run.call("memory_get", '{"itemId":"g-coffee-old"}')
    missing = run.call("memory_get", {"itemId": "no-such-item"})
    other_workspace = run.call("memory_get", {"itemId": "b-deploy"})
    for record in (archived, archived_global, missing, other_workspace):
        assert_error(record, "not_found", read=True)
    assert archived.result_text == archived_global.result_text == missing.result_text == other_workspace.result_text
    assert "ws-b" not in other_workspace.result_text


def test_restored_item_is_visible_again(seeded_store: MemoryItemStore) -> None:
    seeded_store.restore("g-coffee-old", now=7_000)
    run = open_run(seeded_store)
    _, result = search(run, terms=["coffee"])
    assert ids(result) == ["g-coffee-old", "g-coffee"]
    assert result["results"][0]["version"] == 3  # create, archive, restore


# --- scope cannot come from the model ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [{"workspaceKey": "ws-b"}, {"workspace_key": "ws-b"}, {"scope": "global"}, {"sessionId": "s-1"},
     {"profileId": "p"}, {"includeArchived": True}, {"scopeKey": "ws-b"}],
)
def test_model_cannot_supply_or_widen_scope(counting_store: CountingStore, extra: dict[str, Any]) -> None:
    run = open_run(counting_store, "ws-a")
    for name, arguments in (("memory_search", {"terms": ["deploy target"]}), ("memory_get", {"itemId": "b-deploy"})):
        record = run.call(name, json.dumps(arguments | extra))
        message = assert_error(record, "invalid_arguments")
        assert f'unknown property "{next(iter(extra))}"' in message
        assert "scope is set by the host" in message
    assert counting_store.reads == 0


def test_unknown_properties_name_the_accepted_ones(counting_store: CountingStore) -> None:
    record = open_run(counting_store).call("memory_search", {"terms": ["x"], "query": "x"})
    message = assert_error(record, "invalid_arguments")
    assert 'unknown property "query"' in message and "terms, match, limit" in message


# --- count and size budgets ------------------------------------------------------------------------------------


@pytest.fixture
def many_store() -> CountingStore:
    with MemoryItemStore(":memory:") as raw:
        raw.bulk_create([item(f"n-{i:02d}", f"Note {i} about the build.", ["build"], now=1_000 + i) for i in range(15)])
        yield CountingStore(raw)


def test_result_count_defaults_to_five(many_store: CountingStore) -> None:
    record, result = search(open_run(many_store), terms=["build"])
    assert ids(result) == [f"n-{i:02d}" for i in (14, 13, 12, 11, 10)]
    assert result["limit"] == 5 and result["limitCapped"] is False and result["truncated"] is False
    assert len(record.disclosed_item_ids) == 5


def test_limit_above_ten_is_capped_with_metadata(many_store: CountingStore) -> None:
    for asked in (11, 100, 10**12):
        _, result = search(open_run(many_store), terms=["build"], limit=asked)
        assert len(result["results"]) == 10 and result["limit"] == 10 and result["limitCapped"] is True
    _, result = search(open_run(many_store), terms=["build"], limit=10)
    assert len(result["results"]) == 10 and result["limitCapped"] is False
    _, result = search(open_run(many_store), terms=["build"], limit=3.0)  # an integral JSON number is an integer
    assert len(result["results"]) == 3


@pytest.mark.parametrize("limit", [0, -1, 2.5, True, False, "5", [5], {"n": 5}, float("nan")])
def test_bad_limit_is_rejected_without_storage_read(many_store: CountingStore, limit: Any) -> None:
    record = open_run(many_store).call("memory_search", json.dumps({"terms": ["build"], "limit": limit}))
    assert "limit" in assert_error(record, "invalid_arguments")
    assert many_store.reads == 0


def test_aggregate_budget_drops_whole_results_from_the_end(many_store: CountingStore) -> None:
    full = search(open_run(many_store), terms=["build"], limit=10)[1]
    record, result = search(open_run(many_store, search_result_budget_chars=700), terms=["build"], limit=10)
    assert record.result_chars == len(record.result_text) <= 700
    assert result["truncated"] is True and 0 < result["omittedCount"] < 10
    kept = len(result["results"])
    assert kept + result["omittedCount"] == 10
    assert result["results"] == full["results"][:kept]  # whole results, in rank order, values intact
    assert record.disclosed_item_ids == tuple(ids(result))
    assert full["truncated"] is False and full["omittedCount"] == 0


def test_budget_never_widens_scope(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a", search_result_budget_chars=256)
    record, result = search(run, terms=["deploy target", "coffee"])
    assert set(record.disclosed_item_ids) <= {"a-deploy", "g-coffee"}
    assert "CANARY" not in record.result_text and result["truncated"] is True


def test_budget_below_minimum_is_a_configuration_error(counting_store: CountingStore) -> None:
    with pytest.raises(HostConfigurationError, match="search_result_budget_chars"):
        Host(counting_store, READ_POLICY, search_result_budget_chars=10)
    with pytest.raises(HostConfigurationError, match="get_result_budget_chars"):
        Host(counting_store, READ_POLICY, get_result_budget_chars=True)


def test_get_budget_drops_whole_sources_then_keys() -> None:
    sources = [MemoryItemSource(f"s-{i:03d}" * 20, f"r-{i}" * 20, f"t-{i}" * 20, f"e-{i:03d}") for i in range(256)]
    with MemoryItemStore(":memory:") as raw:
        raw.create(item("big", "A well-sourced fact.", [f"key {i}" for i in range(32)], sources=sources))
        record = open_run(raw, get_result_budget_chars=9000).call("memory_get", {"itemId": "big"})
    body = json.loads(record.result_text)
    assert record.status == "ok" and len(record.result_text) <= 9000
    assert body["truncated"] is True and body["omittedSourceCount"] > 0 and body["omittedKeyCount"] == 0
    assert body["item"]["sourceCount"] == 256
    assert len(body["item"]["sources"]) == 256 - body["omittedSourceCount"]
    assert body["item"]["sources"][0]["eventId"] == "e-000"


# --- projection --------------------------------------------------------------------------------------------------


def test_search_result_has_exactly_the_proposal_fields(counting_store: CountingStore) -> None:
    _, result = search(open_run(counting_store), terms=["trip"])
    assert list(result) == ["match", "limit", "limitCapped", "truncated", "omittedCount", "results"]
    assert list(result["results"][0]) == SEARCH_FIELDS


def test_version_temporal_state_matched_keys_and_provenance_survive_projection(seeded_store: MemoryItemStore) -> None:
    seeded_store.update("g-trip", content="User flies to Lisbon from 2024-05-02 to 2024-05-08.", now=8_000)
    run = open_run(seeded_store)
    _, result = search(run, terms=["Lisbon", "paris"])
    hit = result["results"][0]
    assert hit["itemId"] == "g-trip" and hit["version"] == 2
    assert hit["content"].startswith("User flies to Lisbon from 2024-05-02")
    assert hit["temporalType"] == "interval"
    assert (hit["eventStartedAt"], hit["eventEndedAt"]) == (1_714_521_600_000, 1_715_126_400_000)
    assert hit["observedAt"] == 5_000 and hit["kind"] == "context" and hit["statementType"] == "fact"
    assert hit["matchedKeys"] == ["lisbon"] and hit["sourceCount"] == 3

    got = json.loads(run.call("memory_get", {"itemId": "g-trip"}).result_text)
    assert got["truncated"] is False
    data = got["item"]
    assert data["version"] == 2 and data["lifecycleState"] == "active" and data["scopeType"] == "global"
    assert data["temporalType"] == "interval" and data["eventEndedAt"] == 1_715_126_400_000
    assert data["keys"] == [
        {"key": "lisbon", "keyType": "concept", "keyOrigin": "llm"},
        {"key": "trip", "keyType": "concept", "keyOrigin": "llm"},
    ]
    assert data["sourceCount"] == 3
    assert data["sources"][1] == {"sessionId": "s-2", "runId": "r-2", "turnId": "t-2", "eventId": "e-2"}
    assert "scopeKey" not in data


def test_matched_keys_are_the_stored_original_texts(seeded_store: MemoryItemStore) -> None:
    run = open_run(seeded_store, "ws-a")
    _, result = search(run, terms=["PARSECONFIG", "max_retries"])
    assert result["results"][0]["matchedKeys"] == ["MAX_RETRIES", "parseConfig"]


# --- terms ---------------------------------------------------------------------------------------------------------


def test_cjk_two_character_keys_match_whole_keys_only(counting_store: CountingStore) -> None:
    run = open_run(counting_store, None)
    assert ids(search(run, terms=["偏好"])[1]) == ["g-cjk"]
    assert ids(search(run, terms=[" 咖啡 "])[1]) == ["g-cjk"]
    assert ids(search(run, terms=["好"])[1]) == []  # no segmentation: no substring hits
    assert ids(search(run, terms=["编辑器"], match="prefix")[1]) == ["g-cjk-long"]
    assert ids(search(run, terms=["编辑器"])[1]) == []


def test_mixed_language_keys(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    _, result = search(run, terms=["typescript  偏好", "编辑器 vscode"])
    assert ids(result) == ["a-mixed"]
    assert result["results"][0]["matchedKeys"] == ["TypeScript 偏好", "编辑器 VSCode"]
    assert ids(search(run, terms=["TypeScript"], match="prefix")[1]) == ["a-mixed"]


def test_code_identifier_keys(counting_store: CountingStore) -> None:
    run = open_run(counting_store, "ws-a")
    assert ids(search(run, terms=["src/config.ts"])[1]) == ["a-code"]
    assert ids(search(run, terms=["parse"], match="prefix")[1]) == ["a-code"]
    assert ids(search(run, terms=["config"])[1]) == []
    assert ids(search(open_run(counting_store, "ws-b"), terms=["parseConfig"])[1]) == []


def test_duplicate_terms_count_once(counting_store: CountingStore) -> None:
    run = open_run(counting_store)
    _, once = search(run, terms=["tea", "coffee"])
    _, repeated = search(run, terms=["coffee", "Coffee", " COFFEE ", "coffee", "tea"])
    assert ids(once) == ids(repeated) == ["g-tea", "g-coffee"]  # repeats do not outrank


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ([], "terms is empty"),
        ([""], "terms[0] must not be empty"),
        (["coffee", "   "], "terms[1] must not be empty"),
        (["coffee", "\u3000"], "terms[1] must not be empty"),
        (["ok", 5], "terms[1] must be a string"),
        ("coffee", "terms must be an array"),
        (None, "terms is required"),
        (["tab\tinside"], "terms[0] must not contain control"),
    ],
)
def test_empty_and_malformed_terms_are_rejected_without_storage_read(
    counting_store: CountingStore, terms: Any, expected: str
) -> None:
    record = open_run(counting_store).call("memory_search", {"terms": terms})
    assert expected in assert_error(record, "invalid_arguments")
    assert counting_store.reads == 0


def test_over_limit_inputs_are_rejected_without_storage_read(counting_store: CountingStore) -> None:
    run = open_run(counting_store)
    too_many = run.call("memory_search", {"terms": [f"t{i}" for i in range(33)]})
    assert "at most 32" in assert_error(too_many, "invalid_arguments")
    assert run.call("memory_search", {"terms": ["t"] * 32}).status == "ok"  # counted before de-duplication: 32 is fine
    too_long = run.call("memory_search", {"terms": ["x" * 257]})
    assert "terms[0] must be at most 256" in assert_error(too_long, "invalid_arguments")
    assert run.call("memory_search", {"terms": ["x" * 256]}).status == "ok"
    long_id = run.call("memory_get", {"itemId": "x" * 513})
    assert "itemId" in assert_error(long_id, "invalid_arguments")
    huge = run.call("memory_search", '{"terms": ["' + "x" * 70_000 + '"]}')
    assert "characters" in assert_error(huge, "invalid_arguments")
    assert counting_store.reads == 2


@pytest.mark.parametrize("item_id", ["", " g-coffee", "g-coffee\n", 42, None, ["g-coffee"]])
def test_malformed_item_id_is_an_argument_error_not_not_found(counting_store: CountingStore, item_id: Any) -> None:
    record = open_run(counting_store).call("memory_get", {"itemId": item_id})
    assert "itemId" in assert_error(record, "invalid_arguments")
    assert counting_store.reads == 0


# --- malformed calls ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('["coffee"]', "must be a JSON object"),
        ('"coffee"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ('{"terms": ["a"]} trailing', "not valid JSON"),
        ('{"terms": ["a"], "terms": ["b"]}', "appears more than once"),
        ("[" * 100_000, "characters"),
        ('{"limit": ' + "9" * 5000 + ', "terms": ["a"]}', "could not be decoded"),
    ],
)
def test_malformed_json_returns_a_readable_error(counting_store: CountingStore, arguments: str, expected: str) -> None:
    record = open_run(counting_store).call("memory_search", arguments)
    assert expected in assert_error(record, "invalid_arguments")
    assert record.arguments == arguments
    assert counting_store.reads == 0


def test_unknown_tool_returns_a_readable_error(counting_store: CountingStore) -> None:
    record = open_run(counting_store).call("memory_delete", '{"itemId": "g-coffee"}')
    assert "memory_search, memory_get" in assert_error(record, "unknown_tool")
    assert counting_store.reads == 0


def test_tool_call_record_keeps_the_exchange(counting_store: CountingStore) -> None:
    record = open_run(counting_store).call("memory_search", {"terms": ["咖啡"]})
    assert record.name == "memory_search"
    assert record.arguments == '{"terms":["咖啡"]}'
    assert record.result_chars == len(record.result_text) and "燕麦" in record.result_text
    assert record.elapsed_s >= 0
    assert record.result_text == json.dumps(json.loads(record.result_text), ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(AttributeError):
        record.status = "x"  # type: ignore[misc]


def test_blank_arguments_mean_no_arguments(counting_store: CountingStore) -> None:
    record = open_run(counting_store).call("memory_search", "")
    assert "terms is required" in assert_error(record, "invalid_arguments")


def test_null_optional_arguments_mean_omitted(counting_store: CountingStore) -> None:
    _, result = search(open_run(counting_store), terms=["coffee"], match=None, limit=None)
    assert result["match"] == "exact" and result["limit"] == 5 and ids(result) == ["g-coffee"]


# --- defence in depth ---------------------------------------------------------------------------------------------


class LeakyStore(CountingStore):
    """A broken store: searches ignore scope and lifecycle, reads ignore the asked id."""

    def search_by_keys(self, terms: Any, match: Any = "exact", **kwargs: Any) -> list[Any]:
        self.reads += 1
        leaked = ("g-coffee", "g-coffee-old", "a-deploy", "b-deploy", "a-deploy-old")
        everything = [self.store.read_item(i) for i in leaked]
        return [r for r in everything if r is not None]

    def read_item(self, item_id: str) -> Any:
        self.reads += 1
        return self.store.read_item("b-deploy")


def test_store_bug_cannot_leak_out_of_scope_items(seeded_store: MemoryItemStore) -> None:
    run = open_run(LeakyStore(seeded_store), "ws-a")
    record, result = search(run, terms=["coffee", "deploy target"], limit=10)
    assert set(record.disclosed_item_ids) == {"g-coffee", "a-deploy"}
    assert "CANARY" not in record.result_text and "archived" not in record.result_text
    assert run.call("memory_get", {"itemId": "a-deploy"}).status == "not_found"


# --- a run keeps its tool set ------------------------------------------------------------------------------------


def test_run_keeps_tools_admitted_at_start_when_policy_turns_off(counting_store: CountingStore) -> None:
    host = Host(counting_store, READ_POLICY)
    run = host.open_run(RunContext("ws-a"))
    specs = run.tool_specs()
    host.set_policy(MemoryPolicy(enabled=False))
    assert run.admitted and run.tool_specs() == specs
    assert run.call("memory_search", {"terms": ["coffee"]}).status == "ok"
    later = host.open_run(RunContext("ws-a"))
    assert not later.admitted and later.call("memory_search", {"terms": ["coffee"]}).status == "policy_denied"


def test_run_stays_denied_when_policy_turns_on(counting_store: CountingStore) -> None:
    host = Host(counting_store, MemoryPolicy())
    run = host.open_run(RunContext("ws-a"))
    host.policy = READ_POLICY
    assert not run.admitted and run.tool_specs() == []
    assert run.call("memory_search", {"terms": ["coffee"]}).status == "policy_denied"
    assert counting_store.reads == 0
    assert host.open_run(RunContext("ws-a")).admitted


def test_run_keeps_its_tool_set_across_concurrent_policy_changes(counting_store: CountingStore) -> None:
    host = Host(counting_store, READ_POLICY)

    async def flip_policy() -> None:
        for i in range(50):
            host.set_policy(MemoryPolicy(agent_read_enabled=i % 2 == 1))
            await asyncio.sleep(0)

    async def use_run(admitted_at_start: bool) -> list[str]:
        run = host.open_run(RunContext("ws-a"))
        assert run.admitted is admitted_at_start
        statuses = []
        for _ in range(50):
            statuses.append(run.call("memory_search", {"terms": ["coffee"]}).status)
            assert len(run.tool_specs()) == (2 if admitted_at_start else 0)
            await asyncio.sleep(0)
        return statuses

    async def main() -> tuple[list[str], list[str]]:
        admitted = asyncio.create_task(use_run(True))
        await asyncio.sleep(0)  # the admitted run has opened
        host.set_policy(MemoryPolicy())
        denied = asyncio.create_task(use_run(False))
        results = await asyncio.gather(admitted, denied, flip_policy())
        return results[0], results[1]

    admitted_statuses, denied_statuses = asyncio.run(main())
    assert set(admitted_statuses) == {"ok"}
    assert set(denied_statuses) == {"policy_denied"}


def test_tool_specs_are_a_fresh_copy(counting_store: CountingStore) -> None:
    run = open_run(counting_store)
    run.tool_specs()[0]["function"]["parameters"]["properties"]["workspaceKey"] = {"type": "string"}
    assert "workspaceKey" not in json.dumps(run.tool_specs())
