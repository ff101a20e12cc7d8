"""Scenarios: files -> validated :class:`Scenario` models, and the stores they seed.

Takes: scenario files and suites (YAML or JSON, documented in
``scenarios/README.md``). Gives: validated, frozen :class:`Scenario` models,
every problem of every file placed at its file and line, and a seeded
``memory_tools`` store per scenario. Public surface (the stages above use
these names):

- the format: :class:`Scenario` and its blocks, :class:`Conversation` and
  :class:`ProbeEntry` of conversation files (``models.py``, ``conversation.py``);
- :func:`discover`, :func:`load_scenarios`, :func:`load_suite` with a :class:`Selection`,
  :func:`scenario_hash` (``loading.py``); :func:`load_scenario_shelf` onto a :class:`ScenarioShelf` (the suite
  compressed, a few scenarios unpacked: ``shelf.py``) with :func:`shelve`, :func:`scenario_ids`, :func:`only`,
  :func:`scenarios_by_id`, :func:`scenario_facts`, :func:`known_hash`;
- :class:`ScenarioError` with :class:`Problem` records (``problems.py``; the checks are ``validation/``);
- :func:`load_store`, :func:`with_store` (``store_items.py``): a team's real store as every scenario's items (``--store``);
- :func:`seed_store`, :func:`open_seeded_store`, :func:`reserve_store_templates`, :func:`release_store_templates`,
  :func:`item_input`, :class:`StoreTemplates` (``seeding.py``) and :func:`sessions_in_scope`;
- :func:`incomplete_suites`: imported suites whose ``_suite.json`` says ``complete: false`` (``provenance.py``);
- :class:`Protocol` (a suite's headline, recent history and category order, ``protocol.py``) and :func:`recent_sessions`;
- :func:`forget_request_sessions`, :func:`forgotten_texts`: what a scenario asks to be forgotten (``forgetting.py``);
- :class:`RetrievalBudget` (top-k and result characters every system gets, ``budget.py``), :func:`parse_retrieval_budget`, :func:`suite_budget`;
- :func:`read_yaml`: any YAML file read as safely as a scenario file (``documents.py``);
- :func:`shipped_path`, :func:`use_shipped_suites`: ``scenarios/starter`` from any folder, the installed copy (``shipped.py``).
"""

from harness.scenarios.budget import (
    DEFAULT_RETRIEVAL_BUDGET,
    RetrievalBudget,
    RetrievalBudgetError,
    budget_from_mapping,
    parse_retrieval_budget,
    suite_budget,
)
from harness.scenarios.conversation_models import Conversation, ProbeEntry
from harness.scenarios.discovery import discover
from harness.scenarios.documents import read_yaml
from harness.scenarios.field_types import ID_PATTERN
from harness.scenarios.forgetting import (
    FORGET_REQUEST,
    asks_to_forget,
    forget_request_session_ids,
    forget_request_sessions,
    forget_requests,
    forgotten_texts,
    is_forget_request,
)
from harness.scenarios.hashing import scenario_hash
from harness.scenarios.loading import Selection, SuiteLoad, load_scenario_shelf, load_scenarios, load_suite, select
from harness.scenarios.models import (
    SCENARIO_SCHEMA_VERSION,
    AnswerCheck,
    Canary,
    Category,
    Expect,
    ItemSpec,
    KeySpec,
    Policy,
    Probe,
    Revision,
    Scenario,
    Session,
    SourceRef,
    Turn,
    recent_sessions,
    sessions_in_scope,
)
from harness.scenarios.privacy import prepare_run_scenarios, redact_scenarios, sensitive_suites
from harness.scenarios.problems import Problem, ScenarioError
from harness.scenarios.protocol import Protocol, RecentHistory
from harness.scenarios.provenance import SUITE_JSON, incomplete_suites
from harness.scenarios.seeding import (
    StoreTemplates,
    item_input,
    open_seeded_store,
    probe_denial,
    probe_policy,
    release_store_templates,
    reserve_store_templates,
    seed_plan,
    seed_store,
)
from harness.scenarios.shelf import (
    ScenarioFacts,
    ScenarioShelf,
    ShelfView,
    known_hash,
    only,
    scenario_facts,
    scenario_ids,
    scenarios_by_id,
    shelve,
    work_order,
)
from harness.scenarios.shipped import shipped_path, use_shipped_suites
from harness.scenarios.store_items import (
    EXPORT_FORMAT,
    StoreError,
    StoreItems,
    export_document,
    load_store,
    visible_counts,
    with_store,
)

__all__ = [
    "ScenarioFacts",
    "ScenarioShelf",
    "ShelfView",
    "known_hash",
    "load_scenario_shelf",
    "only",
    "scenario_facts",
    "scenario_ids",
    "scenarios_by_id",
    "shelve",
    "work_order",
    "FORGET_REQUEST",
    "asks_to_forget",
    "forget_request_session_ids",
    "forget_requests",
    "forget_request_sessions",
    "forgotten_texts",
    "is_forget_request",
    "EXPORT_FORMAT",
    "ID_PATTERN",
    "StoreError",
    "StoreItems",
    "export_document",
    "load_store",
    "visible_counts",
    "with_store",
    "prepare_run_scenarios",
    "redact_scenarios",
    "sensitive_suites",
    "DEFAULT_RETRIEVAL_BUDGET",
    "RetrievalBudget",
    "RetrievalBudgetError",
    "budget_from_mapping",
    "parse_retrieval_budget",
    "suite_budget",
    "SCENARIO_SCHEMA_VERSION",
    "SUITE_JSON",
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
    "Protocol",
    "RecentHistory",
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
    "incomplete_suites",
    "item_input",
    "open_seeded_store",
    "release_store_templates",
    "reserve_store_templates",
    "probe_denial",
    "probe_policy",
    "load_scenarios",
    "load_suite",
    "read_yaml",
    "recent_sessions",
    "scenario_hash",
    "seed_plan",
    "seed_store",
    "select",
    "sessions_in_scope",
    "shipped_path",
    "use_shipped_suites",
]
