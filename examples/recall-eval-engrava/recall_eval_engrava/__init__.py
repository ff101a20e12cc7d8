"""engrava (SQLite, no model call in its core) as recall-eval memory systems over the scenario's items.

Two arms, one system each (an arm is one configuration), both write mode
``seeded`` like ``recall`` and ``recall_fts``, so the three rank the same items:

- ``engrava``: engrava's default hybrid ranking (``recall()``: full text
  BM25, vector, recency and priority signals at its default weights; recency
  is inactive without a cycle, as by default);
- ``engrava_vector``: vector similarity only (``search_hybrid`` with every
  other signal's weight 0).

Storage: one engrava store (its own in-memory SQLite database) per
workspace, holding the global items and that workspace's items, plus one of
the global items alone for a probe outside any workspace. Every store lives
on one long-lived event loop in a daemon thread of the process (engrava is
asyncio and its connections belong to the loop that opened them; the
harness's tool calls are synchronous). An archived item is stored archived,
which engrava's retrieval leaves out.

Scope: a probe searches only its workspace's store, and always with a
metadata filter naming the scopes it may see: engrava documents its
filters as a query capability, not a boundary, and an empty
``MetadataFilter`` matches everything, so the plug-in never runs a probe
without one (:meth:`EngravaInstance.search` refuses to run with an empty or
missing filter). Under a denying policy no tool is offered and nothing is read.

Embeddings: the run's embedder (``--embedding-model``), received in ``open``
as ``embedder=`` and called through the harness (counted per sample), as
engrava's embedding provider (:class:`RunEmbeddingProvider`): engrava has one
``embed`` for both sides, so the provider embeds passages while the items are
stored and queries while a probe searches (an e5 model prefixes them apart).
Results show each item's text and the time it was observed (stored in its
metadata), so ``sees_session_times`` stays True.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    SampleEmbedding,
    StaticToolRun,
    SystemContract,
    ToolExecution,
    fit_disclosure,
    policy_denial,
    probe_messages,
    sample_embedding,
)

__version__ = "0.2.0"

DEFAULT_TOP_K = 10
DEFAULT_CHARS = 4000
GLOBAL_SCOPE = "global"
TOOL_NAME = "engrava_search"
TOOL_INSTRUCTIONS = (
    "Memory: engrava_search searches the memories kept from the user's earlier conversations. Search before "
    "answering questions about earlier conversations, preferences or decisions; use only what it returns, and if "
    "it finds nothing relevant, say you don't know."
)
SEARCH_SPEC = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Search the user's memories from earlier conversations; returns the most relevant ones with their text.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for, in words"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
_MISSING = "recall-eval-engrava needs the engrava package: pip install 'engrava>=0.7,<0.8'"
#: Every weight but the vector signal's off: engrava's fusion with one signal is its cosine ranking.
VECTOR_ONLY = {"fts_weight": 0.0, "vector_weight": 1.0, "recency_weight": 0.0, "priority_weight": 0.0, "graph_weight": 0.0}


def scope_of(workspace: str | None) -> str:
    """The metadata scope of an item: ``global`` or ``workspace:<key>``."""
    return GLOBAL_SCOPE if workspace is None else f"workspace:{workspace}"


class _Loop:
    """The one long-lived event loop every engrava store of this process runs on (a daemon thread)."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, coroutine: Coroutine[Any, Any, Any]) -> Any:
        with cls._lock:
            if cls._loop is None or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="recall-eval-engrava", daemon=True).start()
                cls._loop = loop
            loop = cls._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()


class RunEmbeddingProvider:
    """engrava's embedding provider (``dimension``, ``model_name``, async ``embed``/``embed_batch``) over the run's
    embedder; ``kind`` says what is being embedded: ``passage`` while storing, ``query`` while searching."""

    def __init__(self, embedding: SampleEmbedding) -> None:
        self.embedding = embedding
        self.kind = "passage"
        self.dimension = embedding.dimensions
        self.model_name = embedding.model

    async def embed(self, text: str) -> list[float]:
        return self.embedding.embed([text], self.kind)[0]  # type: ignore[arg-type]

    async def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return self.embedding.embed(texts, self.kind)  # type: ignore[arg-type]


