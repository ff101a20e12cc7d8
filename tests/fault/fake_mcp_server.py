"""A fake MCP memory server for fault tests, built with the SDK's own server class (``mcp.server.MCPServer``).

Run as a real subprocess: ``python fake_mcp_server.py``. It keeps notes in a
JSON file (``FAKE_STORE``, default ``notes.json`` in its working folder) and
offers ``save_note(text, workspace)``, ``search_notes(query, workspace)`` and
``delete_note(text, workspace)``. ``FAKE_MODE`` picks the fault, applied to
the named tool:

- ``ok``: a correct server (search: notes of the workspace sharing a word with the query);
- ``ignore_workspace``: search returns every workspace's notes;
- ``hang``: search never answers; ``crash``: save writes to stderr and exits mid-call;
- ``malformed``: search answers its request with a result that is not a CallToolResult;
- ``huge``: search returns a result of ``FAKE_HUGE_BYTES`` (default 50 MB);
- ``exit_at_start``: writes to stderr and exits before initializing.

``FAKE_HTTP_PORT`` serves streamable HTTP on that port of 127.0.0.1 instead of stdio. ``FAKE_DEAF=1`` ignores
SIGTERM and SIGHUP (with ``hang``, a server that outlives its closed stdin); ``FAKE_CHILD=1`` starts a helper
process that sleeps, doing the same (an ``npx``-style wrapper's child); ``FAKE_HANG_FLAG`` names a file
``hang`` creates when it starts hanging. ``FAKE_SAMPLING=1`` (or ``search``): every search first asks the client for
a model call (MCP sampling) and, refused, searches anyway (served, its result says what the model answered);
``save`` or ``both``: every save asks too (before a ``crash`` save exits).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

MODE = os.environ.get("FAKE_MODE", "ok")
STORE = Path(os.environ.get("FAKE_STORE", "notes.json"))

if MODE == "exit_at_start":
    sys.stderr.write("fake server: refusing to start (exit_at_start)\n")
    sys.stderr.flush()
    sys.exit(4)

if os.environ.get("FAKE_DEAF") == "1":
    import signal

    for deaf_to in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(deaf_to, signal.SIG_IGN)
if os.environ.get("FAKE_CHILD") == "1":
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                      "signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(3600)"], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL)

from mcp import types  # noqa: E402 - after the start-up fault, which must not need the SDK
from mcp.server import MCPServer  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402

server = MCPServer("fake-memory")
_WIRE = os.dup(1)  # the protocol pipe itself: the SDK diverts fd 1 to stderr while it serves


def _load() -> list[dict[str, str]]:
    return json.loads(STORE.read_text()) if STORE.exists() else []


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3}


SAMPLING = os.environ.get("FAKE_SAMPLING", "")


async def _ask_model(ctx: Context, prompt: str) -> str:
    """One sampling request to the client; what the model answered, or "" when it was refused."""
    ask = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    try:
        answer = await ctx.session.create_message([ask], max_tokens=50, system_prompt="You rank memory notes.")
    except Exception as exc:  # noqa: BLE001 - refused: the product carries on without
        sys.stderr.write(f"fake server: sampling refused ({exc})\n")
        return ""
    return getattr(answer.content, "text", "")


@server.tool()
async def save_note(text: str, workspace: str, ctx: Context) -> str:
    """Save a note about the user to memory."""
    if SAMPLING in ("save", "both"):
        await _ask_model(ctx, f"Summarise this note in five words: {text}")
    if MODE == "crash":
        sys.stderr.write("fake server: crashing mid-call (crash)\n")
        sys.stderr.flush()
        os._exit(3)
    notes = _load() + [{"text": text, "workspace": workspace}]
    STORE.write_text(json.dumps(notes))
    return "saved"


@server.tool()
def delete_note(text: str, workspace: str) -> str:
    """Delete a note from memory by its exact text."""
    notes = _load()
    kept = [n for n in notes if not (n["text"] == text and n["workspace"] == workspace)]
    STORE.write_text(json.dumps(kept))
    return f"deleted {len(notes) - len(kept)}"


@server.tool()
async def search_notes(query: str, workspace: str, ctx: Context) -> str:
    """Search the user's notes in memory by words of the query."""
    ranked = ""
    if SAMPLING in ("1", "search", "both"):  # a product that wants the client's model to rank its notes
        ranked = await _ask_model(ctx, f"Rank notes for: {query}")
    if MODE == "hang":
        sys.stderr.write("fake server: hanging (hang)\n")
        sys.stderr.flush()
        if os.environ.get("FAKE_HANG_FLAG"):  # a test waiting for this very server to hang
            Path(os.environ["FAKE_HANG_FLAG"]).touch()
        while True:
            time.sleep(3600)
    if MODE == "huge":
        return "x" * int(os.environ.get("FAKE_HUGE_BYTES", str(50 * 1024 * 1024)))
    if MODE == "malformed":
        sys.stderr.write("fake server: answering out of protocol (malformed)\n")
        sys.stderr.flush()
        for request_id in range(64):  # whichever id the pending call has gets a result that is no CallToolResult
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": "not a list", "isError": "no"}})
            os.write(_WIRE, (line + "\n").encode())
        while True:
            time.sleep(3600)
    wanted = _words(query)
    notes = [n for n in _load() if MODE == "ignore_workspace" or n["workspace"] == workspace]
    found = {"notes": [{"text": n["text"]} for n in notes if wanted & _words(n["text"])]}
    return json.dumps({**found, "model_said": ranked} if SAMPLING else found)


if __name__ == "__main__":
    if os.environ.get("FAKE_HTTP_PORT"):  # streamable HTTP on 127.0.0.1 (the url transport)
        server.run("streamable-http", host="127.0.0.1", port=int(os.environ["FAKE_HTTP_PORT"]))
    else:
        server.run("stdio")
