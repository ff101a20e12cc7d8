"""mem0 (the ``mem0ai`` package) as recall-eval memory systems: the product as mem0 publishes it, scoped right.

Two arms (two systems, so each arm is its own configuration):

- ``mem0`` (write mode ``agent``): mem0's default, fact extraction
  (``add(..., infer=True)``) after each earlier session with the run's model;
  its calls go through the harness (:class:`harness.memory_systems.ModelWrite`),
  so they are cached, retried, budgeted and counted as write-phase calls and
  tokens like any agent write;
- ``mem0_raw`` (write mode ``none``, no model call): every turn of every
  earlier session, oldest first and in every workspace, stored as one memory
  with ``add(..., infer=False)``: a named variant below mem0's defaults.

As mem0's own LoCoMo harness does (``evaluation/src/memzero``), every write
carries its session's start as ``metadata={"timestamp": ...}`` (ISO 8601 UTC),
a turn's named speaker opens its content (``"Caroline: ..."``: mem0 shows the
extraction model ``role: content`` and drops ``name``), and every search
result is shown as ``"<timestamp>: <memory>"``, so ``sees_session_times`` is True.

At the probe both offer ``mem0_search(query)``: ``Memory.search`` with
``filters=`` naming exactly the probe's scopes and ``top_k=`` the run's
retrieval budget (mem0 2.x silently ignores a ``limit=``), the result text cut
to the budget's characters. Under a denying policy no tool is offered and
nothing is read.

Isolation, each the fix of a trap a naive configuration falls into (the tests
show recall-eval's leakage metrics catching each one):

- one user id per scope: ``global`` for the user's global memories and
  ``workspace:<key>`` for each workspace; a probe in workspace W searches the
  two scopes it may see, each with an exact ``{"user_id": ...}`` filter. Never
  ``{"user_id": "*"}`` (every user's memories) nor a filter of only
  ``run_id`` or ``agent_id`` (a superset across users);
- a fresh in-memory Qdrant collection and ``history_db_path=":memory:"`` per
  sample: mem0's default history database is one file shared by every
  instance, and its "last messages" of a scope go into the next extraction
  prompt of that scope;
- ``MEM0_TELEMETRY=False`` and ``MEM0_DIR`` (a folder of this process, removed
  at exit) are set before mem0 is imported: it otherwise reports usage to its
  telemetry host and writes into the home folder.

Embeddings: the run's embedder (``--embedding-model``), received in ``open``
as ``embedder=`` and called through the harness (counted per sample): mem0's
``search`` embeds queries, its ``add``/``update`` passages. mem0's keyword
half of search (BM25 through fastembed's ``Qdrant/bm25`` model, lemmas and
entities through spaCy's ``en_core_web_sm``) is off when those are missing:
fastembed and spaCy are on PyPI, but the two models are downloaded from
Hugging Face and GitHub at first use, not from PyPI. mem0 says so in its own
log warnings, which are left on; :data:`KEYWORD_SEARCH` records the state in
the arm's configuration.

Structured output: mem0 asks its LLM for a ``json_object`` and describes the
object in its prompt; the plug-in's LLM adapter sends the same request with
that documented object as a JSON schema (:data:`EXTRACTION_SCHEMA`), as a
structured-output adapter would, so any model that honours a schema (the
offline one included) returns what mem0 parses.

Disclosure: a memory stored from a turn (``mem0_raw``) discloses the scenario
items sourced from that turn (else ``turn:<session>/<turn>``), so retrieval
recall and out-of-scope checks compare with the item-based arms; an archived
item that a later item supersedes is left out (a raw turn holds the old value
by nature; stale-claim scoring judges the answer), while one archived
without a successor (the user asked to forget it) counts, so a raw turn
store is caught disclosing what was forgotten. A memory mem0 extracted
(``mem0``) is ``mem0:<id>``.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import tempfile
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from harness.memory_systems import (
    MemoryInstance,
    MemorySystem,
    ModelWrite,
    ProbeSetup,
    SampleEmbedding,
    StaticToolRun,
    SystemContract,
    ToolExecution,
    fit_disclosure,
    policy_denial,
    probe_messages,
    sample_embedding,
    write_order,
)

__version__ = "0.2.0"

DEFAULT_TOP_K = 10
DEFAULT_CHARS = 4000
GLOBAL_USER = "global"
TOOL_NAME = "mem0_search"
TOOL_INSTRUCTIONS = (
    "Memory: mem0_search searches memories kept from the user's earlier conversations. Search before answering "
    "questions about earlier conversations, preferences or decisions; use only what it returns, and if it finds "
    "nothing relevant, say you don't know."
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
_MISSING = "recall-eval-mem0 needs the mem0ai package: pip install 'mem0ai>=2.2,<3'"
#: Why mem0's keyword search (BM25) is off here, recorded in each arm's configuration (mem0 also warns in its log).
KEYWORD_SEARCH = ("off: mem0's BM25 needs fastembed's Qdrant/bm25 model (Hugging Face) and spaCy's en_core_web_sm "
                  "(GitHub); fastembed and spaCy are on PyPI, the two models are not")
#: mem0's extraction reply as its prompt documents it (mem0ai 2.2, ADDITIVE_EXTRACTION_PROMPT "OUTPUT FORMAT").
EXTRACTION_SCHEMA: dict[str, Any] = {
    "name": "mem0_extraction",
    "schema": {
        "type": "object",
        "properties": {"memory": {"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "text": {"type": "string"},
                           "attributed_to": {"type": "string", "enum": ["user", "assistant"]},
                           "linked_memory_ids": {"type": "array", "items": {"type": "string"}}},
            "required": ["id", "text", "attributed_to"], "additionalProperties": False}}},
        "required": ["memory"], "additionalProperties": False,
    },
}
_state: dict[str, Any] = {}


def user_for(workspace: str | None) -> str:
    """mem0's user id of a scope: one per workspace, one for the global memories."""
    return GLOBAL_USER if workspace is None else f"workspace:{workspace}"


