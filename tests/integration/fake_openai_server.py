"""A scripted OpenAI-compatible ``/v1/chat/completions`` server for integration tests.

It listens on 127.0.0.1 (port 0: the OS picks a free one) in a background
thread and answers the JSON shape litellm's ``openai/`` provider expects,
``usage`` included, so ``recall-eval run --model openai/fake --api-base URL``
goes over the real HTTP wire path without any hosted API.

Behaviour is chosen by :class:`Script`:

- ``mode="recall"``: the first request of a conversation (no ``tool`` message
  yet) gets a ``memory_search`` call when tools are offered; a request holding
  tool results gets a final answer quoting the last result text. Without tools
  the answer is "I don't know.".
- ``mode="bad_json" | "unknown_tool" | "extra_workspace"``: the first call is
  malformed (invalid JSON arguments, a tool named ``memory_delete``, or an
  extra ``workspaceKey`` property); the follow-up is a final answer.
- ``mode="empty"``: an empty answer, no tool calls.
- ``mode="offline"``: whatever ``offline/reference`` would answer (its write
  phase included: it saves through any save tool it is offered).
- ``mode="endless"``: a ``memory_search`` call on every request.
- ``mode="invent"``: never calls a tool and answers every question with
  confident, invented specifics (a CI system, a customer), as small real
  models were seen to do on questions nothing in memory answers.
- ``fail_status`` with ``fail_times``: the first ``fail_times`` requests get
  that HTTP status (429 adds ``Retry-After: retry_after_s``); ``fail_times=None``
  fails every request (e.g. 401). With ``fail_for_s`` instead, every request
  in the first ``fail_for_s`` seconds after the first one fails (a burst).
- ``finish_reason``: replaces ``stop`` on final answers (e.g. ``length``: the
  answer was cut off at ``max_tokens``).
- ``delay_s``: each request waits that long (bounded, and cut short by
  :meth:`FakeOpenAIServer.stop`) before answering, read when it is served (a
  queued request waits as the script says then); ``delays``: the first
  chat requests wait these instead, one each in order of arrival.
- ``serial``: one request is served at a time (the others queue, as on a
  local model server with one slot); a request whose client gave up is still
  served, as such servers do...
- ``cancel_on_disconnect``: ...unless this is set: then a request whose client
  closed its connection, queued or while "generating" (``delay_s``), is
  dropped at once and counted in :attr:`FakeOpenAIServer.cancelled`, as
  llama.cpp's server stops generating for a closed connection.
- ``respond``: a function of (request body, the completion body the mode
  would send) returning the body to send instead: hostile or malformed
  replies (a lone surrogate, negative usage, content that is a list).
- ``error_message``: the text of a ``fail_status`` error (e.g. escape sequences).

``/v1/embeddings`` answers too (the same ``fail_status`` rules apply), as an
OpenAI-compatible embedding server does: each input's vector is
:func:`memory_tools.vectors.lexical_vector` of it (deterministic), ``usage``
counts its words; ``embedding_fail_status`` fails embedding requests only.

Every request body and its ``Authorization`` header are kept in memory for
assertions; nothing is written to disk.

Example:
    >>> with FakeOpenAIServer(Script(mode="recall")) as server:
    ...     server.base_url  # doctest: +ELLIPSIS
    'http://127.0.0.1:.../v1'
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 4242
COMPLETION_TOKENS = 17
MAX_DELAY_S = 30.0
MAX_BODY_BYTES = 8_000_000

INVENTED_ANSWER = "You run CI on Jenkins 2.4, and your biggest customer is Acme Corp."
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.-]{3,}")
_STOP = {"what", "which", "with", "that", "this", "from", "have", "write", "today", "please", "there", "their", "about", "should", "would", "could"}


@dataclass
class Script:
    """How the server behaves; change fields between runs (reads are per request)."""

    mode: str = "recall"
    fail_status: int | None = None
    fail_times: int | None = 0
    fail_for_s: float | None = None
    retry_after_s: float = 0
    delay_s: float = 0.0
    finish_reason: str | None = None
    serial: bool = False
    respond: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    error_message: str | None = None
    embedding_fail_status: int | None = None
    cancel_on_disconnect: bool = False
    delays: tuple[float, ...] = ()
    #: Each input's vector instead of its lexical one (an overflowing or all-zero reply).
    embed: Callable[[str], list[float]] | None = None


@dataclass
class Seen:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    authorization: str | None
    status: int
    #: Arrival time (``time.time()``): rates are measured on the server's side.
    at: float = 0.0


@dataclass
class _State:
    script: Script
    requests: list[Seen] = field(default_factory=list)
    failures_sent: int = 0
    first_request_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Held while a request is served under ``Script.serial``.
    slot: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    #: A file that gets one JSON line per request (``{"at", "path", "status"}``): what a test reads of a server in another process.
    log_path: str | None = None
    #: Requests dropped because their client closed the connection (``Script.cancel_on_disconnect``).
    cancelled: int = 0
    chat_requests: int = 0


def search_terms(text: str) -> list[str]:
    """Up to four lowercase content words of ``text`` (what the fake model searches for)."""
    words = [w.lower().strip(".-") for w in _WORD.findall(text or "")]
    picked = [w for w in dict.fromkeys(words) if w and w not in _STOP]
    return picked[:4] or ["memory"]


def _tool_call(name: str, arguments: str, index: int) -> dict[str, Any]:
    return {"id": f"call_fake_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def decide(script: Script, body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The assistant's (content, tool_calls) for one request under ``script``."""
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    tool_results = [m for m in messages if m.get("role") == "tool"]
    terms = search_terms(_last_user_text(messages))
    search_args = json.dumps({"terms": terms})
    if script.mode == "empty":
        return "", []
    if script.mode == "offline":  # the offline reference agent's policy, over the wire (write phase included)
        from harness.offline_model import respond

        reply = respond(messages, tools)
        return reply.get("content"), reply.get("tool_calls") or []
    if script.mode == "invent":
        return INVENTED_ANSWER, []
    if script.mode == "endless" and tools:
        return None, [_tool_call("memory_search", search_args, len(tool_results))]
    if not tools:
        return "I don't know.", []
    if tool_results:
        return f"From memory: {tool_results[-1].get('content', '')}", []
    first = {
        "recall": ("memory_search", search_args),
        "bad_json": ("memory_search", '{"terms": ["changelog", '),
        "unknown_tool": ("memory_delete", json.dumps({"itemId": "it-1"})),
        "extra_workspace": ("memory_search", json.dumps({"terms": terms, "workspaceKey": "ws-docs-site"})),
    }.get(script.mode)
    if first is None:
        raise ValueError(f"unknown fake server mode {script.mode!r}")
    return None, [_tool_call(first[0], first[1], 0)]


