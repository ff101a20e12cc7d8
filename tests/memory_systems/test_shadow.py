"""The shadow arm: history_only's request to the model, and a harness-side search recorded but never shown."""

from __future__ import annotations

import asyncio
import json
import os
import time
import types

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.memory_systems import resolve_arm  # noqa: E402
from harness.memory_systems.builtin import seeded_item_store  # noqa: E402
from harness.memory_systems.shadow import MAX_TERMS, ShadowObservation, scope_violations, shadow_search, shadow_terms  # noqa: E402
from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.run.retry import RetryPolicy  # noqa: E402
from harness.run.sample import run_memory_sample  # noqa: E402
from harness.scenarios import Scenario, load_scenarios, probe_policy  # noqa: E402
from memory_tools import RunContext  # noqa: E402
from tests.golden.digests import STARTER  # noqa: E402
from tests.memory_systems.prompt_factories import make_scenario  # noqa: E402
from tests.run.scripted_model import install_scripted  # noqa: E402


@pytest.fixture(scope="module")
def starter() -> list[Scenario]:
    return load_scenarios([STARTER])


def _probe(arm_name: str, scenario: Scenario):
    arm = resolve_arm(arm_name)
    instance = arm.system.open(scenario, arm.write_mode)
    try:
        return instance.begin_probe(*probe_policy(scenario))
    finally:
        instance.close()


def _with_foreign_item(scenario: Scenario) -> Scenario:
    """The port scenario plus another workspace's item under the same keys (a canary the scope must hold back)."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    data["items"].append({"id": "it-foreign-port", "content": "CANARY billing port is 9999.", "kind": "context",
                          "workspace": "ws-b", "keys": ["dev server", "port"],
                          "sources": [{"session": "s-other", "turn": "t1"}], "role": "canary"})
    data["expect"]["canaries"] = [{"text": "CANARY", "kind": "leakage"}]
    return Scenario.model_validate(data)


def test_shadow_offers_exactly_history_only_messages_and_no_tools_on_every_starter_scenario(starter) -> None:
    surfaced = 0
    for scenario in starter:
        shadow, baseline = _probe("shadow", scenario), _probe("history_only", scenario)
        assert shadow.arm_setup() == baseline.arm_setup(), scenario.id
        assert shadow.tools is None and shadow.shadow is not None
        surfaced += bool(shadow.shadow.disclosed_item_ids)
    assert surfaced > 0  # the search did find things: the equality above is not trivially about an empty search


def test_the_model_never_sees_the_shadow_search() -> None:
    """The requests the shadow arm sends are history_only's, byte for byte, and hold nothing the search returned."""
    seen: list[tuple[str, str]] = []

    def script(messages, tools):
        seen.append((json.dumps(messages, sort_keys=True), json.dumps(tools, sort_keys=True)))
        return {"content": "I don't know."}

    install_scripted(script)
    scenario = make_scenario()
    results = {}
    for arm in ("history_only", "shadow"):
        results[arm] = asyncio.run(run_memory_sample(
            arm, scenario, client=ModelClient(retry=RetryPolicy(retries=0)), settings=ModelSettings("scripted/x"),
            epoch=0, max_tool_rounds=4))
    assert len(seen) == 2 and seen[0] == seen[1]
    shadow = results["shadow"].shadow
    assert shadow.disclosed_item_ids == ("it-port",) and "5174" in shadow.result_text
    assert "5174" not in seen[1][0] and "it-port" not in seen[1][0]
    assert results["shadow"].tools == [] and results["shadow"].outcome.tool_calls == []
    assert results["shadow"].outcome.messages == results["history_only"].outcome.messages


def test_the_shadow_search_is_what_recall_would_have_been_given_for_those_terms() -> None:
    """Same store seeding, same Host, policy and budgets: recall's own tool run returns the very same text."""
    scenario = make_scenario()
    observed = _probe("shadow", scenario).shadow
    recall = resolve_arm("recall")
    instance = recall.system.open(scenario, recall.write_mode)
    try:
        tools = instance.begin_probe(*probe_policy(scenario)).tools
        record = tools.call("memory_search", observed.arguments)
    finally:
        instance.close()
    assert record.result_text == observed.result_text
    assert tuple(record.disclosed_item_ids) == observed.disclosed_item_ids


