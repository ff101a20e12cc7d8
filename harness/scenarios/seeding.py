"""Seed a memory store with a scenario's items, reproducibly.

Every item becomes one :class:`memory_tools.ItemInput`: ``item_id`` is the
spec's id; a ``workspace`` makes it a workspace item; each source becomes a
``MemoryItemSource`` with ``run_id`` ``<session>/run`` and ``event_id``
``<session>/<turn>``. Store times never come from the wall clock: ``now`` is
the item's ``observed_at`` (default: the start of its first source's session),
so two seedings of one scenario give identical stores.

Seeding is planned first (:func:`seed_plan`: the store inputs, hashable), then
applied. The runner seeds each distinct plan once into a template and opens a
copy of its image per sample (:class:`StoreTemplates`): the 200 probes of a
conversation share one store, and the arms and epochs of a story share theirs,
instead of inserting and validating every item again. Within a plan the
common case (active items without revisions) goes through a single ``bulk_create``.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from harness.scenarios.models import ItemSpec, KeySpec, Scenario
from harness.scenarios.shelf import ScenarioFacts
from memory_tools import (
    DenialReason,
    ItemInput,
    KeyInput,
    LifecycleState,
    MemoryItemSource,
    MemoryItemStore,
    MemoryPolicy,
    RunContext,
    ScopeType,
    admission,
)


def _observed_at(spec: ItemSpec, scenario: Scenario, starts: dict[str, int] | None) -> int:
    if spec.observed_at is not None:
        return spec.observed_at
    first = spec.sources[0].session
    if starts is not None and (start := starts.get(first)) is not None:
        return start
    for session in scenario.sessions:
        if session.id == first:
            return session.started_at
    raise ValueError(f"item {spec.id!r}: source session {first!r} is not in scenario {scenario.id!r}")


_KEY_INPUTS: dict[str, KeyInput] = {}
_KEY_INPUTS_SIZE = 65_536


def _key_input(key: KeySpec) -> KeyInput:
    """``KeyInput(key.key, key.type, key.origin)``, the same frozen instance for a key seen before.

    A suite repeats a few thousand keys hundreds of thousands of times, and
    building each anew was a third of the store-rule check in ``validate``.
    """
    if key.key.__class__ is not str:  # a subclass may compare equal yet differ: built anew, never remembered
        return KeyInput(key.key, key.type, key.origin)
    held = _KEY_INPUTS.get(key.key)
    if held is not None and held.key_type is key.type and held.key_origin is key.origin:
        return held
    made = KeyInput(key.key, key.type, key.origin)
    if len(_KEY_INPUTS) >= _KEY_INPUTS_SIZE:
        _KEY_INPUTS.clear()  # bounded: a suite of distinct keys never grows it past the size
    _KEY_INPUTS[key.key] = made
    return made


def session_starts(scenario: Scenario) -> dict[str, int]:
    """Each session id's start (the first session of an id, as :func:`item_input` reads it), for its ``starts``."""
    return {session.id: session.started_at for session in reversed(scenario.sessions)}


