"""An MCP memory server as a declared arm: the config file (YAML), validated here, and where configs are found.

One file per server configuration, ``<name>.yaml`` (``examples/mcp/`` ships
two real servers' configs; ``docs/memory-systems.md`` *MCP servers* is the
reference and ``examples/mcp/mcp-server.schema.json`` the JSON Schema, kept
current by a test). The file says:

- ``server``: how to reach the server: a stdio ``command`` with ``args``,
  ``env`` and ``cwd``, or a streamable-HTTP ``url``;
- ``isolation``: ``workspace`` (default: one server process and one data
  folder per sample and per workspace, so nothing crosses either by
  construction) or ``sample`` (one per sample; the workspace is expressed in
  the tools' arguments through ``{workspace}``);
- ``write``: the tool the write phase calls for each item (``unit: item``) or
  each earlier session (``unit: session``), with an argument template;
- ``forget``: the tool and template that forget an item (unit ``item``);
- ``probe``: the product's own tools offered to the agent as the product
  describes them (``tools``), or its tools mapped onto ``memory_search``
  (``map_search``), and arguments forced into every probe call (``fixed_arguments``);
- ``sampling``: whether a server's requests for model calls are served with
  the run's model (``serve``, the default) or refused, and how many per sample.

Templates are JSON values whose strings may hold placeholders: in ``server``
``{data_dir}`` (the server's own fresh folder); everywhere ``{workspace}``
(the scope's name: the workspace key, ``global``, or ``sample``); and per
unit ``{item_id}``, ``{content}``, ``{kind}``, ``{key}``, ``{keys}``,
``{observed_at}`` or ``{session_id}``, ``{transcript}``, ``{started_at}``;
``{query}`` in ``map_search``. A string that is exactly one placeholder takes
its value's type (``{keys}`` a list). ``${VAR}`` in ``server`` reads the
environment. An unknown placeholder or an unset variable is refused when the
config loads, naming the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

MCP_CONFIG_SCHEMA_VERSION: Final = 1
#: Environment variable listing folders (or files) searched for ``<name>.yaml``, ``os.pathsep``-separated.
CONFIG_PATH_ENV = "RECALL_EVAL_MCP_PATH"
ARM_PREFIX = "mcp:"
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SERVER_FIELDS = ("data_dir", "workspace")
ITEM_FIELDS = ("workspace", "item_id", "content", "kind", "key", "keys", "observed_at")
SESSION_FIELDS = ("workspace", "session_id", "transcript", "started_at")
QUERY_FIELDS = ("workspace", "query")


class McpConfigError(ValueError):
    """An MCP server config that cannot be used; the message names the file, the field and the fix."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSpec(_Model):
    """How to reach the server: a stdio command (started per server instance) or a streamable-HTTP URL."""

    command: str | None = Field(None, description="Executable started per server instance (stdio transport)")
    args: list[str] = Field(default_factory=list, description="Its arguments; placeholders {data_dir}, {workspace}")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment (e.g. the data file's path)")
    cwd: str | None = Field(None, description="Working folder; default {data_dir}")
    url: str | None = Field(None, description="Streamable-HTTP endpoint of a server you run (isolation is then yours)")

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        return self


class ToolCall(_Model):
    """One tool of the server and the arguments to call it with (a JSON template)."""

    tool: str = Field(min_length=1, description="The server's tool name, as its tools/list gives it")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Argument template (placeholders in strings)")


class WriteSpec(ToolCall):
    """What the write phase stores, and with which tool."""

    unit: Literal["item", "session"] = Field(
        "item", description="item: each of the scenario's items (the oracle's input); session: each earlier transcript")


class ProbeSpec(_Model):
    """What the agent is offered at the probe."""

    tools: list[str] = Field(default_factory=list, description="The product's own tools, offered as it describes them")
    map_search: ToolCall | None = Field(None, description="Offer memory_search(query) instead, calling this tool")
    fixed_arguments: dict[str, Any] = Field(
        default_factory=dict, description="Arguments forced into every probe call (the workspace, say); the model cannot change them")
    instructions: str = Field("", description="One paragraph on how to use the tools (empty: a generic one)")

    @model_validator(mode="after")
    def _something_offered(self) -> ProbeSpec:
        if not self.tools and self.map_search is None:
            raise ValueError("offer the product's tools (tools: [...]) or map one onto memory_search (map_search)")
        return self


class Timeouts(_Model):
    """Seconds before a server is given up on; None: the run's ``--timeout``."""

    start_s: float | None = Field(None, gt=0, description="Starting and initializing a server")
    call_s: float | None = Field(None, gt=0, description="One tool call")


class SamplingSpec(_Model):
    """What the client does when the server asks it for a model call (MCP ``sampling/createMessage``)."""

    mode: Literal["serve", "refuse"] = Field(
        "serve", description="serve: answer with the run's model (counted, under --max-cost-usd); refuse: answer each "
                             "request with an error (counted as refused)")
    max_calls: int = Field(50, ge=0, description="Requests served per sample at most; later ones are refused (a runaway "
                                                 "server cannot loop on an uncapped run)")


class McpServerConfig(_Model):
    """One MCP memory server configuration (``recall-eval run --arms mcp:<name>``)."""

    schema_: str | None = Field(None, alias="$schema", description="Editor hint; ignored")
    schema_version: Literal[1] = MCP_CONFIG_SCHEMA_VERSION
    name: str = Field(pattern=_NAME, description="The config's name; the arm is mcp:<name>; the file is <name>.yaml")
    description: str = Field(min_length=1, description="One line for reports")
    server: ServerSpec
    isolation: Literal["workspace", "sample"] = Field(
        "workspace", description="workspace: a server and data folder per sample and workspace; sample: one per sample")
    write: WriteSpec
    forget: ToolCall | None = Field(None, description="Forgets one item (unit item): called for each archived item")
    probe: ProbeSpec
    forgetting: str = Field("", description="How the product forgets, in a few words (shown beside forgetting figures)")
    max_result_bytes: int = Field(8_000_000, gt=0, description="A larger tool result is refused (an error result)")
    timeouts: Timeouts = Timeouts()
    sampling: SamplingSpec = SamplingSpec()

    @model_validator(mode="after")
    def _placeholders(self) -> McpServerConfig:
        server = self.server.model_dump()
        check_template(server, SERVER_FIELDS, "server")
        unit = ITEM_FIELDS if self.write.unit == "item" else SESSION_FIELDS
        check_template(self.write.arguments, unit, "write.arguments")
        if self.forget is not None:
            if self.write.unit != "item":
                raise ValueError("forget applies to unit item (a raw session store has no item to forget)")
            check_template(self.forget.arguments, ITEM_FIELDS, "forget.arguments")
        check_template(self.probe.fixed_arguments, ("workspace",), "probe.fixed_arguments")
        if self.probe.map_search is not None:
            check_template(self.probe.map_search.arguments, QUERY_FIELDS, "probe.map_search.arguments")
        return self

    def digest(self) -> str:
        """SHA-256 of the config as validated (comments and key order do not change it)."""
        text = json.dumps(self.model_dump(mode="json", exclude={"schema_"}), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_template(value: Any, allowed: tuple[str, ...], where: str) -> None:
    """Raise naming ``where`` when a string of ``value`` holds a placeholder outside ``allowed``."""
    if isinstance(value, str):
        for name in _PLACEHOLDER.findall(value):
            if name not in allowed:
                raise ValueError(f"{where}: unknown placeholder {{{name}}}; use {', '.join('{' + a + '}' for a in allowed)}")
    elif isinstance(value, dict):
        for key, inner in value.items():
            check_template(inner, allowed, f"{where}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            check_template(inner, allowed, f"{where}[{index}]")


def fill(template: Any, values: dict[str, Any]) -> Any:
    """``template`` with its placeholders replaced; a string that is one placeholder takes the value's own type."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
    if isinstance(template, dict):
        return {key: fill(inner, values) for key, inner in template.items()}
    if isinstance(template, list):
        return [fill(inner, values) for inner in template]
    return template


def expand_env(value: Any, where: str, environ: Mapping[str, str] | None = None) -> Any:
    """``${VAR}`` in the strings of ``value`` from the environment; raises naming ``where`` for an unset one."""
    env = os.environ if environ is None else environ
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            if match.group(1) not in env:
                raise McpConfigError(f"{where}: environment variable {match.group(1)} is not set; set it or edit the config")
            return env[match.group(1)]

        return _ENV.sub(one, value)
    if isinstance(value, dict):
        return {key: expand_env(inner, f"{where}.{key}", env) for key, inner in value.items()}
    if isinstance(value, list):
        return [expand_env(inner, f"{where}[{i}]", env) for i, inner in enumerate(value)]
    return value


def load_config(path: Path) -> McpServerConfig:
    """The config in ``path``; raises :class:`McpConfigError` naming the file and field at fault."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot read the MCP server config ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise McpConfigError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise McpConfigError(f"{path}: an MCP server config is a mapping (name, description, server, write, probe)")
    try:
        config = McpServerConfig.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg'].removeprefix('Value error, ')}"
                             for e in exc.errors())
        raise McpConfigError(f"{path}: {problems}") from None
    if path.suffix in (".yaml", ".yml") and path.stem != config.name:
        raise McpConfigError(f"{path}: name {config.name!r} differs from the file name; name the file {config.name}.yaml")
    return config


def search_folders() -> list[Path]:
    """Where ``mcp:<name>`` is looked up: ``$RECALL_EVAL_MCP_PATH`` entries, then ``./mcp``, then the repo's examples."""
    listed = [Path(p) for p in os.environ.get(CONFIG_PATH_ENV, "").split(os.pathsep) if p]
    return [*listed, Path.cwd() / "mcp", Path(__file__).resolve().parents[3] / "examples" / "mcp"]


def find_config(name: str) -> Path | None:
    """The file of config ``name`` (``<name>.yaml`` in a search folder, or a listed file of that stem), or None."""
    if not re.match(_NAME, name):
        return None
    for folder in search_folders():
        if folder.is_file() and folder.stem == name:
            return folder
        for suffix in (".yaml", ".yml"):
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def config_schema() -> dict[str, Any]:
    """The JSON Schema of a config file (``examples/mcp/mcp-server.schema.json`` is this, committed)."""
    generated = McpServerConfig.model_json_schema(by_alias=True, mode="validation")
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"urn:recall-eval:mcp-server:v{MCP_CONFIG_SCHEMA_VERSION}"}
    return {**head, **generated}


def schema_text() -> str:
    """The committed schema file's exact text."""
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
