"""The memory-system protocol: the original arms unchanged through it, the registry, the policy gate for every system."""

from __future__ import annotations

import json
import os
import types
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.memory_systems import (  # noqa: E402
    MemoryInstance,
    MemorySystem,
    MemorySystemError,
    ProbeSetup,
    all_arms,
    builtin_arms,
    probe_messages,
    registry,  # noqa: E402
    resolve_arm,
)
from harness.memory_systems.registry import UnknownArmError  # noqa: E402
from harness.records import iter_records  # noqa: E402
from harness.scenarios import load_scenarios, probe_policy  # noqa: E402
from tests.golden.digests import FOUR_ARMS, GOLDEN, STARTER, record_digest, setup_cache_key  # noqa: E402


@pytest.fixture(scope="module")
def starter() -> list:
    return load_scenarios([STARTER])


def _setup(arm_name: str, scenario):
    arm = resolve_arm(arm_name)
    instance = arm.system.open(scenario, arm.write_mode)
    try:
        return instance.begin_probe(*probe_policy(scenario)).arm_setup()
    finally:
        instance.close()


def test_the_four_original_arms_keep_their_names_and_order() -> None:
    assert list(builtin_arms())[:4] == ["history_only", "recall", "full_history", "memory_document"]
    assert {a.write_mode for a in map(resolve_arm, FOUR_ARMS)} == {"none", "seeded"}


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_the_four_original_arms_send_what_they_sent_before_the_protocol(starter: list) -> None:
    """The cache key of every starter sample's first call (a real model) equals the pre-protocol code's."""
    golden = json.loads(GOLDEN.read_text())
    seen = 0
    for scenario in starter:
        for arm in FOUR_ARMS:
            setup = _setup(arm, scenario)
            expected = golden[f"{scenario.id}|{arm}|offline/reference|0"]["cache_key"]
            assert setup_cache_key(setup.messages, setup.tools) == expected, f"{scenario.id} {arm}"
            seen += 1
    assert seen == len(golden) == 256


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_the_starter_suite_offline_results_are_identical_before_and_after_the_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every starter sample of the four original arms on offline/reference, digest for digest."""
    from harness.cli import main

    monkeypatch.setattr(
        "harness.report.build_report",
        lambda run_dir, **_: types.SimpleNamespace(verdict="pass", reasons=[], index_html=Path(run_dir) / "i.html"),
    )
    monkeypatch.setattr("harness.analysis.terminal_lines", lambda outcome, upper=False: ([], []))
    monkeypatch.setattr("harness.analysis.exit_code", lambda outcome, **_: 0)
    out = tmp_path / "run"
    assert main(["run", "--arms", *FOUR_ARMS, "--scenarios", str(STARTER), "--out", str(out), "--no-cache", "--no-progress",
                 "--instructions", "legacy"]) == 0
    assert "memory_systems" not in json.loads((out / "run.json").read_text())["parameters"]  # built-in arms only
    digests = {}
    for read in iter_records(out / "results.jsonl"):  # pasted histories resolved from histories.jsonl
        record = read.model_dump(mode="json")
        assert record["write_phase"] is None
        digests[record["sample_id"]] = record_digest(record)
    golden = {sid: entry["record"] for sid, entry in json.loads(GOLDEN.read_text()).items()}
    changed = sorted(sid for sid in golden if digests.get(sid) != golden[sid])
    assert not changed, f"{len(changed)} samples changed, e.g. {changed[:3]}"


@pytest.mark.parametrize("field", ["incognito", "memory_disabled", "reads_off"])
def test_denied_probes_stay_cold_for_every_built_in_system(starter: list, field: str) -> None:
    """Incognito, memory off or reads off: every built-in arm gives history_only's prompt and reads nothing."""
    scenario = next(s for s in starter if s.items and s.sessions)
    probe = scenario.probe
    denied = {
        "incognito": probe.model_copy(update={"incognito": True}),
        "memory_disabled": probe.model_copy(update={"policy": probe.policy.model_copy(update={"enabled": False})}),
        "reads_off": probe.model_copy(update={"policy": probe.policy.model_copy(update={"agent_read_enabled": False})}),
    }[field]
    scenario = scenario.model_copy(update={"probe": denied})
    cold = _setup("history_only", scenario)
    for name, arm in builtin_arms().items():
        if arm.write_mode == "agent":
            continue
        instance = arm.system.open(scenario, arm.write_mode)
        probe_setup = instance.begin_probe(*probe_policy(scenario))
        assert probe_setup.arm_setup().messages == cold.messages, name
        if probe_setup.tools is not None:
            record = probe_setup.tools.call("memory_search", '{"terms": ["port"]}')
            assert not record.storage_read and not record.disclosed_item_ids, name
        instance.close()


