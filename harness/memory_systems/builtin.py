"""The built-in memory systems: the four original arms as protocol instances, and the full-text layer.

Each of the four original arms keeps its name and builds exactly the prompt
and tools it built before (``harness.memory_systems.prompts.build_*`` do the work), so results
and cache keys are unchanged:

- ``none`` -> ``history_only`` (write ``none``: no memory at all);
- ``transcripts`` -> ``full_history`` (write ``none``; the earlier in-scope
  sessions are pasted at the probe, under the same policy gate);
- ``memory_tools`` -> ``recall`` (write ``seeded``: the scenario's items in a
  fresh ``MemoryItemStore``; read: the Host-admitted ``memory_search`` /
  ``memory_get``);
- ``memory_document`` -> ``memory_document`` (write ``seeded``; read: the
  scope's Markdown memory file injected whole, no tools).
"""

from __future__ import annotations

from typing import Any

from harness.memory_systems.contract import BuiltinContract
from harness.memory_systems.document import SECTION_PREAMBLE, build_memory_document
from harness.memory_systems.instructions import shared
from harness.memory_systems.prompts import TOOL_INSTRUCTIONS, build_full_history, build_history_only, build_recall
from harness.memory_systems.protocol import MemoryInstance, MemorySystem, ProbeSetup, WriteMode
from harness.scenarios import RetrievalBudget, Scenario
from memory_tools import Host, MemoryItemStore, MemoryPolicy, RunContext


class _NoMemory(MemoryInstance):
    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        return ProbeSetup(build_history_only(self.scenario).messages)


class NoMemorySystem(BuiltinContract, MemorySystem):
    """No memory: the probe's recent history only (the baseline)."""

    name = "none"
    description = "recent history only, no tools"
    arms = {"history_only": "none"}
    forgetting = "none (no memory)"
    ingests, discloses, shows_times = "none", "nothing", "none"

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return _NoMemory(scenario)


class _Transcripts(MemoryInstance):
    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        # build_full_history applies the probe's policy gate itself (probe_denial of the scenario).
        setup = build_full_history(self.scenario)
        return ProbeSetup(setup.messages, pasted=setup.pasted)


class TranscriptsSystem(BuiltinContract, MemorySystem):
    """Every earlier in-scope session pasted in: the accuracy and cost ceiling."""

    name = "transcripts"
    description = "every earlier in-scope session pasted in (ceiling)"
    arms = {"full_history": "none"}
    forgetting = "none (raw transcripts)"
    ingests, discloses, shows_times, shared_times = "raw turns", "injected whole", "prose date", "iso + prose date"

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return _Transcripts(scenario)


class ItemStoreInstance(MemoryInstance):
    """A fresh ``MemoryItemStore`` seeded with the scenario's items; the probe reads it through the Host."""

    def __init__(self, scenario: Scenario, store: MemoryItemStore) -> None:
        super().__init__(scenario)
        self.store = store

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        host_run = Host(self.store, policy, **host_terms(self.retrieval_budget)).open_run(context)
        return ProbeSetup(build_recall(self.scenario, host_run).messages, host_run)

    def close(self) -> None:
        self.store.close()


def host_terms(budget: RetrievalBudget) -> dict[str, Any]:
    """The Host's settings for the run's terms: ``top_k`` results, ``chars`` of memory content per call
    (``memory_search`` and ``memory_get`` alike; the JSON around it is not counted: :mod:`memory_tools.disclosure`),
    and ISO times beside the epoch milliseconds under the shared instruction block."""
    return {"search_result_budget_chars": None, "content_budget_chars": budget.chars, "search_limit": budget.top_k,
            "iso_times": shared()}


def seeded_item_store(scenario: Scenario) -> MemoryItemStore:
    """A fresh in-memory store holding the scenario's items: a copy of the store seeded once per
    distinct item set (``harness.scenarios.seeding.open_seeded_store``), so a conversation's probes share one seeding."""
    from harness.scenarios import open_seeded_store

    return open_seeded_store(scenario)


class ItemStoreContract(BuiltinContract):
    """The contract of every arm reading a seeded item store through the Host's tools."""

    ingests, discloses, shows_times, shared_times = "prepared items", "tool results", "epoch ms", "iso + epoch ms"
    own_instructions = TOOL_INSTRUCTIONS


class MemoryToolsSystem(ItemStoreContract, MemorySystem):
    """The product's item store and its two Host-owned read tools."""

    name = "memory_tools"
    description = "recent history plus the Host-admitted memory tools"
    arms = {"recall": "seeded"}
    forgetting = "archive"

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return ItemStoreInstance(scenario, seeded_item_store(scenario))


class _Document(MemoryInstance):
    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        # Seeds its own store from the scenario and applies the policy gate before reading it.
        return ProbeSetup(build_memory_document(self.scenario).messages)


class MemoryDocumentSystem(BuiltinContract, MemorySystem):
    """The earlier design: the scope's memory file injected whole into the system prompt."""

    name = "memory_document"
    description = "the scope's memory file injected whole into the system prompt"
    arms = {"memory_document": "seeded"}
    forgetting = "archive (entry status)"
    ingests, discloses, shows_times, shared_times = "prepared items", "injected whole", "prose date", "iso"
    own_instructions = SECTION_PREAMBLE

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return _Document(scenario)