def _mem0() -> Any:
    """``mem0.Memory``, imported once with telemetry off and its folder in a temporary folder of this process."""
    if "Memory" in _state:
        return _state["Memory"]
    import sys

    if "mem0" in sys.modules and os.environ.get("MEM0_TELEMETRY", "True").lower() in ("true", "1", "yes"):
        raise RuntimeError("mem0 was imported before recall-eval-mem0 could turn its telemetry off; "
                           "set MEM0_TELEMETRY=False before importing it")
    folder = tempfile.mkdtemp(prefix="recall-eval-mem0-")
    atexit.register(shutil.rmtree, folder, True)
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = folder
    from mem0 import Memory

    _state["Memory"] = Memory
    _state["folder"] = folder
    return Memory


class RunEmbedder:
    """mem0's embedder interface over the run's embedder (counted by the harness): ``search`` embeds a query."""

    def __init__(self, embedding: SampleEmbedding) -> None:
        self.embedding = embedding

    def embed(self, text: Any, memory_action: str | None = None) -> list[float]:
        return self.embed_batch([text], memory_action or "add")[0]

    def embed_batch(self, texts: list[Any], memory_action: str = "add") -> list[list[float]]:
        strings = [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in texts]
        return self.embedding.embed(strings, "query" if memory_action == "search" else "passage")


class HarnessLLM:
    """mem0's LLM interface answered by the run's model, through the harness (set per write, else refused)."""

    def __init__(self) -> None:
        self.model: Any = None
        self.replies: list[str] = []

    def generate_response(self, messages: list[dict[str, Any]], response_format: Any = None, tools: Any = None,
                          tool_choice: str = "auto", **_: Any) -> str:
        if self.model is None:
            raise RuntimeError("mem0 asked for a model call outside the write phase")
        reply = str(self.model.complete(messages, response_format=structured(response_format)))
        self.replies.append(reply)
        return reply


