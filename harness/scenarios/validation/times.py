"""Checks that times tell one story: sessions and items before the probe, an item observed no earlier than its
source sessions, revisions oldest first.
"""

from __future__ import annotations

import datetime as _dt
import itertools
from collections.abc import Iterator
from typing import Any

from harness.scenarios.problems import Finding
from harness.scenarios.validation.fields import SharedIndex, field_of, ident_of, list_field, millis_of


def _when(millis: int) -> str:
    """``1772445600000`` -> ``1772445600000 (2026-03-02T10:00:00Z)``, for messages."""
    try:
        moment = _dt.datetime.fromtimestamp(millis / 1000, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{millis} (past year 9999)"
    return f"{millis} ({moment.strftime('%Y-%m-%dT%H:%M:%SZ')})"


def check_probe_times(parts: SharedIndex, probe: Any, blame_probe: bool) -> Iterator[Finding]:
    """Sessions start before the probe and items are observed no later than it.

    The error sits on the session's or item's time (one story per file), or
    with ``blame_probe`` on ``probe.started_at`` naming the latest of them (a
    conversation: the shared times are right for the probes that come later).
    """
    probe_at = millis_of(field_of(probe, "started_at"))
    if probe_at is None:
        return
    late_sessions = list(itertools.takewhile(lambda pair: pair[0] >= probe_at, parts.session_starts))  # latest first
    late_items = list(itertools.takewhile(lambda pair: pair[0] > probe_at, parts.item_times))
    if blame_probe:
        if late_sessions:
            at, i = late_sessions[0]
            yield Finding(
                ("probe", "started_at"),
                f"must follow every earlier session: sessions[{i}].started_at is {_when(at)}"
                + (f" ({len(late_sessions)} sessions start at or after the probe)" if len(late_sessions) > 1 else ""),
                _when(probe_at),
            )
        if late_items:
            at, i = late_items[0]
            yield Finding(
                ("probe", "started_at"),
                f"must not precede items[{i}].observed_at {_when(at)}: an item cannot be observed after the probe"
                + (f" ({len(late_items)} items are)" if len(late_items) > 1 else ""),
                _when(probe_at),
            )
        return
    for started, i in sorted(late_sessions, key=lambda pair: pair[1]):
        yield Finding(
            ("sessions", i, "started_at"),
            f"an earlier session must start before probe.started_at {_when(probe_at)}",
            _when(started),
        )
    for observed, i in sorted(late_items, key=lambda pair: pair[1]):
        yield Finding(
            ("items", i, "observed_at"),
            f"an item cannot be observed after probe.started_at {_when(probe_at)}",
            _when(observed),
        )


def check_item_times(parts: SharedIndex) -> Iterator[Finding]:
    """Times in story order; each error sits on the field that breaks the order and names the other one.

    An item's revisions are oldest first and no later than its
    ``observed_at``, which lies no earlier than the start of its source
    sessions (the probe's side is :func:`check_probe_times`). An
    ``observed_at`` left to its default (the first source's session start)
    is never blamed: the session's own ``started_at`` is.
    """
    by_id = parts.session_ids
    for i, item in enumerate(parts.items or []):
        observed = millis_of(field_of(item, "observed_at"))
        observed_name = f"items[{i}].observed_at"
        sources = list_field(item, "sources") or []
        if observed is not None:
            for j, source in enumerate(sources):
                index, session = by_id.get(ident_of(field_of(source, "session")) or "", (None, None))
                started = millis_of(field_of(session, "started_at"))
                if started is not None and observed < started:
                    yield Finding(
                        ("items", i, "observed_at"),
                        f"must not precede sessions[{index}].started_at {_when(started)}: an item cannot be observed "
                        f"before the session it came from (sources[{j}]) started",
                        _when(observed),
                    )
                    break
        elif field_of(item, "observed_at") is None and sources:
            index, session = by_id.get(ident_of(field_of(sources[0], "session")) or "", (None, None))
            observed = millis_of(field_of(session, "started_at"))
            observed_name += f" (by default sessions[{index}].started_at, the start of its first source's session)"
        previous: tuple[int, int] | None = None
        for j, revision in enumerate(list_field(item, "revisions") or []):
            at = millis_of(field_of(revision, "at"))
            if at is None:
                continue
            loc = ("items", i, "revisions", j, "at")
            if previous is not None and at < previous[1]:
                yield Finding(
                    loc,
                    f"must not precede items[{i}].revisions[{previous[0]}].at {_when(previous[1])}: "
                    "revisions are oldest first",
                    _when(at),
                )
            if observed is not None and at > observed:
                yield Finding(
                    loc,
                    f"must not follow {observed_name} {_when(observed)}, which dates the final content",
                    _when(at),
                )
            previous = (j, at)
        revisions = list_field(item, "revisions") or []
        for j, revision in enumerate(revisions):
            content = field_of(revision, "content")
            following = field_of(revisions[j + 1], "content") if j + 1 < len(revisions) else field_of(item, "content")
            if isinstance(content, str) and isinstance(following, str) and content.strip() == following.strip():
                yield Finding(
                    ("items", i, "revisions", j, "content"),
                    "equals the content that follows it: that update would be a no-op and add no version",
                    content,
                )