async def _open_store(provider: RunEmbeddingProvider) -> tuple[Any, Any]:
    import aiosqlite
    from engrava import SqliteEngravaCore

    connection = await aiosqlite.connect(":memory:")
    connection.row_factory = aiosqlite.Row
    store = SqliteEngravaCore(connection, embedding_provider=provider, auto_embed=True)
    await store.ensure_schema()
    return connection, store


def _iso(millis: int | None) -> str | None:
    return None if millis is None else datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _store_item(store: Any, item: Any) -> None:
    import uuid

    from engrava import LifecycleStatus, Priority, ThoughtRecord, ThoughtType

    archived = item.state.value == "archived"
    thought = ThoughtRecord(
        thought_id=str(uuid.uuid4()), thought_type=ThoughtType.NOTE, essence=item.content[:200], content=item.content,
        priority=Priority.P3, lifecycle_status=LifecycleStatus.ARCHIVED if archived else LifecycleStatus.ACTIVE,
        source="recall-eval", metadata={"item_id": item.id, "scope": scope_of(item.workspace),
                                        "observed_at": _iso(item.observed_at)},
    )
    await store.create_thought(thought)


def _result(status: str, payload: dict[str, Any], disclosed: tuple[str, ...] = (), read: bool = False) -> ToolExecution:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return ToolExecution(name="", arguments="", status=status, result_text=text, disclosed_item_ids=disclosed, storage_read=read)


class EngravaInstance(MemoryInstance):
    """One sample's engrava stores, one per workspace, seeded with the scenario's items."""

    def __init__(self, scenario: Any, *, ranking: dict[str, float] | None = None, embedder: SampleEmbedding | None = None) -> None:
        super().__init__(scenario)
        self.ranking = dict(ranking or {})
        self.provider = RunEmbeddingProvider(embedder or sample_embedding(None))
        self.stores: dict[str | None, tuple[Any, Any]] = {}
        workspaces = {item.workspace for item in scenario.items if item.workspace is not None}
        workspaces.add(scenario.probe.workspace)
        try:
            for workspace in sorted(workspaces, key=lambda w: (w is not None, w or "")):
                self.stores[workspace] = _Loop.run(_open_store(self.provider))
                for item in scenario.items:
                    if item.workspace is None or item.workspace == workspace:
                        _Loop.run(_store_item(self.stores[workspace][1], item))
        except BaseException:
            self.close()
            raise

    def top_k(self) -> int:
        return int(getattr(getattr(self, "retrieval_budget", None), "top_k", DEFAULT_TOP_K))

    def chars(self) -> int:
        return int(getattr(getattr(self, "retrieval_budget", None), "chars", DEFAULT_CHARS))

    def probe_filter(self, workspace: str | None) -> Any:
        """The scopes a probe in ``workspace`` may see, as engrava's filter; never empty (that would match all)."""
        from engrava import FieldOp, FieldPredicate, MetadataFilter

        scopes = [scope_of(None)] + ([scope_of(workspace)] if workspace is not None else [])
        return MetadataFilter([FieldPredicate("$.scope", FieldOp.IN, tuple(scopes))])

    def search(self, query: str, workspace: str | None) -> list[tuple[Any, float]]:
        """Engrava's ranking over the probe's store, filtered to its scopes, cut to the budget's top-k."""
        store = self.stores[workspace][1]
        filters = self.probe_filter(workspace)
        if filters is None or filters.is_empty():
            raise RuntimeError("refusing to search engrava without a scope filter: an empty filter matches every memory")

        async def ranked() -> list[tuple[Any, float]]:
            self.provider.kind = "query"  # the one embedding a search makes is the query's
            if self.ranking:
                result = await store.search_hybrid(query, top_k=self.top_k(), filters=filters, **self.ranking)
            else:
                result = await store.recall(query, top_k=self.top_k(), filters=filters)
            found = []
            for thought_id, score in result.results[: self.top_k()]:
                thought = await store.get_thought(thought_id)
                if thought is not None:
                    found.append((thought, float(score)))
            return found

        return _Loop.run(ranked())

    def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
        if policy_denial(policy, context) is not None:  # the policy gate: cold, no tool, nothing read
            return ProbeSetup(probe_messages(self.scenario))
        workspace = context.workspace_key
        if workspace not in self.stores:  # a run context the scenario did not name: no store of its own to read
            return ProbeSetup(probe_messages(self.scenario))

        def search(arguments: dict[str, Any]) -> ToolExecution:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return _result("invalid_arguments", {"error": {"code": "invalid_arguments", "message": "query is required (a non-empty string)"}})
            found = self.search(query.strip(), workspace)
            # the budget counts memory text, whole memories only, as for every system (not the JSON around it)
            shown = found[: fit_disclosure([str(t.content or "") for t, _ in found], top_k=self.top_k(), chars=self.chars())]
            results, ids = [], []
            for thought, _score in shown:
                metadata = thought.metadata or {}
                results.append({"text": thought.content,
                                **({"observedAt": metadata["observed_at"]} if metadata.get("observed_at") else {})})
                item_id = str(metadata.get("item_id") or f"engrava:{thought.thought_id}")
                if item_id not in ids:
                    ids.append(item_id)
            return _result("ok", {"results": results}, tuple(ids), read=True)

        tools = StaticToolRun({TOOL_NAME: (SEARCH_SPEC, search)})
        return ProbeSetup(probe_messages(self.scenario, tool_instructions=TOOL_INSTRUCTIONS), tools)

    def close(self) -> None:
        """Close each store, then its connection: engrava leaves open a connection it was handed (its caller-managed
        case), and an aiosqlite connection left open keeps its thread until garbage collection stops it from whatever
        event loop is current then (the run's, closed by the time the thread answers: "Event loop is closed")."""
        stores, self.stores = self.stores, {}
        for connection, store in stores.values():
            for closing in (store.close, connection.close):
                try:
                    _Loop.run(closing())
                except Exception:  # noqa: BLE001 - an in-memory store loses nothing when its close fails
                    pass


