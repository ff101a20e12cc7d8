"""The agent-written built-in systems over the real HTTP path (litellm's openai provider against the fake server)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "arm, write_tools, probe_tools",
    [
        ("named_memory", {"remember", "forget"}, ["recall"]),
        ("recall_extracted", {"save_memory_item", "forget_memory_items"}, ["memory_search", "memory_get"]),
        ("memory_document_extracted", {"extract_memory"}, []),
    ],
)
def test_an_agent_written_system_writes_and_reads_over_the_wire(run_cli, server, arm: str, write_tools: set[str], probe_tools: list[str]) -> None:
    server.script.mode = "offline"
    result = run_cli("--no-cache", arms=(arm,), scenario="smoke-02-ci-provider")
    record = result.record(arm)
    assert record.status == "ok", record.error
    writes = [call for session in record.write_phase.sessions for call in session.tool_calls]
    assert writes and {call.name for call in writes} <= write_tools and all(call.status == "ok" for call in writes)
    offered = [[t["function"]["name"] for t in seen.body.get("tools") or []] for seen in server.requests]
    assert sorted(set(offered[0])) == sorted(write_tools)  # the first request is a write run
    assert record.tools_offered == probe_tools
    assert "Buildkite" in (record.final_answer or "")
