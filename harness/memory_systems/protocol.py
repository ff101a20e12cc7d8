"""The memory-system protocol: what a memory system must do to be evaluated.

An **arm** is a memory system plus a **write mode**. For every sample the
harness opens a fresh :class:`MemoryInstance` (its own storage: nothing
crosses samples) and drives it through two phases; the agent loop, scoring
and the report never change when a system is added.

1. **Write phase** (what happens to the earlier sessions), by write mode:

   - ``none``: nothing is stored (``history_only``; ``full_history`` pastes
     the transcripts at the probe instead);
   - ``seeded``: the scenario's hand-extracted items are stored as they are
     (the oracle: ``recall``, ``memory_document``, ``recall_fts``); the
     system does this in :meth:`MemorySystem.open`, no model call;
   - ``agent``: after each earlier session, in time order (all of them, every
     workspace: another workspace's session writes into its own scope, which
     is how canaries get into the store), the harness calls
     :meth:`MemoryInstance.begin_write` for a :class:`ToolRun` of that
     session's write tools, gives the agent model the session's transcript
     and those tools, asks it to save what will matter later and forget what
     the user asked to forget (:func:`harness.run.sample.run_write_phase`),
     and executes every call through ``ToolRun.call``. Every write call is
     recorded in the sample with its arguments and result; write-phase model
     calls and tokens are counted apart from the probe's. A system whose own
     code calls a model to write (mem0's fact extraction) returns a
     :class:`ModelWrite` instead: the harness runs it with the run's model
     (:class:`WriteModel`), and its model calls count as write-phase calls.

2. **Read phase** (the probe): :meth:`MemoryInstance.begin_probe` gets the
   probe's policy and run context (derived by the harness, never by the
   model) and returns a :class:`ProbeSetup`: the OpenAI-format messages
   (built with :func:`probe_messages` so every arm shares the base system
   prompt; a system may add one tool paragraph and/or one injected context
   section) and a :class:`ToolRun` whose specs are offered at the probe
   (none: no tools).

**Records.** ``ToolRun.call(name, arguments)`` executes one model tool call
and never raises for the model's input: it returns a :class:`ToolExecution`
(or anything with the same attributes, e.g. ``memory_tools.ToolCallRecord``)
holding the exact result text the model sees, the ids of the items whose
content reached the model (``disclosed_item_ids``, for retrieval precision
and scope leaks) and whether storage was read at all (``storage_read``).

**Policy gate.** ``policy_denial(policy, context)``
(``memory_tools.admission``) says whether the probe may read memory:
incognito, memory disabled or agent reads off deny it. Under a denial a
system must stay cold: no injected context, and either no tools or tools
that answer without reading storage. The harness does not hide storage from
a system; it scores any probe call that reads storage under a denying policy
as a tool-level leak (``policy_denied_read``), whatever the system.

**Budget.** Every system of a run gets the same retrieval budget
(:class:`harness.scenarios.RetrievalBudget`: ``top_k`` records and ``chars``
characters per retrieval, from the suite or ``--retrieval-budget``). The
harness opens each instance with :func:`open_instance`: ``open`` receives it
as ``budget=`` when it declares that parameter (older plug-ins that do not
are opened as before), and the instance's ``retrieval_budget`` attribute holds
it before ``begin_write``/``begin_probe`` run. A system honours it in every
retrieval it makes; the run records it in each arm's fingerprint.

**Embedder.** A system that embeds declares an ``embedder`` parameter in
``open`` and gets the run's embedder for the sample
(:class:`~harness.memory_systems.run_embedding.SampleEmbedding`: model,
prefix, dimensions and a counted ``embed``); one that cannot take it names
its own in ``own_embedder``. The arm's fingerprint records which, and hashes it.

**Session times.** ``sees_session_times`` (default True) says whether the
system stores what it writes at the session's own time. A system that cannot
back-date writes (it stamps them "now") sets it False; the report shows it
beside the temporal category, so its temporal results are read for what they are.

**Registration.** Built-in systems live in
:mod:`harness.memory_systems.builtin`. A third-party package registers a
system under the entry-point group :data:`ENTRY_POINT_GROUP`; the entry
point names a :class:`MemorySystem` instance, or a class or function that
returns one when called without arguments. ``docs/memory-systems.md`` walks
through writing one; ``examples/recall-eval-notebook`` is a complete one.

Example (a system that injects a fixed note as context)::

    class Sticky(MemorySystem):
        name = "sticky"
        description = "one fixed note injected into every probe"
        arms = {"sticky": "seeded"}

        def open(self, scenario, write_mode):
            return StickyInstance(scenario)

    class StickyInstance(MemoryInstance):
        def begin_probe(self, policy, context):
            denied = policy_denial(policy, context) is not None
            return ProbeSetup(probe_messages(self.scenario, context_section=None if denied else "..."))
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from harness.memory_systems.contract import ContractTerms, SystemContract
from harness.memory_systems.instructions import SHARED_MEMORY_INSTRUCTIONS, shared
from harness.memory_systems.prompts import ArmSetup, _conversation, system_prompt
from harness.memory_systems.run_embedding import (
    EMBEDDER_PARAMETER,
    open_method,
    sample_embedding,
    takes_embedder,
    takes_parameter,
)
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget, Scenario, Session
from memory_tools import DenialReason, MemoryPolicy, RunContext, admission

WriteMode = Literal["none", "seeded", "agent"]
WRITE_MODES: tuple[str, ...] = ("none", "seeded", "agent")
IDLE_LOG_PREFIX = "dream@"
"""The write-phase log of an idle window's consolidation is named ``dream@<the session or probe it precedes>``."""
ENTRY_POINT_GROUP = "recall_eval.memory_systems"
"""Entry-point group third-party memory systems register under."""


