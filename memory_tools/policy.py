"""The rules of the model-facing memory tools: who may use them, what they see,
and what a call may ask for.

Three rules live here, each a small pure function, so the Host
(:mod:`memory_tools.host`) only sequences them:

- admission (:func:`admission`): policy and privacy flags decide, fail closed,
  whether a run gets the tools at all;
- scope (:func:`item_visible`): a run sees active global items plus active
  items of its own workspace, never another workspace's;
- arguments (:func:`parse_search_arguments`, :func:`parse_get_arguments`):
  what the model may send. Scope never comes from the model: any property
  beyond the declared ones is rejected.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from memory_tools.model import LifecycleState, MatchMode, MemoryItem, MemoryValidationError, ScopeType
from memory_tools.normalize import normalize_identifier, normalize_search_term

SEARCH_TOOL = "memory_search"
GET_TOOL = "memory_get"
TOOL_NAMES: tuple[str, ...] = (SEARCH_TOOL, GET_TOOL)

DEFAULT_SEARCH_LIMIT = 5
"""Results a search returns when the model gives no ``limit``."""
MAX_SEARCH_LIMIT = 10
"""Model-facing ceiling; a larger ``limit`` is clamped (``limitCapped``), below the store's 100."""
MAX_SEARCH_TERMS = 32
"""Terms per search, counted before de-duplication (the store's own limit)."""
MAX_ARGUMENT_CHARS = 65_536
"""Raw argument text longer than this is rejected before parsing."""
_MAX_REPORTED_ERRORS = 5

