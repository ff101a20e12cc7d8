"""Checks that ids name what they should: unique ids, sources naming real session turns, ``supersedes``,
``item_roles`` and ``relevant_items`` naming real items, and relevant items the probe can see.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from harness.scenarios.models import (
    HISTORY_TURN_PREFIX,
    SESSION_TURN_PREFIX,
    LifecycleState,
)
from harness.scenarios.problems import Finding, Loc
from harness.scenarios.validation.fields import SharedIndex, did_you_mean, field_of, ident_of, list_field, turn_ids_of


def check_ids(parts: SharedIndex) -> Iterator[Finding]:
    for name, entries in (("sessions", parts.sessions), ("items", parts.items)):
        first: dict[str, int] = {}
        for index, obj in enumerate(entries or []):
            ident = ident_of(field_of(obj, "id"))
            if ident is None:
                continue
            if ident in first:
                yield Finding((name, index, "id"), f"duplicate id: {name}[{first[ident]}] already uses it", ident)
            first.setdefault(ident, index)
    turn_lists: list[tuple[Loc, list[str | None], str]] = [
        (("sessions", i, "turns"), ids or [], SESSION_TURN_PREFIX) for i, ids in enumerate(parts.turn_ids)
    ]
    yield from _duplicate_turns(turn_lists)


def check_history_ids(probe: Any) -> Iterator[Finding]:
    history = turn_ids_of(list_field(probe, "history") or [], HISTORY_TURN_PREFIX)
    yield from _duplicate_turns([(("probe", "history"), history, HISTORY_TURN_PREFIX)])


def _duplicate_turns(turn_lists: list[tuple[Loc, list[str | None], str]]) -> Iterator[Finding]:
    for prefix, ids, letter in turn_lists:
        dupes = _duplicates(ids)
        for index, ident in enumerate(ids):
            if ident in dupes:
                yield Finding(
                    (*prefix, index, "id"),
                    f"duplicate turn id (unset ids default to {letter}1, {letter}2, ... by position)",
                    ident,
                )


def _duplicates(values: list[str | None]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for value in values:
        if value is not None:
            if value in seen:
                repeated.add(value)
            seen.add(value)
    return repeated


def check_sources(parts: SharedIndex) -> Iterator[Finding]:
    if parts.sessions is None:
        return
    by_id = parts.session_ids
    for i, item in enumerate(parts.items or []):
        workspace = ident_of(field_of(item, "workspace"))
        for j, source in enumerate(list_field(item, "sources") or []):
            name = ident_of(field_of(source, "session"))
            if name is None:
                continue
            if name not in by_id:
                known = ", ".join(sorted(by_id)) or "none"
                yield Finding(
                    ("items", i, "sources", j, "session"),
                    f"no session has this id{did_you_mean(name, by_id)} (sessions: {known})",
                    name,
                )
                continue
            index, session = by_id[name]
            turn_ids = parts.turn_ids[index]
            turn = ident_of(field_of(source, "turn"))
            if turn_ids is not None and turn is not None:
                if turn not in turn_ids:
                    known_turns = [t for t in turn_ids if t is not None]
                    yield Finding(
                        ("items", i, "sources", j, "turn"),
                        f"session {name!r} has no turn with this id{did_you_mean(turn, known_turns)} "
                        f"(turns: {', '.join(known_turns)})",
                        turn,
                    )
            session_workspace = ident_of(field_of(session, "workspace"))
            if workspace is not None and session_workspace is not None and session_workspace != workspace:
                yield Finding(
                    ("items", i, "sources", j, "session"),
                    f"workspace item of {workspace!r} cites a session of workspace {session_workspace!r}",
                    name,
                    "warning",
                )


def check_supersedes(parts: SharedIndex) -> Iterator[Finding]:
    items = parts.items
    if items is None:
        return
    by_id = parts.item_ids
    for i, item in enumerate(items):
        own = ident_of(field_of(item, "id"))
        for j, other in enumerate(list_field(item, "supersedes") or []):
            other = ident_of(other)
            if other is None:
                continue
            if other == own:
                yield Finding(("items", i, "supersedes", j), "an item cannot supersede itself", other)
            elif other not in by_id:
                yield Finding(("items", i, "supersedes", j), f"no item has this id{did_you_mean(other, by_id)}", other)


def check_item_roles(parts: SharedIndex, roles: Any) -> Iterator[Finding]:
    if parts.items is None or not isinstance(roles, dict):
        return
    for item_id in roles:
        if ident_of(item_id) is not None and item_id not in parts.item_ids:
            yield Finding(("item_roles", item_id), f"no item has this id{did_you_mean(item_id, parts.item_ids)}", item_id)


def check_relevant(parts: SharedIndex, probe: Any, expect: Any) -> Iterator[Finding]:
    if parts.items is None:
        return
    by_id = parts.item_ids
    raw_workspace = field_of(probe, "workspace")
    probe_workspace = ident_of(raw_workspace)
    known_probe = isinstance(probe, (dict, BaseModel)) and (raw_workspace is None or probe_workspace is not None)
    for j, item_id in enumerate(list_field(expect, "relevant_items") or []):
        item_id = ident_of(item_id)
        if item_id is None:
            continue
        loc = ("expect", "relevant_items", j)
        if item_id not in by_id:
            yield Finding(loc, f"no item has this id{did_you_mean(item_id, by_id)}", item_id)
            continue
        target = by_id[item_id][1]
        workspace = ident_of(field_of(target, "workspace"))
        if field_of(target, "state") == LifecycleState.ARCHIVED:
            yield Finding(loc, "a relevant item must be active: archived items are never readable", item_id)
        elif workspace is not None and known_probe and probe_workspace != workspace:
            yield Finding(
                loc,
                f"a relevant item must be visible from the probe: it belongs to workspace {workspace!r}, "
                f"the probe runs in {probe_workspace!r}",
                item_id,
            )
