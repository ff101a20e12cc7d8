"""Which arms exist: the built-in systems plus those registered through entry points.

Entry points of the group ``recall_eval.memory_systems`` are loaded lazily,
the first time an arm that is not built in is asked for (or all arms are
listed), so a broken plug-in never breaks a run that does not use it; its
problem is named in the unknown-arm message instead.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata

from harness.memory_systems.protocol import ENTRY_POINT_GROUP, WRITE_MODES, MemorySystem, SystemArm

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class UnknownArmError(ValueError):
    """An arm name that is not registered; the message lists the known ones."""


class MemorySystemError(ValueError):
    """A memory system (built-in or plug-in) breaks the protocol; the message names it and the fix."""


def builtin_systems() -> list[MemorySystem]:
    """The built-in systems in arm order (the four original arms first)."""
    from harness.memory_systems.builtin import (
        MemoryDocumentSystem,
        MemoryToolsSystem,
        NoMemorySystem,
        TranscriptsSystem,
    )
    from harness.memory_systems.document_topk_arms import topk_systems
    from harness.memory_systems.dream_arm import DreamDocumentSystem
    from harness.memory_systems.extracted import ExtractedItemsSystem
    from harness.memory_systems.extracted_document import ExtractedDocumentSystem
    from harness.memory_systems.fts import FullTextSystem
    from harness.memory_systems.named import NamedMemoryColdSystem, NamedMemorySystem
    from harness.memory_systems.shadow import ShadowSystem
    from harness.memory_systems.vector import HybridSystem, VectorSystem

    return [
        NoMemorySystem(), MemoryToolsSystem(), TranscriptsSystem(), MemoryDocumentSystem(), FullTextSystem(),
        ExtractedItemsSystem(), NamedMemorySystem(), NamedMemoryColdSystem(), ExtractedDocumentSystem(),
        ShadowSystem(), VectorSystem(), HybridSystem(), *topk_systems(), DreamDocumentSystem(),
    ]  # fmt: skip


@functools.cache
def builtin_arms() -> dict[str, SystemArm]:
    """Arm name -> arm of every built-in system, in the built-in order."""
    arms: dict[str, SystemArm] = {}
    for system in builtin_systems():
        for arm in _arms_of(system, "built-in", arms):
            arms[arm.name] = arm
    return arms


@functools.cache
def plugin_arms() -> tuple[dict[str, SystemArm], tuple[str, ...]]:
    """(arm name -> arm of every plug-in that loaded, problems of those that did not)."""
    arms: dict[str, SystemArm] = {}
    problems: list[str] = []
    taken = dict(builtin_arms())
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        dist = getattr(entry, "dist", None)
        origin = f"{dist.name} {dist.version}" if dist is not None else entry.value
        where = f"entry point {entry.name!r} ({entry.value}) of {origin} in group {ENTRY_POINT_GROUP!r}"
        try:
            system = _instantiate(entry.load())
            found = _arms_of(system, f"{origin} ({entry.name} = {entry.value})", taken)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, never fatal to other arms
            problems.append(f"{where}: {type(exc).__name__}: {exc}")
            continue
        for arm in found:
            arms[arm.name] = taken[arm.name] = arm
    return arms, tuple(problems)


def all_arms() -> dict[str, SystemArm]:
    """Every arm: built-in first, then plug-ins (broken plug-ins left out; see :func:`plugin_arms`)."""
    return {**builtin_arms(), **plugin_arms()[0]}


def resolve_arm(name: str) -> SystemArm:
    """The arm called ``name``.

    Raises:
        UnknownArmError: No system offers it; the message lists the known arms
            and any plug-in that failed to load.
    """
    arm = builtin_arms().get(name)
    if arm is not None:
        return arm
    plugins, problems = plugin_arms()
    if name in plugins:
        return plugins[name]
    mcp = _mcp_arm(name)
    if mcp is not None:
        return mcp
    known = ", ".join(all_arms())
    broken = "".join(f"; a plug-in did not load: {problem}" for problem in problems)
    raise UnknownArmError(f"unknown arm {name!r}; known arms: {known}{broken}")


def _mcp_arm(name: str) -> SystemArm | None:
    """An MCP server config's arm (``mcp:<name>``, or a config's bare name), or None; a bad config is an unknown arm."""
    from harness.memory_systems.mcp import McpConfigError, mcp_arm

    try:
        return mcp_arm(name)
    except McpConfigError as exc:
        raise UnknownArmError(str(exc)) from None


def _instantiate(obj: object) -> MemorySystem:
    """An entry point may name a system instance, or a class or function returning one."""
    system = obj if _looks_like_system(obj) else obj() if callable(obj) else obj
    if not _looks_like_system(system):
        raise MemorySystemError(
            f"it gave {type(system).__name__}, not a memory system: name an object with name, description, "
            "arms and open(scenario, write_mode) (subclass harness.memory_systems.MemorySystem)"
        )
    return system  # type: ignore[return-value]


def _looks_like_system(obj: object) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, a) for a in ("name", "description", "arms", "open"))


def _arms_of(system: MemorySystem, origin: str, taken: dict[str, SystemArm]) -> list[SystemArm]:
    """Check a system's declared arms and return them; raise naming the field at fault."""
    name = getattr(system, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise MemorySystemError(f"memory system name {name!r} must match {_NAME.pattern} ({origin})")
    arms = getattr(system, "arms", None)
    if not isinstance(arms, dict) and not hasattr(arms, "items"):
        raise MemorySystemError(f"memory system {name!r}: arms must map arm names to write modes, got {arms!r}")
    if not arms:
        raise MemorySystemError(f"memory system {name!r}: arms is empty; declare e.g. arms = {{{name!r}: 'agent'}}")
    found = []
    for arm_name, mode in arms.items():
        if not isinstance(arm_name, str) or not _NAME.match(arm_name):
            raise MemorySystemError(f"memory system {name!r}: arm name {arm_name!r} must match {_NAME.pattern}")
        if mode not in WRITE_MODES:
            raise MemorySystemError(
                f"memory system {name!r}: arm {arm_name!r} has write mode {mode!r}; use one of {', '.join(WRITE_MODES)}"
            )
        if arm_name in taken:
            raise MemorySystemError(
                f"memory system {name!r}: arm {arm_name!r} is already offered by {taken[arm_name].system.name!r} "
                f"({taken[arm_name].origin}); rename the arm"
            )
        found.append(SystemArm(arm_name, system, mode, origin))
    return found
