"""Property tests of the Host: whatever the model sends, a call never raises and
never discloses an item outside the run's scope (checked against the store's own records)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memory_tools.host import Host, ToolCallRecord
from memory_tools.model import LifecycleState, MemoryItemRecord, ScopeType
from memory_tools.normalize import normalize_search_term
from memory_tools.policy import TOOL_NAMES, MemoryPolicy, RunContext
from memory_tools.store import MemoryItemStore
from tests.memory_tools.conftest import ARCHIVED, CORPUS, READ_POLICY, CountingStore

WORKSPACES = (None, "ws-a", "ws-b", "ws-c")
ITEM_IDS = tuple(i.item_id for i in CORPUS if i.item_id)
KNOWN_TERMS = (
    "coffee", "Coffee", "deploy target", "deploy", "de", "d", "co", "tea", "drink", "drink preference", "偏好",
    "咖啡", "编辑器", "typescript 偏好", "parseConfig", "src/", "MAX_RETRIES", "trip", "lisbon", " lisbon ",
)
PROPERTY_NAMES = ("terms", "match", "limit", "itemId", "workspaceKey", "scope", "sessionId", "includeArchived")
STATUSES = {"ok", "invalid_arguments", "unknown_tool", "policy_denied", "not_found"}

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
_json_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_terms = st.sampled_from([True, True, True, False]).flatmap(
    lambda known: st.lists(st.sampled_from(KNOWN_TERMS), min_size=1, max_size=4) if known
    else st.lists(st.text(max_size=12), max_size=6)
)
_well_formed = {
    "memory_search": st.fixed_dictionaries(
        {"terms": _terms},
        optional={
            "match": st.sampled_from(["exact", "prefix", "fuzzy", None]),
            "limit": st.integers(-2, 20) | st.none(),
        },
    ),
    "memory_get": st.fixed_dictionaries({"itemId": st.sampled_from(ITEM_IDS) | st.text(max_size=10)}),
}
_random_dicts = st.dictionaries(st.sampled_from(PROPERTY_NAMES) | st.text(max_size=10), _json_values, max_size=5)
_names = st.sampled_from(TOOL_NAMES * 4 + ("memory_delete", "", "MEMORY_SEARCH", "memory_get "))


@st.composite
def _calls(draw: st.DrawFn) -> tuple[str, Any]:
    """A tool name and arguments: mostly well-formed for that tool, the rest malformed in every way."""
    name = draw(_names)
    shape = draw(st.integers(0, 9))
    if shape < 6:
        arguments = draw(_well_formed.get(name, _well_formed["memory_search"]))
    elif shape < 7:
        arguments = draw(_random_dicts)
    elif shape == 7:
        return name, json.dumps(draw(_json_values))
    elif shape == 8:
        return name, draw(st.text(max_size=60))
    else:
        return name, None
    return name, json.dumps(arguments, ensure_ascii=False) if draw(st.booleans()) else arguments


_gate = st.sampled_from([True, False, None, "true", 1])
_incognito = st.sampled_from([False, True, None, "false", 0])
# Half the runs are admitted; the others draw every gate, mostly broken.
_gates = st.booleans().flatmap(lambda ok: st.just((True, True, False)) if ok else st.tuples(_gate, _gate, _incognito))


@pytest.fixture(scope="module")
def ground_truth() -> Iterator[tuple[MemoryItemStore, dict[str, MemoryItemRecord]]]:
    with MemoryItemStore(":memory:") as store:
        store.bulk_create(list(CORPUS))
        for item_id in ARCHIVED:
            store.archive(item_id, now=6_000)
        records = {i: store.read_item(i) for i in ITEM_IDS}
        yield store, {i: r for i, r in records.items() if r is not None}


def _visible_ids(records: dict[str, MemoryItemRecord], workspace: str | None) -> set[str]:
    return {
        item_id
        for item_id, record in records.items()
        if record.item.lifecycle_state == LifecycleState.ACTIVE
        and (record.item.scope_type == ScopeType.GLOBAL or (workspace and record.item.scope_key == workspace))
    }


def _matches(key: str, term: str, match: str) -> bool:
    return key == term if match == "exact" else key.startswith(term)


def _assert_well_formed(record: ToolCallRecord) -> Any:
    assert record.status in STATUSES
    assert record.result_chars == len(record.result_text)
    record.result_text.encode("utf-8")  # writable to the JSONL log
    body = json.loads(record.result_text)
    if record.status != "ok":
        assert body["error"]["code"] == record.status and record.disclosed_item_ids == ()
    return body


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    call=_calls(),
    workspace=st.sampled_from(WORKSPACES),
    gates=_gates,
)
def test_random_calls_never_raise_and_never_disclose_out_of_scope_items(
    ground_truth: tuple[MemoryItemStore, dict[str, MemoryItemRecord]],
    call: tuple[str, Any],
    workspace: str | None,
    gates: tuple[Any, Any, Any],
) -> None:
    name, arguments = call
    enabled, agent_read, incognito = gates
    store, records = ground_truth
    counting = CountingStore(store)
    run = Host(counting, MemoryPolicy(enabled=enabled, agent_read_enabled=agent_read)).open_run(
        RunContext(workspace_key=workspace, incognito=incognito)
    )
    record = run.call(name, arguments)
    body = _assert_well_formed(record)
    event(f"{record.status} disclosed={bool(record.disclosed_item_ids)}")

    admitted = enabled is True and agent_read is True and incognito is False
    assert run.admitted is admitted
    if not admitted:
        assert record.status == "policy_denied" and counting.reads == 0
    assert record.storage_read is (counting.reads > 0)

    visible = _visible_ids(records, workspace)
    assert set(record.disclosed_item_ids) <= visible
    arguments_text = record.arguments
    for item_id, stored in records.items():
        if item_id not in visible and stored.item.content not in arguments_text:
            assert stored.item.content not in record.result_text, item_id
    if record.status == "ok" and name == "memory_search":
        assert len(record.result_text) <= 4000
        assert [r["itemId"] for r in body["results"]] == list(record.disclosed_item_ids)
        for result in body["results"]:
            assert result["content"] == records[result["itemId"]].item.content
    if record.status == "ok" and name == "memory_get":
        assert len(record.result_text) <= 16000
        assert body["item"]["content"] == records[body["item"]["itemId"]].item.content


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    terms=st.lists(st.sampled_from(KNOWN_TERMS), min_size=1, max_size=6),
    match=st.sampled_from(["exact", "prefix"]),
    workspace=st.sampled_from(WORKSPACES),
)
def test_search_returns_exactly_the_visible_matching_items_in_rank_order(
    ground_truth: tuple[MemoryItemStore, dict[str, MemoryItemRecord]],
    terms: list[str],
    match: str,
    workspace: str | None,
) -> None:
    store, records = ground_truth
    run = Host(store, READ_POLICY).open_run(RunContext(workspace_key=workspace))
    record = run.call("memory_search", {"terms": terms, "match": match, "limit": 10})
    body = _assert_well_formed(record)

    wanted = {normalize_search_term(t) for t in terms}
    hits = []
    for item_id in _visible_ids(records, workspace):
        stored = records[item_id]
        pairs = [(t, k) for t in wanted for k in stored.keys if _matches(k.normalized_key, t, match)]
        matched_terms = {t for t, _ in pairs}
        keys = [k for k in stored.keys if any(k is hit for _, hit in pairs)]
        if keys:
            hits.append((-len(matched_terms), -stored.item.updated_at, item_id, [k.key for k in keys]))
    hits.sort()
    expected = [(h[2], h[3]) for h in hits][:10]
    got = [(r["itemId"], r["matchedKeys"]) for r in body["results"]]
    assert got == expected[: len(got)]
    assert len(got) + body["omittedCount"] == len(expected)
