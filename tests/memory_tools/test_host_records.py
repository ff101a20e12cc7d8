"""What the Host writes down and hands back, to the character: records, error texts, budgets, properties.

Mutation testing of ``memory_tools.host`` found these unpinned: a name shown
with ``repr`` instead of JSON, a truncation one character off, a budget minimum
off by one, a denial reason or a status swapped, a withheld item logged under
the wrong id.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from memory_tools.host import (
    MIN_GET_BUDGET_CHARS,
    MIN_SEARCH_BUDGET_CHARS,
    STATUS_INVALID_ARGUMENTS,
    STATUS_NOT_FOUND,
    STATUS_OK,
    STATUS_POLICY_DENIED,
    STATUS_UNKNOWN_TOOL,
    Host,
    HostConfigurationError,
)
from memory_tools.model import MemoryItemSource
from memory_tools.policy import MemoryPolicy, RunContext
from memory_tools.store import MemoryItemStore
from tests.memory_tools.conftest import READ_POLICY, CountingStore, item

UNKNOWN = "unknown tool {}; available: memory_search, memory_get"


def _run(store: Any, workspace: str | None = "ws-a", policy: MemoryPolicy = READ_POLICY, **budgets: int):
    return Host(store, policy, **budgets).open_run(RunContext(workspace_key=workspace))


def _error(record) -> dict[str, str]:
    return json.loads(record.result_text)["error"]


@pytest.mark.parametrize(("name", "shown"), [
    ("memory_delete", '"memory_delete"'),
    ("记忆_delete", '"记忆_delete"'),
    ("x" * 78, '"' + "x" * 78 + '"'),
    ("x" * 79, '"' + "x" * 76 + "..."),
    (7, "7"),
    (None, "None"),
    (["memory_get"], "['memory_get']"),
    ("\ud800", '"\\ud800"'),
])
def test_an_unknown_tool_name_is_shown_as_json_and_cut_at_80_characters(
    counting_store: CountingStore, name: Any, shown: str
) -> None:
    record = _run(counting_store).call(name, {})
    assert record.status == STATUS_UNKNOWN_TOOL
    assert _error(record) == {"code": "unknown_tool", "message": UNKNOWN.format(shown)}
    assert record.name == (name if isinstance(name, str) else shown)
    assert record.storage_read is False and record.disclosed_item_ids == () and counting_store.reads == 0


def test_a_non_string_tool_name_is_recorded_by_its_repr(counting_store: CountingStore) -> None:
    assert _run(counting_store).call(42, {}).name == "42"
    assert _run(counting_store).call("memory_search", {"terms": ["tea"]}).name == "memory_search"


@pytest.mark.parametrize(("arguments", "recorded"), [
    ('{"terms": ["tea"]}', '{"terms": ["tea"]}'),
    ({"terms": ["茶"], "limit": 2}, '{"terms":["茶"],"limit":2}'),
    (None, ""),
    ({"terms": {1, 2}}, "{'terms': {1, 2}}"),
])
def test_the_record_keeps_the_arguments_as_received(counting_store: CountingStore, arguments: Any, recorded: str) -> None:
    assert _run(counting_store).call("memory_search", arguments).arguments == recorded


def test_a_denied_call_reveals_nothing_not_even_an_argument_error(counting_store: CountingStore) -> None:
    run = _run(counting_store, policy=MemoryPolicy(enabled=True, agent_read_enabled=False))
    record = run.call("memory_search", "{not json")
    assert (record.status, record.storage_read, record.disclosed_item_ids) == (STATUS_POLICY_DENIED, False, ())
    assert _error(record) == {"code": "policy_denied",
                              "message": "memory tools are not available in this conversation"}
    assert run.admitted is False and run.tool_names == () and run.tool_specs() == []
    assert run.denial_reason == "agent_reads_disabled" and counting_store.reads == 0


def test_an_admitted_run_reports_its_context_and_tools(counting_store: CountingStore) -> None:
    context = RunContext(workspace_key="ws-a")
    run = Host(counting_store, READ_POLICY).open_run(context)
    assert run.context is context and run.admitted is True and run.denial_reason is None
    assert run.tool_names == ("memory_search", "memory_get")
    assert [spec["function"]["name"] for spec in run.tool_specs()] == ["memory_search", "memory_get"]


def test_the_policy_property_reads_and_replaces_the_policy(counting_store: CountingStore) -> None:
    host = Host(counting_store)
    assert host.policy == MemoryPolicy() and host.open_run(RunContext("ws-a")).admitted is False
    host.policy = READ_POLICY
    assert host.policy is READ_POLICY and host.open_run(RunContext("ws-a")).admitted is True


def test_argument_errors_are_invalid_arguments_without_a_storage_read(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_get", {"itemId": 5})
    assert (record.status, record.storage_read) == (STATUS_INVALID_ARGUMENTS, False)
    assert _error(record) == {"code": "invalid_arguments", "message": "itemId must be a string, got a number"}


class _DisagreeingStore(CountingStore):
    """A store whose own validation rejects what the Host's checks let through."""

    def search_by_keys(self, *args: Any, **kwargs: Any) -> list[Any]:
        self.reads += 1
        from memory_tools.model import MemoryValidationError

        raise MemoryValidationError("Memory key search limit must be between 1 and 100")


