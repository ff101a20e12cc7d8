"""One shared memory instruction block for every memory arm, plug-ins included; the legacy texts behind --instructions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.memory_systems import (
    SHARED_MEMORY_INSTRUCTIONS,
    ContractTerms,
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    SystemArm,
    arm_fingerprint,
    open_instance,
    probe_messages,
    resolve_arm,
)
from harness.scenarios import RetrievalBudget, probe_policy
from tests.memory_systems.prompt_factories import make_scenario

BUDGET = RetrievalBudget()


class Notes(MemorySystem):
    """A plug-in with its own tool paragraph, written before the shared block existed."""

    name = "notes_plugin"
    arms = {"notes_plugin": "seeded"}

    def open(self, scenario: Any, write_mode: Any) -> MemoryInstance:
        class Instance(MemoryInstance):
            def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
                return ProbeSetup(probe_messages(self.scenario, tool_instructions="Call notes_search to find notes."))

        return Instance(scenario)


def system_text(arm: SystemArm) -> str:
    scenario = make_scenario()
    instance = open_instance(arm, scenario, BUDGET)
    try:
        return instance.begin_probe(*probe_policy(scenario)).messages[0]["content"]
    finally:
        instance.close()


@pytest.mark.parametrize("arm", ["recall", "recall_fts", "full_history", "memory_document", "named_memory"])
def test_every_built_in_memory_arm_gets_the_shared_block_once(arm: str) -> None:
    assert system_text(resolve_arm(arm)).count(SHARED_MEMORY_INSTRUCTIONS) == 1


def test_a_plug_in_gets_the_shared_block_before_its_own_paragraph_and_history_only_gets_none() -> None:
    text = system_text(SystemArm("notes_plugin", Notes(), "seeded"))
    assert text.endswith(f"{SHARED_MEMORY_INSTRUCTIONS}\n\nCall notes_search to find notes.")
    assert SHARED_MEMORY_INSTRUCTIONS not in system_text(resolve_arm("history_only"))


@pytest.mark.usefixtures("legacy_instructions")
def test_legacy_gives_each_arm_its_own_text_and_no_shared_block() -> None:
    from harness.memory_systems.prompts import TOOL_INSTRUCTIONS

    assert system_text(resolve_arm("recall")).endswith(TOOL_INSTRUCTIONS)
    assert SHARED_MEMORY_INSTRUCTIONS not in system_text(SystemArm("notes_plugin", Notes(), "seeded"))


@pytest.mark.parametrize("arm", ["history_only", "recall", "recall_fts", "full_history", "memory_document", "named_memory"])
def test_every_arm_reads_the_probes_current_time_in_the_iso_form_memory_times_use(arm: str) -> None:
    """Bug planted: ``system_prompt`` kept the prose ``Monday, 2 March 2026, 10:00 UTC`` under the shared block
    (memory's times ISO, "now" prose: the model had to compare two formats)."""
    assert "Current date and time: 2026-03-02T10:00:00Z (Monday)." in system_text(resolve_arm(arm))
    assert "2 March 2026" not in system_text(resolve_arm(arm)).split("\n\n")[1]


def test_a_plug_ins_probe_and_a_scenarios_own_prompt_read_now_in_iso_too() -> None:
    assert "Current date and time: 2026-03-02T10:00:00Z (Monday)." in system_text(SystemArm("notes_plugin", Notes(), "seeded"))
    from harness.memory_systems.prompts import system_prompt

    scenario = make_scenario().model_copy(update={"system_prompt": "Today is {now}."})
    assert system_prompt(scenario, with_tools=False) == "Today is 2026-03-02T10:00:00Z (Monday)."


@pytest.mark.usefixtures("legacy_instructions")
def test_legacy_keeps_the_prose_current_time_byte_for_byte() -> None:
    assert "Current date and time: Monday, 2 March 2026, 10:00 UTC." in system_text(resolve_arm("recall"))


def search_result(arm: str) -> dict[str, Any]:
    scenario = make_scenario()
    instance = open_instance(resolve_arm(arm), scenario, BUDGET)
    try:
        tools = instance.begin_probe(*probe_policy(scenario)).tools
        return json.loads(tools.call("memory_search", {"terms": ["port"]}).result_text)["results"][0]
    finally:
        instance.close()


def test_recall_shows_iso_times_beside_the_epoch_milliseconds_under_the_shared_block() -> None:
    found = search_result("recall")
    assert found["observedAtIso"] == "2026-02-10T09:00:00Z" and isinstance(found["observedAt"], int)
    assert list(found).index("observedAtIso") == list(found).index("observedAt") + 1


@pytest.mark.usefixtures("legacy_instructions")
def test_legacy_tool_results_carry_epoch_milliseconds_only() -> None:
    assert "observedAtIso" not in search_result("recall")


def test_the_instruction_set_goes_into_the_contract_and_the_configuration_hash() -> None:
    arm = resolve_arm("recall")
    shared = arm_fingerprint(arm, BUDGET, "0.1.0", terms=ContractTerms(instructions="shared", budget=BUDGET))
    legacy = arm_fingerprint(arm, BUDGET, "0.1.0", terms=ContractTerms(instructions="legacy", budget=BUDGET))
    assert shared["contract"]["instructions"]["name"] == "shared" and legacy["contract"]["instructions"]["name"] == "legacy"
    assert shared["config_hash"] != legacy["config_hash"]
    assert (shared["contract"]["times"], legacy["contract"]["times"]) == ("iso + epoch ms", "epoch ms")
    none = resolve_arm("history_only")  # no memory, no block: its hash is the same under both
    assert arm_fingerprint(none, BUDGET, "0.1.0", terms=ContractTerms(instructions="shared", budget=BUDGET))["config_hash"] == \
        arm_fingerprint(none, BUDGET, "0.1.0", terms=ContractTerms(instructions="legacy", budget=BUDGET))["config_hash"]