@dataclass(frozen=True)
class ToolExecution:
    """One tool call as a memory system executed it (what the sample records).

    Attributes:
        name: The tool name as the model sent it.
        arguments: The arguments as received (a dict JSON-dumped: use :func:`arguments_text`).
        status: ``ok`` or an error code (``invalid_arguments``, ``unknown_tool``,
            ``policy_denied``, ``not_found`` or the system's own).
        result_text: The exact text given back to the model.
        disclosed_item_ids: Ids of the stored records whose content reached the model.
        storage_read: Whether the call read storage at all (a read under a denying policy is a leak).
        elapsed_s: Time the system spent on the call.
        forget: Whether the system declares the call a forget (an MCP config's ``forget`` tool: True, its write
            tool: False); None: not declared, and scoring tells a forget by the tool's name.
    """

    name: str
    arguments: str
    status: str
    result_text: str
    disclosed_item_ids: tuple[str, ...] = ()
    storage_read: bool = False
    elapsed_s: float = 0.0
    forget: bool | None = None


@runtime_checkable
class ToolRun(Protocol):
    """The tools of one phase of one sample, fixed when it began (``memory_tools.MemoryRun`` is one)."""

    def tool_specs(self) -> list[dict[str, Any]]:
        """The tools offered, in OpenAI/litellm function format (a fresh copy; empty: none)."""
        ...

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> Any:
        """Execute one tool call; returns a :class:`ToolExecution` (or the same attributes); never raises for bad input."""
        ...


class WriteModel(Protocol):
    """The run's model as a system's own write code calls it (same client, cache, retries and budget as the probe's).

    Every call is recorded as a write-phase model call of the session, with its tokens.
    """

    def complete(self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None) -> str:
        """The model's reply text to ``messages`` (no tools); raises when the provider fails after retries."""
        ...


class ModelWrite:
    """A session's write that the system runs itself with the run's model (e.g. mem0's own fact extraction).

    :meth:`MemoryInstance.begin_write` may return one instead of a
    :class:`ToolRun`: the harness calls :meth:`run` once, in a worker thread
    (it may block; it must not touch the harness's event loop), records every
    ``model.complete`` call as a write-phase model call and every returned
    :class:`ToolExecution` as a write call of the session. A model failure
    ends the sample as an error, like an agent write's.
    """

    def run(self, model: WriteModel) -> list[ToolExecution]:
        """Write the session's memory, calling ``model`` as often as the system needs."""
        raise NotImplementedError


@dataclass(frozen=True)
class ProbeSetup:
    """What the probe starts from: the messages, and the tools (None or no specs: no tools)."""

    messages: list[dict[str, Any]]
    tools: ToolRun | None = None
    pasted: int = 0
    """Messages after the system prompt that are a pasted history, verbatim (see :class:`ArmSetup`)."""
    shadow: Any = None
    """What the harness observed for the sample and never showed the model (the ``shadow`` arm's search,
    :class:`harness.memory_systems.shadow.ShadowObservation`); None for every other system."""

    def arm_setup(self) -> ArmSetup:
        """The agent loop's input: the messages and the offered tool specs."""
        specs = list(self.tools.tool_specs()) if self.tools is not None else []
        return ArmSetup(messages=self.messages, tools=specs, pasted=self.pasted)


