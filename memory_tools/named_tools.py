"""``remember``, ``recall`` and ``forget`` as Host-owned model tools over :class:`NamedMemoryStore`.

Built like the item tools (:mod:`memory_tools.host`): the Host opens a
:class:`NamedMemoryRun` with the run's :class:`RunContext`; admission is
decided once, at the start, by the same fail-closed :func:`admission`
(incognito, memory disabled or agent reads off: no tools, and a call that
arrives anyway gets ``policy_denied`` without a storage read). A call is checked
in the order policy, arguments, storage; the model's mistakes come back as a
structured ``invalid_arguments`` error it can read, never as an exception.
Scope identity (application, workspace, namespace) is the Host's: the model
chooses only ``user`` or ``project``.

Wire format (compact JSON, stable key order)::

    remember -> {"event":"created"|"updated"|"unchanged","name":..,"scope":..,"version":..}
    forget   -> {"event":"forgotten","name":..,"scope":..}
    recall   -> {"limit":5,"limitCapped":false,"truncated":false,"omittedCount":0,
                 "memories":[{"name":..,"scope":..,"text":..,"createdAt":..,"updatedAt":..}]}

Errors: ``{"error":{"code":..,"message":..}}`` with code ``invalid_arguments``,
``unknown_tool``, ``policy_denied`` or ``not_found`` (forgetting a name that is
not stored).

Example:
    >>> run = open_named_run(NamedMemoryStore(), MemoryPolicy(agent_read_enabled=True),
    ...                      RunContext("ws-1"), application="recall-eval", now_ms=1)
    >>> run.call("remember", '{"name": "port", "text": "dev server: 5174", "scope": "project"}').result_text
    '{"event":"created","name":"port","scope":"project","version":1}'
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from memory_tools.disclosure import fit_disclosure, with_iso_times
from memory_tools.host import ToolCallRecord
from memory_tools.model import MemoryValidationError
from memory_tools.named import NamedMemoryStore
from memory_tools.named_model import (
    DEFAULT_RECALL_LIMIT,
    MAX_NAME_CHARS,
    MAX_RECALL_LIMIT,
    MAX_TEXT_CHARS,
    NamedIdentity,
    NamedMemory,
    NamedScope,
)
from memory_tools.policy import (
    DenialReason,
    MemoryPolicy,
    RunContext,
    ToolArgumentError,
    admission,
    decode_arguments,
    join_errors,
    json_type,
    limit_argument,
    show_value,
    unknown_properties,
)

REMEMBER_TOOL = "remember"
RECALL_TOOL = "recall"
FORGET_TOOL = "forget"
NAMED_TOOL_NAMES: tuple[str, ...] = (REMEMBER_TOOL, RECALL_TOOL, FORGET_TOOL)
WRITE_TOOLS: tuple[str, ...] = (REMEMBER_TOOL, FORGET_TOOL)
READ_TOOLS: tuple[str, ...] = (RECALL_TOOL,)
RECALL_BUDGET_CHARS = 12_000
"""Hard ceiling of a recall result; whole memories are dropped from the end to fit (``truncated``)."""
# A valid call of each tool, shown when a model's arguments cannot be decoded, so it can correct itself.
_EXAMPLES = {
    REMEMBER_TOOL: '{"name": "deploy route", "text": "deploys go through staging first", "scope": "project"}',
    RECALL_TOOL: '{"query": "deploy route"}',
    FORGET_TOOL: '{"name": "deploy route", "scope": "project"}',
}

_SCOPE_SCHEMA = {
    "type": "string",
    "enum": ["user", "project"],
    "description": "'user': about the user, true in every project; 'project': about the current project only.",
}
_SPECS: dict[str, dict[str, Any]] = {
    REMEMBER_TOOL: {
        "description": (
            "Save or correct one named long-term memory. The name is a short stable handle ('deploy route', "
            "'preferred test command'); saving under an existing name replaces that memory's text, so correct a "
            "memory by remembering it again under the same name. Write the specific, reusable fact or the exact "
            "working steps (commands, paths, values), not general advice."
        ),
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "description": "Short stable name."},
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "description": "The full memory text."},
            "scope": _SCOPE_SCHEMA,
        },
        "required": ["name", "text", "scope"],
    },
    RECALL_TOOL: {
        "description": (
            "Read saved long-term memories. Give name to read one memory by its exact name, or query (a few words "
            f"about the topic) to find memories whose names or texts share those words. Returns at most limit "
            f"memories (default {DEFAULT_RECALL_LIMIT}, at most {MAX_RECALL_LIMIT}). No result means nothing is "
            "saved about it; do not invent an answer."
        ),
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "description": "Exact memory name."},
            "query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Topic words to search for."},
            "scope": {**_SCOPE_SCHEMA, "description": "Only this scope; default both."},
            "limit": {"type": "integer", "minimum": 1, "description": f"Most memories to return; at most {MAX_RECALL_LIMIT}."},
        },
        "required": [],
    },
    FORGET_TOOL: {
        "description": "Delete one named long-term memory, e.g. when the user asks you to forget it.",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "description": "Exact memory name."},
            "scope": _SCOPE_SCHEMA,
        },
        "required": ["name", "scope"],
    },
}


def named_tool_specs(tools: Sequence[str] = NAMED_TOOL_NAMES, max_limit: int = MAX_RECALL_LIMIT) -> list[dict[str, Any]]:
    """OpenAI function-tool specs of ``tools`` (a fresh copy), in the order given.

    ``max_limit`` is the run's top-k: recall's ceiling as its description states it.
    """
    specs = []
    for name in tools:
        spec = _SPECS[name]
        parameters = {
            "type": "object",
            "properties": spec["properties"],
            "required": spec["required"],
            "additionalProperties": False,
        }
        specs.append({"type": "function", "function": {"name": name, "description": spec["description"], "parameters": parameters}})
    text = json.dumps(specs)
    if max_limit != MAX_RECALL_LIMIT:
        text = text.replace(f"at most {MAX_RECALL_LIMIT}", f"at most {max_limit}")
        text = text.replace(f"default {DEFAULT_RECALL_LIMIT},", f"default {min(DEFAULT_RECALL_LIMIT, max_limit)},")
    return cast("list[dict[str, Any]]", json.loads(text))


@dataclass(frozen=True, slots=True)
class RememberArguments:
    name: str
    text: str
    scope: NamedScope


@dataclass(frozen=True, slots=True)
class RecallArguments:
    """Exactly one of ``name`` and ``query`` is set; ``limit_capped``: the model asked for more than the maximum."""

    name: str | None
    query: str | None
    scope: NamedScope | None
    limit: int
    limit_capped: bool


@dataclass(frozen=True, slots=True)
class ForgetArguments:
    name: str
    scope: NamedScope


def _string(arguments: dict[str, Any], field: str, errors: list[str], hint: str, *, required: bool = True) -> str | None:
    value = arguments.get(field)
    if value is None:
        if required:
            errors.append(f"{field} is required: {hint}")
        return None
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{field} must be a non-empty string ({hint}), got {json_type(value) if not isinstance(value, str) else 'blank text'}")
        return None
    return value


def _scope(arguments: dict[str, Any], errors: list[str], *, required: bool) -> NamedScope | None:
    value = arguments.get("scope")
    if value is None:
        if required:
            errors.append('scope is required: "user" (about the user) or "project" (this project only)')
        return None
    if value not in ("user", "project"):
        errors.append(f'scope must be "user" or "project", got {show_value(value)}')
        return None
    return value  # type: ignore[no-any-return]


def parse_remember_arguments(arguments: dict[str, Any]) -> RememberArguments:
    """Validate ``remember`` arguments (``name``, ``text``, ``scope``; nothing else).

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("name", "text", "scope"))
    name = _string(arguments, "name", errors, "a short stable name such as \"deploy route\"")
    text = _string(arguments, "text", errors, "the memory's full text")
    scope = _scope(arguments, errors, required=True)
    if errors:
        raise ToolArgumentError(join_errors(errors))
    return RememberArguments(name, text, scope)  # type: ignore[arg-type]


