"""The Host-owned read path: ``memory_search`` and ``memory_get`` as model tools.

The Host holds the store and the current :class:`MemoryPolicy`. Each agent run
opens a :class:`MemoryRun` with the Host-derived :class:`RunContext`; the run
fixes at its start whether the tools are admitted and what their schemas are,
and keeps both for its whole life, whatever happens to the policy meanwhile.

A call is checked in this order, and each step reads storage only if every
earlier one passed: policy (a denied run reveals nothing, not even argument
errors), arguments (anything beyond ``terms``/``match``/``limit`` or
``itemId`` is rejected, so the model cannot choose a scope), storage. The
model's mistakes never raise: they come back as a structured error the model
can read. Every call yields a :class:`ToolCallRecord` for the harness log.

Example:
    >>> host = Host(store, MemoryPolicy(agent_read_enabled=True))
    >>> run = host.open_run(RunContext(workspace_key="ws-1"))
    >>> record = run.call("memory_search", '{"terms": ["coffee"]}')
    >>> record.status, record.disclosed_item_ids
    ('ok', ('item-7',))

Wire format (compact JSON, stable key order). ``memory_search``::

    {"match":"exact","limit":5,"limitCapped":false,"truncated":false,"omittedCount":0,
     "results":[{"itemId":..,"version":..,"content":..,"kind":..,"statementType":..,
                 "temporalType":..,"eventStartedAt":..,"eventEndedAt":..,"observedAt":..,
                 "matchedKeys":[..],"sourceCount":..}]}

``matchedKeys`` holds the stored original text of each of the item's keys that
matched a term (sorted by normalized key). With ``iso_times`` each time field is
followed by its ISO 8601 UTC form (``observedAtIso``); with
``content_budget_chars`` the budget counts ``content`` only and ``memory_get``
cuts a longer content (``contentTruncated``, ``omittedContentChars``). ``memory_get``::

    {"truncated":false,"omittedKeyCount":0,"omittedSourceCount":0,"item":{...,"keys":[..],
     "sourceCount":..,"sources":[{"sessionId","runId","turnId","eventId"}]}}

Errors: ``{"error":{"code":..,"message":..}}`` with code ``invalid_arguments``,
``unknown_tool``, ``policy_denied`` or ``not_found``. A missing, archived and
other-workspace item give the very same not-found text.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, cast

from memory_tools.disclosure import budgeted_content, fit_disclosure, with_iso_times
from memory_tools.model import MatchMode, MemoryItemRecord, MemoryValidationError
from memory_tools.policy import (
    MAX_SEARCH_LIMIT,
    SEARCH_TOOL,
    TOOL_NAMES,
    DenialReason,
    MemoryPolicy,
    RunContext,
    SearchArguments,
    ToolArgumentError,
    admission,
    decode_arguments,
    item_visible,
    parse_get_arguments,
    parse_search_arguments,
)
from memory_tools.tool_specs import tool_specs_json

_log = logging.getLogger(__name__)

_OPEN_POLICY = MemoryPolicy()  # the default policy (frozen, so one instance serves every Host)

STATUS_OK = "ok"
STATUS_INVALID_ARGUMENTS = "invalid_arguments"
STATUS_UNKNOWN_TOOL = "unknown_tool"
STATUS_POLICY_DENIED = "policy_denied"
STATUS_NOT_FOUND = "not_found"

MIN_SEARCH_BUDGET_CHARS = 256
MAX_STORE_LIMIT = 100
"""The store's own ceiling of one search: no retrieval budget may ask for more."""
MIN_GET_BUDGET_CHARS = 8192
"""Room for the longest valid item (2,000 code points of content, a 512-code-point id) without keys or sources."""

_POLICY_DENIED_MESSAGE = "memory tools are not available in this conversation"
_NOT_FOUND_MESSAGE = "no memory item with this itemId is available; use an itemId returned by memory_search"

class MemoryReader(Protocol):
    """The two store reads the Host uses (``MemoryItemStore`` satisfies it)."""

    def read_item(self, item_id: str) -> MemoryItemRecord | None: ...

    # A Protocol's defaults are never executed: mutating them gives equivalent mutants.
    def search_by_keys(
        self,
        terms: Sequence[str],
        match: str = "exact",  # pragma: no mutate
        *,
        workspace_key: str | None = None,  # pragma: no mutate
        include_archived: bool = False,  # pragma: no mutate
        limit: int | None = None,  # pragma: no mutate
    ) -> list[MemoryItemRecord]: ...


