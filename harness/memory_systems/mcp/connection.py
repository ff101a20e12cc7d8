"""One running MCP server: started, called and stopped through the official ``mcp`` SDK, never left behind.

The SDK is async (anyio); a memory system's tools are called synchronously
(:class:`~harness.memory_systems.ToolRun`). Each server therefore gets its own
event loop in its own thread (anyio's blocking portal): the run's loop never
waits on a server's protocol traffic, and a hung server blocks only the call
that asked it, until the call's timeout.

Process hygiene, each a fault test in ``tests/fault/test_mcp_faults.py``:

- the SDK starts a stdio server in a new session (process group) and on
  close shuts it down as the MCP spec says (stdin closed, then SIGTERM and
  SIGKILL to the whole group, every wait bounded);
- each server is also tagged with a unique environment variable, so this
  module knows its process group; a call that times out kills the group at
  once (the SDK's graceful path would wait on a hung server), and at
  interpreter exit (a finished run, Ctrl-C, an uncaught error) every group
  still registered is killed;
- on POSIX each stdio server runs under :mod:`~harness.memory_systems.mcp.orphan_guard`,
  which kills the server's group when this process dies, even by SIGKILL
  (Linux: the kernel's parent-death signal; elsewhere it polls the parent
  pid), when no handler of ours can run;
- a server's requests for model calls (MCP sampling) go to the sample's
  :class:`~harness.memory_systems.mcp.sampling.SamplingGate`, which serves
  them with the run's model or refuses them, counting each (a connection
  given no gate refuses every request, counted in its own gate);
- a start or call that fails raises :class:`McpServerError` carrying the
  tail of the server's stderr, which the runner records as the sample's error.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.memory_systems.mcp.sampling import SamplingGate

#: The environment variable that tags a server process with its instance (how its process group is found).
TAG_ENV = "RECALL_EVAL_MCP_SERVER"
STDERR_TAIL_CHARS = 2000
ORPHAN_GUARD = Path(__file__).with_name("orphan_guard.py")
#: ``poll`` makes every server's guard poll its parent pid, as off Linux, instead of the parent-death signal (tests).
GUARD_MODE_ENV = "RECALL_EVAL_ORPHAN_GUARD"
_LIVE: dict[str, int] = {}
_LIVE_LOCK = threading.Lock()


class McpServerError(RuntimeError):
    """A server that would not start, crashed, hung or answered out of protocol; the message holds its stderr tail."""


@dataclass(frozen=True)
class ServerFacts:
    """What the server said of itself at initialize, and the tools it lists (name -> tools/list entry as a dict)."""

    name: str
    version: str
    tools: dict[str, dict[str, Any]]


def kill_group(pgid: int) -> None:
    """SIGKILL a server's process group (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@atexit.register
def kill_all_servers() -> None:
    """Kill every server group still registered (interpreter exit after a run, Ctrl-C or a crash)."""
    with _LIVE_LOCK:
        groups = list(_LIVE.values())
        _LIVE.clear()
    for pgid in groups:
        kill_group(pgid)


def live_servers() -> dict[str, int]:
    """Tag -> process group of every server this process has running (a copy; tests check it empties)."""
    with _LIVE_LOCK:
        return dict(_LIVE)


