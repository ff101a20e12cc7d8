"""Conversation files: one conversation, many probes, each probe a scenario ``<conversation>/<probe>``.

A YAML mapping with a top-level ``probes:`` list is a conversation file;
everything else in it is the shared part (:class:`~harness.scenarios.models.Conversation`).
The folder form keeps the shared part in ``_conversation.yaml`` and the probes
in any number of ``*.yaml`` files beside it, each holding only ``probes:``.

The shared part is merged over the ``_defaults.yaml`` files, validated and
checked ONCE (sessions, items, sources, the store's rules); each selected
probe is validated only for its own part (``probe``, ``expect``, ``item_roles``
...) and its references into the shared part. Probes become ordinary
:class:`~harness.scenarios.models.Scenario` objects built with
``model_construct`` whose ``sessions`` and ``items`` are the conversation's own
list objects, so the agent loop, scoring and report see no difference.
Problems are placed at the probe's file and line (``probes[6].expect...``),
or at the shared part or a ``_defaults.yaml`` when the value came from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from harness.scenarios.conversation_models import Conversation, ProbeEntry
from harness.scenarios.documents import Document
from harness.scenarios.locating import locate, merge_defaults, schema_findings
from harness.scenarios.models import ItemSpec, Scenario
from harness.scenarios.problems import Finding, Problem, format_value
from harness.scenarios.validation import (
    SharedIndex,
    check_conversation_probe,
    check_items,
    check_shared_data,
    check_store_partial,
)

PROBES_KEY = "probes"
#: Keys of the shared part that are defaults merged under every probe's own block.
PROBE_DEFAULT_KEYS = ("probe", "expect")
#: Keys a probe file of a conversation folder may hold (everything else belongs in ``_conversation.yaml``).
PROBE_FILE_KEYS = frozenset({PROBES_KEY, "$schema"})


@dataclass(frozen=True)
class ProbeSource:
    """One entry of a ``probes:`` list: the file it sits in, its index and node (for lines)."""

    document: Document
    index: int

    @property
    def prefix(self) -> tuple[str | int, ...]:
        return (PROBES_KEY, self.index)


@dataclass
class ConversationLoad:
    """What :func:`load_conversation` built: scenarios with the file and id line of each, and problems."""

    scenarios: list[tuple[Scenario, ProbeSource, Callable[[], int | None]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def shared_data(document: Document, defaults: Sequence[Document]) -> dict[str, Any]:
    """The shared part of a conversation merged over its defaults, ``probes`` left out."""
    data = {key: value for key, value in document.data.items() if key != PROBES_KEY}
    for default in reversed(defaults):
        data = merge_defaults(default.data, data)
    return data


def probe_entries(document: Document) -> tuple[list[ProbeSource], list[Problem]]:
    """The entries of ``document``'s ``probes:`` list (a problem when it is not a list)."""
    raw = document.data.get(PROBES_KEY)
    if not isinstance(raw, list):
        line, _ = document.line_of((PROBES_KEY,))
        return [], [Problem(str(document.path), line, PROBES_KEY, f"must be a list of probes, not {type(raw).__name__}")]
    entries = [ProbeSource(document.entry(entry, PROBES_KEY, index), index) for index, entry in enumerate(raw)]
    return entries, []


