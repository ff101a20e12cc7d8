"""The Host's ``memory_search`` ranked by vectors (``VectorHost``) or by keys, full text and vectors fused (``HybridHost``).

Both keep everything else of the Host's contract, through
:class:`memory_tools.host.MemoryRun`: the same two tools and argument rules
(``terms``, ``match``, ``limit``; scope never from the model), the same
policy gate (a denied run gets no tools and its calls read nothing), the
same budgets and wire format (``truncated``, ``omittedCount``), the same
``memory_get``, and the same disclosure accounting (the ids of every item
whose content reached the model). Only the ranking of ``memory_search``
changes.

Vector: the terms are one query (:func:`memory_tools.vectors.query_text`),
ranked by cosine similarity against the run's visible items
(:class:`memory_tools.vectors.VectorIndex`); ``match`` is accepted and has
no effect on the ranking, only on which keys are reported as ``matchedKeys``.

Hybrid: reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009)
of two ranked lists, the full-text search (keys, then content:
:class:`memory_tools.fulltext.FullTextIndex`) and the vector search, each
cut at :data:`FUSION_DEPTH`. An item's score is ``sum(1 / (RRF_K + rank))``
over the lists it is in (rank from 1). Ranks, not scores: BM25 and cosine
live on different scales, and fusing ranks needs no calibration between
them. ``RRF_K = 60`` is the paper's constant, the default of Elasticsearch,
OpenSearch and Azure AI Search: large enough that the first few ranks of one
list do not drown the other (1/61 vs 1/62 at the top), small enough that
rank still matters. Ties go to the item whose best rank is better, then the
item id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_tools.fulltext import FullTextIndex
from memory_tools.host import Host, MemoryRun, _key_matches, _Outcome, _search_result
from memory_tools.model import MemoryItemRecord
from memory_tools.policy import MAX_SEARCH_LIMIT, SearchArguments, admission, item_visible
from memory_tools.tool_specs import limits_text, tool_specs_json
from memory_tools.vectors import Embedder, LexicalEmbedder, VectorIndex

RRF_K = 60
"""Reciprocal-rank fusion constant (see the module docstring for why 60)."""
FUSION_DEPTH = 50
"""How deep each list is read before fusing: far past the model's limit of 10, a bound on work."""

_VECTOR_SEARCH_DESCRIPTION = (
    "Search the user's long-term memory: durable preferences, facts about the user and their projects, and "
    "decisions saved from earlier conversations. The terms are read together as one query and items are ranked "
    "by similarity of meaning to it (vector search over each item's text and keys), so describe what you are "
    "looking for in a few words or candidate terms (synonyms, the user's language, code identifiers); exact "
    "spelling is not required. match is accepted and only decides which keys are reported as matchedKeys. "
    "Returns at most `limit` items (default {default}, at most {maximum}), most similar first, each with itemId, content, kind, "
    "statementType, temporalType, event and observation times (UTC milliseconds), the keys that matched a term "
    "(matchedKeys, often empty) and sourceCount. When truncated is true, omittedCount results did not fit the "
    "size budget. Similar is not the same as relevant: check that an item answers the question before using it; "
    "no results means nothing stored is similar; do not invent an answer."
)
_HYBRID_SEARCH_DESCRIPTION = (
    "Search the user's long-term memory: durable preferences, facts about the user and their projects, and "
    "decisions saved from earlier conversations. Items are found both by their keys and words (a term equal to a "
    "key, or whose words appear in the item's text; match 'prefix' lets the last word be the start of a word) and "
    "by similarity of meaning to all the terms read together as one query; the two rankings are fused. Send "
    "several candidate terms in one call (synonyms, singular and plural, the user's language, code identifiers). "
    "Returns at most `limit` items (default {default}, at most {maximum}), best first, each with itemId, content, kind, "
    "statementType, temporalType, event and observation times (UTC milliseconds), the keys that matched "
    "(matchedKeys) and sourceCount. When truncated is true, omittedCount results did not fit the size budget. "
    "Check that an item answers the question before using it; no results means nothing stored matches; do not "
    "invent an answer."
)


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion of ranked id lists, best first.

    Example:
        >>> rrf_fuse([["a", "b", "c"], ["c", "a"]])
        ['a', 'c', 'b']
    """
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item_id in enumerate(ranking, start=1):
            if item_id in seen:  # an id twice in one list counts once, at its better rank
                continue
            seen.add(item_id)
            scores[item_id] = scores.get(item_id, 0.0) + 1.0 / (k + rank)
            best[item_id] = min(best.get(item_id, rank), rank)
    return sorted(scores, key=lambda i: (-scores[i], best[i], i))


VECTOR_SEARCH_DESCRIPTION = limits_text(_VECTOR_SEARCH_DESCRIPTION, MAX_SEARCH_LIMIT)
HYBRID_SEARCH_DESCRIPTION = limits_text(_HYBRID_SEARCH_DESCRIPTION, MAX_SEARCH_LIMIT)


class _RankedRun(MemoryRun):
    """A :class:`MemoryRun` whose ``memory_search`` ranking comes from :meth:`_ranked`; all else is the Host's."""

    description = ""
    #: The description with ``{default}``/``{maximum}`` left for the run's top-k (:func:`limits_text`).
    description_template = ""

    @classmethod
    def specs_json(cls, search_limit: int = MAX_SEARCH_LIMIT) -> str:
        # the run's retrieval budget caps limit, and the description says so, as recall's does
        return tool_specs_json(search_limit, cls.description_template)

    def _ranked(self, args: SearchArguments) -> list[MemoryItemRecord]:
        raise NotImplementedError

    def _search(self, args: SearchArguments) -> _Outcome:
        terms = frozenset(args.normalized_terms)
        results: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for record in self._ranked(args):
            item = record.item
            if item.item_id in seen or not item_visible(item, self._workspace_key):  # never trust one layer
                continue
            seen.add(item.item_id)
            matched = [k.key for k in record.keys if _key_matches(k.normalized_key, terms, args.match)]
            results.append((item.item_id, _search_result(record, matched)))
            if len(results) == args.limit:
                break
        return self._fitted(args, results)


