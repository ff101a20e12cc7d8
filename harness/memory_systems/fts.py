"""The ``recall_fts`` reference arm: the ``recall`` arm with full-text search over the same store.

Same seeded items, same Host gates, budgets, tools and wire format as
``recall``; ``memory_search`` terms also match words of item content
(:mod:`memory_tools.fulltext`, SQLite FTS5). Comparing ``recall_fts`` with
``recall`` on the same scenarios is the coverage measurement seed 000 asks
for before anyone adds an index.
"""

from __future__ import annotations

from harness.memory_systems.builtin import ItemStoreContract, ItemStoreInstance, host_terms, seeded_item_store
from harness.memory_systems.prompts import build_recall
from harness.memory_systems.protocol import MemoryInstance, MemorySystem, ProbeSetup, WriteMode
from harness.scenarios import Scenario
from memory_tools import MemoryPolicy, RunContext


class _FullTextInstance(ItemStoreInstance):
    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        from memory_tools import FullTextHost

        host = FullTextHost(self.store, policy, **host_terms(self.retrieval_budget))
        host_run = host.open_run(context)
        return ProbeSetup(build_recall(self.scenario, host_run).messages, host_run)


class FullTextSystem(ItemStoreContract, MemorySystem):
    """The product's item store with an FTS5 layer: terms match content as well as keys."""

    name = "memory_tools_fts"
    description = "the recall arm with memory_search matching item content as well as keys (SQLite FTS5)"
    arms = {"recall_fts": "seeded"}
    forgetting = "archive"

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return _FullTextInstance(scenario, seeded_item_store(scenario))