def parse_forget_arguments(arguments: dict[str, Any]) -> ForgetArguments:
    """Validate ``forget`` arguments (``name``, ``scope``).

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("name", "scope"))
    name = _string(arguments, "name", errors, "the exact name of the memory to delete")
    scope = _scope(arguments, errors, required=True)
    if errors:
        raise ToolArgumentError(join_errors(errors))
    return ForgetArguments(name, scope)  # type: ignore[arg-type]


def parse_recall_arguments(arguments: dict[str, Any], *, max_limit: int = MAX_RECALL_LIMIT) -> RecallArguments:
    """Validate ``recall`` arguments: exactly one of ``name``/``query``, optional ``scope`` and ``limit``.

    ``limit`` above :data:`MAX_RECALL_LIMIT` is clamped (``limit_capped``); 0,
    negative or non-integral is an error.

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("name", "query", "scope", "limit"))
    name = _string(arguments, "name", errors, "the exact memory name", required=False)
    query = _string(arguments, "query", errors, "a few words about the topic", required=False)
    if arguments.get("name") is None and arguments.get("query") is None:
        errors.append('give name (one memory by its exact name) or query (topic words), e.g. {"query": "deploy"}')
    elif arguments.get("name") is not None and arguments.get("query") is not None:
        errors.append("give either name or query, not both")
    scope = _scope(arguments, errors, required=False)
    limit, capped = limit_argument(arguments, errors, min(DEFAULT_RECALL_LIMIT, max_limit), max_limit)
    if errors:
        raise ToolArgumentError(join_errors(errors))
    return RecallArguments(name, query, scope, limit, capped)


