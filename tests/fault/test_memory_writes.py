"""Faults of the write phase the harness survives: a model that writes garbage through the memory tools."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("arm", ["named_memory", "recall_extracted", "memory_document_extracted"])
def test_write_calls_to_tools_not_offered_are_recorded_and_the_sample_still_completes(run_cli, server, arm: str) -> None:
    """A model answering every write request with a call to a tool it was not offered gets a tool error; the sample ends ok."""
    server.script.mode = "unknown_tool"
    result = run_cli("--no-cache", arms=(arm,), scenario="smoke-02-ci-provider")
    record = result.record(arm)
    assert record.status == "ok", record.error
    writes = [call for session in record.write_phase.sessions for call in session.tool_calls]
    assert writes and all(call.status == "unknown_tool" for call in writes)
    assert all(call.result_text.startswith('{"error"') for call in writes)
