"""What every system is given and how it is identified: the run's retrieval budget and the arm fingerprint."""

from __future__ import annotations

from typing import Any

from harness.memory_systems import MemoryInstance, MemorySystem, SystemArm, arm_fingerprint, open_instance, resolve_arm
from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET, RetrievalBudget
from tests.memory_systems.prompt_factories import make_scenario

BUDGET = RetrievalBudget(top_k=3, chars=2000)


class OldStyle(MemorySystem):
    """A plug-in written before budgets: ``open`` takes no budget."""

    name = "old_style"
    arms = {"old_style": "seeded"}

    def open(self, scenario: Any, write_mode: Any) -> MemoryInstance:
        return MemoryInstance(scenario)


class NewStyle(MemorySystem):
    """A plug-in that sizes its store by the budget at open time."""

    name = "new_style"
    arms = {"new_style": "seeded"}
    sees_session_times = False
    seen: RetrievalBudget | None = None

    def open(self, scenario: Any, write_mode: Any, *, budget: RetrievalBudget = DEFAULT_RETRIEVAL_BUDGET) -> MemoryInstance:
        self.seen = budget
        return MemoryInstance(scenario)


def test_a_plug_in_written_before_budgets_opens_unchanged_and_its_instance_holds_the_budget() -> None:
    instance = open_instance(SystemArm("old_style", OldStyle(), "seeded"), make_scenario(), BUDGET)
    assert instance.retrieval_budget == BUDGET


def test_a_system_that_declares_a_budget_parameter_gets_it_in_open() -> None:
    system = NewStyle()
    instance = open_instance(SystemArm("new_style", system, "seeded"), make_scenario(), BUDGET)
    assert system.seen == BUDGET and instance.retrieval_budget == BUDGET


def test_the_notebook_example_plug_in_opens_with_a_budget() -> None:
    """examples/recall-eval-notebook (written before budgets) loaded from its file, installed or not."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "recall-eval-notebook" / "recall_eval_notebook" / "__init__.py"
    spec = importlib.util.spec_from_file_location("notebook_example_under_test", path)
    assert spec is not None and spec.loader is not None
    notebook = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = notebook  # its dataclasses look their module up
    try:
        spec.loader.exec_module(notebook)
    finally:
        del sys.modules[spec.name]
    arm = SystemArm("notebook", notebook.NotebookSystem(), "agent")
    assert open_instance(arm, make_scenario(), BUDGET).retrieval_budget == BUDGET
    # ... and honours it: three matching notes, a top-k of 1
    import json

    from harness.scenarios import probe_policy

    scenario = make_scenario()
    instance = open_instance(arm, scenario, RetrievalBudget(top_k=1, chars=4000))
    writer = instance.begin_write(scenario.sessions[0])
    for i in range(3):
        writer.call("note_save", {"title": f"port {i}", "text": f"the dev server port is 517{i}"})
    probe = instance.begin_probe(*probe_policy(scenario))
    found = json.loads(probe.tools.call("note_search", {"query": "dev server port"}).result_text)["results"]
    assert len(found) == 1


def test_the_built_in_item_store_arm_offers_the_budgets_top_k() -> None:
    from harness.scenarios import probe_policy

    instance = open_instance(resolve_arm("recall"), make_scenario(), BUDGET)
    try:
        setup = instance.begin_probe(*probe_policy(make_scenario()))
        spec = setup.arm_setup().tools[0]["function"]
        assert "at most 3)" in spec["description"]
    finally:
        instance.close()


def test_the_fingerprint_names_system_version_budget_session_times_and_a_configuration_hash() -> None:
    arm = SystemArm("new_style", NewStyle(), "seeded", origin="recall-eval-newstyle 1.2")
    fingerprint = arm_fingerprint(arm, BUDGET, "0.1.0")
    assert fingerprint["system"] == "new_style" and fingerprint["version"] == "recall-eval-newstyle 1.2"
    assert fingerprint["retrieval_budget"] == {"top_k": 3, "chars": 2000}
    assert fingerprint["sees_session_times"] is False
    assert arm_fingerprint(resolve_arm("recall"), BUDGET, "0.1.0")["version"] == "recall-eval 0.1.0"


def test_the_configuration_hash_changes_with_budget_configuration_and_session_times() -> None:
    class Tuned(NewStyle):
        def configuration(self) -> dict[str, Any]:
            return {"ranking": "rrf", "k": 60}

    class Retuned(NewStyle):
        def configuration(self) -> dict[str, Any]:
            return {"ranking": "rrf", "k": 30}

    def digest(system: MemorySystem, budget: RetrievalBudget = BUDGET) -> str:
        return arm_fingerprint(SystemArm("x", system, "seeded"), budget, "0.1.0")["config_hash"]

    base = digest(Tuned())
    assert base == digest(Tuned())  # deterministic
    assert base != digest(Retuned()) and base != digest(Tuned(), DEFAULT_RETRIEVAL_BUDGET)
    plain = NewStyle()
    seeing = NewStyle()
    seeing.sees_session_times = True
    assert digest(plain) != digest(seeing)


def test_named_memory_recall_honours_the_budgets_top_k_and_characters_of_memory_text() -> None:
    """The budget counts the memories' texts (about 140 characters each), not the JSON around them (about 240 each)."""
    import json

    from harness.scenarios import probe_policy

    scenario = make_scenario()
    instance = open_instance(resolve_arm("named_memory"), scenario, RetrievalBudget(top_k=3, chars=300))
    try:
        writer = instance.begin_write(scenario.sessions[0])
        for i in range(8):
            text = (f"Dev server note {i}: the port moved again, this time to 51{i:02d}, per the ops channel; "
                    "the old port stays reserved for the staging proxy.")
            assert writer.call("remember", {"name": f"port note {i}", "text": text, "scope": "project"}).status == "ok"
        probe = instance.begin_probe(*probe_policy(scenario))
        spec = probe.arm_setup().tools[0]["function"]
        assert "at most 3)" in spec["description"]
        record = probe.tools.call("recall", {"query": "dev server port note", "limit": 20})
        result = json.loads(record.result_text)
        assert result["limit"] == 3 and result["limitCapped"] is True
        assert len(result["memories"]) == 2 and result["truncated"] is True and result["omittedCount"] == 1
        assert sum(len(m["text"]) for m in result["memories"]) <= 300 < len(record.result_text)
        assert len(record.disclosed_item_ids) == 2
    finally:
        instance.close()