def structured(response_format: Any) -> dict[str, Any] | None:
    """mem0's ``json_object`` request as a JSON-schema one naming its documented reply; anything else as given."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_object":
        return {"type": "json_schema", "json_schema": EXTRACTION_SCHEMA}
    return response_format if isinstance(response_format, dict) else None


def new_memory(history_db_path: str | None = ":memory:", embedding: SampleEmbedding | None = None) -> tuple[Any, HarnessLLM]:
    """A mem0 ``Memory`` over a fresh in-memory Qdrant collection, the run's embedder and the harness's model.

    ``history_db_path`` None is mem0's default: one history file in ``MEM0_DIR`` shared by every instance.
    """
    memory_class = _mem0()
    from qdrant_client import QdrantClient

    embedding = embedding or sample_embedding(None)
    dimensions = embedding.dimensions
    config = {
        "vector_store": {"provider": "qdrant", "config": {
            "client": QdrantClient(location=":memory:"), "collection_name": f"recall_eval_{uuid.uuid4().hex}",
            "embedding_model_dims": dimensions}},
        # mem0 builds its configured clients at once: placeholders that are never called (replaced below)
        "embedder": {"provider": "openai", "config": {"api_key": "unused-offline", "embedding_dims": dimensions}},
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        **({"history_db_path": history_db_path} if history_db_path is not None else {}),
    }
    memory = memory_class.from_config(config)
    llm = HarnessLLM()
    memory.embedding_model, memory.llm = RunEmbedder(embedding), llm
    return memory, llm


def iso_time(millis: int) -> str:
    """A session's start (epoch milliseconds) as mem0's metadata carries it: ISO 8601 UTC to the second."""
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def mem0_message(turn: Any) -> dict[str, Any]:
    """A turn as mem0's LoCoMo harness adds it: a named speaker opens the content (``"Caroline: ..."``), because
    mem0 renders messages as ``role: content`` and drops ``name``; ``name`` is kept for mem0's ``actor_id``."""
    content = f"{turn.speaker}: {turn.content}" if turn.speaker else turn.content
    return {"role": turn.role, "content": content, **({"name": turn.speaker} if turn.speaker else {})}


def shown(memory: dict[str, Any]) -> str:
    """A memory as mem0's LoCoMo harness shows it to the answering model: ``"<timestamp>: <memory>"``."""
    stamp = (memory.get("metadata") or {}).get("timestamp")
    text = str(memory.get("memory", ""))
    return f"{stamp}: {text}" if stamp else text


def _result(status: str, payload: dict[str, Any], disclosed: tuple[str, ...] = (), read: bool = False) -> ToolExecution:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return ToolExecution(name="", arguments="", status=status, result_text=text, disclosed_item_ids=disclosed, storage_read=read)


