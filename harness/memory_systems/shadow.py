"""The ``shadow`` arm: answer as ``history_only`` (what users got), and record what recall *would* have disclosed.

Seed 000's step 3 is measuring the read path on a team's own traffic before
turning the tools on. The ``shadow`` arm does exactly that, risk-free:

- the model gets ``history_only``'s messages and no tools, so its calls and
  its answer are the baseline's (the same request; nothing of the search
  reaches it);
- the harness itself, not the model, issues one ``memory_search`` for the
  probe through the same :class:`memory_tools.Host`, policy, run context and
  result budgets as ``recall`` (a fresh copy of the same seeded store), with
  the user's probe message as terms (:func:`shadow_terms`) and the tool's
  defaults (``match`` exact, the default ``limit``);
- what that search returned is kept in the sample record's ``shadow`` field
  (:class:`harness.records.ShadowSearchLog`): the items it would have
  disclosed, whether the budget truncated it, its size, its latency, and any
  scope violation found by reading each disclosed item back from the store
  (:func:`scope_violations`: must be empty; a Host defect otherwise).

A probe whose policy denies reads (incognito, memory disabled, agent reads
off) gets a cold shadow search, as ``recall`` would get no tools: the Host
answers ``policy_denied`` without reading storage, and that is recorded.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from harness.memory_systems.builtin import ItemStoreContract, ItemStoreInstance, host_terms, seeded_item_store
from harness.memory_systems.prompts import build_history_only
from harness.memory_systems.protocol import MemoryInstance, MemorySystem, ProbeSetup, WriteMode
from harness.scenarios import Scenario
from memory_tools import Host, MemoryPolicy, MemoryValidationError, RunContext, normalize_search_term

SEARCH_TOOL = "memory_search"
MAX_TERMS = 32
"""``memory_search`` takes at most this many terms (``memory_tools.policy.MAX_SEARCH_TERMS``)."""

_TOKEN = re.compile(r"\w+(?:[.\-/:']\w+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_STOPWORDS = frozenset(
    """
    a about after again all also am an and any are as at be because been before being but by can could did do does
    doing done for from had has have having he her here hers him his how i if in into is it its just me my myself no
    not now of off on once only or our ours out over please so some than that the their them then there these they
    this those to too up us very was we were what when where which while who whom why will with would you your yours
    hi hello hey thanks thank ok okay yes let lets tell remind remember recall know again still
    """.split()
)
"""Function words and filler: a search term made of one would match no key worth finding."""


def shadow_terms(message: str) -> tuple[list[str], int]:
    """The probe message as ``memory_search`` terms, and how many were left out past :data:`MAX_TERMS`.

    Content words (lowercased, stopwords dropped), then each adjacent pair of
    content words (keys such as ``partner api`` are phrases), then CJK runs and
    their two-character windows; duplicates and terms the Host would refuse
    are dropped. Deterministic: the same message, the same terms.

    Example:
        >>> shadow_terms("What is the rate limit for the partner API?")
        (['rate', 'limit', 'partner', 'api', 'rate limit', 'partner api'], 0)
    """
    words: list[str] = []
    pairs: list[str] = []
    previous: str | None = None
    for token in _TOKEN.findall(_CJK.sub(" ", message)):
        lower = token.lower().strip("'")
        if not lower or lower in _STOPWORDS or lower.endswith("'s") and lower[:-2] in _STOPWORDS:
            previous = None
            continue
        lower = lower[:-2] if lower.endswith("'s") else lower
        words.append(lower)
        if previous is not None:
            pairs.append(f"{previous} {lower}")
        previous = lower
    cjk: list[str] = []
    for run in _CJK.findall(message):
        cjk.append(run)
        cjk.extend(run[i:i + 2] for i in range(len(run) - 1))
    terms: list[str] = []
    seen: set[str] = set()
    for term in [*words, *pairs, *cjk]:
        try:
            normalized = normalize_search_term(term)
        except MemoryValidationError:
            continue
        if normalized not in seen:
            seen.add(normalized)
            terms.append(term)
    return terms[:MAX_TERMS], max(0, len(terms) - MAX_TERMS)


@dataclass(frozen=True)
class ShadowObservation:
    """One shadow search as the harness issued it (the run stage adds tokens and writes it to the record).

    Attributes:
        terms: The terms sent (:func:`shadow_terms` of the probe message).
        terms_dropped: Terms left out past the tool's 32-term limit.
        arguments: The arguments exactly as sent (JSON text).
        admitted: Whether the Host admitted the memory tools for this probe.
        denial: Why not (``incognito``, ``memory_disabled``, ``agent_reads_disabled``...), else None.
        status: The Host's status (``ok``, ``policy_denied``...), or ``no_terms`` (nothing searchable: no call).
        result_text: The exact text recall's model would have been given.
        disclosed_item_ids: Items whose content that text holds.
        truncated: The search budget cut results off (``truncated`` in the result).
        omitted_count: Results the budget cut off.
        storage_read: Whether the Host read storage at all.
        elapsed_s: The Host's time for the search.
        scope_violations: ``item id: why`` for each disclosed item the probe's scope may not see (must be empty).
    """

    terms: tuple[str, ...]
    terms_dropped: int
    arguments: str
    admitted: bool
    denial: str | None
    status: str
    result_text: str
    disclosed_item_ids: tuple[str, ...]
    truncated: bool
    omitted_count: int
    storage_read: bool
    elapsed_s: float
    scope_violations: tuple[str, ...] = ()


def scope_violations(store: Any, context: RunContext, admitted: bool, disclosed: tuple[str, ...],
                     storage_read: bool) -> list[str]:
    """Every disclosure the probe's scope forbids, checked apart from the Host by reading each item back.

    A read or a disclosure under a denying policy; an item the store does not
    hold; an item that is not active; an item of another workspace (or any
    workspace item when the probe has none). Written out here, not through
    ``memory_tools.item_visible``, so a defect in the Host's own check shows.
    """
    found: list[str] = []
    if not admitted and (storage_read or disclosed):
        found.append(f"(run): {'disclosed items' if disclosed else 'read storage'} under a denying policy")
    for item_id in disclosed:
        record = store.read_item(item_id)
        if record is None:
            found.append(f"{item_id}: not in the store")
            continue
        item = record.item
        if str(item.lifecycle_state) != "active":
            found.append(f"{item_id}: {item.lifecycle_state} item")
        elif str(item.scope_type) == "workspace" and item.scope_key != context.workspace_key:
            found.append(f"{item_id}: item of workspace {item.scope_key!r}, probe in {context.workspace_key!r}")
        elif str(item.scope_type) == "global" and item.scope_key is not None:
            found.append(f"{item_id}: a global item with scope key {item.scope_key!r}")
    return found


def shadow_search(run: Any, store: Any, context: RunContext, message: str) -> ShadowObservation:
    """Issue the probe's shadow ``memory_search`` on ``run`` (a Host run) and check what it disclosed.

    Never raises for what the Host answers; a message with no searchable term
    makes no call (status ``no_terms``).
    """
    terms, dropped = shadow_terms(message)
    admitted = bool(run.admitted)
    denial = run.denial_reason
    arguments = json.dumps({"terms": terms}, ensure_ascii=False, separators=(",", ":"))
    if not terms:
        return ShadowObservation((), dropped, arguments, admitted, denial, "no_terms", "", (), False, 0, False, 0.0)
    started = time.perf_counter()
    record = run.call(SEARCH_TOOL, arguments)
    elapsed = float(getattr(record, "elapsed_s", time.perf_counter() - started))
    truncated, omitted = _budget_cut(record.result_text) if record.status == "ok" else (False, 0)
    disclosed = tuple(record.disclosed_item_ids)
    violations = scope_violations(store, context, admitted, disclosed, bool(record.storage_read))
    return ShadowObservation(tuple(terms), dropped, record.arguments, admitted, denial, str(record.status),
                             record.result_text, disclosed, truncated, omitted, bool(record.storage_read), elapsed,
                             tuple(violations))


def _budget_cut(text: str) -> tuple[bool, int]:
    """(truncated, omitted count) from a ``memory_search`` result (both falsy for text that is not one)."""
    try:
        data = json.loads(text)
    except ValueError:
        return False, 0
    if not isinstance(data, dict):
        return False, 0
    omitted = data.get("omittedCount")
    return data.get("truncated") is True, omitted if isinstance(omitted, int) and not isinstance(omitted, bool) else 0


class _ShadowInstance(ItemStoreInstance):
    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        # Recall's Host (same store seeding, policy, context and the run's retrieval budget); never given to the model.
        host_run = Host(self.store, policy, **host_terms(self.retrieval_budget)).open_run(context)
        observed = shadow_search(host_run, self.store, context, self.scenario.probe.message)
        return ProbeSetup(build_history_only(self.scenario).messages, None, shadow=observed)


class ShadowSystem(ItemStoreContract, MemorySystem):
    """``history_only``'s answer, plus the search recall would have made, recorded and never shown."""

    name = "shadow"
    description = "history_only's answer; the harness records what recall's memory_search would have disclosed"
    arms = {"shadow": "seeded"}
    forgetting = "archive (search unseen)"
    discloses, own_instructions = "nothing", ""  # the search is recorded, never shown

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return _ShadowInstance(scenario, seeded_item_store(scenario))