class VectorRun(_RankedRun):
    """``memory_search`` ranked by embedding similarity over the run's visible items."""

    description = VECTOR_SEARCH_DESCRIPTION
    description_template = _VECTOR_SEARCH_DESCRIPTION

    def __init__(self, index: VectorIndex, *args: Any, **kwargs: Any) -> None:
        self._index = index
        super().__init__(*args, **kwargs)

    def _ranked(self, args: SearchArguments) -> list[MemoryItemRecord]:
        found = self._index.search(list(args.terms), workspace_key=self._workspace_key, limit=args.limit)
        return [record for record, _ in found]


class HybridRun(_RankedRun):
    """``memory_search`` ranked by reciprocal-rank fusion of full-text (keys and content) and vector search."""

    description = HYBRID_SEARCH_DESCRIPTION
    description_template = _HYBRID_SEARCH_DESCRIPTION

    def __init__(self, fulltext: FullTextIndex, vectors: VectorIndex, *args: Any, **kwargs: Any) -> None:
        self._fulltext = fulltext
        self._vectors = vectors
        super().__init__(*args, **kwargs)

    def _ranked(self, args: SearchArguments) -> list[MemoryItemRecord]:
        lexical = self._fulltext.search(
            list(args.terms), args.match.value, workspace_key=self._workspace_key, limit=FUSION_DEPTH
        )
        semantic = self._vectors.search(list(args.terms), workspace_key=self._workspace_key, limit=FUSION_DEPTH)
        records = {record.item.item_id: record for record, _ in [*lexical, *semantic]}
        fused = rrf_fuse([[r.item.item_id for r, _ in lexical], [r.item.item_id for r, _ in semantic]])
        return [records[item_id] for item_id in fused]


class VectorHost(Host):
    """A :class:`Host` whose runs rank ``memory_search`` by embedding similarity (same gates and budgets).

    Example:
        >>> host = VectorHost(store, MemoryPolicy(agent_read_enabled=True))   # LexicalEmbedder by default
        >>> host.open_run(RunContext(workspace_key="ws-1")).call("memory_search", '{"terms": ["espresso"]}').status
        'ok'
    """

    def __init__(self, store: Any, *args: Any, embedder: Embedder | None = None, index: VectorIndex | None = None,
                 **kwargs: Any) -> None:
        """``index``: the store's index, already built when the store was written (its embedder then); None: a new
        one over ``embedder`` (default lexical), built at the first search."""
        super().__init__(store, *args, **kwargs)
        self._vectors = index if index is not None else VectorIndex(store, embedder if embedder is not None else LexicalEmbedder())

    @property
    def index(self) -> VectorIndex:
        return self._vectors

    def open_run(self, context: Any) -> MemoryRun:
        denial = admission(self.policy, context)
        return VectorRun(self._vectors, self._store, context, denial, self._search_budget, self._get_budget,
                         search_limit=self._search_limit, content_budget=self._content_budget, iso_times=self._iso_times)


class HybridHost(VectorHost):
    """A :class:`Host` whose runs fuse full-text and vector rankings of ``memory_search`` (same gates and budgets)."""

    def __init__(self, store: Any, *args: Any, embedder: Embedder | None = None, index: VectorIndex | None = None,
                 **kwargs: Any) -> None:
        super().__init__(store, *args, embedder=embedder, index=index, **kwargs)
        self._fulltext = FullTextIndex(store)

    def open_run(self, context: Any) -> MemoryRun:
        denial = admission(self.policy, context)
        return HybridRun(
            self._fulltext, self._vectors, self._store, context, denial, self._search_budget, self._get_budget,
            search_limit=self._search_limit, content_budget=self._content_budget, iso_times=self._iso_times,
        )


__all__ = [
    "FUSION_DEPTH",
    "HYBRID_SEARCH_DESCRIPTION",
    "RRF_K",
    "VECTOR_SEARCH_DESCRIPTION",
    "HybridHost",
    "HybridRun",
    "VectorHost",
    "VectorRun",
    "rrf_fuse",
]
