"""Checks beyond the schema, problem records, and ``recall-eval validate``.

The pydantic models check each field; this module checks what only the whole
scenario can tell: sources naming real session turns, items named by
``relevant_items`` and ``supersedes``, times in order, regexes that compile,
items the store itself would refuse (by calling the store's own
``validate_item_input``, never a copy of its rules), and a few smells that are
warnings rather than errors (no distractor, the answer already in the probe
history, ``abstain`` together with ``must_contain_*``).

Every check is a pure function of a :class:`~harness.scenarios.models.Scenario`
returning :class:`Finding` records located by field path; the loader turns
them into :class:`Problem` records with a file and a line.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from harness.scenarios.models import DISTRACTOR_ROLES, AnswerCheck, Category, ItemSpec, Scenario

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
    findings: list[Finding] = []
    for check in (_check_ids, _check_sources, _check_references, _check_times, _check_expect, _check_smells):
        findings.extend(check(scenario))
    findings.extend(_check_store_rules(scenario))
    return findings


def _duplicates(values: list[str]) -> set[str]:
    return {value for value, count in Counter(values).items() if count > 1}


def _check_ids(scenario: Scenario) -> Iterator[Finding]:
    for name, objects in (("sessions", scenario.sessions), ("items", scenario.items)):
        seen: set[str] = set()
        for index, obj in enumerate(objects):
            if obj.id in seen:
                yield Finding((name, index, "id"), f"duplicate id: another entry of {name} already uses it", obj.id)
            seen.add(obj.id)
    turn_lists = [(("sessions", i), s.turns) for i, s in enumerate(scenario.sessions)]
    turn_lists.append((("probe",), scenario.probe.history))
    for prefix, turns in turn_lists:
        key = "history" if prefix == ("probe",) else "turns"
        dupes = _duplicates([turn.id or "" for turn in turns])
        for index, turn in enumerate(turns):
            if turn.id in dupes:
                yield Finding(
                    (*prefix, key, index, "id"),
                    "duplicate turn id (unset ids default to t1, t2, ... / h1, h2, ... by position)",
                    turn.id,
                )


def _check_sources(scenario: Scenario) -> Iterator[Finding]:
    sessions = {session.id: session for session in scenario.sessions}
    for i, item in enumerate(scenario.items):
        for j, source in enumerate(item.sources):
            session = sessions.get(source.session)
            if session is None:
                known = ", ".join(sorted(sessions)) or "none"
                yield Finding(("items", i, "sources", j, "session"), f"no session has this id (sessions: {known})", source.session)
                continue
            turn_ids = [turn.id for turn in session.turns]
            if source.turn not in turn_ids:
                yield Finding(
                    ("items", i, "sources", j, "turn"),
                    f"session {session.id!r} has no turn with this id (turns: {', '.join(map(str, turn_ids))})",
                    source.turn,
                )
            if item.workspace is not None and session.workspace not in (None, item.workspace):
                yield Finding(
                    ("items", i, "sources", j, "session"),
                    f"workspace item of {item.workspace!r} cites a session of workspace {session.workspace!r}",
                    source.session,
                    "warning",
                )


def _visible(item: ItemSpec, scenario: Scenario) -> bool:
    return item.workspace is None or item.workspace == scenario.probe.workspace


def _check_references(scenario: Scenario) -> Iterator[Finding]:
    items = {item.id: item for item in scenario.items}
    for i, item in enumerate(scenario.items):
        for j, other in enumerate(item.supersedes):
            if other == item.id:
                yield Finding(("items", i, "supersedes", j), "an item cannot supersede itself", other)
            elif other not in items:
                yield Finding(("items", i, "supersedes", j), "no item has this id", other)
    for j, item_id in enumerate(scenario.expect.relevant_items):
        loc = ("expect", "relevant_items", j)
        target = items.get(item_id)
        if target is None:
            yield Finding(loc, "no item has this id", item_id)
        elif target.state.value != "active":
            yield Finding(loc, "a relevant item must be active: archived items are never readable", item_id)
        elif not _visible(target, scenario):
            yield Finding(
                loc,
                f"a relevant item must be visible from the probe: it belongs to workspace {target.workspace!r}, "
                f"the probe runs in {scenario.probe.workspace!r}",
                item_id,
            )


def _effective_observed_at(item: ItemSpec, scenario: Scenario) -> int:
    """``observed_at``, or the start of the first source's session (0 if that session is missing)."""
    if item.observed_at is not None:
        return item.observed_at
    first = item.sources[0].session
    return next((s.started_at for s in scenario.sessions if s.id == first), 0)