class NamedMemoryRun:
    """One agent run's named-memory tools, admitted (or not) once at its start.

    Build it with :func:`open_named_run`. Duck-types ``memory_tools.MemoryRun``
    for the agent loop: ``admitted``, ``tool_names``, ``tool_specs()``, ``call()``.
    """

    def __init__(
        self, store: NamedMemoryStore, identity: NamedIdentity, denial: DenialReason | None, tools: tuple[str, ...], now_ms: int,
        *, recall_limit: int = MAX_RECALL_LIMIT, recall_budget_chars: int = RECALL_BUDGET_CHARS,
        recall_content_chars: int | None = None, iso_times: bool = False,
    ) -> None:
        self._recall_limit = recall_limit
        self._recall_budget_chars = recall_budget_chars
        self._recall_content_chars = recall_content_chars
        self._iso_times = iso_times
        self._store = store
        self._identity = identity
        self._denial = denial
        self._tools = tools if denial is None else ()
        self._now_ms = now_ms

    @property
    def admitted(self) -> bool:
        return self._denial is None

    @property
    def denial_reason(self) -> str | None:
        """Why the run has no tools (for the harness log; never shown to the model)."""
        return None if self._denial is None else self._denial.value

    @property
    def identity(self) -> NamedIdentity:
        return self._identity

    @property
    def tool_names(self) -> tuple[str, ...]:
        return self._tools

    def tool_specs(self) -> list[dict[str, Any]]:
        """The admitted tools in OpenAI function-tool format (empty when denied)."""
        return named_tool_specs(self._tools, self._recall_limit)

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolCallRecord:
        """Execute one tool call the model made; never raises because of the model's input."""
        started = time.perf_counter()
        if self._denial is not None:
            outcome = _error("policy_denied", "memory tools are not available in this conversation")
        elif name not in self._tools:
            shown = json.dumps(name, ensure_ascii=False) if isinstance(name, str) else repr(name)
            outcome = _error("unknown_tool", f"unknown tool {shown[:80]}; available: {', '.join(self._tools)}")
        else:
            try:
                decoded = decode_arguments(arguments, name, _EXAMPLES[name])
                if name == REMEMBER_TOOL:
                    parsed: Any = parse_remember_arguments(decoded)
                elif name == FORGET_TOOL:
                    parsed = parse_forget_arguments(decoded)
                else:
                    parsed = parse_recall_arguments(decoded, max_limit=self._recall_limit)
            except ToolArgumentError as exc:
                outcome = _error("invalid_arguments", str(exc))
            else:
                try:
                    outcome = self._execute(parsed)
                except MemoryValidationError as exc:  # the store's own rules, checked before it reads
                    outcome = _error("invalid_arguments", str(exc))
        status, text, disclosed, read = outcome
        return ToolCallRecord(
            name=name if isinstance(name, str) else repr(name),
            arguments=arguments if isinstance(arguments, str) else ("" if arguments is None else _dumps(arguments)),
            status=status,
            result_text=text,
            result_chars=len(text),
            disclosed_item_ids=disclosed,
            storage_read=read,
            elapsed_s=time.perf_counter() - started,
        )

    def _execute(self, args: RememberArguments | ForgetArguments | RecallArguments) -> _Outcome:
        if isinstance(args, RememberArguments):
            event = self._store.remember(args.name, args.text, args.scope, self._identity, now=self._now_ms)
            body = {"event": event.event, "name": event.memory.name, "scope": args.scope, "version": event.memory.version}
            return "ok", _dumps(body), (), True
        if isinstance(args, ForgetArguments):
            forgotten = self._store.forget(args.name, args.scope, self._identity, now=self._now_ms)
            if forgotten is None:
                message = f"no memory named {show_value(args.name)} in scope {args.scope}; recall lists the saved names"
                return _error("not_found", message, storage_read=True)
            return "ok", _dumps({"event": "forgotten", "name": forgotten.memory.name, "scope": args.scope}), (), True
        found = self._store.recall(self._identity, name=args.name, query=args.query, scope=args.scope, limit=args.limit)
        return _recall_outcome(found, args, storage_read=self._identity.recall_enabled,
                               budget_chars=self._recall_budget_chars, content_chars=self._recall_content_chars,
                               iso_times=self._iso_times)


