"""Scope rules of memory_tools.policy: which items a run's workspace covers."""

from __future__ import annotations

import dataclasses

from memory_tools import item_in_scope
from memory_tools.model import Kind, LifecycleState, MemoryItem, Origin, ScopeType, StatementType, TemporalType
from memory_tools.policy import item_visible


def _item(scope_type: ScopeType, scope_key: str | None, state: LifecycleState = LifecycleState.ACTIVE) -> MemoryItem:
    return MemoryItem(
        item_id="i-1", version=1, content="tabs", kind=Kind.PREFERENCE, statement_type=StatementType.FACT,
        temporal_type=TemporalType.UNDATED, scope_type=scope_type, scope_key=scope_key, event_started_at=None,
        event_ended_at=None, observed_at=1, lifecycle_state=state, origin=Origin.USER_REQUESTED, content_hash="h",
        created_at=1, updated_at=1,
    )


def test_item_in_scope_covers_global_and_own_workspace_only() -> None:
    assert item_in_scope(_item(ScopeType.GLOBAL, None), None)
    assert item_in_scope(_item(ScopeType.GLOBAL, None), "ws-a")
    assert item_in_scope(_item(ScopeType.WORKSPACE, "ws-a"), "ws-a")
    assert not item_in_scope(_item(ScopeType.WORKSPACE, "ws-a"), "ws-b")
    assert not item_in_scope(_item(ScopeType.WORKSPACE, "ws-a"), "WS-A")
    assert not item_in_scope(_item(ScopeType.WORKSPACE, "ws-a"), None)


def test_archived_item_is_in_scope_but_not_visible() -> None:
    archived = _item(ScopeType.WORKSPACE, "ws-a", LifecycleState.ARCHIVED)
    assert item_in_scope(archived, "ws-a")
    assert not item_visible(archived, "ws-a")
    assert item_visible(dataclasses.replace(archived, lifecycle_state=LifecycleState.ACTIVE), "ws-a")