def entry_identity(entry: ProbeSource, shared: dict[str, Any]) -> tuple[str | None, Any, list[Any]]:
    """The scenario id, category and tags a probe entry will have, read from raw data (for selecting before validating)."""
    data = entry.document.data if isinstance(entry.document.data, dict) else {}
    probe_id, conversation_id = data.get("id"), shared.get("id")
    ident = f"{conversation_id}/{probe_id}" if isinstance(probe_id, str) and isinstance(conversation_id, str) else None
    category = data.get("category") or shared.get("category")
    tags = [*_list(shared.get("tags")), *_list(data.get("tags"))]
    return ident, category, tags


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def load_conversation(
    shared_doc: Document,
    entries: Sequence[ProbeSource],
    defaults: Sequence[Document],
    wanted: Callable[[ProbeSource], bool] = lambda entry: True,
) -> ConversationLoad:
    """Validate a conversation's shared part once and the ``wanted`` probes each for its own part.

    Args:
        shared_doc: The conversation file (or ``_conversation.yaml``); its ``probes`` key is ignored here.
        entries: Every probe entry of the conversation, in file order (for duplicate ids).
        defaults: The ``_defaults.yaml`` documents that apply, outermost first.
        wanted: Which entries to validate and build (the others are skipped, unchecked).
    """
    out = ConversationLoad()
    data = shared_data(shared_doc, defaults)
    entry_defaults = {key: data.pop(key) for key in PROBE_DEFAULT_KEYS if key in data}
    conversation: Conversation | None = None
    try:
        conversation = Conversation.model_validate(data)
    except ValidationError as exc:
        findings = schema_findings(exc.errors(include_url=False), Conversation)
        out.problems.extend(locate(f, shared_doc, defaults) for f in findings)
    index = SharedIndex.of(conversation if conversation is not None else data)
    shared_findings: list[Finding] = check_shared_data(index)
    if conversation is not None:
        shared_findings += check_items(conversation.items, conversation.sessions, conversation.id)
    else:
        shared_findings += check_store_partial(data)
    out.problems.extend(locate(f, shared_doc, defaults) for f in shared_findings)
    shared_ok = not any(p.severity == "error" for p in out.problems)
    if not entries:
        line, _ = shared_doc.line_of((PROBES_KEY,))
        out.problems.append(Problem(str(shared_doc.path), line, PROBES_KEY, "no probes: this conversation adds no scenario", severity="warning"))
    seen: dict[str, ProbeSource] = {}
    stack = [*defaults, shared_doc]  # where a probe's inherited values come from, outermost first
    for entry in entries:
        raw = entry.document.data
        probe_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(probe_id, str):
            if probe_id in seen:
                first = seen[probe_id]
                line, _ = entry.document.line_of(("id",))
                first_line, _ = first.document.line_of(("id",))
                out.problems.append(Problem(
                    str(entry.document.path), line, f"{PROBES_KEY}[{entry.index}].id",
                    f"duplicate probe id: {first.document.path}:{first_line} uses it too", format_value(probe_id),
                ))
                continue
            seen[probe_id] = entry
        if not wanted(entry):
            continue
        scenario, problems = _load_probe(entry, data, entry_defaults, conversation, index, stack)
        out.problems.extend(problems)
        if scenario is not None and shared_ok and not any(p.severity == "error" for p in problems):
            out.scenarios.append((scenario, entry, entry.document.line_getter(("id",))))
    return out


def _load_probe(
    entry: ProbeSource,
    shared: dict[str, Any],
    entry_defaults: dict[str, Any],
    conversation: Conversation | None,
    index: SharedIndex,
    stack: Sequence[Document],
) -> tuple[Scenario | None, list[Problem]]:
    """One probe: its own fields validated, its references checked against ``index``, a Scenario when all is well."""
    raw = entry.document.data
    path = entry.document.path
    if not isinstance(raw, dict):
        kind = "nothing" if raw is None else f"a {type(raw).__name__}"
        line = entry.document.start_line()
        return None, [Problem(str(path), line, format_entry(entry), f"a probe must be a mapping with id, probe and expect, not {kind}")]
    data = dict(raw)
    for key, default in entry_defaults.items():
        data[key] = merge_defaults(default, data[key]) if key in data else default
    problems: list[Problem] = []

    def place(finding: Finding) -> Problem:
        return locate(finding, entry.document, stack, entry.prefix)

    parsed: ProbeEntry | None = None
    try:
        parsed = ProbeEntry.model_validate(data)
    except ValidationError as exc:
        problems.extend(place(f) for f in schema_findings(exc.errors(include_url=False), ProbeEntry))
    category = data.get("category") or shared.get("category")
    if category is None:
        problems.append(place(Finding(("category",), "required field is missing: set category on the probe or the conversation")))
    scenario = None
    if parsed is not None and conversation is not None and category is not None:
        scenario = build_probe(conversation, parsed)
    view = {
        "probe": parsed.probe if parsed is not None else data.get("probe"),
        "expect": parsed.expect if parsed is not None else data.get("expect"),
        "item_roles": data.get("item_roles"),
        "category": category,
        "categories": conversation.categories if conversation is not None else shared.get("categories"),
    }
    problems.extend(place(f) for f in check_conversation_probe(view, scenario, index))
    return scenario, problems


def format_entry(entry: ProbeSource) -> str:
    return f"{PROBES_KEY}[{entry.index}]"


def build_probe(conversation: Conversation, entry: ProbeEntry) -> Scenario:
    """The scenario of one probe, sharing the conversation's ``sessions`` and ``items`` objects (never re-validated)."""
    items = conversation.items
    if entry.item_roles:
        roles = entry.item_roles
        items = [_with_role(item, roles[item.id]) if item.id in roles else item for item in items]
    tags = list(dict.fromkeys([*conversation.tags, *entry.tags]))
    category = entry.category or conversation.category
    assert category is not None  # a probe without one is reported when its entry is read, and never built
    return Scenario.model_construct(
        schema_version=conversation.schema_version,
        id=f"{conversation.id}/{entry.id}",
        title=entry.title or f"{conversation.title} / {entry.id}",
        category=category,
        categories=conversation.categories,
        tags=tags,
        description=entry.description or conversation.description,
        system_prompt=conversation.system_prompt,
        protocol=conversation.protocol,
        retrieval_budget=conversation.retrieval_budget,
        sessions=conversation.sessions,
        items=items,
        probe=entry.probe,
        expect=entry.expect,
    )


def _with_role(item: ItemSpec, role: str) -> ItemSpec:
    return item if item.role == role else item.model_copy(update={"role": role})
