"""Checks beyond the schema, problem records, and ``recall-eval validate``.

The pydantic models check each field; this module checks what only the whole
scenario can tell: sources naming real session turns, items named by
``relevant_items`` and ``supersedes``, times in order, regexes that compile,
items the store itself would refuse (by calling the store's own
``validate_item_input``, never a copy of its rules), and a few smells that are
warnings rather than errors (no distractor, the answer already in the probe
history, ``abstain`` together with ``must_contain_*``).

The cross-field checks come in two halves: those of the sessions and items
alone (:func:`check_shared_data`, run once per conversation file) and those of
one probe against them (:func:`check_probe_data`, run per probe). Every check
is a pure function returning :class:`Finding` records located by field path; the loader turns them into :class:`Problem` records with a file
and a line. The cross-field checks (:func:`check_data`) read a
:class:`~harness.scenarios.models.Scenario` or, when the models refuse a file,
the raw mapping that parsed (:func:`check_partial`), so one ``validate`` shows
every problem; the smells need a valid scenario. Suggestions ("did you mean
...?") come from the ids the scenario really has.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import difflib
import itertools
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from harness.scenarios.models import (
    CATEGORY_PATTERN,
    DISTRACTOR_ROLES,
    HISTORY_TURN_PREFIX,
    ID_PATTERN,
    SESSION_TURN_PREFIX,
    Category,
    ItemSpec,
    LifecycleState,
    Scenario,
    Session,
    to_millis,
)

Severity = Literal["error", "warning"]
Loc = tuple[str | int, ...]

_VALUE_WIDTH = 80


def format_loc(loc: Loc) -> str:
    """``("items", 2, "keys", 0, "type")`` -> ``items[2].keys[0].type``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def format_value(value: Any) -> str:
    """A short ``repr`` of an offending value, cut to one readable line."""
    text = repr(value)
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 3] + "..."


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a scenario file or suite.

    Attributes:
        file: The file at fault (a ``_defaults.yaml`` when the bad value came from there).
        line: 1-based line of the field, or None when it cannot be placed.
        field: Dotted field path such as ``items[2].keys[0].type``; empty for the whole file.
        message: What is wrong and, where it helps, how to fix it.
        value: ``repr`` of the offending value, or None.
        severity: ``error`` fails validation; ``warning`` is reported but passes.
    """

    file: str
    line: int | None
    field: str
    message: str
    value: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        head = f"{where}: {self.field}: " if self.field else f"{where}: "
        label = "warning: " if self.severity == "warning" else ""
        tail = f" (value: {self.value})" if self.value is not None else ""
        return f"{head}{label}{self.message}{tail}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file, self.line or 0, self.field, self.message)


class ScenarioError(Exception):
    """Scenario files or a suite have errors; ``problems`` lists every one of them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=Problem.sort_key)
        errors = [p for p in self.problems if p.severity == "error"] or self.problems
        shown = "\n".join(str(p) for p in errors[:10])
        more = f"\n... and {len(errors) - 10} more" if len(errors) > 10 else ""
        super().__init__(f"{len(errors)} scenario error(s):\n{shown}{more}")