def completion_body(model: str, content: str | None, tool_calls: list[dict[str, Any]], finish_reason: str | None = None) -> dict[str, Any]:
    """A ``chat.completion`` object as the OpenAI API returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if tool_calls else (finish_reason or "stop")}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS, "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS},
    }


def _handler_class(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            return

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY_BYTES)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            script = state.script
            with state.lock:
                now = time.monotonic()
                state.first_request_at = state.first_request_at if state.first_request_at is not None else now
                if script.fail_for_s is not None:
                    fail = script.fail_status is not None and now - state.first_request_at < script.fail_for_s
                else:
                    fail = script.fail_status is not None and (script.fail_times is None or state.failures_sent < script.fail_times)
                if fail:
                    state.failures_sent += 1
                status = script.fail_status if fail else 200
                seen = Seen(self.path, body, self.headers.get("Authorization"), status or 200, time.time())
                state.requests.append(seen)
                if state.log_path:
                    with open(state.log_path, "a", encoding="utf-8") as log:
                        log.write(json.dumps({"at": seen.at, "path": seen.path, "status": seen.status}) + "\n")
            if "/embeddings" in self.path:
                self._embeddings(script, body, fail, status)
                return
            with state.lock:
                state.chat_requests += 1
                order = state.chat_requests - 1
            if "chat/completions" not in self.path:  # (an --api-base with a query string gets the route after it)
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                return
            if script.serial:
                while not state.slot.acquire(timeout=0.05):
                    if state.stopping.is_set() or self._abandoned(script):
                        return
                try:
                    self._answer(script, body, fail, status, self._delay(script, order))
                finally:
                    state.slot.release()
            else:
                self._answer(script, body, fail, status, self._delay(script, order))

        @staticmethod
        def _delay(script: Script, order: int) -> float:
            """The request's wait, read when it is served: a test that makes a slow server keep up (``delay_s = 0``)
            is not kept waiting behind the requests its clients abandoned while it was slow."""
            return script.delays[order] if order < len(script.delays) else script.delay_s

        def _abandoned(self, script: Script) -> bool:
            """The client closed its connection (only looked at under ``cancel_on_disconnect``); counted once."""
            if not script.cancel_on_disconnect:
                return False
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                closed = bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                closed = True
            if closed:
                with state.lock:
                    state.cancelled += 1
            return closed

        def _answer(self, script: Script, body: dict[str, Any], fail: bool, status: int | None, delay: float) -> None:
            if delay > 0 and script.cancel_on_disconnect:
                ends = time.monotonic() + min(delay, MAX_DELAY_S)
                while time.monotonic() < ends:  # "generating": stop when the client hangs up
                    if state.stopping.wait(0.02) or self._abandoned(script):
                        return
            elif delay > 0 and state.stopping.wait(min(delay, MAX_DELAY_S)):
                return  # server stopping: drop the connection
            if fail and status is not None:
                headers = {"Retry-After": f"{script.retry_after_s:g}"} if status == 429 else None
                kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
                message = script.error_message or {401: "Incorrect credentials provided (fake server)."}.get(
                    status, f"fake server says {status}, try again"
                )
                self._send(status, {"error": {"message": message, "type": kind, "code": kind}}, headers)
                return
            content, calls = decide(script, body)
            reply = completion_body(str(body.get("model", "fake")), content, calls, script.finish_reason)
            self._send(200, script.respond(body, reply) if script.respond is not None else reply)

        def _embeddings(self, script: Script, body: dict[str, Any], fail: bool, status: int | None) -> None:
            if script.embedding_fail_status is not None or (fail and status is not None):
                code = script.embedding_fail_status or status or 500
                self._send(code, {"error": {"message": f"fake server says {code}", "type": "server_error"}})
                return
            from memory_tools.vectors import lexical_vector

            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
            vector = script.embed or (lambda text: [round(float(x), 6) for x in lexical_vector(text)])
            data = [{"object": "embedding", "index": i, "embedding": vector(str(text))} for i, text in enumerate(inputs)]
            tokens = sum(len(str(text).split()) for text in inputs)
            self._send(200, {"object": "list", "data": data, "model": str(body.get("model", "fake")),
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    return Handler


class FakeOpenAIServer:
    """The scripted server on 127.0.0.1; use as a context manager."""

    def __init__(self, script: Script | None = None, *, log_path: str | None = None) -> None:
        self._state = _State(script or Script(), log_path=log_path)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self._state))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def script(self) -> Script:
        return self._state.script

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def cancelled(self) -> int:
        """Requests dropped because their client closed the connection first (``Script.cancel_on_disconnect``)."""
        with self._state.lock:
            return self._state.cancelled

    @property
    def requests(self) -> list[Seen]:
        with self._state.lock:
            return list(self._state.requests)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:  # pragma: no cover - python -m tests.integration.fake_openai_server [mode] [delay] [log file]
    import sys

    script = Script(mode=sys.argv[1] if len(sys.argv) > 1 else "recall", delay_s=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    with FakeOpenAIServer(script, log_path=sys.argv[3] if len(sys.argv) > 3 else None) as server:
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # pragma: no cover
    main()