def _when(millis: int) -> str:
    """``1772445600000`` -> ``1772445600000 (2026-03-02T10:00:00Z)``, for messages."""
    moment = _dt.datetime.fromtimestamp(millis / 1000, tz=_dt.timezone.utc)
    return f"{millis} ({moment.strftime('%Y-%m-%dT%H:%M:%SZ')})"


def _check_times(scenario: Scenario) -> Iterator[Finding]:
    probe_at = scenario.probe.started_at
    for i, session in enumerate(scenario.sessions):
        if session.started_at >= probe_at:
            yield Finding(("sessions", i, "started_at"), "an earlier session must start before probe.started_at", _when(session.started_at))
    for i, item in enumerate(scenario.items):
        observed = _effective_observed_at(item, scenario)
        if observed > probe_at:
            yield Finding(("items", i, "observed_at"), "an item cannot be observed after probe.started_at", _when(observed))
        previous = None
        for j, revision in enumerate(item.revisions):
            if previous is not None and revision.at < previous:
                yield Finding(("items", i, "revisions", j, "at"), "revisions must be in time order, oldest first", _when(revision.at))
            if revision.at > observed:
                yield Finding(
                    ("items", i, "revisions", j, "at"),
                    f"a revision must not be later than the item's observed_at {_when(observed)}, which dates the final content",
                    _when(revision.at),
                )
            previous = revision.at
            following = item.revisions[j + 1].content if j + 1 < len(item.revisions) else item.content
            if revision.content.strip() == following.strip():
                yield Finding(
                    ("items", i, "revisions", j, "content"),
                    "equals the content that follows it: that update would be a no-op and add no version",
                    revision.content,
                )


def _answer_checks(scenario: Scenario) -> Iterator[tuple[Loc, AnswerCheck]]:
    yield ("expect",), scenario.expect
    if scenario.expect.adherence is not None:
        yield ("expect", "adherence"), scenario.expect.adherence


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _check_expect(scenario: Scenario) -> Iterator[Finding]:
    expect = scenario.expect
    for prefix, check in _answer_checks(scenario):
        for name in ("must_match", "must_not_match"):
            for j, pattern in enumerate(getattr(check, name)):
                try:
                    re.compile(pattern, re.IGNORECASE)
                except re.error as exc:
                    yield Finding((*prefix, name, j), f"not a valid regular expression: {exc}", pattern)
        wanted = {_fold(text) for text in (*check.must_contain_any, *check.must_contain_all)}
        for j, text in enumerate(check.must_not_contain):
            if _fold(text) in wanted:
                yield Finding((*prefix, "must_not_contain", j), "also listed as required text: no answer can pass", text)
    wanted = {_fold(text) for text in (*expect.must_contain_any, *expect.must_contain_all)}
    for j, canary in enumerate(expect.canaries):
        if _fold(canary.text) in wanted:
            yield Finding(("expect", "canaries", j, "text"), "a canary is also required text: no answer can pass", canary.text)
    if expect.abstain and (expect.must_contain_any or expect.must_contain_all):
        yield Finding(
            ("expect", "abstain"),
            "abstain is true but must_contain_* asks for content: an abstention scenario usually checks only what must not appear",
            True,
            "warning",
        )


def _check_smells(scenario: Scenario) -> Iterator[Finding]:
    if not any(item.role in DISTRACTOR_ROLES for item in scenario.items):
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
    if scenario.category == Category.RECENT_HISTORY and not probe.history:
        yield Finding(("probe", "history"), "a recent_history scenario needs probe.history", severity="warning")
    readable = not tools_off
    visible = [item for item in scenario.items if readable and _visible(item, scenario) and item.state.value == "active"]
    for j, canary in enumerate(scenario.expect.canaries):
        if canary.kind != "leakage":
            continue
        needle = _fold(canary.text)
        holders = [item.id for item in visible if needle in _fold(item.content)]
        if holders:
            yield Finding(
                ("expect", "canaries", j, "text"),
                f"leakage canary appears in item(s) the probe may read: {', '.join(holders)}",
                canary.text,
                "warning",
            )


def _check_store_rules(scenario: Scenario) -> Iterator[Finding]:
    """Ask the store whether it accepts every content state of every item."""
    from memory_tools import MemoryValidationError, validate_item_input

    from harness.scenarios.seeding import item_input

    for i, spec in enumerate(scenario.items):
        try:
            base = item_input(spec, scenario)
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