_NO_VALUE = object()


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem located inside one scenario by field path (no file yet)."""

    loc: Loc
    message: str
    value: Any = _NO_VALUE
    severity: Severity = "error"

    @property
    def has_value(self) -> bool:
        return self.value is not _NO_VALUE


def check_scenario(scenario: Scenario) -> list[Finding]:
    """Every cross-field, store-rule and smell check of one valid scenario."""
    findings = check_data(scenario)
    findings.extend(_check_smells(scenario))
    findings.extend(_check_store_rules(scenario.items, scenario))
    return findings


def check_data(data: Any) -> list[Finding]:
    """The cross-field checks, on a :class:`Scenario` or on the raw mapping the models refused.

    Ids, references, time order, regexes and required-versus-forbidden text
    need only the parts that parsed, so ``validate`` runs them even when the
    models reject the file and one pass shows every problem. Values of the
    wrong shape are skipped here (the models report them), never guessed at.
    """
    shared = SharedIndex.of(data)
    return check_shared_data(shared) + check_probe_data(data, shared)


def check_shared_data(shared: SharedIndex) -> list[Finding]:
    """The checks of the sessions and items alone: ids, sources, supersedes, item times and revisions.

    A conversation file runs these once for all its probes.
    """
    findings: list[Finding] = []
    for check in (_check_ids, _check_sources, _check_supersedes, _check_item_times):
        findings.extend(check(shared))
    return findings


def check_probe_data(data: Any, shared: SharedIndex, *, blame_probe: bool = False) -> list[Finding]:
    """The checks of one probe (``data``: a scenario or a conversation's probe entry) against ``shared``.

    History turn ids, ``relevant_items`` and ``item_roles`` naming real items,
    the probe after every session and item, the expectation's regexes and
    contradictions, the category. ``blame_probe`` puts a time-order error on
    ``probe.started_at`` (a conversation's probe: the sessions are right for
    the other probes) instead of on the session or item.
    """
    probe, expect = _get(data, "probe"), _get(data, "expect")
    findings: list[Finding] = list(_check_category(data))
    findings.extend(_check_history_ids(probe))
    findings.extend(_check_relevant(shared, probe, expect))
    findings.extend(_check_item_roles(shared, _get(data, "item_roles")))
    findings.extend(_check_probe_times(shared, probe, blame_probe))
    findings.extend(_check_expect(expect))
    return findings


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
        sessions, items = _list(data, "sessions"), _list(data, "items")
        turn_ids: list[list[str | None] | None] = []
        starts: list[tuple[int, int]] = []
        for index, session in enumerate(sessions or []):
            turns = _list(session, "turns")
            turn_ids.append(None if turns is None else _turn_ids(turns, SESSION_TURN_PREFIX))
            started = _millis(_get(session, "started_at"))
            if started is not None:
                starts.append((started, index))
        session_ids = _by_id(sessions or [])
        times = []
        for index, item in enumerate(items or []):
            observed = _millis(_get(item, "observed_at"))
            if observed is not None:
                times.append((observed, index))
        starts.sort(reverse=True)
        times.sort(reverse=True)
        return cls(sessions, items, session_ids, _by_id(items or []), turn_ids, starts, times)


def check_partial(data: dict[str, Any]) -> list[Finding]:
    """What can still be checked of a scenario the models refused: :func:`check_data`,
    then the store's rules for every item that is valid on its own."""
    return check_data(data) + check_store_partial(data)


def check_store_partial(data: dict[str, Any]) -> list[Finding]:
    """The store's rules for every item of a refused mapping that is valid on its own."""
    items = data.get("items")
    if not isinstance(items, list):
        return []
    sessions = [_valid(Session, raw) for raw in _list(data, "sessions") or []]
    context = _Sessions(data.get("id"), [session for session in sessions if session is not None])
    specs = [_valid(ItemSpec, raw) for raw in items]
    return list(_check_store_rules(specs, context))


def check_items(items: Sequence[ItemSpec], sessions: Sequence[Session], owner: Any) -> list[Finding]:
    """The store's rules for validated items (a conversation's, checked once for all its probes)."""
    return list(_check_store_rules(items, _Sessions(owner, list(sessions))))


@dataclass(frozen=True, slots=True)
class _Sessions:
    """The parts of a scenario :func:`~harness.scenarios.seeding.item_input` reads."""

    id: Any
    sessions: list[Session]


def _valid(model: type[BaseModel], raw: Any) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


def _get(obj: Any, name: str) -> Any:
    """Field ``name`` of a model or a raw mapping (None when absent or not a mapping).

    A pydantic model keeps its fields in ``__dict__``; plain YAML values
    (lists, strings, numbers, dates) have none, so they read as None.
    """
    if obj.__class__ is dict:
        return obj.get(name)
    fields = getattr(obj, "__dict__", None)
    return fields.get(name) if fields is not None else None


def _list(obj: Any, name: str) -> list[Any] | None:
    """A list field, ``[]`` when absent, None when it holds something else."""
    value = _get(obj, name)
    if value is None:
        return []
    return value if isinstance(value, list) else None


_IDENTIFIER = re.compile(ID_PATTERN).fullmatch
_CATEGORY = re.compile(CATEGORY_PATTERN).fullmatch


def _ident(value: Any) -> str | None:
    """An id or workspace key the models would accept, else None (they report it)."""
    return value if value.__class__ is str and _IDENTIFIER(value) is not None else None


def _millis(value: Any) -> int | None:
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


def _turn_ids(turns: list[Any], prefix: str) -> list[str | None]:
    """Each turn's id, defaulted by position as the models do (``t1``, ``h2``...); None when unusable."""
    ids: list[str | None] = []
    for position, turn in enumerate(turns, start=1):
        ident = _get(turn, "id")
        if ident is None:
            ids.append(f"{prefix}{position}" if turn.__class__ is dict else None)
        else:
            ids.append(_ident(ident))
    return ids


def _by_id(entries: list[Any]) -> dict[str, tuple[int, Any]]:
    """Entries with a string id, by id (the first wins): index and entry."""
    found: dict[str, tuple[int, Any]] = {}
    for index, entry in enumerate(entries):
        ident = _ident(_get(entry, "id"))
        if ident is not None:
            found.setdefault(ident, (index, entry))
    return found


def _did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest choice, or nothing."""
    if not isinstance(word, str):
        return ""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def _check_ids(parts: SharedIndex) -> Iterator[Finding]:
    for name, entries in (("sessions", parts.sessions), ("items", parts.items)):
        first: dict[str, int] = {}
        for index, obj in enumerate(entries or []):
            ident = _ident(_get(obj, "id"))
            if ident is None:
                continue
            if ident in first:
                yield Finding((name, index, "id"), f"duplicate id: {name}[{first[ident]}] already uses it", ident)
            first.setdefault(ident, index)
    turn_lists = [(("sessions", i, "turns"), ids or [], SESSION_TURN_PREFIX) for i, ids in enumerate(parts.turn_ids)]
    yield from _duplicate_turns(turn_lists)


def _check_history_ids(probe: Any) -> Iterator[Finding]:
    history = _turn_ids(_list(probe, "history") or [], HISTORY_TURN_PREFIX)
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


def _check_sources(parts: SharedIndex) -> Iterator[Finding]:
    if parts.sessions is None:
        return
    by_id = parts.session_ids
    for i, item in enumerate(parts.items or []):
        workspace = _ident(_get(item, "workspace"))
        for j, source in enumerate(_list(item, "sources") or []):
            name = _ident(_get(source, "session"))
            if name is None:
                continue
            if name not in by_id:
                known = ", ".join(sorted(by_id)) or "none"
                yield Finding(
                    ("items", i, "sources", j, "session"),
                    f"no session has this id{_did_you_mean(name, by_id)} (sessions: {known})",
                    name,
                )
                continue
            index, session = by_id[name]
            turn_ids = parts.turn_ids[index]
            turn = _ident(_get(source, "turn"))
            if turn_ids is not None and turn is not None:
                if turn not in turn_ids:
                    turn_ids = [t for t in turn_ids if t is not None]
                    yield Finding(
                        ("items", i, "sources", j, "turn"),
                        f"session {name!r} has no turn with this id{_did_you_mean(turn, turn_ids)} "
                        f"(turns: {', '.join(turn_ids)})",
                        turn,
                    )
            session_workspace = _ident(_get(session, "workspace"))
            if workspace is not None and session_workspace is not None and session_workspace != workspace:
                yield Finding(
                    ("items", i, "sources", j, "session"),
                    f"workspace item of {workspace!r} cites a session of workspace {session_workspace!r}",
                    name,
                    "warning",
                )


def _check_supersedes(parts: SharedIndex) -> Iterator[Finding]:
    items = parts.items
    if items is None:
        return
    by_id = parts.item_ids
    for i, item in enumerate(items):
        own = _ident(_get(item, "id"))
        for j, other in enumerate(_list(item, "supersedes") or []):
            other = _ident(other)
            if other is None:
                continue
            if other == own:
                yield Finding(("items", i, "supersedes", j), "an item cannot supersede itself", other)
            elif other not in by_id:
                yield Finding(("items", i, "supersedes", j), f"no item has this id{_did_you_mean(other, by_id)}", other)


def _check_item_roles(parts: SharedIndex, roles: Any) -> Iterator[Finding]:
    if parts.items is None or not isinstance(roles, dict):
        return
    for item_id in roles:
        if _ident(item_id) is not None and item_id not in parts.item_ids:
            yield Finding(("item_roles", item_id), f"no item has this id{_did_you_mean(item_id, parts.item_ids)}", item_id)


def _check_relevant(parts: SharedIndex, probe: Any, expect: Any) -> Iterator[Finding]:
    if parts.items is None:
        return
    by_id = parts.item_ids
    raw_workspace = _get(probe, "workspace")
    probe_workspace = _ident(raw_workspace)
    known_probe = isinstance(probe, (dict, BaseModel)) and (raw_workspace is None or probe_workspace is not None)
    for j, item_id in enumerate(_list(expect, "relevant_items") or []):
        item_id = _ident(item_id)
        if item_id is None:
            continue
        loc = ("expect", "relevant_items", j)
        if item_id not in by_id:
            yield Finding(loc, f"no item has this id{_did_you_mean(item_id, by_id)}", item_id)
            continue
        target = by_id[item_id][1]
        workspace = _ident(_get(target, "workspace"))
        if _get(target, "state") == LifecycleState.ARCHIVED:
            yield Finding(loc, "a relevant item must be active: archived items are never readable", item_id)
        elif workspace is not None and known_probe and probe_workspace != workspace:
            yield Finding(
                loc,
                f"a relevant item must be visible from the probe: it belongs to workspace {workspace!r}, "
                f"the probe runs in {probe_workspace!r}",
                item_id,
            )


def _when(millis: int) -> str:
    """``1772445600000`` -> ``1772445600000 (2026-03-02T10:00:00Z)``, for messages."""
    try:
        moment = _dt.datetime.fromtimestamp(millis / 1000, tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{millis} (past year 9999)"
    return f"{millis} ({moment.strftime('%Y-%m-%dT%H:%M:%SZ')})"


def _check_probe_times(parts: SharedIndex, probe: Any, blame_probe: bool) -> Iterator[Finding]:
    """Sessions start before the probe and items are observed no later than it.

    The error sits on the session's or item's time (one story per file), or
    with ``blame_probe`` on ``probe.started_at`` naming the latest of them (a
    conversation: the shared times are right for the probes that come later).
    """
    probe_at = _millis(_get(probe, "started_at"))
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


def _check_item_times(parts: SharedIndex) -> Iterator[Finding]:
    """Times in story order; each error sits on the field that breaks the order and names the other one.

    An item's revisions are oldest first and no later than its
    ``observed_at``, which lies no earlier than the start of its source
    sessions (the probe's side is :func:`_check_probe_times`). An
    ``observed_at`` left to its default (the first source's session start)
    is never blamed: the session's own ``started_at`` is.
    """
    by_id = parts.session_ids
    for i, item in enumerate(parts.items or []):
        observed = _millis(_get(item, "observed_at"))
        observed_name = f"items[{i}].observed_at"
        sources = _list(item, "sources") or []
        if observed is not None:
            for j, source in enumerate(sources):
                index, session = by_id.get(_ident(_get(source, "session")) or "", (None, None))
                started = _millis(_get(session, "started_at"))
                if started is not None and observed < started:
                    yield Finding(
                        ("items", i, "observed_at"),
                        f"must not precede sessions[{index}].started_at {_when(started)}: an item cannot be observed "
                        f"before the session it came from (sources[{j}]) started",
                        _when(observed),
                    )
                    break
        elif _get(item, "observed_at") is None and sources:
            index, session = by_id.get(_ident(_get(sources[0], "session")) or "", (None, None))
            observed = _millis(_get(session, "started_at"))
            observed_name += f" (by default sessions[{index}].started_at, the start of its first source's session)"
        previous: tuple[int, int] | None = None
        for j, revision in enumerate(_list(item, "revisions") or []):
            at = _millis(_get(revision, "at"))
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
        revisions = _list(item, "revisions") or []
        for j, revision in enumerate(revisions):
            content = _get(revision, "content")
            following = _get(revisions[j + 1], "content") if j + 1 < len(revisions) else _get(item, "content")
            if isinstance(content, str) and isinstance(following, str) and content.strip() == following.strip():
                yield Finding(
                    ("items", i, "revisions", j, "content"),
                    "equals the content that follows it: that update would be a no-op and add no version",
                    content,
                )


#: A lone number: scoring matches it with digit edges, never as a substring (as ``harness.score.scoring``'s).
_NUMBER = re.compile(r"[+-]?\d+(?:[.,:' ]\d+)*%?")


def _strings(obj: Any, name: str) -> list[Any]:
    return _list(obj, name) or []


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _groups(check: Any) -> list[tuple[Loc, list[Any]]]:
    """The check's synonym groups with their places: each ``must_contain_groups`` entry, and
    ``must_contain_any`` as one group (an answer passes it with any one of its entries)."""
    groups: list[tuple[Loc, list[Any]]] = [
        (("must_contain_groups", j), group)
        for j, group in enumerate(_strings(check, "must_contain_groups")) if isinstance(group, list) and group
    ]
    any_of = _strings(check, "must_contain_any")
    if any_of:
        groups.append((("must_contain_any",), any_of))
    return groups


def _wanted(check: Any) -> set[str]:
    """Texts every passing answer must hold: ``must_contain_all`` entries and one-synonym groups."""
    texts = [*_strings(check, "must_contain_all")]
    texts += [group[0] for _, group in _groups(check) if len(group) == 1]
    return {_fold(text) for text in texts if isinstance(text, str)}


def _check_expect(expect: Any) -> Iterator[Finding]:
    checks: list[tuple[Loc, Any]] = [(("expect",), expect)]
    adherence = _get(expect, "adherence")
    if adherence is not None:
        checks.append((("expect", "adherence"), adherence))
    for prefix, check in checks:
        for name in ("must_match", "must_not_match"):
            for j, pattern in enumerate(_strings(check, name)):
                if not isinstance(pattern, str):
                    continue
                try:
                    re.compile(pattern, re.IGNORECASE)
                except re.error as exc:
                    yield Finding((*prefix, name, j), f"not a valid regular expression: {exc}", pattern)
        wanted = _wanted(check)
        forbidden: set[str] = set()
        for j, text in enumerate(_strings(check, "must_not_contain")):
            if isinstance(text, str):
                forbidden.add(_fold(text))
                if _fold(text) in wanted:
                    yield Finding((*prefix, "must_not_contain", j), "also listed as required text: no answer can pass", text)
        for loc, group in _groups(check):
            if len(group) > 1 and all(isinstance(t, str) and _fold(t) in forbidden for t in group):
                what = "entry" if loc[0] == "must_contain_any" else "synonym of this group"
                yield Finding((*prefix, *loc), f"every {what} is also in must_not_contain: no answer can pass", group)
    wanted = _wanted(expect)
    groups = [group for _, group in _groups(expect)]
    for j, canary in enumerate(_strings(expect, "canaries")):
        text = _get(canary, "text")
        if not isinstance(text, str):
            continue
        if _fold(text) in wanted or any(all(_states(t, text) for t in group) for group in groups):
            yield Finding(("expect", "canaries", j, "text"), "a canary is also required text: no answer can pass", text)


def _states(synonym: Any, canary: str) -> bool:
    """Does an answer holding ``synonym`` hold ``canary``? Equal, or contained in it when the canary is
    long enough that scoring matches it as a plain substring (short ones need word edges there)."""
    if not isinstance(synonym, str):
        return False
    needle, text = _fold(canary), _fold(synonym)
    return needle == text or (len(needle) > 3 and not _NUMBER.fullmatch(needle) and needle in text)


def _visible(item: ItemSpec, scenario: Scenario) -> bool:
    return item.workspace is None or item.workspace == scenario.probe.workspace


def _check_category(data: Any) -> Iterator[Finding]:
    """An undeclared category is a warning: a typo would otherwise open a category of its own in every report."""
    category = _get(data, "category")
    declared = _get(data, "categories")
    declared = declared if isinstance(declared, dict) else {}
    builtin = [c.value for c in Category]
    if not isinstance(category, str) or _CATEGORY(category) is None or category in builtin or category in declared:
        return
    known = [*builtin, *(name for name in declared if isinstance(name, str))]
    yield Finding(
        ("category",),
        f"unknown category{_did_you_mean(category, known)}: declare it in a _defaults.yaml under "
        f"`categories: {{{category}: <one sentence>}}`, or use a built-in one ({', '.join(builtin)})",
        category,
        "warning",
    )


def check_conversation_probe(data: Any, scenario: Scenario | None, shared: SharedIndex) -> list[Finding]:
    """Every check of one probe of a conversation: :func:`check_probe_data` (times blamed on the probe),
    then the smells when the probe built a valid ``scenario``."""
    findings = check_probe_data(data, shared, blame_probe=True)
    if scenario is not None:
        findings.extend(_check_smells(scenario, conversation=True))
    return findings


def _check_smells(scenario: Scenario, *, conversation: bool = False) -> Iterator[Finding]:
    """Warnings. In a conversation (``conversation``) every item the probe does not name as
    relevant already makes retrieval choose, so no distractor role is asked for."""
    expect = scenario.expect
    if expect.abstain and (expect.must_contain_any or expect.must_contain_all or expect.must_contain_groups):
        yield Finding(
            ("expect", "abstain"),
            "abstain is true but must_contain_* asks for content: an abstention scenario usually checks only what must not appear",
            True,
            "warning",
        )
    relevant = set(expect.relevant_items) if conversation else None
    has_distractor = any(
        item.role in DISTRACTOR_ROLES or (relevant is not None and item.role == "other" and item.id not in relevant)
        for item in scenario.items
    )
    if not has_distractor:
        yield Finding(
            ("items",),
            "no distractor: add at least one item with role distractor, stale or canary so retrieval has to choose",
            severity="warning",
        )
    probe = scenario.probe
    tools_off = probe.incognito or not (probe.policy.enabled and probe.policy.agent_read_enabled)
    if tools_off and scenario.expect.relevant_items:
        yield Finding(
            ("expect", "relevant_items"),
            "the probe's policy keeps memory tools away, so no item can be retrieved",
            severity="warning",
        )
    if scenario.category != Category.RECENT_HISTORY and probe.history and not tools_off:
        history = _fold(" ".join(turn.content for turn in probe.history))
        for name in ("must_contain_any", "must_contain_all"):
            for j, text in enumerate(getattr(scenario.expect, name)):
                if _fold(text) and _fold(text) in history:
                    yield Finding(
                        ("expect", name, j),
                        "the expected answer already appears in probe.history, so the history-only arm can answer "
                        "without memory (fine only for category recent_history)",
                        text,
                        "warning",
                    )
        for j, group in enumerate(scenario.expect.must_contain_groups):
            if any(_fold(text) and _fold(text) in history for text in group):
                yield Finding(
                    ("expect", "must_contain_groups", j),
                    "a synonym of this group already appears in probe.history, so the history-only arm can answer "
                    "without memory (fine only for category recent_history)",
                    group,
                    "warning",
                )
    if scenario.category == Category.RECENT_HISTORY and not probe.history:
        yield Finding(("probe", "history"), "a recent_history scenario needs probe.history", severity="warning")
    leakage = [(j, canary) for j, canary in enumerate(scenario.expect.canaries) if canary.kind == "leakage"]
    if tools_off or not leakage:
        return
    visible = [item for item in scenario.items if _visible(item, scenario) and item.state is LifecycleState.ACTIVE]
    for j, canary in leakage:
        needle = _fold(canary.text)
        holders = [item.id for item in visible if needle in _fold(item.content)]
        if holders:
            yield Finding(
                ("expect", "canaries", j, "text"),
                f"leakage canary appears in item(s) the probe may read: {', '.join(holders)}",
                canary.text,
                "warning",
            )


def _check_store_rules(specs: Sequence[ItemSpec | None], scenario: Scenario | _Sessions) -> Iterator[Finding]:
    """Ask the store whether it accepts every content state of every item (None: an item the models refused)."""
    from memory_tools import MemoryValidationError, validate_item_input

    from harness.scenarios.seeding import item_input

    for i, spec in enumerate(specs):
        if spec is None:
            continue
        try:
            base = item_input(spec, scenario)  # type: ignore[arg-type]  # reads only .id and .sessions
        except ValueError:  # a missing source session, reported by _check_sources
            continue
        states = [(("items", i), base)]
        states += [
            (("items", i, "revisions", j, "content"), dataclasses.replace(base, content=revision.content))
            for j, revision in enumerate(spec.revisions)
        ]
        for loc, candidate in states:
            try:
                validate_item_input(candidate)
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
        return spec.revisions[int(loc[3])].content if loc[2] == "revisions" else _NO_VALUE
    value: Any = spec
    for part in _store_loc(loc, message)[2:]:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else _NO_VALUE
        else:
            value = getattr(value, part, _NO_VALUE)
        if value is _NO_VALUE:
            return _NO_VALUE
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def cli_validate(args: argparse.Namespace) -> int:
    """``recall-eval validate [PATH ...]``: print every problem, then a summary; 0 when there are no errors."""
    from harness.scenarios.loading import load_suite

    suite = load_suite(args.paths)
    for problem in suite.problems:
        print(problem)
    errors = sum(1 for p in suite.problems if p.severity == "error")
    warnings = len(suite.problems) - errors
    summary = f"{len(suite.files)} files, {len(suite.scenarios)} scenarios, {errors} errors, {warnings} warnings"
    print(summary, file=sys.stdout)
    return 1 if errors else 0
