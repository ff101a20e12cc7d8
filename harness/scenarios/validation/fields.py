"""Reading a scenario's fields whether it is a model or the raw mapping the models refused, and the sessions and items indexed once.

A value of the wrong shape reads as None (the models report it); nothing
here guesses.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.scenarios.field_types import CATEGORY_PATTERN, ID_PATTERN, to_millis
from harness.scenarios.models import SESSION_TURN_PREFIX, Session


@dataclass(frozen=True, slots=True)
class SharedIndex:
    """The sessions and items of a scenario or conversation (models or raw mappings), indexed once.

    ``sessions`` and ``items`` are None when they hold something other than a
    list (the models report that); the id maps keep the first entry of each
    id. ``session_starts`` and ``item_times`` hold every readable time, latest
    first, so a probe's time checks look only at what starts after it.
    """

    sessions: list[Any] | None
    items: list[Any] | None
    session_ids: dict[str, tuple[int, Any]]
    item_ids: dict[str, tuple[int, Any]]
    turn_ids: list[list[str | None] | None]
    session_starts: list[tuple[int, int]]
    item_times: list[tuple[int, int]]

    @classmethod
    def of(cls, data: Any) -> SharedIndex:
        sessions, items = list_field(data, "sessions"), list_field(data, "items")
        turn_ids: list[list[str | None] | None] = []
        starts: list[tuple[int, int]] = []
        for index, session in enumerate(sessions or []):
            turns = list_field(session, "turns")
            turn_ids.append(None if turns is None else turn_ids_of(turns, SESSION_TURN_PREFIX))
            started = millis_of(field_of(session, "started_at"))
            if started is not None:
                starts.append((started, index))
        session_ids = index_by_id(sessions or [])
        times = []
        for index, item in enumerate(items or []):
            observed = millis_of(field_of(item, "observed_at"))
            if observed is not None:
                times.append((observed, index))
        starts.sort(reverse=True)
        times.sort(reverse=True)
        return cls(sessions, items, session_ids, index_by_id(items or []), turn_ids, starts, times)


@dataclass(frozen=True, slots=True)
class Sessions:
    """The parts of a scenario :func:`~harness.scenarios.seeding.item_input` reads."""

    id: Any
    sessions: list[Session]


def valid_or_none(model: type[BaseModel], raw: Any) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


def field_of(obj: Any, name: str) -> Any:
    """Field ``name`` of a model or a raw mapping (None when absent or not a mapping).

    A pydantic model keeps its fields in ``__dict__``; plain YAML values
    (lists, strings, numbers, dates) have none, so they read as None.
    """
    if obj.__class__ is dict:
        return obj.get(name)
    fields = getattr(obj, "__dict__", None)
    return fields.get(name) if fields is not None else None


def list_field(obj: Any, name: str) -> list[Any] | None:
    """A list field, ``[]`` when absent, None when it holds something else."""
    value = field_of(obj, name)
    if value is None:
        return []
    return value if isinstance(value, list) else None


IDENTIFIER = re.compile(ID_PATTERN).fullmatch
CATEGORY = re.compile(CATEGORY_PATTERN).fullmatch


def ident_of(value: Any) -> str | None:
    """An id or workspace key the models would accept, else None (they report it)."""
    return value if value.__class__ is str and IDENTIFIER(value) is not None else None


def millis_of(value: Any) -> int | None:
    """A time as the models read it, or None when they would not accept it."""
    if value.__class__ is int:
        return value if value >= 0 else None
    try:
        value = to_millis(value)
    except (ValueError, TypeError, OverflowError):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def turn_ids_of(turns: list[Any], prefix: str) -> list[str | None]:
    """Each turn's id, defaulted by position as the models do (``t1``, ``h2``...); None when unusable."""
    ids: list[str | None] = []
    for position, turn in enumerate(turns, start=1):
        ident = field_of(turn, "id")
        if ident is None:
            ids.append(f"{prefix}{position}" if turn.__class__ is dict else None)
        else:
            ids.append(ident_of(ident))
    return ids


def index_by_id(entries: list[Any]) -> dict[str, tuple[int, Any]]:
    """Entries with a string id, by id (the first wins): index and entry."""
    found: dict[str, tuple[int, Any]] = {}
    for index, entry in enumerate(entries):
        ident = ident_of(field_of(entry, "id"))
        if ident is not None:
            found.setdefault(ident, (index, entry))
    return found


def did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest choice, or nothing."""
    if not isinstance(word, str):
        return ""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""
