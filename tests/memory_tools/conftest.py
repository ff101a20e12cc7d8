"""Shared fixtures of the Host tests: a seeded store and a store that counts reads."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from memory_tools.model import (
    ItemInput,
    KeyInput,
    KeyType,
    Kind,
    MemoryItemRecord,
    MemoryItemSource,
    ScopeType,
    TemporalType,
)
from memory_tools.policy import MemoryPolicy
from memory_tools.store import MemoryItemStore

READ_POLICY = MemoryPolicy(enabled=True, agent_read_enabled=True)


def source(n: int, session: str = "s-1") -> MemoryItemSource:
    return MemoryItemSource(session_id=session, run_id=f"r-{n}", turn_id=f"t-{n}", event_id=f"e-{n}")


def item(
    item_id: str,
    content: str,
    keys: Sequence[str | KeyInput],
    *,
    workspace: str | None = None,
    now: int = 1_000,
    kind: Kind = Kind.PREFERENCE,
    sources: Sequence[MemoryItemSource] = (),
    **fields: Any,
) -> ItemInput:
    """An ItemInput with fixed times (so ranking by updated_at is deterministic)."""
    return ItemInput(
        item_id=item_id,
        content=content,
        kind=kind,
        keys=tuple(KeyInput(k) if isinstance(k, str) else k for k in keys),
        sources=tuple(sources) or (source(now),),
        scope_type=ScopeType.WORKSPACE if workspace else ScopeType.GLOBAL,
        scope_key=workspace,
        observed_at=now,
        now=now,
        **fields,
    )


# id -> (visible from ws-a, visible from ws-b, visible with no workspace) is derivable from scope + state.
CORPUS: tuple[ItemInput, ...] = (
    item("g-coffee", "User drinks oat-milk flat whites.", ["coffee", "drink preference"], now=1_000),
    item("g-tea", "User drinks green tea in the afternoon.", ["tea", "drink"], now=2_000),
    item("g-coffee-old", "User drinks espresso (superseded).", ["coffee"], now=500),
    item("a-deploy", "Project A deploys to fly.io.", ["deploy target", "deploy"], workspace="ws-a", now=3_000,
         kind=Kind.CONTEXT),
    item("b-deploy", "Project B deploys to AWS: CANARY-B-DEPLOY.", ["deploy target"], workspace="ws-b", now=4_000,
         kind=Kind.CONTEXT),
    item("a-deploy-old", "Project A deployed to Heroku (archived).", ["deploy target"], workspace="ws-a", now=100,
         kind=Kind.CONTEXT),
    item("g-cjk", "用户喜欢燕麦拿铁。", ["偏好", "咖啡"], now=1_500),
    item("g-cjk-long", "用户的编辑器是 VSCode。", ["编辑器偏好"], now=1_600),
    item("a-mixed", "Project A front end is TypeScript, edited in VSCode.", ["TypeScript 偏好", "编辑器 VSCode"],
         workspace="ws-a", now=2_500, kind=Kind.KNOWLEDGE),
    item("a-code", "parseConfig in src/config.ts retries MAX_RETRIES=3 times.",
         [KeyInput("parseConfig", KeyType.CODE), KeyInput("src/config.ts", KeyType.CODE),
          KeyInput("MAX_RETRIES", KeyType.CODE)], workspace="ws-a", now=2_600, kind=Kind.KNOWLEDGE),
    item("g-trip", "User flies to Lisbon from 2024-05-01 to 2024-05-08.", ["trip", "lisbon"], now=5_000,
         kind=Kind.CONTEXT, temporal_type=TemporalType.INTERVAL, event_started_at=1_714_521_600_000,
         event_ended_at=1_715_126_400_000, sources=(source(1), source(2, "s-2"), source(3, "s-2"))),
)
ARCHIVED = ("g-coffee-old", "a-deploy-old")


class CountingStore:
    """Wraps a store and counts every read the Host makes."""

    def __init__(self, store: MemoryItemStore) -> None:
        self.store = store
        self.reads = 0

    def read_item(self, item_id: str) -> MemoryItemRecord | None:
        self.reads += 1
        return self.store.read_item(item_id)

    def search_by_keys(self, *args: Any, **kwargs: Any) -> list[MemoryItemRecord]:
        self.reads += 1
        return self.store.search_by_keys(*args, **kwargs)

    def search_by_keys_with_matches(self, *args: Any, **kwargs: Any) -> list[Any]:
        self.reads += 1
        return self.store.search_by_keys_with_matches(*args, **kwargs)


@pytest.fixture
def seeded_store() -> Iterator[MemoryItemStore]:
    with MemoryItemStore(":memory:") as store:
        store.bulk_create(list(CORPUS))
        for item_id in ARCHIVED:
            store.archive(item_id, now=6_000)
        yield store


@pytest.fixture
def counting_store(seeded_store: MemoryItemStore) -> CountingStore:
    return CountingStore(seeded_store)