def test_a_store_validation_error_is_an_argument_error_after_a_storage_read(seeded_store: MemoryItemStore) -> None:
    record = _run(_DisagreeingStore(seeded_store)).call("memory_search", {"terms": ["tea"]})
    assert (record.status, record.storage_read) == (STATUS_INVALID_ARGUMENTS, True)
    assert _error(record)["message"] == "Memory key search limit must be between 1 and 100"


def test_a_missing_item_is_not_found_after_a_storage_read(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_get", {"itemId": "nope"})
    assert (record.status, record.storage_read, record.disclosed_item_ids) == (STATUS_NOT_FOUND, True, ())
    assert record.result_chars == len(record.result_text)


@pytest.mark.parametrize(("name", "minimum"), [("search_result_budget_chars", MIN_SEARCH_BUDGET_CHARS),
                                               ("get_result_budget_chars", MIN_GET_BUDGET_CHARS)])
def test_a_budget_at_its_minimum_is_accepted_and_one_below_is_not(
    counting_store: CountingStore, name: str, minimum: int
) -> None:
    assert (MIN_SEARCH_BUDGET_CHARS, MIN_GET_BUDGET_CHARS) == (256, 8192)
    Host(counting_store, READ_POLICY, **{name: minimum})
    with pytest.raises(HostConfigurationError) as caught:
        Host(counting_store, READ_POLICY, **{name: minimum - 1})
    assert str(caught.value) == f"{name} must be an integer of at least {minimum} characters (got {minimum - 1})"
    for bad in (float(minimum), str(minimum), True):
        with pytest.raises(HostConfigurationError):
            Host(counting_store, READ_POLICY, **{name: bad})


def _search_text(padding: int, **budgets: int) -> str:
    """The result text of a two-item search whose full text grows by one character per ``padding``."""
    with MemoryItemStore(":memory:") as store:
        store.bulk_create([item("n-1", "x" * 1500, ["build"], now=2_000),
                           item("n-2", "y" * padding, ["build"], now=1_000)])
        return _run(store, None, **budgets).call("memory_search", {"terms": ["build"]}).result_text


def _get_text(padding: int, **budgets: int) -> str:
    """The result text of a one-item get whose full text grows by one character per ``padding`` (<= 2000)."""
    sources = [MemoryItemSource("s" * 500, "r" * 500, "t" * 500, f"e-{i:03d}") for i in range(9)]
    with MemoryItemStore(":memory:") as store:
        store.create(item("big", "z" * padding, ["k"], sources=sources))
        return _run(store, None, **budgets).call("memory_get", {"itemId": "big"}).result_text


def test_the_default_search_budget_is_4000_characters() -> None:
    padding = 1000 + 4001 - len(_search_text(1000, search_result_budget_chars=10_000))
    assert len(_search_text(padding, search_result_budget_chars=10_000)) == 4001
    assert json.loads(_search_text(padding))["omittedCount"] == 1
    assert json.loads(_search_text(padding - 1))["omittedCount"] == 0
    assert len(_search_text(padding - 1)) == 4000


def test_the_default_get_budget_is_16000_characters() -> None:
    padding = 1000 + 16001 - len(_get_text(1000, get_result_budget_chars=30_000))
    assert len(_get_text(padding, get_result_budget_chars=30_000)) == 16001
    assert json.loads(_get_text(padding))["omittedSourceCount"] == 1
    assert len(_get_text(padding - 1)) == 16000
    assert json.loads(_get_text(padding - 1))["truncated"] is False


def test_get_drops_as_few_keys_as_fit_after_every_source(caplog: pytest.LogCaptureFixture) -> None:
    keys = [f"{'k' * 200} {i:02d}" for i in range(32)]
    with MemoryItemStore(":memory:") as store:
        store.create(item("wide", "y" * 2000, keys, sources=[MemoryItemSource("s" * 500, "r" * 500, "t" * 500, "e-1")]))
        with caplog.at_level(logging.WARNING, logger="memory_tools.host"):
            record = _run(store, None, get_result_budget_chars=MIN_GET_BUDGET_CHARS).call("memory_get", {"itemId": "wide"})
    body = json.loads(record.result_text)
    assert record.status == STATUS_OK and len(record.result_text) <= MIN_GET_BUDGET_CHARS and caplog.text == ""
    assert body["omittedSourceCount"] == 1 and body["item"]["sources"] == [] and body["item"]["sourceCount"] == 1
    kept = len(body["item"]["keys"])
    assert kept + body["omittedKeyCount"] == 32 and 0 < kept < 32
    assert [k["key"] for k in body["item"]["keys"]] == keys[:kept]  # whole keys from the front, values intact
    one_key = len(json.dumps(body["item"]["keys"][0], separators=(",", ":"))) + 1
    assert MIN_GET_BUDGET_CHARS - len(record.result_text) < one_key  # no key more would have fit


def test_a_withheld_search_result_is_logged_by_its_id(seeded_store: MemoryItemStore,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    class OtherWorkspaceStore(CountingStore):
        def search_by_keys(self, *args: Any, **kwargs: Any) -> list[Any]:
            return [self.store.read_item("b-deploy"), self.store.read_item("a-deploy")]

    with caplog.at_level(logging.WARNING, logger="memory_tools.host"):
        record = _run(OtherWorkspaceStore(seeded_store)).call("memory_search", {"terms": ["deploy target"]})
    assert record.disclosed_item_ids == ("a-deploy",)
    assert [r.getMessage() for r in caplog.records] == [
        "memory_search: store returned item 'b-deploy' outside the run's view; withheld"]


def test_a_repeated_search_result_is_disclosed_once(seeded_store: MemoryItemStore) -> None:
    class RepeatingStore(CountingStore):
        def search_by_keys(self, *args: Any, **kwargs: Any) -> list[Any]:
            return [self.store.read_item("g-coffee")] * 3 + [self.store.read_item("g-tea")]

    record = _run(RepeatingStore(seeded_store)).call("memory_search", {"terms": ["coffee", "tea"], "limit": 2})
    assert record.disclosed_item_ids == ("g-coffee", "g-tea")


def test_a_search_stops_at_its_limit_even_if_the_store_returns_more(seeded_store: MemoryItemStore) -> None:
    class GenerousStore(CountingStore):
        def search_by_keys(self, *args: Any, **kwargs: Any) -> list[Any]:
            return [self.store.read_item(i) for i in ("g-coffee", "g-tea", "g-coffee-old")]

    record = _run(GenerousStore(seeded_store)).call("memory_search", {"terms": ["coffee", "tea"], "limit": 1})
    assert record.disclosed_item_ids == ("g-coffee",)
    assert json.loads(record.result_text)["truncated"] is False


def test_prefix_matched_keys_are_the_keys_starting_with_a_term(seeded_store: MemoryItemStore) -> None:
    record = _run(seeded_store).call("memory_search", {"terms": ["dri"], "match": "prefix"})
    results = json.loads(record.result_text)["results"]
    assert [(r["itemId"], r["matchedKeys"]) for r in results] == [("g-tea", ["drink"]),
                                                                  ("g-coffee", ["drink preference"])]


def test_a_lone_surrogate_in_the_arguments_is_escaped_in_the_result(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_search", {"terms": ["tea"], "match": "\ud800"})
    assert record.status == STATUS_INVALID_ARGUMENTS
    assert "\\ud800" in record.result_text and "\ud800" not in record.result_text
    record.result_text.encode("utf-8")  # always encodable


GET_FIELDS = ["itemId", "version", "content", "kind", "statementType", "temporalType", "eventStartedAt",
              "eventEndedAt", "observedAt", "lifecycleState", "scopeType", "origin", "createdAt", "updatedAt",
              "keys", "sourceCount", "sources"]


def test_get_returns_every_item_field_under_its_wire_name(seeded_store: MemoryItemStore) -> None:
    seeded_store.update("a-code", content="parseConfig retries 4 times.", now=7_000)
    body = json.loads(_run(seeded_store).call("memory_get", {"itemId": "a-code"}).result_text)
    assert list(body) == ["truncated", "omittedKeyCount", "omittedSourceCount", "item"]
    item_json = body["item"]
    assert list(item_json) == GET_FIELDS
    assert (item_json["origin"], item_json["createdAt"], item_json["updatedAt"], item_json["version"]) == (
        "agent_extracted", 2_600, 7_000, 2)
    assert (item_json["lifecycleState"], item_json["scopeType"], item_json["kind"]) == ("active", "workspace", "knowledge")
    assert item_json["keys"][0] == {"key": "MAX_RETRIES", "keyType": "code", "keyOrigin": "llm"}
    assert item_json["sources"] == [{"sessionId": "s-1", "runId": "r-2600", "turnId": "t-2600", "eventId": "e-2600"}]


def test_not_found_says_to_use_an_id_from_a_search(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_get", {"itemId": "g-coffee-old"})
    assert _error(record) == {"code": "not_found", "message": "no memory item with this itemId is available; "
                                                              "use an itemId returned by memory_search"}


class _OversizedStore(CountingStore):
    """A store (any MemoryReader) holding an item larger than the get budget even without keys and sources."""

    def __init__(self, store: MemoryItemStore, content_chars: int) -> None:
        super().__init__(store)
        self.content_chars = content_chars

    def read_item(self, item_id: str) -> Any:
        import dataclasses

        record = self.store.read_item(item_id)
        content = "o" * self.content_chars
        return dataclasses.replace(record, item=dataclasses.replace(record.item, content=content))


def _oversized_get(seeded_store: MemoryItemStore, content_chars: int, caplog: pytest.LogCaptureFixture):
    store = _OversizedStore(seeded_store, content_chars)
    with caplog.at_level(logging.WARNING, logger="memory_tools.host"):
        record = _run(store, None, get_result_budget_chars=MIN_GET_BUDGET_CHARS).call("memory_get", {"itemId": "g-trip"})
    return record, json.loads(record.result_text)


def test_an_item_over_the_get_budget_comes_whole_without_keys_and_sources_and_is_logged(
    seeded_store: MemoryItemStore, caplog: pytest.LogCaptureFixture
) -> None:
    record, body = _oversized_get(seeded_store, 9_000, caplog)
    assert record.status == STATUS_OK and len(body["item"]["content"]) == 9_000
    assert (body["item"]["keys"], body["item"]["sources"], body["omittedKeyCount"], body["omittedSourceCount"]) == (
        [], [], 2, 3)
    assert [r.getMessage() for r in caplog.records] == [
        "memory_get: item 'g-trip' exceeds the budget even without keys and sources"]


def test_an_item_exactly_at_the_get_budget_without_keys_and_sources_is_not_logged(
    seeded_store: MemoryItemStore, caplog: pytest.LogCaptureFixture
) -> None:
    record, _ = _oversized_get(seeded_store, 9_000, caplog)
    exact = 9_000 - (len(record.result_text) - MIN_GET_BUDGET_CHARS)
    caplog.clear()
    record, body = _oversized_get(seeded_store, exact, caplog)
    assert len(record.result_text) == MIN_GET_BUDGET_CHARS and body["item"]["keys"] == [] and caplog.records == []


def test_search_asks_the_store_for_the_runs_scope_active_items_and_the_limit(seeded_store: MemoryItemStore) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    class RecordingStore(CountingStore):
        def search_by_keys(self, *args: Any, **kwargs: Any) -> list[Any]:
            calls.append((args, kwargs))
            return self.store.search_by_keys(*args, **kwargs)

    _run(RecordingStore(seeded_store)).call("memory_search", {"terms": ["Coffee", "tea"], "match": "prefix", "limit": 3})
    assert calls == [((["Coffee", "tea"], "prefix"), {"workspace_key": "ws-a", "include_archived": False, "limit": 3})]


def test_a_json_error_shows_the_called_tools_example(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_get", "{bad")
    assert _error(record)["message"] == ("arguments are not valid JSON (Expecting property name enclosed in double "
                                         'quotes at position 1); send one JSON object such as {"itemId": "<itemId>"}')


def test_the_recorded_elapsed_time_lies_within_the_call(counting_store: CountingStore) -> None:
    import time

    before = time.perf_counter()
    record = _run(counting_store).call("memory_search", {"terms": ["coffee"]})
    assert 0 <= record.elapsed_s <= time.perf_counter() - before


def test_non_string_property_names_are_an_argument_error_not_a_crash(counting_store: CountingStore) -> None:
    record = _run(counting_store).call("memory_search", {"terms": ["coffee"], 1: "x", "b": 2})
    assert record.status == STATUS_INVALID_ARGUMENTS and counting_store.reads == 0
    assert _error(record)["message"] == ('unknown property 1; accepted: terms, match, limit; '
                                         'unknown property "b"; accepted: terms, match, limit')