def test_an_unknown_arm_lists_the_known_ones() -> None:
    with pytest.raises(UnknownArmError, match="known arms: history_only, recall, full_history, memory_document, recall_fts"):
        resolve_arm("nope")


class _Broken:
    name = "broken"


def _entry_point(name: str, obj: object) -> object:
    return types.SimpleNamespace(name=name, value=f"fake:{name}", dist=types.SimpleNamespace(name="fake-dist", version="1.0"), load=lambda: obj)


def test_a_broken_plugin_is_named_in_the_unknown_arm_message_and_breaks_no_other_arm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [_entry_point("bad", _Broken())])
    registry.plugin_arms.cache_clear()
    try:
        assert resolve_arm("recall").name == "recall"
        with pytest.raises(UnknownArmError, match=r"entry point 'bad' \(fake:bad\) of fake-dist 1.0 .*not a memory system"):
            resolve_arm("broken")
    finally:
        registry.plugin_arms.cache_clear()


class _Sticky(MemorySystem):
    name = "sticky"
    description = "a fixed note"
    arms = {"sticky": "seeded"}

    def open(self, scenario, write_mode):
        return _StickyInstance(scenario)


class _StickyInstance(MemoryInstance):
    def begin_probe(self, policy, context):
        return ProbeSetup(probe_messages(self.scenario, context_section="<note>hi</note>"))


def test_a_plugin_class_registers_its_arms_and_cannot_take_a_built_in_name(monkeypatch: pytest.MonkeyPatch) -> None:
    class Clash(_Sticky):
        name = "clash"
        arms = {"recall": "seeded"}

    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [_entry_point("sticky", _Sticky), _entry_point("clash", Clash)])
    registry.plugin_arms.cache_clear()
    try:
        assert resolve_arm("sticky").origin.startswith("fake-dist 1.0")
        assert "sticky" in all_arms()
        assert any("arm 'recall' is already offered by 'memory_tools'" in p for p in registry.plugin_arms()[1])
        assert resolve_arm("recall").system.name == "memory_tools"
    finally:
        registry.plugin_arms.cache_clear()


def test_a_system_with_a_bad_write_mode_is_refused_naming_the_arm() -> None:
    class Bad(_Sticky):
        arms = {"sticky": "oracle"}

    with pytest.raises(MemorySystemError, match="arm 'sticky' has write mode 'oracle'; use one of none, seeded, agent"):
        registry._arms_of(Bad(), "test", {})


@pytest.mark.usefixtures("legacy_instructions")  # pins the legacy text, byte for byte
def test_probe_messages_share_the_base_system_prompt(starter: list) -> None:
    scenario = starter[0]
    base = _setup("history_only", scenario).messages
    with_context = probe_messages(scenario, tool_instructions="Tools: x.", context_section="<m>y</m>")
    assert with_context[0]["content"] == base[0]["content"] + "\n\nTools: x.\n\n<m>y</m>"
    assert with_context[1:] == base[1:]


def test_a_static_tool_run_answers_unknown_tools_and_bad_json_without_calling_the_handler() -> None:
    from harness.memory_systems import StaticToolRun, ToolExecution

    called = []
    spec = {"type": "function", "function": {"name": "note_search", "parameters": {"type": "object"}}}
    run = StaticToolRun({"note_search": (spec, lambda args: called.append(args) or ToolExecution("", "", "ok", "{}", ("n1",), True))})
    unknown = run.call("note_delete", "{}")
    assert (unknown.status, json.loads(unknown.result_text)["error"]["message"]) == ("unknown_tool", "unknown tool "
                                                                                                     "'note_delete'; available: note_search")
    bad = run.call("note_search", '{"query": ')
    assert bad.status == "invalid_arguments" and not bad.storage_read and called == []
    ok = run.call("note_search", {"query": "port"})
    assert (ok.name, ok.arguments, ok.disclosed_item_ids, ok.storage_read) == ("note_search", '{"query":"port"}', ("n1",), True)
    assert called == [{"query": "port"}] and run.tool_specs() == [spec] and run.tool_specs() is not run.tool_specs()
