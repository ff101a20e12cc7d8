"""Every built-in retrieving arm spends the run's budget on memory text alike: content counted, JSON not, memory_get inside."""

from __future__ import annotations

import json

import pytest

from harness.memory_systems import fit_disclosure, open_instance, resolve_arm
from harness.scenarios import RetrievalBudget, Scenario, probe_policy
from tests.memory_systems.prompt_factories import make_scenario

BUDGET = RetrievalBudget(top_k=3, chars=300)
#: Five port notes of 140 characters: two fit 300 characters of memory text; their JSON would fit none.
NOTES = [(f"Port note {i}: the dev server port moved again to 51{i:02d} after the proxy change; "
          "the staging proxy keeps the old port.").ljust(140, ".") for i in range(5)]


def scenario() -> Scenario:
    data = make_scenario().model_dump(mode="json", exclude_none=True)
    data["items"] = [{"id": f"it-{i}", "content": text, "kind": "context", "workspace": "ws-a",
                      "keys": ["port", f"port note {i}"], "sources": [{"session": "s-late", "turn": "t1"}],
                      "observed_at": f"2026-02-0{i + 1}T09:00:00Z"} for i, text in enumerate(NOTES)]
    data["expect"]["relevant_items"] = ["it-4"]
    return Scenario.model_validate(data)


@pytest.mark.parametrize("arm", ["recall", "recall_fts", "recall_vector", "recall_hybrid"])
def test_a_search_shows_whole_items_while_their_content_fits_the_budget(arm: str) -> None:
    case = scenario()
    instance = open_instance(resolve_arm(arm), case, BUDGET)
    try:
        tools = instance.begin_probe(*probe_policy(case)).tools
        record = tools.call("memory_search", {"terms": ["port"], "limit": 10})
        shown = json.loads(record.result_text)["results"]
        assert len(shown) == fit_disclosure(NOTES, top_k=3, chars=300) == 2
        assert sum(len(r["content"]) for r in shown) <= 300 < len(record.result_text)
        assert len(record.disclosed_item_ids) == 2
        got = tools.call("memory_get", {"itemId": record.disclosed_item_ids[0]})
        assert len(json.loads(got.result_text)["item"]["content"]) <= 300
    finally:
        instance.close()
