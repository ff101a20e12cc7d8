"""Any memory product served over the Model Context Protocol, as an arm declared by a config file.

``--arms mcp:<name>`` (or ``<name>`` when no other arm is called so) runs the
config ``<name>.yaml`` found in ``$RECALL_EVAL_MCP_PATH``, ``./mcp`` or the
repo's ``examples/mcp`` (:mod:`~harness.memory_systems.mcp.config`). The
system (:mod:`~harness.memory_systems.mcp.system`) starts fresh servers per
sample and workspace through the official ``mcp`` SDK
(:mod:`~harness.memory_systems.mcp.connection`) and reads their results
under the run's budget and scope checks (:mod:`~harness.memory_systems.mcp.results`).
``docs/memory-systems.md`` *MCP servers* is the reference.
"""

from __future__ import annotations

import importlib.util
import threading

from harness.memory_systems.mcp.config import ARM_PREFIX, McpConfigError, find_config, load_config, search_folders
from harness.memory_systems.protocol import SystemArm

__all__ = ["ARM_PREFIX", "McpConfigError", "mcp_arm"]
_ARMS: dict[str, SystemArm] = {}
_LOCK = threading.Lock()


def mcp_arm(name: str, *, prefixed_only: bool = False) -> SystemArm | None:
    """The arm ``name`` (``mcp:<config>``, or a bare config name unless ``prefixed_only``), or None: no such config.

    Raises:
        McpConfigError: the config exists but is invalid, or the ``mcp`` SDK is not installed (the message says how).
    """
    prefixed = name.startswith(ARM_PREFIX)
    if not prefixed and prefixed_only:
        return None
    config_name = name.removeprefix(ARM_PREFIX)
    with _LOCK:
        path = find_config(config_name)
        if path is None:
            if prefixed:
                folders = ", ".join(str(f) for f in search_folders())
                raise McpConfigError(f"arm {name!r}: no MCP server config {config_name}.yaml in {folders} "
                                     "(set RECALL_EVAL_MCP_PATH to the folder holding it)")
            return None
        key = f"{name}\0{path.resolve()}\0{path.stat().st_mtime_ns}"  # an edited or other file is another arm
        if key in _ARMS:
            return _ARMS[key]
        config = load_config(path)
        if importlib.util.find_spec("mcp") is None:
            raise McpConfigError(f"arm {name!r} needs the official MCP SDK: pip install 'recall-eval[mcp]' (or: pip install mcp)")
        from harness.memory_systems.mcp.system import McpMemorySystem

        system = McpMemorySystem(config, name, str(path))
        arm = SystemArm(name, system, "agent", origin=f"mcp config {path.name} sha256 {config.digest()[:12]}")
        _ARMS[key] = arm
        return arm
