"""The ``recall_vector`` and ``recall_hybrid`` arms: the ``recall`` arm with ``memory_search`` ranked by embeddings.

Same seeded items, same Host gates, budgets, tools and wire format as
``recall`` (and ``recall_fts``); only the ranking of ``memory_search``
changes (:mod:`memory_tools.vector_host`):

- ``recall_vector``: the probe's visible items by cosine similarity of their
  embeddings to the query (the model's terms read together);
- ``recall_hybrid``: reciprocal-rank fusion (k = 60) of the ``recall_fts``
  ranking (keys, then content words) and the vector ranking.

Which embedder: the run's (``--embedding-model``), installed once per
process by the runner with :func:`configure_embedder` and handed to ``open``
as ``embedder=`` (so each arm's fingerprint carries it); the default is the
deterministic offline :class:`memory_tools.LexicalEmbedder` (hashed words
and character trigrams: a lexical similarity, not a semantic one). The
probe scope's passages are embedded when the sample opens (its ingest), a
search embeds only its query. Each sample's embedding cost (texts, cache
hits, provider calls, tokens, cost, latency) is counted apart from the agent
model's (:meth:`MemoryInstance.embedding_usage`).
"""

from __future__ import annotations

from harness.memory_systems.builtin import ItemStoreContract, ItemStoreInstance, host_terms, seeded_item_store
from harness.memory_systems.prompts import build_recall
from harness.memory_systems.protocol import MemoryInstance, MemorySystem, ProbeSetup, WriteMode
from harness.memory_systems.run_embedding import SampleEmbedding
from harness.scenarios import Scenario, probe_policy
from memory_tools import (
    Embedder,
    EmbeddingUsage,
    HybridHost,
    LexicalEmbedder,
    MemoryPolicy,
    RunContext,
    VectorHost,
    VectorIndex,
)

VECTOR_ARMS: tuple[str, ...] = ("recall_vector", "recall_hybrid")
"""The arms that embed: a run with one of them records its embedder in ``run.json``."""

_configured: list[Embedder] = []


def configure_embedder(embedder: Embedder | None) -> None:
    """Install the embedder every vector arm of this process uses from now on (None: the lexical default)."""
    _configured[:] = [embedder] if embedder is not None else []


def current_embedder() -> Embedder:
    """The embedder :func:`configure_embedder` installed, or a :class:`memory_tools.LexicalEmbedder`."""
    return _configured[0] if _configured else LexicalEmbedder()


def _embedder(given: SampleEmbedding | None) -> Embedder:
    """The run's embedder as the harness gave it to ``open``; without one (a direct ``open``), the configured one."""
    return given.embedder if given is not None else current_embedder()


class _VectorInstance(ItemStoreInstance):
    """A seeded store whose passages are embedded when the sample opens, as a product indexes what it stores.

    Embedding at the first search instead put the passages' calls and seconds under the probe's search (ingest
    showed 0 embedding calls, search latency held the indexing) while mem0 and engrava embed when they store:
    now every system's ingest holds its indexing and its searches embed only their queries. The probe's
    scope (global and its workspace's items, what its searches rank) is embedded whatever the probe's policy:
    a product indexes on write, before it knows whether a later read is allowed.
    """

    host_class: type[VectorHost] = VectorHost

    def __init__(self, scenario: Scenario, store: object, embedder: Embedder) -> None:
        super().__init__(scenario, store)  # type: ignore[arg-type]
        self._index = VectorIndex(store, embedder)
        try:
            self._index.prepare(probe_policy(scenario)[1].workspace_key)
        except BaseException:
            self.close()
            raise

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        # the Host is built here, not in open: the harness sets the run's retrieval budget on the instance after open
        host = self.host_class(self.store, policy, **host_terms(self.retrieval_budget), index=self._index)
        host_run = host.open_run(context)
        return ProbeSetup(build_recall(self.scenario, host_run).messages, host_run)

    def embedding_usage(self) -> EmbeddingUsage | None:
        return self._index.usage


class _HybridInstance(_VectorInstance):
    host_class = HybridHost


class VectorSystem(ItemStoreContract, MemorySystem):
    """The product's item store, ``memory_search`` ranked by embedding similarity."""

    embeds_with_run_embedder = True

    name = "memory_tools_vector"
    description = "the recall arm with memory_search ranking the visible items by embedding similarity"
    arms = {"recall_vector": "seeded"}
    forgetting = "archive"

    def open(self, scenario: Scenario, write_mode: WriteMode, embedder: SampleEmbedding | None = None) -> MemoryInstance:
        return _VectorInstance(scenario, seeded_item_store(scenario), _embedder(embedder))


class HybridSystem(ItemStoreContract, MemorySystem):
    """The product's item store, ``memory_search`` fusing full-text and vector ranks (RRF, k = 60)."""

    embeds_with_run_embedder = True

    name = "memory_tools_hybrid"
    description = "the recall arm with memory_search fusing full-text (keys, content) and vector ranks (RRF, k=60)"
    arms = {"recall_hybrid": "seeded"}
    forgetting = "archive"

    def open(self, scenario: Scenario, write_mode: WriteMode, embedder: SampleEmbedding | None = None) -> MemoryInstance:
        return _HybridInstance(scenario, seeded_item_store(scenario), _embedder(embedder))