class Mem0Instance(MemoryInstance):
    """One sample's mem0: a fresh Memory; writes and searches scoped by :func:`user_for`."""

    history_db_path: str | None = ":memory:"

    def __init__(self, scenario: Any, *, infer: bool, embedder: SampleEmbedding | None = None) -> None:
        super().__init__(scenario)
        self.infer = infer
        self.memory, self.llm = new_memory(self.history_db_path, embedder)
        self.sources: dict[tuple[str, str], list[str]] = {}
        superseded = {old for item in scenario.items for old in item.supersedes}
        for item in scenario.items:
            if item.state.value == "archived" and item.id in superseded:
                continue  # a value a later item replaced: the raw turn holds it by nature (stale-claim scoring covers it)
            for source in item.sources:
                self.sources.setdefault((source.session, source.turn), []).append(item.id)
        if not infer:
            for session in write_order(scenario):
                self.add_turns(session)

    # -- write ------------------------------------------------------------------------------------------
    def add_arguments(self, session: Any) -> dict[str, Any]:
        """The scope of a session's writes: its workspace's user id; the metadata names the session and its time."""
        return {"user_id": user_for(session.workspace), "metadata": {"session": session.id, "timestamp": iso_time(session.started_at)}}

    def add_turns(self, session: Any) -> list[dict[str, Any]]:
        """Each turn of ``session`` as one raw memory (``infer=False``)."""
        added = []
        scope = self.add_arguments(session)
        for turn in session.turns:
            message = mem0_message(turn)
            metadata = {**scope["metadata"], "turn": turn.id}
            added += self.memory.add([message], **{**scope, "metadata": metadata}, infer=False)["results"]
        return added

    def begin_write(self, session: Any) -> ModelWrite | None:
        if not self.infer:
            return None  # the turns were stored when the sample opened
        return _ExtractSession(self, session)

    # -- probe ------------------------------------------------------------------------------------------
    def search_filters(self, workspace: str | None) -> list[dict[str, Any]]:
        """One exact filter per scope the probe may see: the global memories, and its workspace's."""
        return [{"user_id": user_for(None)}] + ([{"user_id": user_for(workspace)}] if workspace is not None else [])

    def top_k(self) -> int:
        return int(getattr(getattr(self, "retrieval_budget", None), "top_k", DEFAULT_TOP_K))

    def chars(self) -> int:
        return int(getattr(getattr(self, "retrieval_budget", None), "chars", DEFAULT_CHARS))

    def search(self, query: str, workspace: str | None) -> list[dict[str, Any]]:
        """The probe's search: each visible scope with its exact filter and the budget's top-k, merged by score."""
        top_k = self.top_k()
        found: list[dict[str, Any]] = []
        for filters in self.search_filters(workspace):
            found += self.memory.search(query, filters=filters, top_k=top_k)["results"]
        found.sort(key=lambda m: (-float(m.get("score") or 0.0), str(m.get("created_at") or ""), str(m.get("id"))))
        return found[:top_k]

    def disclosed(self, memory: dict[str, Any]) -> list[str]:
        metadata = memory.get("metadata") or {}
        session, turn = metadata.get("session"), metadata.get("turn")
        if session is not None and turn is not None:
            return self.sources.get((session, turn)) or [f"turn:{session}/{turn}"]
        return [f"mem0:{memory.get('id')}"]

    def credited(self, shown: list[dict[str, Any]]) -> tuple[str, ...]:
        """The ids one search discloses, in the order shown, at most top-k: a raw turn citing several items credits
        them in turn, so recall@k is at k as for every system (one turn once counted for every item citing it)."""
        ids: list[str] = []
        for memory in shown:
            ids += [i for i in self.disclosed(memory) if i not in ids]
        return tuple(ids[: self.top_k()])

    def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
        if policy_denial(policy, context) is not None:  # the policy gate: cold, no tool, nothing read
            return ProbeSetup(probe_messages(self.scenario))
        workspace = context.workspace_key

        def search(arguments: dict[str, Any]) -> ToolExecution:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return _result("invalid_arguments", {"error": {"code": "invalid_arguments", "message": "query is required (a non-empty string)"}})
            found = self.search(query.strip(), workspace)
            # the budget counts memory text, whole memories only, as for every system (not the JSON nor the timestamp)
            kept = found[: fit_disclosure([str(m.get("memory") or "") for m in found], top_k=self.top_k(), chars=self.chars())]
            results = [{"text": shown(m), **({"speaker": m["actor_id"]} if m.get("actor_id") else {})} for m in kept]
            return _result("ok", {"results": results}, self.credited(kept), read=True)

        tools = StaticToolRun({TOOL_NAME: (SEARCH_SPEC, search)})
        return ProbeSetup(probe_messages(self.scenario, tool_instructions=TOOL_INSTRUCTIONS), tools)

    def close(self) -> None:
        try:
            self.memory.close()
        except Exception:  # noqa: BLE001 - closing an in-memory store cannot lose anything
            pass


def _is_json(text: str) -> bool:
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