@pytest.mark.parametrize(("field", "reason"), [("incognito", "incognito"), ("memory_disabled", "memory_disabled"),
                                               ("reads_off", "agent_reads_disabled")])
def test_denied_policies_make_the_shadow_search_cold(field: str, reason: str) -> None:
    scenario = make_scenario()
    assert _probe("shadow", scenario).shadow.disclosed_item_ids == ("it-port",)  # admitted: the item surfaces
    probe = scenario.probe
    denied = {
        "incognito": probe.model_copy(update={"incognito": True}),
        "memory_disabled": probe.model_copy(update={"policy": probe.policy.model_copy(update={"enabled": False})}),
        "reads_off": probe.model_copy(update={"policy": probe.policy.model_copy(update={"agent_read_enabled": False})}),
    }[field]
    cold = _probe("shadow", scenario.model_copy(update={"probe": denied})).shadow
    assert (cold.admitted, cold.denial, cold.status) == (False, reason, "policy_denied")
    assert not cold.storage_read and cold.disclosed_item_ids == () and cold.scope_violations == ()
    assert "5174" not in cold.result_text


def test_another_workspaces_item_is_never_surfaced_and_no_violation_is_recorded() -> None:
    observed = _probe("shadow", _with_foreign_item(make_scenario())).shadow
    assert observed.disclosed_item_ids == ("it-port",) and observed.scope_violations == ()


class _LeakyRun:
    """A Host run with a defect: it discloses whatever ids it is given, admitted or not."""

    def __init__(self, ids: tuple[str, ...], admitted: bool = True) -> None:
        self.ids, self.admitted = ids, admitted
        self.denial_reason = None if admitted else "incognito"

    def call(self, name, arguments):
        return types.SimpleNamespace(arguments=arguments, status="ok", result_text='{"truncated":false,"results":[]}',
                                     disclosed_item_ids=self.ids, storage_read=True, elapsed_s=0.001)


def test_a_host_that_discloses_another_workspaces_item_is_a_scope_violation() -> None:
    scenario = _with_foreign_item(make_scenario())
    store = seeded_item_store(scenario)
    try:
        _, context = probe_policy(scenario)
        leaky = shadow_search(_LeakyRun(("it-port", "it-foreign-port")), store, context, scenario.probe.message)
        assert leaky.scope_violations == ("it-foreign-port: item of workspace 'ws-b', probe in 'ws-a'",)
        denied = shadow_search(_LeakyRun(("it-port",), admitted=False), store, context, scenario.probe.message)
        assert denied.scope_violations[0].startswith("(run): disclosed items under a denying policy")
        missing = shadow_search(_LeakyRun(("it-nowhere",)), store, context, scenario.probe.message)
        assert missing.scope_violations == ("it-nowhere: not in the store",)
    finally:
        store.close()


def test_a_result_cut_by_the_search_budget_is_recorded_as_truncated() -> None:
    scenario = make_scenario()
    data = scenario.model_dump(mode="json", exclude_none=True)
    for n in range(6):  # long items under the same key: five results overflow the 4,000-character budget
        data["items"].append({"id": f"it-long-{n}", "content": f"Port note {n}: " + "x" * 1500, "kind": "context",
                              "workspace": "ws-a", "keys": ["port"], "sources": [{"session": "s-late", "turn": "t1"}],
                              "role": "distractor"})
    observed = _probe("shadow", Scenario.model_validate(data)).shadow
    assert observed.truncated and observed.omitted_count > 0 and len(observed.result_text) <= 4000


def test_shadow_terms_are_the_messages_content_words_then_adjacent_pairs() -> None:
    assert shadow_terms("Which port does the dev server use?") == (
        ["port", "dev", "server", "use", "dev server", "server use"], 0)
    assert shadow_terms("hi, thanks!") == ([], 0)
    assert shadow_terms("偏好是什么") [0][:2] == ["偏好是什么", "偏好"]
    many = " ".join(f"word{n}" for n in range(40))
    terms, dropped = shadow_terms(many)
    assert len(terms) == MAX_TERMS and dropped == 40 + 39 - MAX_TERMS