class _EngravaBase(MemorySystem):
    ranking: dict[str, float] = {}
    forgetting = "archive"  # the scenario's archived items are stored archived; engrava never returns them

    def __init__(self) -> None:
        if importlib.util.find_spec("engrava") is None:
            raise ImportError(_MISSING)

    def configuration(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {"engrava": version("engrava"), "ranking": self.ranking or "default hybrid"}

    def vendor_defaults(self) -> dict[str, Any]:
        """Where this arm departs from engrava's defaults (empty: none), for the run's system contract."""
        return {"ranking": "vector only (every other signal's weight 0)"} if self.ranking else {}

    def ingest_mode(self) -> str:
        """What the arm stores, for the run's system contract."""
        return "the scenario's prepared items (seeded)"

    def contract(self, arm: str, terms: Any) -> SystemContract:
        """The scenario's items, embedded with the run's embedder (``open(..., embedder=)``), observation times as ISO."""
        departs = self.vendor_defaults()
        return SystemContract(
            ingests="prepared items", embedder=terms.embedder, times="iso", discloses="tool results",
            vendor_defaults=not departs, vendor_note="; ".join(f"{key} {value}" for key, value in departs.items()),
            own_instructions=TOOL_INSTRUCTIONS)

    def open(self, scenario: Any, write_mode: str, embedder: SampleEmbedding | None = None) -> EngravaInstance:
        return EngravaInstance(scenario, ranking=self.ranking, embedder=embedder)


class EngravaSystem(_EngravaBase):
    """engrava's default hybrid ranking over the scenario's items."""

    name = "engrava"
    description = "engrava (SQLite): the scenario's items, engrava's default hybrid ranking (BM25 + vector + recency + priority)"
    arms = {"engrava": "seeded"}


class EngravaVectorSystem(_EngravaBase):
    """engrava's vector similarity alone over the scenario's items."""

    name = "engrava_vector"
    description = "engrava (SQLite): the scenario's items ranked by vector similarity only"
    arms = {"engrava_vector": "seeded"}
    ranking = VECTOR_ONLY