def item_input(spec: ItemSpec, scenario: Scenario, starts: dict[str, int] | None = None) -> ItemInput:
    """The store input for the final state of ``spec`` (its current content).

    ``starts`` (:func:`session_starts` of ``scenario``) finds the first source's session by id instead of a scan
    of the sessions per item (a LongMemEval S question: ~50 sessions, ~600 items).

    Raises:
        ValueError: The first source names a session the scenario lacks
            (validation reports this before seeding is ever reached).
    """
    observed_at = _observed_at(spec, scenario, starts)
    return ItemInput(
        content=spec.content,
        kind=spec.kind,
        keys=tuple(map(_key_input, spec.keys)),
        sources=tuple(
            MemoryItemSource(
                session_id=s.session, run_id=f"{s.session}/run", turn_id=s.turn, event_id=f"{s.session}/{s.turn}"
            )
            for s in spec.sources
        ),
        statement_type=spec.statement_type,
        temporal_type=spec.temporal_type,
        scope_type=ScopeType.WORKSPACE if spec.workspace is not None else ScopeType.GLOBAL,
        scope_key=spec.workspace,
        event_started_at=spec.event_started_at,
        event_ended_at=spec.event_ended_at,
        observed_at=observed_at,
        origin=spec.origin,
        item_id=spec.id,
        now=observed_at,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Staged:
    """An item created in steps: its final input, earlier ``(content, at)`` revisions, archived or not."""

    final: ItemInput
    revisions: tuple[tuple[str, int], ...]
    archived: bool


@dataclasses.dataclass(frozen=True, slots=True)
class SeedPlan:
    """Everything that decides a seeded store, hashable: equal plans give identical stores.

    Item roles, titles and probes are not in it, so every probe of a
    conversation has the same plan.
    """

    plain: tuple[ItemInput, ...]
    staged: tuple[_Staged, ...]


def seed_plan(scenario: Scenario, inputs: dict[tuple[int, int], tuple[Any, Any, ItemInput]] | None = None) -> SeedPlan:
    """The store inputs of ``scenario``'s items (see :func:`seed_store` for how they are applied).

    ``inputs`` memoizes :func:`item_input` by the identity of the item and of
    the sessions it reads (both kept alive in the entry, so no id is reused):
    a conversation's probes share all but the few items each marks as its
    answer, so a plan per probe costs lookups, not a conversion per item.
    """
    plain: list[ItemInput] = []
    staged: list[_Staged] = []
    starts = session_starts(scenario)
    for spec in scenario.items:
        if inputs is None:
            final = item_input(spec, scenario, starts)
        else:
            key = (id(spec), id(scenario.sessions))
            known = inputs.get(key)
            if known is None or known[0] is not spec or known[1] is not scenario.sessions:
                known = inputs[key] = (spec, scenario.sessions, item_input(spec, scenario, starts))
            final = known[2]
        archived = spec.state is LifecycleState.ARCHIVED
        if spec.revisions or archived:
            staged.append(_Staged(final, tuple((r.content, r.at) for r in spec.revisions), archived))
        else:
            plain.append(final)
    return SeedPlan(tuple(plain), tuple(staged))


def seed_store(store: MemoryItemStore, scenario: Scenario) -> None:
    """Create every item of ``scenario`` in ``store`` (expected fresh).

    Active items without revisions are created in one ``bulk_create``. An item
    with revisions is created with its first revision's content at that
    revision's time, updated through the later revisions at their times, and
    to its final content at ``observed_at``; so its version is
    ``len(revisions) + 1``. Archived items are archived last, at ``observed_at``
    (one more version).
    """
    apply_plan(store, seed_plan(scenario))


def apply_plan(store: MemoryItemStore, plan: SeedPlan) -> None:
    """Create the items of ``plan`` in ``store`` (expected fresh), as :func:`seed_store` describes."""
    if plan.plain:
        store.bulk_create(plan.plain)
    for step in plan.staged:
        final = step.final
        item_id = str(final.item_id)  # seeding always names its items
        if step.revisions:
            content, at = step.revisions[0]
            store.create(dataclasses.replace(final, content=content, observed_at=at, now=at))
            for content, at in step.revisions[1:]:
                store.update(item_id, content=content, observed_at=at, now=at)
            store.update(item_id, content=final.content, observed_at=final.observed_at, now=final.now)
        else:
            store.create(final)
        if step.archived:
            store.archive(item_id, now=final.now)


def reuse_capacity(order: Iterable[Hashable]) -> int:
    """The smallest LRU capacity at which every use of a key after its first finds it still cached.

    That is one more than the most distinct other keys used between two uses
    of one key (its LRU stack distance), counted with a Fenwick tree over the
    uses: O(n log n) for n uses, consecutive repeats merged first.

    Example:
        >>> reuse_capacity("abcabc"), reuse_capacity("aabbcc"), reuse_capacity("")
        (3, 1, 1)
    """
    uses = [key for key, _ in itertools.groupby(order)]
    marks = [0] * (len(uses) + 1)  # 1 at the position of each key's latest use

    def mark(position: int, delta: int) -> None:
        while position <= len(uses):
            marks[position] += delta
            position += position & -position

    def marked(position: int) -> int:  # marks at positions 1..position
        total = 0
        while position > 0:
            total += marks[position]
            position -= position & -position
        return total

    latest: dict[Hashable, int] = {}
    widest = 0
    for position, key in enumerate(uses, start=1):
        before = latest.get(key)
        if before is not None:
            widest = max(widest, marked(position - 1) - marked(before))
            mark(before, -1)
        mark(position, 1)
        latest[key] = position
    return widest + 1


#: Seed plans kept by the identity of their scenario's lists: each keeps those lists alive (a LongMemEval
#: question's ~3 MB), so only the stores in flight (a run goes scenario by scenario); images are found by the plan's value.
PLANS_KEPT = 8
#: Item inputs kept by item identity, each holding its item: a few conversations' worth (a LongMemEval question
#: has ~480 items, a LoCoMo conversation a few hundred), not a suite's.
INPUTS_KEPT = 4 * 1024


class StoreTemplates:
    """Seeded stores by plan, each seeded once; :meth:`open` gives a sample its own copy.

    A template is the serialized image of a store seeded with one
    :class:`SeedPlan`; opening a copy costs a ``deserialize``, not an insert
    and validation per item. The images kept are bounded in number and in
    bytes (least recently used first out), so a suite of thousands of
    one-story files keeps only the stores of the scenarios in flight. A run
    sizes the number from its own order of work (:meth:`reserve`): samples
    run epoch by epoch, so a suite of more stores than the default capacity
    would otherwise seed every store again in every epoch. Not thread-safe:
    one per event loop or worker process.

    Example:
        >>> templates = StoreTemplates()
        >>> store = templates.open(scenario)  # doctest: +SKIP
    """

    #: The images' byte bound. A run's plan opens every store once before its samples open them again, so a
    #: suite whose images exceed the bound thrashes (least recently used first) whatever the bound: on a
    #: LongMemEval S suite (500 stores of ~1.8 MB) 256 MB held 140 images of which the run found none.
    #: 64 MB keeps a suite of LoCoMo's size whole and bounds what a larger one holds.
    MAX_BYTES = 64 * 1024 * 1024

    def __init__(self, capacity: int = 32, max_bytes: int = MAX_BYTES) -> None:
        self.default_capacity = self.capacity = capacity
        self.max_bytes = max_bytes
        self._images: OrderedDict[SeedPlan, bytes] = OrderedDict()
        self._bytes = 0
        # Plans by the identity of the (items, sessions) lists: a conversation's probes share them, so one plan
        # serves all; the lists are kept with the plan, so their ids cannot be reused while cached.
        self._plans: OrderedDict[tuple[int, int], tuple[list[ItemSpec], list[Any], SeedPlan]] = OrderedDict()
        self._inputs: dict[tuple[int, int], tuple[Any, Any, ItemInput]] = {}  # item_input by item identity (seed_plan)
        self.seeded = 0

    def reserve(self, scenarios: Iterable[Scenario], slack: int = 0, *, grow_only: bool = False) -> int:
        """Keep enough images that opening stores for ``scenarios``, in this order, seeds each store once.

        ``slack``: how far concurrent samples may run out of order (a run's concurrency).
        ``grow_only``: never lower the capacity (a later part of work already reserved for).
        The byte bound still applies, so a suite of huge stores may seed again. Returns the capacity.
        """
        numbers: dict[Hashable, int] = {}
        # A shelf's facts name their store without unpacking it (harness.scenarios.shelf.work_order)
        order = [numbers.setdefault(scenario.store_key if isinstance(scenario, ScenarioFacts) else self.plan(scenario), len(numbers))
                 for scenario in scenarios]
        needed = max(self.default_capacity, reuse_capacity(order) + slack)
        self.capacity = max(self.capacity, needed) if grow_only else needed
        return self.capacity

    def plan(self, scenario: Scenario) -> SeedPlan:
        key = (id(scenario.items), id(scenario.sessions))
        known = self._plans.get(key)
        if known is None or known[0] is not scenario.items or known[1] is not scenario.sessions:
            known = (scenario.items, scenario.sessions, seed_plan(scenario, self._inputs))
            self._plans[key] = known
            while len(self._plans) > PLANS_KEPT:  # each holds its scenario's sessions and items alive
                self._plans.popitem(last=False)
            if len(self._inputs) > INPUTS_KEPT:  # bounded: a new suite's items replace the old ones
                self._inputs.clear()
        else:
            self._plans.move_to_end(key)
        return known[2]

    def open(self, scenario: Scenario) -> MemoryItemStore:
        """A fresh store holding ``scenario``'s items, copied from its template (seeded on first use)."""
        plan = self.plan(scenario)
        image = self._images.get(plan)
        if image is None:
            with MemoryItemStore(":memory:") as template:
                apply_plan(template, plan)
                image = template.snapshot()
            self.seeded += 1
            self._images[plan] = image
            self._bytes += len(image)
            while len(self._images) > self.capacity or (self._bytes > self.max_bytes and len(self._images) > 1):
                self._bytes -= len(self._images.popitem(last=False)[1])
        else:
            self._images.move_to_end(plan)
        return MemoryItemStore.from_snapshot(image)


_SHARED_TEMPLATES: StoreTemplates | None = None
_SHARED_LOCK = threading.Lock()


def open_seeded_store(scenario: Scenario) -> MemoryItemStore:
    """A fresh store holding ``scenario``'s items, copied from this process's shared templates.

    Every memory system that reads the scenario's items calls this, so a
    conversation's probes (and the arms and epochs of one story) seed their
    store once per process; the lock keeps the cache whole if a plug-in opens
    stores from threads.
    """
    global _SHARED_TEMPLATES
    with _SHARED_LOCK:
        if _SHARED_TEMPLATES is None:
            _SHARED_TEMPLATES = StoreTemplates()
        return _SHARED_TEMPLATES.open(scenario)


def reserve_store_templates(scenarios: Iterable[Scenario], slack: int = 0, *, grow_only: bool = False) -> int:
    """Size this process's shared templates for opening stores of ``scenarios`` in this order (:meth:`StoreTemplates.reserve`)."""
    global _SHARED_TEMPLATES
    with _SHARED_LOCK:
        if _SHARED_TEMPLATES is None:
            _SHARED_TEMPLATES = StoreTemplates()
        return _SHARED_TEMPLATES.reserve(scenarios, slack, grow_only=grow_only)


def release_store_templates() -> int:
    """Let go of this process's store templates (their images and plans); returns how many images were dropped.

    A run calls this once its samples are done: scoring and the report open no
    store, and on a LongMemEval S suite the images alone were up to their byte
    bound (256 MB then), held through the report. A later :func:`open_seeded_store`
    seeds again from nothing, so this changes what is cached, never a store.
    """
    global _SHARED_TEMPLATES
    with _SHARED_LOCK:
        held, _SHARED_TEMPLATES = _SHARED_TEMPLATES, None
    return 0 if held is None else len(held._images)


def probe_policy(scenario: Scenario) -> tuple[MemoryPolicy, RunContext]:
    """The Host inputs of the probe run: its memory policy and its run context."""
    probe = scenario.probe
    policy = MemoryPolicy(enabled=probe.policy.enabled, agent_read_enabled=probe.policy.agent_read_enabled)
    return policy, RunContext(workspace_key=probe.workspace, incognito=probe.incognito)


def probe_denial(scenario: Scenario) -> DenialReason | None:
    """Why the probe run may not read memory (incognito, disabled, reads off), or None when it may.

    Every arm that brings earlier conversations into the prompt, by tools, by a
    memory file or by pasted transcripts, applies this same gate.
    """
    return admission(*probe_policy(scenario))