def test_a_message_with_nothing_searchable_makes_no_call() -> None:
    scenario = make_scenario(message="Thanks!")
    observed = _probe("shadow", scenario).shadow
    assert observed.status == "no_terms" and not observed.storage_read and observed.result_text == ""


def test_shadow_is_registered_like_the_built_ins() -> None:
    arm = resolve_arm("shadow")
    assert arm.origin == "built-in" and arm.write_mode == "seeded" and arm.system.name == "shadow"


def _stored(item_id: str, state: str, scope_type: str, scope_key: str | None) -> types.SimpleNamespace:
    item = types.SimpleNamespace(lifecycle_state=state, scope_type=scope_type, scope_key=scope_key)
    return types.SimpleNamespace(item=item)


class _FakeStore:
    """A store that answers ``read_item`` from a dict: the violation check alone, with no Host in front of it."""

    def __init__(self, **records: types.SimpleNamespace) -> None:
        self.records = records

    def read_item(self, item_id: str):
        return self.records.get(item_id)


def test_a_workspace_item_disclosed_to_a_probe_without_a_workspace_is_a_scope_violation() -> None:
    store = _FakeStore(own=_stored("own", "active", "workspace", "ws-a"), glob=_stored("glob", "active", "global", None))
    assert scope_violations(store, RunContext(workspace_key=None), True, ("glob",), True) == []
    assert scope_violations(store, RunContext(workspace_key=None), True, ("own", "glob"), True) == [
        "own: item of workspace 'ws-a', probe in None"]
    assert scope_violations(store, RunContext(workspace_key="ws-a"), True, ("own", "glob"), True) == []


def test_an_archived_item_or_a_global_item_with_a_scope_key_is_a_scope_violation() -> None:
    store = _FakeStore(old=_stored("old", "archived", "workspace", "ws-a"), odd=_stored("odd", "active", "global", "k"))
    assert scope_violations(store, RunContext(workspace_key="ws-a"), True, ("old", "odd"), True) == [
        "old: archived item", "odd: a global item with scope key 'k'"]


def test_reading_storage_under_a_denying_policy_is_a_violation_even_with_nothing_disclosed() -> None:
    found = scope_violations(_FakeStore(), RunContext(workspace_key="ws-a"), False, (), True)
    assert found == ["(run): read storage under a denying policy"]
    assert scope_violations(_FakeStore(), RunContext(workspace_key="ws-a"), False, (), False) == []


class _StoreIgnoringWorkspace:
    """The seeded store with its own scope filter removed: every search also returns workspace ``ws-b``'s items."""

    def __init__(self, store) -> None:
        self._store = store

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def search_by_keys(self, terms, match="exact", *, workspace_key=None, **kwargs):
        return (self._store.search_by_keys(terms, match, workspace_key="ws-b", **kwargs)
                + self._store.search_by_keys(terms, match, workspace_key=workspace_key, **kwargs))


def test_a_store_that_ignores_the_workspace_is_held_back_by_the_hosts_own_check() -> None:
    """The store's filter removed, the Host's stands: the shadow search discloses only the probe's workspace."""
    scenario = _with_foreign_item(make_scenario())
    arm = resolve_arm("shadow")
    instance = arm.system.open(scenario, arm.write_mode)
    try:
        instance.store = _StoreIgnoringWorkspace(instance.store)
        observed = instance.begin_probe(*probe_policy(scenario)).shadow
    finally:
        instance.close()
    assert observed.disclosed_item_ids == ("it-port",) and "9999" not in observed.result_text
    assert observed.scope_violations == ()


def test_an_item_missing_from_the_store_does_not_hide_a_foreign_item_disclosed_after_it() -> None:
    store = _FakeStore(foreign=_stored("foreign", "active", "workspace", "ws-b"))
    assert scope_violations(store, RunContext(workspace_key="ws-a"), True, ("gone", "foreign"), True) == [
        "gone: not in the store", "foreign: item of workspace 'ws-b', probe in 'ws-a'"]