class MemoryInstance:
    """One sample's memory: fresh storage opened by :meth:`MemorySystem.open`, closed after the sample.

    Subclass and override what the system does; the defaults write nothing,
    offer no tools and inject nothing (exactly ``history_only``).

    Attributes:
        retrieval_budget: The run's budget (set by :func:`open_instance` before any ``begin_*``): honour its
            ``top_k`` and ``chars`` in every retrieval.
    """

    retrieval_budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario

    def begin_write(self, session: Session) -> ToolRun | ModelWrite | None:
        """The write tools for ``session`` (write mode ``agent``), scoped to ``session.workspace``; None: skip it.

        A :class:`ModelWrite` instead: the system writes the session itself with the run's model.
        """
        return None

    def begin_idle(self, before: str) -> ModelWrite | None:
        """A consolidation the system runs in the idle window before session ``before`` (or ``probe``) of the
        write phase (Dream Mode); None: none. Logged as the write session ``dream@<before>``."""
        return None

    def begin_selection(self, policy: MemoryPolicy, context: RunContext) -> ModelWrite | None:
        """A model step the system runs before the probe (an LLM judge choosing what to inject); None: none.

        The harness runs it like a :class:`ModelWrite` and records its calls as the probe's model calls, marked
        ``purpose: selection``; under a denying policy a system must return None (nothing read, nothing asked).
        """
        return None

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        """The probe's messages and tools under the probe's policy and run context (see the policy gate)."""
        return ProbeSetup(probe_messages(self.scenario))

    def embedding_usage(self) -> Any:
        """What this sample's embeddings cost (a ``memory_tools.EmbeddingUsage``), or None: the system embeds nothing.

        Recorded in the sample apart from the agent model's calls and tokens.
        """
        return None

    def close(self) -> None:
        """Release the sample's storage (called once, also after a failure)."""


class MemorySystem:
    """A memory system: a name, the arms it offers, and a factory of per-sample instances.

    Attributes:
        name: Unique system name (letters, digits, ``_``, ``-``, ``.``).
        description: One line for ``--help``, docs and reports.
        arms: Arm name -> write mode (``none``, ``seeded`` or ``agent``); arm
            names are unique across all systems and end up in every record.
        forgetting: How the system forgets on request, in a few words, shown
            beside its forgetting metrics (``delete by exact name``,
            ``archive``, ``none (append only)``); empty: not declared.
        sees_session_times: Whether writes are stored at the session's own time; False for a system that
            cannot back-date them (the report marks its temporal results).
    """

    name: str = ""
    description: str = ""
    arms: Mapping[str, WriteMode] = {}
    forgetting: str = ""
    sees_session_times: bool = True
    own_embedder: str = ""
    """A system that embeds but cannot take the run's embedder names its own here (marked in run.json); one that
    takes it declares ``embedder`` in ``open`` (:mod:`harness.memory_systems.run_embedding`)."""

    def configuration(self) -> Mapping[str, Any]:
        """What else changes this system's answers (model names, ranking constants ...), JSON-able.

        It goes into each arm's configuration hash: two runs whose systems differ in it are not compared.
        """
        return {}

    def contract(self, arm: str, terms: ContractTerms) -> SystemContract:
        """What ``arm`` ingests, embeds with, shows of times and discloses, and whether it runs at its vendor's
        defaults (:mod:`harness.memory_systems.contract`); ``terms`` is what the harness offers (the run's
        embedder). The default declares nothing: every field reads ``undeclared`` and the table marks it."""
        return SystemContract()

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        """A fresh instance for one sample of ``scenario``; ``seeded`` stores the scenario's items now."""
        raise NotImplementedError


@dataclass(frozen=True)
class SystemArm:
    """One runnable arm: a system and a write mode under a name."""

    name: str
    system: MemorySystem
    write_mode: WriteMode
    origin: str = "built-in"
    """``built-in`` or the plug-in's ``distribution version`` (entry point)."""

    @property
    def description(self) -> str:
        return self.system.description

    @property
    def forgetting(self) -> str:
        """The system's forgetting mechanism (:attr:`MemorySystem.forgetting`), or ``not declared``."""
        declared = getattr(self.system, "forgetting", "")
        return declared if isinstance(declared, str) and declared.strip() else "not declared"


