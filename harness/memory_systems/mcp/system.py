"""An MCP memory server as a memory system: fresh servers per sample and workspace, template writes, its own tools.

Arm ``mcp:<name>`` (and ``<name>`` when no other arm has it) runs the config
``<name>.yaml`` (:mod:`harness.memory_systems.mcp.config`). For each sample:

- **servers**: one per scope the sample touches (isolation ``workspace``: the
  probe's workspace and each session's or item's; ``global`` when the probe
  has none), each its own process with its own fresh data folder
  (``{data_dir}``), started when first used and stopped when the sample
  closes; isolation ``sample`` starts one and puts ``{workspace}`` in the
  arguments. A global unit is written into every scope (it is visible from
  every workspace), a workspace's only into its own;
- **write phase** (write mode ``agent``, no model call): after each earlier
  session the config's write tool stores that session's transcript (unit
  ``session``) or the items it is the first source of (unit ``item``); after
  the last, the forget tool forgets every archived item (nothing is written
  twice and nothing forgotten without a forget tool). Every call is a write
  call of the session in the record, with its latency;
- **probe**: the product's own tools offered as the server lists them (minus
  the forced ``fixed_arguments``), or ``memory_search(query)`` mapped onto one;
  under a denying policy nothing is offered. The tools are described from the
  server's listing read once at run start (:meth:`McpMemorySystem.facts`, so
  a run's plan starts no server); the sample's server starts at the first call. Each
  result is fitted to the run's retrieval budget and attributed to the units
  it shows (:mod:`harness.memory_systems.mcp.results`), so scope checks,
  canaries and disclosure accounting read it like the Host's.

A server that fails (will not start, crashes, hangs past its timeout, answers
out of protocol) raises :class:`~harness.memory_systems.mcp.connection.McpServerError`
with its stderr tail: the sample is an error record and the run goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from datetime import UTC, datetime
from typing import Any

from harness.memory_systems.contract import ContractError, SystemContract
from harness.memory_systems.mcp.config import McpConfigError, McpServerConfig, expand_env, fill
from harness.memory_systems.mcp.connection import McpServerError, ServerConnection, ServerFacts, new_server_folder
from harness.memory_systems.mcp.results import Unit, attribute, fit_result, result_text, strings
from harness.memory_systems.mcp.sampling import SamplingGate, SamplingModel
from harness.memory_systems.protocol import (
    MemoryInstance,
    MemorySystem,
    ModelWrite,
    ProbeSetup,
    ToolExecution,
    arguments_text,
    decode_arguments,
    policy_denial,
    probe_messages,
)
from harness.memory_systems.write_prompt import render_transcript, write_order

GLOBAL_SCOPE = "global"
DEFAULT_TIMEOUT_S = 60.0
SEARCH_SPEC = {"type": "function", "function": {
    "name": "memory_search",
    "description": "Search the user's memories from earlier conversations; returns the matching ones with their text.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "What to look for"}},
                   "required": ["query"], "additionalProperties": False}}}
GENERIC_INSTRUCTIONS = ("Memory: the tools below read memories kept from the user's earlier conversations. Use them "
                        "before answering questions about earlier work, preferences or decisions; use only what they return.")


def _on_event_loop() -> bool:
    """Whether this thread runs an event loop (a synchronous tool call here blocks it)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def iso(millis: int | None) -> str:
    return "" if millis is None else datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class McpMemorySystem(MemorySystem):
    """The system of one MCP server config (one arm, write mode ``agent``: template writes, no model call)."""

    def __init__(self, config: McpServerConfig, arm: str, source: str) -> None:
        self.config, self.source = config, source
        self.name = arm.replace(":", "-")
        self.description = config.description
        self.arms = {arm: "agent"}
        self.forgetting = config.forgetting or ("delete by forget tool" if config.forget else "none (no forget tool)")
        self._facts: ServerFacts | None = None

    def timeouts(self, run_timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[float, float]:
        """(start, call) seconds: the config's, else the run's ``--timeout`` (60 s when there is none)."""
        t = self.config.timeouts
        return t.start_s or run_timeout_s, t.call_s or run_timeout_s

    def connect(self, scope: str, folder: Any, run_timeout_s: float = DEFAULT_TIMEOUT_S,
                sampling: SamplingGate | None = None) -> ServerConnection:
        """A started server for ``scope`` whose data lives under ``folder``, its sampling requests answered by
        ``sampling`` (None: refused); raises :class:`McpServerError`."""
        data_dir = folder / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        values = {"data_dir": str(data_dir), "workspace": scope}
        params = fill(expand_env(self.config.server.model_dump(exclude_none=True), "server"), values)
        if not params.get("url"):
            params.setdefault("cwd", str(data_dir))
        start_s, call_s = self.timeouts(run_timeout_s)
        connection = ServerConnection(params, start_s=start_s, call_s=call_s, stderr_path=folder / "stderr.log",
                                      sampling=sampling)
        connection.start()
        return connection

    def facts(self) -> ServerFacts:
        """The server's name, version and tools, from one throwaway instance (cached); checks the config's tool names.

        Raises:
            ContractError: the server does not start, or lacks a tool the config names (``--arms`` exits 2).
        """
        if self._facts is not None:
            return self._facts
        folder = new_server_folder()
        try:
            connection = self.connect(GLOBAL_SCOPE, folder)
            connection.stop()
        except (McpServerError, McpConfigError) as exc:
            raise ContractError(f"arm {next(iter(self.arms))} ({self.source}): {exc}") from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        facts = connection.facts
        assert facts is not None
        wanted = [self.config.write.tool, *([self.config.forget.tool] if self.config.forget else []), *self.config.probe.tools,
                  *([self.config.probe.map_search.tool] if self.config.probe.map_search else [])]
        missing = [t for t in wanted if t not in facts.tools]
        if missing:
            raise ContractError(f"arm {next(iter(self.arms))} ({self.source}): server {facts.name} {facts.version} has no "
                                f"tool {', '.join(missing)}; it lists {', '.join(facts.tools) or 'none'}")
        self._facts = facts
        return facts

    def configuration(self) -> dict[str, Any]:
        facts = self.facts()
        return {"mcp_config_sha256": self.config.digest(), "server_name": facts.name, "server_version": facts.version,
                "tools": {name: facts.tools[name] for name in sorted(facts.tools)}}

    def fingerprint_facts(self) -> dict[str, str]:
        """What ``run.json`` shows of the arm beside its hash: the config's SHA-256, the server's name and version."""
        facts = self.facts()
        return {"protocol": "mcp", "config": self.source, "config_sha256": self.config.digest(),
                "server_name": facts.name, "server_version": facts.version}

    def contract(self, arm: str, terms: Any) -> SystemContract:
        self.facts()  # a server that cannot start, or lacks a named tool, is a flag problem at run start
        templates = json.dumps([self.config.write.arguments])
        times = "iso" if "{observed_at}" in templates or "{started_at}" in templates or "{transcript}" in templates else "none"
        return SystemContract(ingests="prepared items" if self.config.write.unit == "item" else "raw turns",
                              times=times, discloses="tool results", vendor_defaults=True)

    def open(self, scenario: Any, write_mode: str, budget: Any = None) -> McpInstance:
        return McpInstance(self, scenario)


class McpInstance(MemoryInstance):
    """One sample's servers (started when first used, all stopped and their folders removed at close)."""

    def __init__(self, system: McpMemorySystem, scenario: Any) -> None:
        super().__init__(scenario)
        self.system, self.config = system, system.config
        self.connections: dict[str, ServerConnection] = {}
        self.folders: list[Any] = []
        self.run_timeout_s = DEFAULT_TIMEOUT_S
        self.sampling = SamplingGate(self.config.sampling.mode, self.config.sampling.max_calls)
        self.units = self._units()
        sessions = write_order(scenario)
        self.last_session = sessions[-1].id if sessions else None
        self.items_of: dict[str, list[Any]] = {}
        order = {s.id: i for i, s in enumerate(sessions)}
        for item in scenario.items:
            first = min((src.session for src in item.sources), key=lambda s: order.get(s, 0))
            self.items_of.setdefault(first, []).append(item)

    def use_run_timeout(self, seconds: float) -> None:
        """The run's ``--timeout`` for this sample's servers (start and each call) where the config sets none."""
        self.run_timeout_s = float(seconds)

    def use_run_model(self, model: SamplingModel) -> None:
        """The run's model, which serves this sample's sampling requests (:mod:`~harness.memory_systems.mcp.sampling`)."""
        self.sampling.model = model

    # -- scopes -----------------------------------------------------------------------------------------
    def scopes(self) -> list[str]:
        """Every workspace scope of the sample (``global`` when the probe has no workspace)."""
        named = {s.workspace for s in self.scenario.sessions} | {i.workspace for i in self.scenario.items}
        named.add(self.scenario.probe.workspace)
        scopes = sorted(w for w in named if w is not None)
        return scopes + ([GLOBAL_SCOPE] if self.scenario.probe.workspace is None else [])

    def targets(self, workspace: str | None) -> list[str]:
        """The scopes a unit of ``workspace`` is written into: its own, or every scope for a global unit."""
        return [workspace] if workspace is not None else self.scopes()

    def connection(self, scope: str) -> ServerConnection:
        key = scope if self.config.isolation == "workspace" else "sample"
        if key not in self.connections:
            folder = new_server_folder()
            self.folders.append(folder)
            self.connections[key] = self.system.connect(scope if key != "sample" else "sample", folder, self.run_timeout_s,
                                                        self.sampling)
        return self.connections[key]

    @property
    def sampling_refused(self) -> int:
        """Model calls (MCP sampling) this sample's servers asked for and were refused, over both phases."""
        return self.sampling.refused

    def call(self, scope: str, tool: str, arguments: dict[str, Any]) -> ToolExecution:
        """One call to the scope's server, recorded as the model would see it (status ``tool_error`` when the
        product says its call failed, ``result_too_large`` past ``max_result_bytes``)."""
        connection = self.connection(scope)
        with self.sampling.loop_blocked() if _on_event_loop() else contextlib.nullcontext():
            result, elapsed = connection.call_tool(tool, arguments)
        return self.execution(tool, arguments, result, elapsed)

    async def acall(self, scope: str, tool: str, arguments: dict[str, Any]) -> ToolExecution:
        """:meth:`call` awaited from the run's event loop (the probe's calls; a server not started yet starts in a thread)."""
        import asyncio

        connection = await asyncio.to_thread(self.connection, scope)
        result, elapsed = await connection.acall_tool(tool, arguments)
        return self.execution(tool, arguments, result, elapsed)

    def execution(self, tool: str, arguments: dict[str, Any], result: Any, elapsed: float) -> ToolExecution:
        """The record of one call's result (see :meth:`call`)."""
        text = result_text(result)
        size = len(text.encode("utf-8"))
        if size > self.config.max_result_bytes:
            message = f"the server's result ({size} bytes) exceeds max_result_bytes ({self.config.max_result_bytes}); not shown"
            error = json.dumps({"error": {"code": "result_too_large", "message": message}})
            return ToolExecution(tool, arguments_text(arguments), "result_too_large", error, elapsed_s=elapsed)
        status = "tool_error" if getattr(result, "is_error", False) else "ok"
        return ToolExecution(tool, arguments_text(arguments), status, text, elapsed_s=elapsed)

    # -- write ------------------------------------------------------------------------------------------
    def _units(self) -> list[Unit]:
        """What attribution looks for: each item's content, or each turn with the items sourced from it."""
        if self.config.write.unit == "item":
            return [Unit((item.id,), item.content, self.labels(item)) for item in self.scenario.items]
        cited: dict[tuple[str, str | None], list[str]] = {}
        superseded = {old for item in self.scenario.items for old in item.supersedes}
        for item in self.scenario.items:
            if item.state.value == "archived" and item.id in superseded:
                continue  # a raw turn holds a replaced value by nature (stale-claim scoring judges the answer)
            for src in item.sources:
                cited.setdefault((src.session, src.turn), []).append(item.id)
        return [Unit(tuple(cited.get((s.id, t.id)) or [f"turn:{s.id}/{t.id}"]), t.content)
                for s in self.scenario.sessions for t in s.turns]

    def labels(self, item: Any) -> tuple[str, ...]:
        """The strings the write gives ``item`` that name its id (its title or entity name), in every scope it goes to."""
        found: list[str] = []
        for scope in self.targets(item.workspace):
            args = fill(self.config.write.arguments, self.item_values(item, scope))
            found += [text for text in strings(args) if item.id in text and text != item.content and text not in found]
        return tuple(found)

    def item_values(self, item: Any, scope: str) -> dict[str, Any]:
        keys = [k.key for k in item.keys]
        observed = item.observed_at if item.observed_at is not None else None
        return {"workspace": scope, "item_id": item.id, "content": item.content, "kind": item.kind.value,
                "key": keys[0], "keys": keys, "observed_at": iso(observed)}

    def session_values(self, session: Any, scope: str) -> dict[str, Any]:
        return {"workspace": scope, "session_id": session.id, "transcript": render_transcript(session),
                "started_at": iso(session.started_at)}

    def write_session(self, session: Any) -> list[ToolExecution]:
        """The session's template writes (and, after the last session, the forgets); see the module docstring.

        Each call is declared a forget or not by the config (its ``forget`` tool), never guessed from a tool's name.
        """
        spec, done = self.config.write, []
        if spec.unit == "session":
            for scope in self.targets(session.workspace):
                done.append(self.call(scope, spec.tool, fill(spec.arguments, self.session_values(session, scope))))
            return [dataclasses.replace(e, forget=False) for e in done]
        for item in self.items_of.get(session.id, []):
            for scope in self.targets(item.workspace):
                done.append(dataclasses.replace(self.call(scope, spec.tool, fill(spec.arguments, self.item_values(item, scope))),
                                                forget=False))
        if session.id == self.last_session and self.config.forget is not None:
            for item in self.scenario.items:
                if item.state.value == "archived":
                    for scope in self.targets(item.workspace):
                        values = self.item_values(item, scope)
                        forgot = self.call(scope, self.config.forget.tool, fill(self.config.forget.arguments, values))
                        done.append(dataclasses.replace(forgot, forget=True))
        return done

    def begin_write(self, session: Any) -> ModelWrite:
        return _TemplateWrite(self, session)

    # -- probe ------------------------------------------------------------------------------------------
    def begin_probe(self, policy: Any, context: Any) -> ProbeSetup:
        if policy_denial(policy, context) is not None:  # the policy gate: cold, no server read, nothing offered
            return ProbeSetup(probe_messages(self.scenario))
        scope = context.workspace_key if context.workspace_key is not None else GLOBAL_SCOPE
        facts = self.system.facts()  # the tools as the server lists them; the sample's own server starts at the first call
        instructions = self.config.probe.instructions or GENERIC_INSTRUCTIONS
        return ProbeSetup(probe_messages(self.scenario, tool_instructions=instructions), McpProbeTools(self, scope, facts))

    def close(self) -> None:
        for connection in self.connections.values():
            connection.stop()
        self.connections.clear()
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)
        self.folders.clear()


