"""Property tests of the vector and hybrid runs: whatever the model sends, a call never raises, never discloses an
item outside the run's scope, discloses exactly what it shows, and a denied run embeds nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_tools import HybridHost, MemoryItemStore, MemoryPolicy, RunContext, VectorHost
from tests.memory_tools.test_host_properties import (
    WORKSPACES,
    _assert_well_formed,
    _calls,
    _gates,
    _visible_ids,
    ground_truth,  # noqa: F401 - the shared corpus fixture
)
from tests.memory_tools.test_vectors import CountingEmbedder


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=_calls(), workspace=st.sampled_from(WORKSPACES), gates=_gates, hybrid=st.booleans())
def test_random_calls_never_raise_and_disclose_only_visible_items_they_show(
    ground_truth: tuple[MemoryItemStore, dict[str, Any]], call: tuple[str, Any], workspace: str | None,
    gates: tuple[Any, Any, Any], hybrid: bool,
) -> None:
    name, arguments = call
    enabled, agent_read, incognito = gates
    store, records = ground_truth
    embedder = CountingEmbedder()
    host = (HybridHost if hybrid else VectorHost)(store, MemoryPolicy(enabled=enabled, agent_read_enabled=agent_read),
                                                  embedder=embedder)
    run = host.open_run(RunContext(workspace_key=workspace, incognito=incognito))
    record = run.call(name, arguments)
    body = _assert_well_formed(record)
    if not run.admitted:
        assert record.status == "policy_denied" and not record.storage_read and embedder.texts == []
    assert set(record.disclosed_item_ids) <= _visible_ids(records, workspace)
    if record.status == "ok" and record.name == "memory_search":
        shown = [r["itemId"] for r in body["results"]]
        assert list(record.disclosed_item_ids) == shown and len(shown) <= body["limit"] == min(body["limit"], 10)