def _find_tagged(tag: str) -> int | None:
    """The pid of this process's child whose environment carries ``tag`` (Linux /proc), or None."""
    needle = f"{TAG_ENV}={tag}".encode()
    for children in Path("/proc/self/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for pid in children.read_text().split():
                with contextlib.suppress(OSError):
                    if needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                        return int(pid)
    return None


class ServerConnection:
    """One server instance: its process (or HTTP session), its MCP client session and its stderr file.

    Args:
        params: ``command``, ``args``, ``env``, ``cwd`` (stdio) or ``url`` (streamable HTTP), already filled.
        start_s: Seconds to start and initialize; call_s: seconds per tool call.
        stderr_path: Where the server's stderr goes (its tail is quoted in errors).
        sampling: Answers the server's requests for model calls (None: a gate of its own that refuses them all).
    """

    def __init__(self, params: dict[str, Any], *, start_s: float, call_s: float, stderr_path: Path,
                 sampling: SamplingGate | None = None) -> None:
        self.params, self.start_s, self.call_s, self.stderr_path = params, start_s, call_s, stderr_path
        self.sampling = sampling if sampling is not None else SamplingGate(model=None)
        self.tag = uuid.uuid4().hex
        self.facts: ServerFacts | None = None
        self._portal_cm: Any = None
        self._portal: Any = None
        self._session: Any = None
        self._stop: Any = None
        self._future: Any = None
        self._errlog: Any = None
        self.pgid: int | None = None

    # -- lifecycle --------------------------------------------------------------------------------------
    def start(self) -> ServerFacts:
        """Start the server and initialize the session; raises :class:`McpServerError` (server stopped) on failure."""
        from anyio.from_thread import start_blocking_portal

        self._portal_cm = start_blocking_portal(backend="asyncio")
        self._portal = self._portal_cm.__enter__()
        self._errlog = open(self.stderr_path, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed in stop
        try:
            self._future, self.facts = self._portal.start_task(self._serve)
        except BaseException as exc:
            self.stop()
            if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or SIGTERM while it started: the run stops, not the arm
                raise
            raise McpServerError(self._describe("did not start", exc, self.start_s)) from None
        return self.facts

    async def _serve(self, *, task_status: Any) -> None:
        import anyio
        from mcp import ClientSession

        self._stop = anyio.Event()
        try:
            async with self._transport() as streams, \
                    ClientSession(streams[0], streams[1], sampling_callback=self.sampling) as session:
                with anyio.fail_after(self.start_s):
                    initialized = await session.initialize()
                    listed = await session.list_tools()
                info = initialized.server_info
                tools = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools}
                self._session = session
                task_status.started(ServerFacts(str(info.name), str(info.version), tools))
                await self._stop.wait()
        finally:
            self._session = None

    def _transport(self) -> Any:
        if self.params.get("url"):
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(self.params["url"])
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = {**self.params.get("env", {}), TAG_ENV: self.tag}
        command, args = guarded(self.params["command"], list(self.params.get("args", [])))
        server = StdioServerParameters(command=command, args=args, env=env, cwd=self.params.get("cwd"))
        return _registered(stdio_client(server, errlog=self._errlog), self)

    def stop(self) -> None:
        """Stop the server (graceful, bounded by the SDK), then make sure its group is gone; idempotent."""
        portal, self._portal = self._portal, None
        if portal is not None:
            if self._stop is not None:
                with contextlib.suppress(Exception):
                    portal.call(self._stop.set)
            if self._future is not None:
                with contextlib.suppress(BaseException):
                    self._future.result(timeout=10)
            if self._future is not None and not self._future.done() and self.pgid is not None:
                kill_group(self.pgid)  # the graceful path is stuck: the group goes now
            with contextlib.suppress(BaseException):
                self._portal_cm.__exit__(None, None, None)
        self._forget_group(kill=True)
        if self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._errlog = None

    def _forget_group(self, *, kill: bool) -> None:
        with _LIVE_LOCK:
            pgid = _LIVE.pop(self.tag, None)
        if kill and pgid is not None:
            kill_group(pgid)

    # -- calls ------------------------------------------------------------------------------------------
    def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[Any, float]:
        """(the SDK's ``CallToolResult``, seconds); raises :class:`McpServerError` when the server fails or hangs
        (the server is then killed: the sample ends as an error)."""
        if self._portal is None or self._session is None:
            raise McpServerError(self._describe(f"is not running (tool {name})", None))
        started = time.perf_counter()
        try:
            result = self._portal.call(self._call, name, arguments)
        except BaseException as exc:
            if self.pgid is not None:
                kill_group(self.pgid)  # a hung or broken server never gets a second chance
            self.stop()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise McpServerError(self._describe(f"failed on tool {name}", exc, self.call_s)) from None
        return result, time.perf_counter() - started

    async def acall_tool(self, name: str, arguments: dict[str, Any]) -> tuple[Any, float]:
        """:meth:`call_tool` awaited from the run's event loop, which runs on meanwhile; cancelled (Ctrl-C, the
        sample's end), it kills the server's process group at once instead of waiting for the call."""
        import asyncio

        if self._portal is None or self._session is None:
            raise McpServerError(self._describe(f"is not running (tool {name})", None))
        started = time.perf_counter()
        future = self._portal.start_task_soon(self._call, name, arguments)
        try:
            result = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if self.pgid is not None:
                kill_group(self.pgid)
            future.cancel()
            raise
        except BaseException as exc:
            if self.pgid is not None:
                kill_group(self.pgid)
            self.stop()
            raise McpServerError(self._describe(f"failed on tool {name}", exc, self.call_s)) from None
        return result, time.perf_counter() - started

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        import anyio

        with anyio.fail_after(self.call_s):
            return await self._session.call_tool(name, arguments)

    def stderr_tail(self) -> str:
        """The last characters the server wrote to stderr."""
        if self._errlog is not None:
            with contextlib.suppress(OSError, ValueError):
                self._errlog.flush()
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_TAIL_CHARS:].strip()

    def _describe(self, what: str, exc: BaseException | None, seconds: float = 0.0) -> str:
        where = self.params.get("url") or " ".join([self.params.get("command", ""), *self.params.get("args", [])])
        cause = _cause(exc, seconds) if exc is not None else ""
        tail = self.stderr_tail()
        text = f"MCP server {where!r} {what}" + (f": {cause}" if cause else "")
        return text + (f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr")


def guarded(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command line that starts ``command`` under :mod:`~harness.memory_systems.mcp.orphan_guard` on POSIX, so the
    server dies with this process even after a ``kill -9`` (Linux: the kernel's parent-death signal; elsewhere, or
    with ``RECALL_EVAL_ORPHAN_GUARD=poll``, the guard polls its parent pid); on Windows the command itself."""
    if os.name != "posix":
        return command, args
    poll = ["--poll"] if sys.platform != "linux" or os.environ.get(GUARD_MODE_ENV) == "poll" else []
    return sys.executable, ["-I", "-S", str(ORPHAN_GUARD), *poll, str(os.getpid()), command, *args]


def _cause(exc: BaseException, seconds: float) -> str:
    """The innermost meaningful cause of an SDK/anyio failure (exception groups unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"timed out after {seconds:g} s (hung); killed"
    return f"{type(exc).__name__}: {exc}"[:500]


@contextlib.asynccontextmanager
async def _registered(transport: Any, connection: ServerConnection) -> Any:
    """The stdio transport, with its process group registered for :func:`kill_all_servers` until the SDK stopped it."""
    try:
        async with transport as streams:
            pid = _find_tagged(connection.tag)
            if pid is not None:
                connection.pgid = pid  # the SDK starts it as a session leader: its pid is its group
                with _LIVE_LOCK:
                    _LIVE[connection.tag] = pid
            yield streams
    finally:
        connection._forget_group(kill=True)  # stopped by the SDK already; a survivor of its escalation goes now


def new_server_folder(prefix: str = "recall-eval-mcp-") -> Path:
    """A fresh folder for one server instance (its data folder and stderr file live in it)."""
    return Path(tempfile.mkdtemp(prefix=prefix))