class _ScriptedRun:
    """A run whose one search returns the given record (what a Host or a defective one might answer)."""

    def __init__(self, admitted: bool = True, **record: object) -> None:
        self.admitted, self.denial_reason = admitted, None if admitted else "incognito"
        self.record = {"status": "ok", "result_text": '{"truncated":false,"results":[]}', "disclosed_item_ids": (),
                       "storage_read": True, **record}
        self.sent: list[str] = []

    def call(self, name, arguments):
        self.sent.append(arguments)
        return types.SimpleNamespace(arguments=arguments, **self.record)


def _observe(run: _ScriptedRun, message: str = "Which port does the dev server use?"):
    return shadow_search(run, _FakeStore(), RunContext(workspace_key="ws-a"), message)


def test_the_observation_records_the_terms_the_arguments_sent_and_the_hosts_timing() -> None:
    run = _ScriptedRun(elapsed_s=0.25)
    observed = _observe(run, "Où est le café de l'équipe?")
    assert run.sent == ['{"terms":["où","est","le","café","de","l\'équipe","où est","est le","le café",'
                        '"café de","de l\'équipe"]}']
    assert observed.arguments == run.sent[0] and observed.terms[:4] == ("où", "est", "le", "café")
    assert (observed.terms_dropped, observed.storage_read, observed.elapsed_s) == (0, True, 0.25)


def test_a_run_record_without_its_own_timing_is_timed_around_the_call() -> None:
    before = time.perf_counter()
    observed = _observe(_ScriptedRun())
    assert 0.0 <= observed.elapsed_s <= time.perf_counter() - before


def test_a_message_with_nothing_searchable_is_recorded_as_an_empty_uncalled_search() -> None:
    run = _ScriptedRun()
    observed = _observe(run, "Thanks!")
    assert run.sent == []
    assert observed == ShadowObservation((), 0, '{"terms":[]}', True, None, "no_terms", "", (), False, 0, False, 0.0)
    denied = _observe(_ScriptedRun(admitted=False), "Thanks!")
    assert (denied.admitted, denied.denial, denied.status) == (False, "incognito", "no_terms")


@pytest.mark.parametrize(("text", "cut"), [
    ('{"truncated":true,"omittedCount":3,"results":[]}', (True, 3)),
    ('{"truncated":true,"omittedCount":true}', (True, 0)),  # a flag is not a count
    ('{"truncated":"yes","omittedCount":"3"}', (False, 0)),  # nor is text
    ("Memory search is unavailable.", (False, 0)),  # not JSON
    ('[{"truncated":true}]', (False, 0)),  # not the envelope
])
def test_truncation_is_read_only_from_a_search_envelope_that_says_so(text: str, cut: tuple[bool, int]) -> None:
    observed = _observe(_ScriptedRun(result_text=text))
    assert (observed.truncated, observed.omitted_count) == cut


def test_a_refused_search_is_never_recorded_as_truncated() -> None:
    observed = _observe(_ScriptedRun(admitted=False, status="policy_denied", storage_read=False,
                                     result_text='{"error":"policy_denied"}'))
    assert (observed.truncated, observed.omitted_count, observed.scope_violations) == (False, 0, ())


def test_a_run_that_read_storage_under_a_denying_policy_is_a_violation_of_the_search() -> None:
    observed = _observe(_ScriptedRun(admitted=False, status="policy_denied", result_text="{}"))
    assert observed.scope_violations == ("(run): read storage under a denying policy",)


def test_possessives_and_contractions_are_searched_as_their_word_and_stopwords_only_whole() -> None:
    assert shadow_terms("What's Ana's theme?") == (["ana", "theme", "ana theme"], 0)
    assert shadow_terms("port port") == (["port", "port port"], 0)


def test_every_two_character_window_of_a_cjk_run_is_a_term() -> None:
    assert shadow_terms("偏好是什么") == (["偏好是什么", "偏好", "好是", "是什", "什么"], 0)


def test_a_word_too_long_to_search_is_dropped_and_the_words_after_it_are_kept() -> None:
    assert shadow_terms("x" * 300 + " dev port") == (["dev", "port", "dev port"], 0)
