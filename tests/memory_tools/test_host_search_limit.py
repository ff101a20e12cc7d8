"""The Host's top-k: a run's retrieval budget caps memory_search's limit, and the tool description says so."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memory_tools import FullTextHost
from memory_tools.host import Host, HostConfigurationError
from memory_tools.policy import RunContext
from memory_tools.store import MemoryItemStore
from memory_tools.tool_specs import TOOL_SPECS_JSON, tool_specs_json
from tests.memory_tools.conftest import READ_POLICY, item


@pytest.fixture
def store() -> Iterator[MemoryItemStore]:
    with MemoryItemStore(":memory:") as raw:
        raw.bulk_create([item(f"n-{i:02d}", f"Note {i} about the build.", ["build"], now=1_000 + i) for i in range(40)])
        yield raw


@pytest.mark.parametrize("host_class", [Host, FullTextHost])
@pytest.mark.parametrize(("top_k", "asked", "returned", "capped"), [(3, None, 3, False), (3, 10, 3, True),
                                                                    (30, 25, 25, False), (30, 50, 30, True)])
def test_the_search_limit_is_capped_at_the_runs_top_k(store: MemoryItemStore, host_class: type, top_k: int,
                                                       asked: int | None, returned: int, capped: bool) -> None:
    run = host_class(store, READ_POLICY, search_limit=top_k, search_result_budget_chars=100_000).open_run(
        RunContext(workspace_key="ws-a"))
    arguments = {"terms": ["build"], **({"limit": asked} if asked else {})}
    result = json.loads(run.call("memory_search", json.dumps(arguments)).result_text)
    assert len(result["results"]) == returned and result["limitCapped"] is capped
    described = run.tool_specs()[0]["function"]
    assert f"at most {top_k})" in described["description"]
    assert f"above {top_k} are reduced to {top_k}" in described["parameters"]["properties"]["limit"]["description"]


def test_the_default_top_k_offers_exactly_the_specs_offered_before_budgets() -> None:
    assert tool_specs_json() is TOOL_SPECS_JSON
    assert tool_specs_json(10) == TOOL_SPECS_JSON
    assert "default 3, at most 3" in tool_specs_json(3)  # the default limit never exceeds the ceiling


@pytest.mark.parametrize("bad", [0, 101, True, 2.0])
def test_a_top_k_outside_1_to_100_is_a_configuration_error(store: MemoryItemStore, bad: object) -> None:
    with pytest.raises(HostConfigurationError, match="search_limit must be an integer from 1 to 100 results"):
        Host(store, READ_POLICY, search_limit=bad)  # type: ignore[arg-type]
