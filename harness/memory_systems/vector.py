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
and character trigrams: a lexical similarity, not a semantic one). Each
sample's embedding cost (texts, cache hits, provider calls, tokens, cost,
latency) is counted apart from the agent model's (:meth:`MemoryInstance.embedding_usage`).
"""

from __future__ import annotations

from harness.memory_systems.builtin import ItemStoreContract, ItemStoreInstance, host_terms, seeded_item_store
from harness.memory_systems.prompts import build_recall
from harness.memory_systems.protocol import MemoryInstance, MemorySystem, ProbeSetup, WriteMode
from harness.memory_systems.run_embedding import SampleEmbedding
from harness.scenarios import Scenario
from memory_tools import Embedder, EmbeddingUsage, HybridHost, LexicalEmbedder, MemoryPolicy, RunContext, VectorHost

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
    host_class: type[VectorHost] = VectorHost

    def __init__(self, scenario: Scenario, store: object, embedder: Embedder) -> None:
        super().__init__(scenario, store)  # type: ignore[arg-type]
        self._embedder = embedder
        self._host: VectorHost | None = None

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        # built here, not in open: the harness sets the run's retrieval budget on the instance after open
        self._host = self.host_class(self.store, policy, **host_terms(self.retrieval_budget), embedder=self._embedder)
        host_run = self._host.open_run(context)
        return ProbeSetup(build_recall(self.scenario, host_run).messages, host_run)

    def embedding_usage(self) -> EmbeddingUsage | None:
        return None if self._host is None else self._host.index.usage


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