class _TemplateWrite(ModelWrite):
    """A session's writes through the config's templates (no model call; run by the harness in a worker thread)."""

    def __init__(self, instance: McpInstance, session: Any) -> None:
        self.instance, self.session = instance, session

    def run(self, model: Any) -> list[ToolExecution]:
        return self.instance.write_session(self.session)


class McpProbeTools:
    """The probe's :class:`~harness.memory_systems.ToolRun` over one scope's server."""

    def __init__(self, instance: McpInstance, scope: str, facts: ServerFacts) -> None:
        self.instance, self.scope, self.facts = instance, scope, facts
        self.fixed = fill(instance.config.probe.fixed_arguments, {"workspace": scope})

    def tool_specs(self) -> list[dict[str, Any]]:
        probe = self.instance.config.probe
        if probe.map_search is not None:
            return [json.loads(json.dumps(SEARCH_SPEC))]
        return [self._spec(self.facts.tools[name]) for name in probe.tools]

    def _spec(self, tool: dict[str, Any]) -> dict[str, Any]:
        """The product's tool as it describes itself, in function format, without the arguments the harness forces."""
        schema = json.loads(json.dumps(tool.get("inputSchema") or tool.get("input_schema") or {"type": "object"}))
        for name in self.fixed:
            (schema.get("properties") or {}).pop(name, None)
            if isinstance(schema.get("required"), list):
                schema["required"] = [r for r in schema["required"] if r != name]
        return {"type": "function", "function": {"name": tool["name"], "description": tool.get("description") or "",
                                                 "parameters": schema}}

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolExecution:
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolExecution):
            return prepared
        tool, sent, text_args = prepared
        return self._shown(name, text_args, self.instance.call(self.scope, tool, sent))

    async def acall(self, name: str, arguments: str | dict[str, Any] | None) -> ToolExecution:
        """:meth:`call` for the agent loop: the server's answer is awaited, never blocking the run's event loop."""
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolExecution):
            return prepared
        tool, sent, text_args = prepared
        return self._shown(name, text_args, await self.instance.acall(self.scope, tool, sent))

    def _prepare(self, name: str, arguments: str | dict[str, Any] | None) -> ToolExecution | tuple[str, dict[str, Any], str]:
        """(the server's tool, the arguments sent, the arguments as recorded), or the error the model reads."""
        text_args = arguments_text(arguments)
        probe = self.instance.config.probe
        offered = ["memory_search"] if probe.map_search is not None else list(probe.tools)
        decoded = decode_arguments(arguments)
        if name not in offered or isinstance(decoded, str):
            code = "unknown_tool" if name not in offered else "invalid_arguments"
            message = f"unknown tool {name!r}; available: {', '.join(offered)}" if name not in offered else decoded
            return ToolExecution(name, text_args, code, json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False))
        if probe.map_search is None:
            return name, {**decoded, **self.fixed}, text_args
        query = decoded.get("query")
        if not isinstance(query, str) or not query.strip():
            text = json.dumps({"error": {"code": "invalid_arguments", "message": "query is required (a non-empty string)"}})
            return ToolExecution(name, text_args, "invalid_arguments", text)
        sent = fill(probe.map_search.arguments, {"query": query, "workspace": self.scope})
        return probe.map_search.tool, {**sent, **self.fixed}, text_args

    def _shown(self, name: str, text_args: str, executed: ToolExecution) -> ToolExecution:
        """The result as the model sees it (fitted to the budget) with the units it discloses; every call read storage."""
        if executed.status == "result_too_large":
            return ToolExecution(name, text_args, executed.status, executed.result_text, (), True, executed.elapsed_s)
        budget = self.instance.retrieval_budget
        shown, _ = fit_result(executed.result_text, top_k=budget.top_k, chars=budget.chars)
        disclosed = attribute(shown, self.instance.units, budget.top_k)
        return ToolExecution(name, text_args, executed.status, shown, disclosed, True, executed.elapsed_s)
