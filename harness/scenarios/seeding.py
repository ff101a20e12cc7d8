"""Seed a memory store with a scenario's items, reproducibly.

Every item becomes one :class:`memory_tools.ItemInput`: ``item_id`` is the
spec's id; a ``workspace`` makes it a workspace item; each source becomes a
``MemoryItemSource`` with ``run_id`` ``<session>/run`` and ``event_id``
``<session>/<turn>``. Store times never come from the wall clock: ``now`` is
the item's ``observed_at`` (default: the start of its first source's session),
so two seedings of one scenario give identical stores.

The runner seeds a fresh store for every sample, so the common case (active
items without revisions) goes through a single ``bulk_create``.
"""

from __future__ import annotations

import dataclasses

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

from harness.scenarios.models import ItemSpec, Scenario


def _observed_at(spec: ItemSpec, scenario: Scenario) -> int:
    if spec.observed_at is not None:
        return spec.observed_at
    first = spec.sources[0].session
    for session in scenario.sessions:
        if session.id == first:
            return session.started_at
    raise ValueError(f"item {spec.id!r}: source session {first!r} is not in scenario {scenario.id!r}")


def item_input(spec: ItemSpec, scenario: Scenario) -> ItemInput:
    """The store input for the final state of ``spec`` (its current content).

    Raises:
        ValueError: The first source names a session the scenario lacks
            (validation reports this before seeding is ever reached).
    """
    observed_at = _observed_at(spec, scenario)
    return ItemInput(
        content=spec.content,
        kind=spec.kind,
        keys=tuple(KeyInput(k.key, k.type, k.origin) for k in spec.keys),
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


def seed_store(store: MemoryItemStore, scenario: Scenario) -> None:
    """Create every item of ``scenario`` in ``store`` (expected fresh).

    Active items without revisions are created in one ``bulk_create``. An item
    with revisions is created with its first revision's content at that
    revision's time, updated through the later revisions at their times, and
    to its final content at ``observed_at``; so its version is
    ``len(revisions) + 1``. Archived items are archived last, at ``observed_at``
    (one more version).
    """
    plain: list[ItemInput] = []
    staged: list[tuple[ItemSpec, ItemInput]] = []
    for spec in scenario.items:
        final = item_input(spec, scenario)
        if spec.revisions or spec.state is LifecycleState.ARCHIVED:
            staged.append((spec, final))
        else:
            plain.append(final)
    if plain:
        store.bulk_create(plain)
    for spec, final in staged:
        if spec.revisions:
            first = spec.revisions[0]
            store.create(dataclasses.replace(final, content=first.content, observed_at=first.at, now=first.at))
            for revision in spec.revisions[1:]:
                store.update(spec.id, content=revision.content, observed_at=revision.at, now=revision.at)
            store.update(spec.id, content=final.content, observed_at=final.observed_at, now=final.now)
        else:
            store.create(final)
        if spec.state is LifecycleState.ARCHIVED:
            store.archive(spec.id, now=final.now)


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