class _ExtractSession(ModelWrite):
    """mem0's own fact extraction of one session (``add(messages, infer=True)``) with the run's model."""

    def __init__(self, instance: Mem0Instance, session: Any) -> None:
        self.instance, self.session = instance, session

    def run(self, model: Any) -> list[ToolExecution]:
        instance, session = self.instance, self.session
        messages = [mem0_message(t) for t in session.turns]
        scope = instance.add_arguments(session)
        started = time.perf_counter()
        instance.llm.model, instance.llm.replies = model, []
        try:
            added = instance.memory.add(messages, **scope, infer=True)["results"]
        finally:
            instance.llm.model = None
        arguments = json.dumps({"messages": len(messages), "user_id": scope["user_id"], "infer": True}, separators=(",", ":"))
        payload: dict[str, Any] = {"results": [{"memory": m.get("memory"), "event": m.get("event")} for m in added]}
        if not added and instance.llm.replies and not any(_is_json(r) for r in instance.llm.replies):
            # mem0 only logs this; the record says it (a prose-answering model, e.g. offline/reference, extracts nothing)
            payload["note"] = "the model's reply to mem0's extraction prompt was not JSON: mem0 extracted nothing"
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return [ToolExecution("mem0.add", arguments, "ok", text, storage_read=True, elapsed_s=time.perf_counter() - started)]


class _Mem0Base(MemorySystem):
    infer = True

    def __init__(self) -> None:
        if importlib.util.find_spec("mem0") is None:
            raise ImportError(_MISSING)

    def configuration(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {"mem0ai": version("mem0ai"), "infer": self.infer, "vector_store": "qdrant in memory",
                "history_db_path": ":memory:", "keyword_search": KEYWORD_SEARCH, "metadata": "timestamp per session",
                "structured_output": "json_schema of mem0's documented extraction reply"}

    def vendor_defaults(self) -> dict[str, Any]:
        """Where this arm departs from mem0's published defaults (empty: none), for the run's system contract."""
        out: dict[str, Any] = {"keyword_search": KEYWORD_SEARCH}
        if self.infer:
            out["response_format"] = "json_schema of mem0's documented reply (mem0 sends json_object)"
        else:
            out["infer"] = "False (mem0's default is True: fact extraction)"
        return out

    def ingest_mode(self) -> str:
        """What the arm stores, for the run's system contract."""
        return "facts mem0 extracts from each earlier session's turns" if self.infer else "every earlier turn, raw"

    def open(self, scenario: Any, write_mode: str, embedder: SampleEmbedding | None = None) -> Mem0Instance:
        return Mem0Instance(scenario, infer=self.infer, embedder=embedder)

    def contract(self, arm: str, terms: Any) -> SystemContract:
        """The sessions' turns (``mem0``: facts mem0 extracts from them, its default; ``mem0_raw``: each turn stored),
        the run's embedder (``open(..., embedder=)``), each memory shown with its session's ISO timestamp; below
        mem0's defaults where :meth:`vendor_defaults` says (BM25 half of search off: its models are not on PyPI)."""
        departs = self.vendor_defaults()
        return SystemContract(
            ingests="raw turns", embedder=terms.embedder, times="iso", discloses="tool results",
            vendor_defaults=not departs, own_instructions=TOOL_INSTRUCTIONS,
            vendor_note="; ".join(f"{key} {value}" for key, value in departs.items()))


class Mem0System(_Mem0Base):
    """mem0 as published: its fact extraction (``infer=True``) by the run's model after each earlier session."""

    name = "mem0"
    description = "mem0 (mem0ai) at its defaults: fact extraction by the run's model after each session, searched with mem0_search"
    arms = {"mem0": "agent"}
    forgetting = "delete, if mem0's extraction decides to"


class Mem0RawSystem(_Mem0Base):
    """mem0 with ``infer=False``: every earlier turn one memory, searched by embedding (below mem0's defaults)."""

    name = "mem0_raw"
    description = "mem0 (mem0ai), infer=False: every earlier turn stored as one memory, searched with mem0_search"
    arms = {"mem0_raw": "none"}
    forgetting = "none (every turn kept)"
    infer = False