# Property names a model might use to pick a scope; the error says the Host sets scope.
_SCOPE_PROPERTIES = frozenset(
    name.lower()
    for name in (
        "workspaceKey", "workspace_key", "workspace", "workspaceId", "workspace_id", "scope", "scopeKey",
        "scope_key", "scopeType", "scope_type", "profile", "profileId", "profile_id", "sessionId",
        "session_id", "runId", "run_id", "includeArchived", "include_archived", "userId", "user_id",
    )
)


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """Runtime memory policy (``memory.enabled``, ``memory.agentReadEnabled``).

    Only a real ``True`` switches a gate on: any other value (``"true"``, ``1``,
    ``None``) means off. Agent reads are off by default.
    """

    enabled: bool = True
    agent_read_enabled: bool = False


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the Host knows about a run, derived by the Host, never by the model.

    Attributes:
        workspace_key: the run's workspace identity; None searches global items only.
        incognito: privacy flag; any value other than a real ``False`` means on.
    """

    workspace_key: str | None = None
    incognito: bool = False


class DenialReason(StrEnum):
    """Why a run was not given the memory tools (for the harness log, never the model)."""

    INCOGNITO = "incognito"
    MEMORY_DISABLED = "memory_disabled"
    AGENT_READS_DISABLED = "agent_reads_disabled"
    INVALID_POLICY = "invalid_policy"
    INVALID_RUN_CONTEXT = "invalid_run_context"
    INVALID_WORKSPACE_KEY = "invalid_workspace_key"


def admission(policy: object, context: object) -> DenialReason | None:
    """Decide, fail closed, whether a run may use the memory tools.

    Returns None when admitted, else the first reason that denies it, checked
    in this order: malformed inputs, incognito, memory disabled, agent reads
    disabled, a workspace key that breaks the identifier rules.

    Example:
        >>> admission(MemoryPolicy(agent_read_enabled=True), RunContext("ws-1"))
        >>> admission(MemoryPolicy(agent_read_enabled="yes"), RunContext())
        <DenialReason.AGENT_READS_DISABLED: 'agent_reads_disabled'>
    """
    if not isinstance(context, RunContext):
        return DenialReason.INVALID_RUN_CONTEXT
    if context.incognito is not False:
        return DenialReason.INCOGNITO
    if not isinstance(policy, MemoryPolicy):
        return DenialReason.INVALID_POLICY
    if policy.enabled is not True:
        return DenialReason.MEMORY_DISABLED
    if policy.agent_read_enabled is not True:
        return DenialReason.AGENT_READS_DISABLED
    if context.workspace_key is not None:
        try:
            normalize_identifier(context.workspace_key, "workspace_key")
        except MemoryValidationError:
            return DenialReason.INVALID_WORKSPACE_KEY
    return None


def item_in_scope(item: MemoryItem, workspace_key: str | None) -> bool:
    """True when ``item`` is global or of exactly ``workspace_key`` (case-sensitive), whatever its lifecycle."""
    if item.scope_type == ScopeType.GLOBAL:
        return item.scope_key is None
    return item.scope_type == ScopeType.WORKSPACE and workspace_key is not None and item.scope_key == workspace_key


def item_visible(item: MemoryItem, workspace_key: str | None) -> bool:
    """True when a run in ``workspace_key`` may see ``item``: active and :func:`item_in_scope`."""
    return item.lifecycle_state == LifecycleState.ACTIVE and item_in_scope(item, workspace_key)


# --- arguments -------------------------------------------------------------------------------------------------


class ToolArgumentError(Exception):
    """The model's arguments break the tool's contract; the message is shown to the model."""


@dataclass(frozen=True, slots=True)
class SearchArguments:
    """Validated ``memory_search`` arguments.

    Attributes:
        terms: the terms as the model sent them (the store normalizes them again).
        normalized_terms: distinct normalized terms, sorted.
        match: exact (default) or prefix.
        limit: effective limit, 1..``MAX_SEARCH_LIMIT``.
        limit_capped: the model asked for more than ``MAX_SEARCH_LIMIT``.
    """

    terms: tuple[str, ...]
    normalized_terms: tuple[str, ...]
    match: MatchMode
    limit: int
    limit_capped: bool


@dataclass(frozen=True, slots=True)
class GetArguments:
    """Validated ``memory_get`` arguments."""

    item_id: str


def decode_arguments(raw: object, tool: str, example: str | None = None) -> dict[str, Any]:
    """Turn raw tool arguments (the model's JSON text, or a dict) into a dict.

    None or blank text counts as ``{}``. Never raises anything but
    :class:`ToolArgumentError`, whose message shows a valid call (``example``,
    or the built-in tools' own) so the model can correct itself.
    """
    example = example or _EXAMPLES.get(tool, "{}")
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise ToolArgumentError(f"arguments must be a JSON object such as {example}")
    if len(raw) > MAX_ARGUMENT_CHARS:
        raise ToolArgumentError(f"arguments are {len(raw)} characters long; at most {MAX_ARGUMENT_CHARS} are accepted")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, object_pairs_hook=_reject_duplicate_properties)
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(
            f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); send one JSON object such as {example}"
        ) from None
    except ToolArgumentError:
        raise
    except (ValueError, RecursionError):  # huge integer literal, absurd nesting
        raise ToolArgumentError(f"arguments could not be decoded; send one JSON object such as {example}") from None
    if not isinstance(value, dict):
        raise ToolArgumentError(f"arguments must be a JSON object such as {example}, got {json_type(value)}")
    return value


def parse_search_arguments(arguments: dict[str, Any], *, max_limit: int = MAX_SEARCH_LIMIT) -> SearchArguments:
    """Validate ``memory_search`` arguments (``terms``, optional ``match`` and ``limit``).

    ``null`` for an optional argument means omitted. ``limit`` accepts an
    integral JSON number; above ``max_limit`` (the run's retrieval budget,
    ``MAX_SEARCH_LIMIT`` by default) it is clamped; omitted, it is
    ``DEFAULT_SEARCH_LIMIT`` or ``max_limit`` when that is smaller.

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("terms", "match", "limit"))
    terms: tuple[str, ...] = ()
    normalized: set[str] = set()
    raw_terms = arguments.get("terms")
    if "terms" not in arguments or raw_terms is None:
        errors.append('terms is required: an array of 1 to 32 key strings, e.g. ["coffee", "咖啡"]')
    elif not isinstance(raw_terms, list):
        errors.append(f'terms must be an array of strings, e.g. ["coffee"], got {json_type(raw_terms)}')
    elif not raw_terms:
        errors.append("terms is empty: give at least one term")
    elif len(raw_terms) > MAX_SEARCH_TERMS:
        errors.append(f"terms has {len(raw_terms)} entries; at most {MAX_SEARCH_TERMS} are allowed")
    else:
        for index, term in enumerate(raw_terms):
            if not isinstance(term, str):
                errors.append(f"terms[{index}] must be a string, got {json_type(term)}")
                continue
            try:
                normalized.add(normalize_search_term(term, f"terms[{index}]"))
            except MemoryValidationError as exc:
                errors.append(str(exc))
        terms = tuple(raw_terms)

    match = MatchMode.EXACT
    raw_match = arguments.get("match")
    if raw_match is not None:
        if isinstance(raw_match, str) and raw_match in (MatchMode.EXACT.value, MatchMode.PREFIX.value):
            match = MatchMode(raw_match)
        else:
            errors.append(f'match must be "exact" or "prefix", got {show_value(raw_match)}')

    limit, limit_capped = limit_argument(arguments, errors, min(DEFAULT_SEARCH_LIMIT, max_limit), max_limit)

    if errors:
        raise ToolArgumentError(join_errors(errors))
    return SearchArguments(terms, tuple(sorted(normalized)), match, limit, limit_capped)


def parse_get_arguments(arguments: dict[str, Any]) -> GetArguments:
    """Validate ``memory_get`` arguments (``itemId``, an identifier from ``memory_search``).

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("itemId",))
    raw_id = arguments.get("itemId")
    item_id = ""
    if raw_id is None:
        errors.append("itemId is required: the itemId of a memory_search result")
    elif not isinstance(raw_id, str):
        errors.append(f"itemId must be a string, got {json_type(raw_id)}")
    else:
        try:
            item_id = normalize_identifier(raw_id, "itemId")
        except MemoryValidationError as exc:
            errors.append(f"{exc}; pass the itemId exactly as memory_search returned it")
    if errors:
        raise ToolArgumentError(join_errors(errors))
    return GetArguments(item_id)


_EXAMPLES = {SEARCH_TOOL: '{"terms": ["coffee"], "match": "exact"}', GET_TOOL: '{"itemId": "<itemId>"}'}


def _reject_duplicate_properties(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ToolArgumentError(f"property {show_value(key)} appears more than once")
        result[key] = value
    return result


def unknown_properties(arguments: dict[str, Any], allowed: tuple[str, ...]) -> list[str]:
    errors = []
    for name in sorted((k for k in arguments if k not in allowed), key=str):
        if str(name).lower() in _SCOPE_PROPERTIES:
            errors.append(f"unknown property {show_value(name)}: scope is set by the host, not by the tool call")
        else:
            errors.append(f"unknown property {show_value(name)}; accepted: {', '.join(allowed)}")
    return errors


def _as_integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def limit_argument(arguments: dict[str, Any], errors: list[str], default: int, maximum: int) -> tuple[int, bool]:
    """``(limit, capped)`` from an optional ``limit`` argument: ``default`` when absent, clamped to
    ``maximum`` (capped True then); a non-integer or a value below 1 appends an error and gives the default."""
    raw_limit = arguments.get("limit")
    if raw_limit is None:
        return default, False
    value = _as_integer(raw_limit)
    if value is None:
        errors.append(f"limit must be an integer from 1 to {maximum}, got {show_value(raw_limit)}")
    elif value < 1:
        errors.append(f"limit must be at least 1, got {value}")
    else:
        return min(value, maximum), value > maximum
    return default, False


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show_value(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def join_errors(errors: list[str]) -> str:
    shown = errors[:_MAX_REPORTED_ERRORS]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f"; and {more} more problem(s)" if more else "")