class HostConfigurationError(ValueError):
    """A Host was built with a bad setting; the message names it."""


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call as the Host executed it, for the harness log.

    Attributes:
        name: tool name as the model sent it.
        arguments: arguments as received (a dict is JSON-dumped).
        status: ok, invalid_arguments, unknown_tool, policy_denied or not_found.
        result_text: the exact text given back to the model.
        result_chars: ``len(result_text)`` in code points.
        disclosed_item_ids: ids of the items whose content reached the model.
        storage_read: whether the call read the store at all.
        elapsed_s: time the Host spent on the call.
    """

    name: str
    arguments: str
    status: str
    result_text: str
    result_chars: int
    disclosed_item_ids: tuple[str, ...]
    storage_read: bool
    elapsed_s: float


class Host:
    """Owns the store, the policy and the admission of memory tools to runs.

    Args:
        store: anything with ``read_item`` and ``search_by_keys`` (a ``MemoryItemStore``).
        policy: the initial policy; replace it any time with :meth:`set_policy`.
        search_result_budget_chars: hard ceiling on a ``memory_search`` result text (None: none; with
            ``content_budget_chars`` the content is the budget, :mod:`memory_tools.disclosure`).
        get_result_budget_chars: hard ceiling on a ``memory_get`` result text (keys and sources dropped to fit).
        content_budget_chars: the retrieval budget on memory text: ``memory_search`` shows whole items, best
            first, while their ``content`` together fits; ``memory_get`` shows at most this much content
            (``contentTruncated``). None: only the result-text ceilings apply (the product's own default).
        iso_times: add each time's ISO 8601 UTC form beside its epoch milliseconds (``observedAtIso`` beside
            ``observedAt``, and so on): the harness's shared instructions promise the model ISO times.
        search_limit: the run's top-k: the ceiling of ``memory_search``'s ``limit`` (1..100; the tool
            description states it).

    Raises:
        HostConfigurationError: a budget is not an integer or outside its bounds.
    """

    def __init__(
        self,
        store: MemoryReader,
        policy: MemoryPolicy = _OPEN_POLICY,
        *,
        search_result_budget_chars: int | None = 4000,
        get_result_budget_chars: int = 16000,
        search_limit: int = MAX_SEARCH_LIMIT,
        content_budget_chars: int | None = None,
        iso_times: bool = False,
    ) -> None:
        self._store = store
        self._iso_times = iso_times is True
        self._search_budget = None if search_result_budget_chars is None else _check_budget(
            "search_result_budget_chars", search_result_budget_chars, MIN_SEARCH_BUDGET_CHARS
        )
        self._content_budget = None if content_budget_chars is None else _check_budget(
            "content_budget_chars", content_budget_chars, 1)
        self._get_budget = _check_budget("get_result_budget_chars", get_result_budget_chars, MIN_GET_BUDGET_CHARS)
        self._search_limit = _check_budget("search_limit", search_limit, 1, MAX_STORE_LIMIT, unit="results")
        self._lock = threading.Lock()
        self._policy = policy

    @property
    def policy(self) -> MemoryPolicy:
        with self._lock:
            return self._policy

    @policy.setter
    def policy(self, policy: MemoryPolicy) -> None:
        self.set_policy(policy)

    def set_policy(self, policy: MemoryPolicy) -> None:
        """Replace the policy; runs opened later see it, runs already open do not."""
        with self._lock:
            self._policy = policy

    def open_run(self, context: RunContext) -> MemoryRun:
        """Open a run: decide admission and fix the tool set from the policy of this moment."""
        denial = admission(self.policy, context)
        return MemoryRun(self._store, context, denial, self._search_budget, self._get_budget,
                         search_limit=self._search_limit, content_budget=self._content_budget, iso_times=self._iso_times)


class MemoryRun:
    """One agent run's view of the memory tools, fixed when the run opened.

    Build it with :meth:`Host.open_run`.
    """

    def __init__(
        self, store: MemoryReader, context: RunContext, denial: DenialReason | None, search_budget: int | None,
        get_budget: int, *, search_limit: int = MAX_SEARCH_LIMIT, content_budget: int | None = None,
        iso_times: bool = False,
    ) -> None:
        self._store = store
        self._context = context
        self._denial = denial
        self._workspace_key = context.workspace_key if denial is None else None
        self._search_budget = search_budget
        self._get_budget = get_budget
        self._search_limit = search_limit
        self._content_budget = content_budget
        self._iso_times = iso_times
        self._specs_json = type(self).specs_json(search_limit) if denial is None else "[]"

    @classmethod
    def specs_json(cls, search_limit: int = MAX_SEARCH_LIMIT) -> str:
        """The tools a run of this class offers when admitted: known without a store (a run's plan counts them)."""
        return tool_specs_json(search_limit)

    @property
    def context(self) -> RunContext:
        return self._context

    @property
    def admitted(self) -> bool:
        return self._denial is None

    @property
    def denial_reason(self) -> str | None:
        """Why the run has no tools (for the harness log; never shown to the model)."""
        return None if self._denial is None else self._denial.value

    @property
    def tool_names(self) -> tuple[str, ...]:
        return TOOL_NAMES if self._denial is None else ()

    def tool_specs(self) -> list[dict[str, Any]]:
        """The admitted tools in OpenAI/litellm function-tool format (a fresh copy; empty when denied)."""
        return cast("list[dict[str, Any]]", json.loads(self._specs_json))

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolCallRecord:
        """Execute one tool call the model made; never raises because of the model's input.

        Args:
            name: the tool name the model chose.
            arguments: the raw JSON text the model produced, or an already decoded dict.
        """
        started = time.perf_counter()
        if self._denial is not None:
            outcome = _error(STATUS_POLICY_DENIED, _POLICY_DENIED_MESSAGE)
        elif name not in TOOL_NAMES:
            message = f"unknown tool {_safe_repr(name)}; available: {', '.join(TOOL_NAMES)}"
            outcome = _error(STATUS_UNKNOWN_TOOL, message)
        else:
            try:
                decoded = decode_arguments(arguments, name)
                if name == SEARCH_TOOL:
                    execute = partial(self._search, parse_search_arguments(decoded, max_limit=self._search_limit))
                else:
                    execute = partial(self._get, parse_get_arguments(decoded).item_id)
            except ToolArgumentError as exc:
                outcome = _error(STATUS_INVALID_ARGUMENTS, str(exc))
            else:
                try:
                    outcome = execute()
                except MemoryValidationError as exc:  # the store disagreed with our checks
                    outcome = _error(STATUS_INVALID_ARGUMENTS, str(exc), storage_read=True)
        status, text, disclosed, read = outcome
        return ToolCallRecord(
            name=name if isinstance(name, str) else _safe_repr(name),
            arguments=record_arguments(arguments),
            status=status,
            result_text=text,
            result_chars=len(text),
            disclosed_item_ids=disclosed,
            storage_read=read,
            elapsed_s=time.perf_counter() - started,
        )

    def _search(self, args: SearchArguments) -> _Outcome:
        records = self._store.search_by_keys(
            list(args.terms),
            args.match.value,
            workspace_key=self._workspace_key,
            include_archived=False,
            limit=args.limit,
        )
        terms = frozenset(args.normalized_terms)
        results: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for record in records:
            item = record.item
            matched = [k.key for k in record.keys if _key_matches(k.normalized_key, terms, args.match)]
            if item.item_id in seen or not matched or not item_visible(item, self._workspace_key):
                _log.warning("memory_search: store returned item %r outside the run's view; withheld", item.item_id)
                continue
            seen.add(item.item_id)
            results.append((item.item_id, _search_result(record, matched)))
            if len(results) == args.limit:
                break
        return self._fitted(args, results)

    def _fitted(self, args: SearchArguments, results: list[tuple[str, dict[str, Any]]]) -> _Outcome:
        """The ranked ``(item id, result)`` list as the tool's envelope, cut from the end to fit the search budget.

        Every ``memory_search`` ranking (keys, full text, vectors, fused) answers through this one budget rule:
        with a content budget, whole items while their content fits (:func:`memory_tools.disclosure.fit_disclosure`).
        """
        shown = len(results)
        if self._content_budget is not None:
            shown = fit_disclosure([r["content"] for _, r in results], top_k=len(results), chars=self._content_budget)
        for kept in range(shown, -1, -1):
            envelope = {
                "match": args.match.value,
                "limit": args.limit,
                "limitCapped": args.limit_capped,
                "truncated": kept < len(results),
                "omittedCount": len(results) - kept,
                "results": [with_iso_times(result, self._iso_times) for _, result in results[:kept]],
            }
            text = _dumps(envelope)
            if self._search_budget is None or len(text) <= self._search_budget:
                return STATUS_OK, text, tuple(item_id for item_id, _ in results[:kept]), True
        raise AssertionError("unreachable: the empty envelope fits the minimum budget")  # pragma: no cover

    def _get(self, item_id: str) -> _Outcome:
        record = self._store.read_item(item_id)
        if record is None or record.item.item_id != item_id or not item_visible(record.item, self._workspace_key):
            return _error(STATUS_NOT_FOUND, _NOT_FOUND_MESSAGE, storage_read=True)
        keys = [{"key": k.key, "keyType": str(k.key_type), "keyOrigin": str(k.key_origin)} for k in record.keys]
        sources = [
            {"sessionId": s.session_id, "runId": s.run_id, "turnId": s.turn_id, "eventId": s.event_id}
            for s in record.sources
        ]
        # Drop whole sources from the end, then whole keys, until the text fits; never cut a value.
        kept_keys, kept_sources = len(keys), len(sources)
        content = budgeted_content(record.item.content, self._content_budget)
        while True:
            item = with_iso_times(_item_fields(record), self._iso_times) | content
            item |= {"keys": keys[:kept_keys], "sourceCount": len(sources), "sources": sources[:kept_sources]}
            text = _dumps(
                {
                    "truncated": kept_keys < len(keys) or kept_sources < len(sources),
                    "omittedKeyCount": len(keys) - kept_keys,
                    "omittedSourceCount": len(sources) - kept_sources,
                    "item": item,
                }
            )
            if len(text) <= self._get_budget or (kept_keys == 0 and kept_sources == 0):
                if len(text) > self._get_budget:
                    _log.warning("memory_get: item %r exceeds the budget even without keys and sources", item_id)
                return STATUS_OK, text, (item_id,), True
            if kept_sources:
                kept_sources -= 1
            else:
                kept_keys -= 1


_Outcome = tuple[str, str, tuple[str, ...], bool]


def _key_matches(normalized_key: str, terms: frozenset[str], match: MatchMode) -> bool:
    if match == MatchMode.EXACT:
        return normalized_key in terms
    return any(normalized_key.startswith(term) for term in terms)


def _item_fields(record: MemoryItemRecord) -> dict[str, Any]:
    """``memory_get``'s item: the search fields plus lifecycle, scope, origin and times."""
    item = record.item
    return _common_fields(record) | {
        "lifecycleState": str(item.lifecycle_state),
        "scopeType": str(item.scope_type),
        "origin": str(item.origin),
        "createdAt": item.created_at,
        "updatedAt": item.updated_at,
    }


def _search_result(record: MemoryItemRecord, matched_keys: list[str]) -> dict[str, Any]:
    """Exactly the proposal's fields of one ``memory_search`` result."""
    return _common_fields(record) | {"matchedKeys": matched_keys, "sourceCount": len(record.sources)}


def _common_fields(record: MemoryItemRecord) -> dict[str, Any]:
    item = record.item
    return {
        "itemId": item.item_id,
        "version": item.version,
        "content": item.content,
        "kind": str(item.kind),
        "statementType": str(item.statement_type),
        "temporalType": str(item.temporal_type),
        "eventStartedAt": item.event_started_at,
        "eventEndedAt": item.event_ended_at,
        "observedAt": item.observed_at,
    }


def _error(code: str, message: str, *, storage_read: bool = False) -> _Outcome:
    return code, _dumps({"error": {"code": code, "message": message}}), (), storage_read


def _dumps(value: object) -> str:
    """Compact, deterministic JSON; a lone surrogate (only ever from model input) is escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _safe_repr(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= 80 else text[:77] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def record_arguments(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return ""
    try:
        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return repr(arguments)


def _check_budget(name: str, value: object, minimum: int, maximum: int | None = None, unit: str = "characters") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
        raise HostConfigurationError(f"{name} must be an integer {bound} {unit} (got {value!r})")
    return value
