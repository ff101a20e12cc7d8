"""Checks beyond the schema: what only the whole scenario can tell.

The pydantic models check each field; validation checks sources naming real
session turns, items named by ``relevant_items`` and ``supersedes``
(:mod:`.references`), times in order (:mod:`.times`), regexes that compile
and required text that no answer could give (:mod:`.expectations`), items the
store itself would refuse, by calling the store's own rules (``check_item_input``),
never a copy of its rules (:mod:`.store_rules`), and a few smells that are
warnings rather than errors (no distractor, the answer already in the probe
history, ``abstain`` together with ``must_contain_*``).

Every check is a pure function returning :class:`~harness.scenarios.problems.Finding`
records located by field path; the loader turns them into
:class:`~harness.scenarios.problems.Problem` records with a file and a line.
The cross-field checks (:func:`check_data`) read a
:class:`~harness.scenarios.models.Scenario` or, when the models refuse a
file, the raw mapping that parsed (:func:`check_partial`), so one
``validate`` shows every problem; the smells need a valid scenario.
Suggestions ("did you mean ...?") come from the ids the scenario really has.
"""

from harness.scenarios.validation.checks import (
    check_conversation_probe,
    check_data,
    check_items,
    check_partial,
    check_probe_data,
    check_scenario,
    check_shared_data,
    check_store_partial,
)
from harness.scenarios.validation.fields import SharedIndex

__all__ = [
    "SharedIndex",
    "check_conversation_probe",
    "check_data",
    "check_items",
    "check_partial",
    "check_probe_data",
    "check_scenario",
    "check_shared_data",
    "check_store_partial",
]
