"""The entry points of validation: every check of one scenario, of a conversation's shared part, of one probe.

The cross-field checks come in two halves: those of the sessions and items
alone (:func:`check_shared_data`, run once per conversation file) and those
of one probe against them (:func:`check_probe_data`, run per probe).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.scenarios.models import ItemSpec, Scenario, Session
from harness.scenarios.problems import Finding
from harness.scenarios.validation.expectations import check_category, check_expect, check_smells
from harness.scenarios.validation.fields import Sessions, SharedIndex, field_of, list_field, valid_or_none
from harness.scenarios.validation.forgetting import check_forgotten
from harness.scenarios.validation.references import (
    check_history_ids,
    check_ids,
    check_item_roles,
    check_relevant,
    check_sources,
    check_supersedes,
)
from harness.scenarios.validation.store_rules import check_store_rules
from harness.scenarios.validation.times import check_item_times, check_probe_times


def check_scenario(scenario: Scenario) -> list[Finding]:
    """Every cross-field, store-rule and smell check of one valid scenario."""
    findings = check_data(scenario)
    findings.extend(check_smells(scenario))
    findings.extend(check_forgotten(scenario))
    findings.extend(check_store_rules(scenario.items, scenario))
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
    for check in (check_ids, check_sources, check_supersedes, check_item_times):
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
    probe, expect = field_of(data, "probe"), field_of(data, "expect")
    findings: list[Finding] = list(check_category(data))
    findings.extend(check_history_ids(probe))
    findings.extend(check_relevant(shared, probe, expect))
    findings.extend(check_item_roles(shared, field_of(data, "item_roles")))
    findings.extend(check_probe_times(shared, probe, blame_probe))
    findings.extend(check_expect(expect))
    return findings


def check_partial(data: dict[str, Any]) -> list[Finding]:
    """What can still be checked of a scenario the models refused: :func:`check_data`,
    then the store's rules for every item that is valid on its own."""
    return check_data(data) + check_store_partial(data)


def check_store_partial(data: dict[str, Any]) -> list[Finding]:
    """The store's rules for every item of a refused mapping that is valid on its own."""
    items = data.get("items")
    if not isinstance(items, list):
        return []
    sessions = [valid_or_none(Session, raw) for raw in list_field(data, "sessions") or []]
    context = Sessions(data.get("id"), [session for session in sessions if session is not None])
    specs = [valid_or_none(ItemSpec, raw) for raw in items]
    return list(check_store_rules(specs, context))


def check_items(items: Sequence[ItemSpec], sessions: Sequence[Session], owner: Any) -> list[Finding]:
    """The store's rules for validated items (a conversation's, checked once for all its probes)."""
    return list(check_store_rules(items, Sessions(owner, list(sessions))))


def check_conversation_probe(data: Any, scenario: Scenario | None, shared: SharedIndex) -> list[Finding]:
    """Every check of one probe of a conversation: :func:`check_probe_data` (times blamed on the probe),
    then the smells when the probe built a valid ``scenario``."""
    findings = check_probe_data(data, shared, blame_probe=True)
    if scenario is not None:
        findings.extend(check_smells(scenario, conversation=True))
        findings.extend(check_forgotten(scenario))
    return findings