_Outcome = tuple[str, str, tuple[str, ...], bool]


def _recall_outcome(found: list[NamedMemory], args: RecallArguments, *, storage_read: bool,
                    budget_chars: int = RECALL_BUDGET_CHARS, content_chars: int | None = None,
                    iso_times: bool = False) -> _Outcome:
    """Whole memories, best first, within the result-text budget; with ``content_chars`` within that much memory
    text instead (:mod:`memory_tools.disclosure`: the JSON around the texts is not counted)."""
    shown = [with_iso_times({"name": m.name, "scope": m.scope, "text": m.text, "createdAt": m.created_at,
                             "updatedAt": m.updated_at}, iso_times) for m in found]
    fits = len(shown) if content_chars is None else fit_disclosure([m.text for m in found], top_k=len(found), chars=content_chars)
    for kept in range(fits, -1, -1):
        text = _dumps(
            {
                "limit": args.limit,
                "limitCapped": args.limit_capped,
                "truncated": kept < len(shown),
                "omittedCount": len(shown) - kept,
                "memories": shown[:kept],
            }
        )
        if content_chars is not None or len(text) <= budget_chars:
            return "ok", text, tuple(m.memory_id for m in found[:kept]), storage_read
    raise AssertionError("unreachable: the empty envelope fits the budget")  # pragma: no cover


def _error(code: str, message: str, *, storage_read: bool = False) -> _Outcome:
    return code, _dumps({"error": {"code": code, "message": message}}), (), storage_read


def _dumps(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def open_named_run(
    store: NamedMemoryStore,
    policy: MemoryPolicy,
    context: RunContext,
    *,
    application: str,
    now_ms: int,
    tools: Sequence[str] = NAMED_TOOL_NAMES,
    namespace: str = "",
    recall_enabled: bool = True,
    recall_limit: int = MAX_RECALL_LIMIT,
    recall_budget_chars: int = RECALL_BUDGET_CHARS,
    recall_content_chars: int | None = None,
    iso_times: bool = False,
) -> NamedMemoryRun:
    """Open a run: admission from ``policy`` and ``context`` now, the identity from the Host, never the model.

    Args:
        tools: which of ``remember``/``recall``/``forget`` to offer (the write
            phase offers :data:`WRITE_TOOLS`, the probe :data:`READ_TOOLS`).
        now_ms: the time writes are stamped with (the session's time in an evaluation).
        recall_enabled: False is the cold control: recall finds nothing, writes work as usual.
        recall_limit: the run's top-k: recall's ceiling (1..:data:`MAX_RECALL_LIMIT`).
        recall_budget_chars: the most characters of one recall result (at least 256).
        recall_content_chars: the retrieval budget on memory text instead (whole memories while their texts fit;
            the result-text ceiling then does not apply); None: ``recall_budget_chars`` alone.
        iso_times: show ``createdAtIso``/``updatedAtIso`` beside the epoch milliseconds.

    Raises:
        ValueError: ``tools`` names a tool that does not exist (a programming error, not the model's).
    """
    unknown = [t for t in tools if t not in NAMED_TOOL_NAMES]
    if unknown:
        raise ValueError(f"unknown named-memory tools {unknown}; choose from {', '.join(NAMED_TOOL_NAMES)}")
    denial = admission(policy, context)
    workspace = context.workspace_key if denial is None else None
    identity = NamedIdentity(application, workspace, namespace, recall_enabled is True)
    if isinstance(recall_limit, bool) or not isinstance(recall_limit, int) or not 1 <= recall_limit <= MAX_RECALL_LIMIT:
        raise ValueError(f"recall_limit must be an integer from 1 to {MAX_RECALL_LIMIT} (got {recall_limit!r})")
    if isinstance(recall_budget_chars, bool) or not isinstance(recall_budget_chars, int) or recall_budget_chars < 256:
        raise ValueError(f"recall_budget_chars must be an integer of at least 256 (got {recall_budget_chars!r})")
    return NamedMemoryRun(store, identity, denial, tuple(tools), now_ms, recall_limit=recall_limit,
                          recall_budget_chars=recall_budget_chars, recall_content_chars=recall_content_chars,
                          iso_times=iso_times is True)
