"""Scenario fixtures: models, loading, validation and store seeding.

Public surface (the runner and the report code use these names):

- the format: :class:`Scenario` and its blocks, :class:`Conversation` and
  :class:`ProbeEntry` of conversation files (``models.py``, ``conversation.py``);
- :func:`discover`, :func:`load_scenarios`, :func:`load_suite` with a :class:`Selection`,
  :func:`scenario_hash` (``loading.py``);
- :class:`ScenarioError` with :class:`Problem` records (``validation.py``);
- :func:`seed_store`, :func:`item_input`, :class:`StoreTemplates` (``seeding.py``) and :func:`sessions_in_scope`.
"""

from harness.scenarios.hashing import scenario_hash
from harness.scenarios.loading import Selection, SuiteLoad, discover, load_scenarios, load_suite, select
from harness.scenarios.models import (
    SCENARIO_SCHEMA_VERSION,
    AnswerCheck,
    Canary,
    Category,
    Conversation,
    Expect,
    ItemSpec,
    KeySpec,
    Policy,
    Probe,
    ProbeEntry,
    Revision,
    Scenario,
    Session,
    SourceRef,
    Turn,
    sessions_in_scope,
)
from harness.scenarios.problems import Problem, ScenarioError
from harness.scenarios.seeding import StoreTemplates, item_input, probe_denial, probe_policy, seed_plan, seed_store

__all__ = [
    "SCENARIO_SCHEMA_VERSION",
    "AnswerCheck",
    "Canary",
    "Category",
    "Conversation",
    "Expect",
    "ItemSpec",
    "KeySpec",
    "Policy",
    "Probe",
    "ProbeEntry",
    "Problem",
    "Revision",
    "Scenario",
    "ScenarioError",
    "Selection",
    "Session",
    "SourceRef",
    "StoreTemplates",
    "SuiteLoad",
    "Turn",
    "discover",
    "item_input",
    "probe_denial",
    "probe_policy",
    "load_scenarios",
    "load_suite",
    "scenario_hash",
    "seed_plan",
    "seed_store",
    "select",
    "sessions_in_scope",
]
