"""The MCP system's probe tools: the product's tools as it describes them, forced arguments, errors the model reads."""

from __future__ import annotations

import json
from types import SimpleNamespace

from harness.memory_systems.mcp.config import McpServerConfig
from harness.memory_systems.mcp.connection import ServerFacts
from harness.memory_systems.mcp.system import McpMemorySystem, McpProbeTools
from harness.scenarios import RetrievalBudget

SEARCH = {"name": "search_notes", "description": "Search the user's notes.",
          "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "workspace": {"type": "string"}},
                          "required": ["query", "workspace"]}}


def config(**probe: object) -> McpServerConfig:
    return McpServerConfig.model_validate({
        "name": "notes", "description": "notes", "server": {"command": "unused"},
        "write": {"tool": "save_note", "arguments": {"text": "{content}"}},
        "probe": {"tools": ["search_notes"], "fixed_arguments": {"workspace": "{workspace}"}, **probe}})


class FakeInstance:
    """The part of an instance the probe tools use; records what reaches the server."""

    def __init__(self, cfg: McpServerConfig, result_text: str) -> None:
        self.config, self.result_text, self.sent = cfg, result_text, []
        self.retrieval_budget = RetrievalBudget(top_k=10, chars=4000)
        self.units = []

    def call(self, scope: str, tool: str, arguments: dict) -> SimpleNamespace:
        self.sent.append((scope, tool, arguments))
        return SimpleNamespace(status="ok", result_text=self.result_text, elapsed_s=0.01)


def tools(cfg: McpServerConfig, result: str = '{"notes": []}') -> tuple[McpProbeTools, FakeInstance]:
    instance = FakeInstance(cfg, result)
    return McpProbeTools(instance, "ws-web", ServerFacts("fake", "1.0", {"search_notes": SEARCH})), instance  # type: ignore[arg-type]


def test_the_products_tool_is_offered_as_it_describes_itself_without_the_forced_workspace() -> None:
    run, _ = tools(config())
    (spec,) = run.tool_specs()
    assert spec["function"]["name"] == "search_notes" and spec["function"]["description"] == "Search the user's notes."
    assert spec["function"]["parameters"]["properties"] == {"query": {"type": "string"}}
    assert spec["function"]["parameters"]["required"] == ["query"]


def test_the_workspace_is_forced_whatever_the_model_sends() -> None:
    run, instance = tools(config())
    executed = run.call("search_notes", {"query": "port", "workspace": "ws-payments"})
    assert instance.sent == [("ws-web", "search_notes", {"query": "port", "workspace": "ws-web"})]
    assert executed.status == "ok" and executed.storage_read


def test_unknown_tools_and_bad_json_are_errors_the_model_reads_and_reach_no_server() -> None:
    run, instance = tools(config())
    assert run.call("read_graph", {}).status == "unknown_tool"
    assert run.call("search_notes", "{not json").status == "invalid_arguments"
    assert instance.sent == []


def test_memory_search_can_be_mapped_onto_the_products_search() -> None:
    run, instance = tools(config(tools=[], map_search={"tool": "search_notes", "arguments": {"query": "{query}"}}))
    assert [s["function"]["name"] for s in run.tool_specs()] == ["memory_search"]
    run.call("memory_search", json.dumps({"query": "port"}))
    assert instance.sent == [("ws-web", "search_notes", {"query": "port", "workspace": "ws-web"})]
    assert run.call("memory_search", {"query": " "}).status == "invalid_arguments"


def test_the_arm_declares_its_forgetting_and_what_it_ingests_without_starting_a_server() -> None:
    system = McpMemorySystem(config(), "mcp:notes", "notes.yaml")
    assert system.arms == {"mcp:notes": "agent"} and system.forgetting == "none (no forget tool)"


def test_only_what_the_budget_let_the_model_see_is_disclosed() -> None:
    from harness.memory_systems.mcp.results import Unit

    result = json.dumps({"notes": [{"text": "First fact about the port."}, {"text": "Second fact, past the chars."}]})
    run, instance = tools(config(), result)
    instance.units = [Unit(("it-1",), "First fact about the port."), Unit(("it-2",), "Second fact, past the chars.")]
    instance.retrieval_budget = SimpleNamespace(top_k=10, chars=30)  # room for the first text only
    executed = run.call("search_notes", {"query": "fact"})
    assert executed.disclosed_item_ids == ("it-1",) and "Second" not in executed.result_text


def test_the_write_phase_declares_the_configs_forget_tool_a_forget_and_its_write_tool_not() -> None:
    """The forgetting table counts an MCP product's forgets by the config naming the tool, not by guessing from names."""
    from harness.memory_systems.mcp.system import McpInstance
    from harness.memory_systems.protocol import ToolExecution
    from tests.score.test_forgetting import forgetting_scenario

    cfg = McpServerConfig.model_validate({
        "name": "graph", "description": "graph", "server": {"command": "unused"},
        "write": {"tool": "upsert_or_remove", "arguments": {"text": "{content}"}},
        "forget": {"tool": "archive_entities", "arguments": {"names": ["{item_id}"]}},
        "probe": {"tools": ["search_notes"]}})
    instance = McpInstance(McpMemorySystem(cfg, "mcp:graph", "graph.yaml"), forgetting_scenario(canary_kind="leakage"))
    instance.call = lambda scope, tool, arguments: ToolExecution(tool, json.dumps(arguments), "ok", "ok")  # type: ignore[method-assign]
    done = [e for s in instance.scenario.sessions for e in instance.write_session(s)]
    assert [(e.name, e.forget) for e in done] == [("upsert_or_remove", False), ("archive_entities", True)]
