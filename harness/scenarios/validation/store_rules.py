"""Items the store itself would refuse, asked of the store's own rules (``check_item_input``: those of
``validate_item_input``, never a copy of them), every content state of every item.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any

from harness.scenarios.models import (
    ItemSpec,
    Scenario,
)
from harness.scenarios.problems import NO_VALUE, Finding, Loc
from harness.scenarios.validation.fields import Sessions


def check_store_rules(specs: Sequence[ItemSpec | None], scenario: Scenario | Sessions) -> Iterator[Finding]:
    """Ask the store whether it accepts every content state of every item (None: an item the models refused)."""
    from harness.scenarios.seeding import item_input, session_starts
    from memory_tools import MemoryValidationError, check_item_input

    starts = session_starts(scenario)  # type: ignore[arg-type]  # reads only .sessions
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        try:
            base = item_input(spec, scenario, starts)  # type: ignore[arg-type]  # reads only .id and .sessions
        except ValueError:  # a missing source session, reported by check_sources
            continue
        states: list[tuple[Loc, Any]] = [(("items", i), base)]
        states += [
            (("items", i, "revisions", j, "content"), dataclasses.replace(base, content=revision.content))
            for j, revision in enumerate(spec.revisions)
        ]
        for loc, candidate in states:
            try:
                check_item_input(candidate)
            except MemoryValidationError as exc:
                yield Finding(_store_loc(loc, str(exc)), f"the memory store refuses this item: {exc}", _store_value(spec, loc, str(exc)))


_STORE_FIELDS = {
    "content": "content",
    "event_started_at": "event_started_at",
    "event_ended_at": "event_ended_at",
    "temporal_type": "temporal_type",
    "observed_at": "observed_at",
    "keys": "keys",
    "sources": "sources",
    "scope_key": "workspace",
    "item_id": "id",
}


def _store_loc(loc: Loc, message: str) -> Loc:
    """Point a store error at the item field it names, when the item itself is at fault."""
    if len(loc) != 2:
        return loc
    match = re.match(r"\s*([a-z_]+)(?:\[(\d+)\](\.key\b)?)?", message)
    if match and match.group(1) in _STORE_FIELDS:
        field: Loc = (*loc, _STORE_FIELDS[match.group(1)])
        if match.group(2):
            field = (*field, int(match.group(2)))
        return (*field, "key") if match.group(3) else field
    return loc


def _store_value(spec: ItemSpec, loc: Loc, message: str) -> Any:
    if len(loc) > 2:
        return spec.revisions[int(loc[3])].content if loc[2] == "revisions" else NO_VALUE
    value: Any = spec
    for part in _store_loc(loc, message)[2:]:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else NO_VALUE
        else:
            value = getattr(value, part, NO_VALUE)
        if value is NO_VALUE:
            return NO_VALUE
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value