def open_instance(arm: SystemArm, scenario: Scenario, budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET,
                  embedder: Any = None) -> MemoryInstance:
    """A fresh instance of ``arm`` for one sample, given the run's retrieval budget and embedder.

    ``open`` gets ``budget=`` when it declares that parameter (or ``**kwargs``); a system written before
    budgets existed is opened as it always was. Either way the instance's ``retrieval_budget`` is set.
    ``open`` gets ``embedder=`` (a :class:`~harness.memory_systems.run_embedding.SampleEmbedding` of the run's
    ``embedder``, None: lexical) when it declares that parameter; the instance's ``run_embedding`` holds it.
    """
    system = arm.system
    kwargs: dict[str, Any] = {}
    if takes_parameter(open_method(system), "budget"):
        kwargs["budget"] = budget
    sample = sample_embedding(embedder) if takes_embedder(system) else None
    if sample is not None:
        kwargs[EMBEDDER_PARAMETER] = sample
    instance = system.open(scenario, arm.write_mode, **kwargs)
    for name, value in (("retrieval_budget", budget), ("run_embedding", sample)):
        try:
            setattr(instance, name, value)
        except (AttributeError, TypeError):  # a frozen or slotted instance of a plug-in: it got them in open or not at all
            pass
    return instance


def policy_denial(policy: MemoryPolicy, context: RunContext) -> DenialReason | None:
    """Why the probe may not read memory (incognito, memory disabled, agent reads off), or None: the one gate."""
    return admission(policy, context)


def probe_messages(
    scenario: Scenario,
    *,
    tool_instructions: str | None = None,
    context_section: str | None = None,
) -> list[dict[str, Any]]:
    """The probe messages every arm shares: base system prompt, recent history, the user's message.

    Args:
        scenario: The scenario whose probe is answered.
        tool_instructions: One paragraph appended to the system prompt when the system offers tools. Under the
            shared instruction block (``--instructions shared``, the default) that block comes first, for any
            system that offers tools or injects context: say only how to call your tools.
        context_section: Injected memory (e.g. a ``<memory_...>`` block saying it is untrusted
            context), appended to the system prompt after the tool paragraph.
    """
    messages = _conversation(scenario, with_tools=False)
    text = system_prompt(scenario, with_tools=False)
    shown = (SHARED_MEMORY_INSTRUCTIONS,) if shared() and (tool_instructions or context_section) else ()
    for extra in (*shown, tool_instructions, context_section):
        if extra:
            text = f"{text}\n\n{extra}"
    messages[0] = {"role": "system", "content": text}
    return messages


def arguments_text(arguments: object) -> str:
    """Arguments as the record keeps them: text as given, a dict as compact JSON, None as ``""``
    (the Host's own rule, so every system's call records read alike; a self-referencing dict is its repr)."""
    from memory_tools import record_arguments

    return record_arguments(arguments)


def decode_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any] | str:
    """The model's arguments as a dict, or an error message for the model (never raises)."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if not isinstance(arguments, str):
        return "arguments must be a JSON object"
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        return f"arguments are not valid JSON ({exc}); send one JSON object"
    return value if isinstance(value, dict) else "arguments must be a JSON object"


@dataclass
class StaticToolRun:
    """A :class:`ToolRun` over plain handlers: ``{name: (spec, handler)}``, handler(dict) -> ToolExecution.

    Decodes arguments, answers unknown tools and bad JSON with an error the
    model can read, and times each call; handy for plug-ins.
    """

    handlers: dict[str, tuple[dict[str, Any], Any]] = field(default_factory=dict)

    def tool_specs(self) -> list[dict[str, Any]]:
        return json.loads(json.dumps([spec for spec, _ in self.handlers.values()]))

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolExecution:
        started = time.perf_counter()
        text_args = arguments_text(arguments)
        if name not in self.handlers:
            known = ", ".join(self.handlers) or "none"
            return _error(name, text_args, "unknown_tool", f"unknown tool {name!r}; available: {known}", started)
        decoded = decode_arguments(arguments)
        if isinstance(decoded, str):
            return _error(name, text_args, "invalid_arguments", decoded, started)
        result: ToolExecution = self.handlers[name][1](decoded)
        return ToolExecution(
            name=name,
            arguments=text_args,
            status=result.status,
            result_text=result.result_text,
            disclosed_item_ids=tuple(result.disclosed_item_ids),
            storage_read=result.storage_read,
            elapsed_s=time.perf_counter() - started,
        )


def _error(name: str, arguments: str, code: str, message: str, started: float) -> ToolExecution:
    text = json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False, separators=(",", ":"))
    return ToolExecution(name, arguments, code, text, elapsed_s=time.perf_counter() - started)
