"""The streamable-HTTP transport: a config with ``url`` reaches a server someone else runs (isolation is theirs)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (pip install 'recall-eval[mcp]')")

from harness.memory_systems.mcp.connection import ServerConnection  # noqa: E402

FAKE = Path(__file__).resolve().parents[2] / "fault" / "fake_mcp_server.py"


def test_a_server_over_streamable_http_is_initialized_listed_and_called(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "FAKE_HTTP_PORT": str(port), "FAKE_STORE": str(tmp_path / "notes.json")}
    server = subprocess.Popen([sys.executable, str(FAKE)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert server.poll() is None and time.monotonic() < deadline, "the HTTP server did not come up"
            time.sleep(0.2)
        connection = ServerConnection({"url": f"http://127.0.0.1:{port}/mcp"}, start_s=60, call_s=60,
                                      stderr_path=tmp_path / "stderr.log")
        facts = connection.start()
        try:
            assert facts.name == "fake-memory" and "search_notes" in facts.tools
            connection.call_tool("save_note", {"text": "the staging port is 8443", "workspace": "w"})
            result, _ = connection.call_tool("search_notes", {"query": "staging port", "workspace": "w"})
            assert "8443" in result.content[0].text
        finally:
            connection.stop()
    finally:
        server.terminate()
        server.wait(timeout=30)
