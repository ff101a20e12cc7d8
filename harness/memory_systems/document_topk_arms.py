"""The top-K memory-document arms: ``memory_document_topk_fts``, ``..._vector`` and ``..._judge``.

Each is the ``memory_document`` arm (write mode ``seeded``: the scenario's
items rendered as the scope's memory file, the same policy gate, the same
section) with one change: the probe's section holds only the entries its lane
chose for the probe's message (:mod:`harness.memory_systems.document_topk`),
at most the run's ``top_k``, under the same character cap. Under a denying
policy nothing is read, chosen or asked: the probe is ``history_only``'s.

The judge lane asks the run's model before the probe: the instance returns a
:class:`~harness.memory_systems.protocol.ModelWrite` from
:meth:`~harness.memory_systems.protocol.MemoryInstance.begin_selection`, and the
harness records its calls as probe-phase model calls marked ``purpose:
selection`` (tokens, cost, cache and spend budget as any call).
"""

from __future__ import annotations

from typing import Any

from harness.memory_systems.builtin import MemoryDocumentSystem
from harness.memory_systems.document_topk import (
    LANES,
    TOPK_ARMS,
    Selection,
    fts_select,
    judge_choice,
    judge_request,
    probe_entries,
    topk_section,
    vector_select,
)
from harness.memory_systems.protocol import (
    MemoryInstance,
    MemorySystem,
    ModelWrite,
    ProbeSetup,
    ToolExecution,
    WriteMode,
    WriteModel,
    policy_denial,
    probe_messages,
)
from harness.memory_systems.run_embedding import SampleEmbedding, sample_embedding
from harness.scenarios import Scenario
from memory_tools import MemoryPolicy, RunContext


class _JudgeSelection(ModelWrite):
    """The judge's one call: the run's model picks entries for the probe's message."""

    def __init__(self, instance: TopKDocumentInstance) -> None:
        self.instance = instance

    def run(self, model: WriteModel) -> list[ToolExecution]:
        entries, k = self.instance.entries or (), self.instance.k
        messages, response_format = judge_request(entries, self.instance.scenario.probe.message, k)
        reply = model.complete(messages, response_format=response_format)
        self.instance.selection = Selection("judge", k, len(entries), tuple(judge_choice(reply, entries, k)))
        return []


class TopKDocumentInstance(MemoryInstance):
    """One sample's top-K document: the candidates are read once, at the probe, under its policy gate."""

    def __init__(self, scenario: Scenario, lane: str, embedding: SampleEmbedding | None = None) -> None:
        super().__init__(scenario)
        self.lane = lane
        self.embedding = embedding
        self.entries: tuple[Any, ...] | None = None
        self.selection: Selection | None = None

    @property
    def k(self) -> int:
        """The run's ``top_k``: the same K for every lane."""
        return int(self.retrieval_budget.top_k)

    def _read(self, policy: MemoryPolicy, context: RunContext) -> tuple[Any, ...] | None:
        """The candidates, or None (and nothing read) when the policy denies the probe's reads."""
        if policy_denial(policy, context) is not None:
            return None
        if self.entries is None:
            self.entries = probe_entries(self.scenario)
        return self.entries

    def begin_selection(self, policy: MemoryPolicy, context: RunContext) -> ModelWrite | None:
        """The judge's model call before the probe; None for the other lanes, a denial or an empty document."""
        if self.lane != "judge" or not self._read(policy, context):
            return None
        return _JudgeSelection(self)

    def select(self, entries: tuple[Any, ...]) -> Selection:
        """The lane's choice for the probe's message (the judge's was made in :meth:`begin_selection`)."""
        query, k = self.scenario.probe.message, self.k
        if self.lane == "fts":
            return Selection("fts", k, len(entries), tuple(fts_select(entries, query, k)))
        if self.lane == "vector":
            embedding = self.embedding if self.embedding is not None else sample_embedding(None)
            self.embedding = embedding
            return Selection("vector", k, len(entries), tuple(vector_select(entries, query, k, embedding.embed)))
        return self.selection or Selection("judge", k, len(entries), ())

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        entries = self._read(policy, context)
        if not entries:
            return ProbeSetup(probe_messages(self.scenario))  # cold, or nothing to choose from
        self.selection = self.select(entries)
        section = topk_section(entries, self.selection.chosen, self.k)
        return ProbeSetup(probe_messages(self.scenario, context_section=section or None))

    def embedding_usage(self) -> Any:
        return self.embedding.usage if self.embedding is not None and self.lane == "vector" else None


class TopKDocumentSystem(MemoryDocumentSystem):
    """The scope's memory file, only the top-K entries a lane chose for the probe's message injected."""

    lane = "fts"
    forgetting = "archive (entry status)"
    discloses = "injected top-k"

    def configuration(self) -> dict[str, Any]:
        """The lane, where K comes from and the cap: two lanes (or caps) never compare as one arm."""
        from harness.memory_systems.document import PROMPT_CAP_CHARS

        return {"lane": self.lane, "k": "retrieval_budget.top_k", "cap_chars": PROMPT_CAP_CHARS}

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return TopKDocumentInstance(scenario, self.lane)


class FtsDocumentSystem(TopKDocumentSystem):
    """Top-K entries by SQLite FTS5 bm25 over the probe's message."""

    name = "memory_document_topk_fts"
    description = "the scope's memory file, only the top-K entries by FTS5 bm25 for the probe's message"
    arms = {TOPK_ARMS["fts"]: "seeded"}
    lane = "fts"


class VectorDocumentSystem(TopKDocumentSystem):
    """Top-K entries by cosine similarity under the run's embedder."""

    name = "memory_document_topk_vector"
    description = "the scope's memory file, only the top-K entries most similar to the probe's message (run's embedder)"
    arms = {TOPK_ARMS["vector"]: "seeded"}
    lane = "vector"
    embeds_with_run_embedder = True

    def open(self, scenario: Scenario, write_mode: WriteMode,  # type: ignore[override]
             embedder: SampleEmbedding | None = None) -> MemoryInstance:
        return TopKDocumentInstance(scenario, self.lane, embedder)


class JudgeDocumentSystem(TopKDocumentSystem):
    """Top-K entries the run's model picks from titles and first lines (its calls are probe-phase calls)."""

    name = "memory_document_topk_judge"
    description = "the scope's memory file, only the top-K entries the run's model picks from titles and first lines"
    arms = {TOPK_ARMS["judge"]: "seeded"}
    lane = "judge"


def topk_systems() -> list[MemorySystem]:
    """The three lanes' systems, in :data:`LANES` order."""
    systems = {"fts": FtsDocumentSystem(), "vector": VectorDocumentSystem(), "judge": JudgeDocumentSystem()}
    return [systems[lane] for lane in LANES]
