"""The flags a user gave to ``run``, checked, and the values a resumed run keeps or refuses to change.

A resumed run keeps the flags that define its samples (``FIXED``) and inherits its execution
settings (``INHERITED``) unless they are given again; scenario paths are stored absolute.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.defaults import RUN_DEFAULTS
from harness.memory_systems import UnknownArmError
from harness.records import RunManifest, read_manifest
from harness.run.contracts import check_arms
from harness.run.errors import RunOptionsError

# Parameters that define the samples: a resumed run must keep them.
# (Scenario paths may change: the suite hash decides whether they hold the same scenarios.)
FIXED = ("models", "arms", "filters", "limit", "sample_ids", "epochs", "seed", "max_tool_rounds", "max_tokens", "temperature")


# Execution settings a resumed run inherits unless given again.
INHERITED = ("max_tool_rounds", "max_tokens", "temperature", "timeout_s", "retries", "retry_delay_s", "max_concurrency", "workers")


_FLAG = {
    "models": "--model",
    "arms": "--arms",
    "scenario_paths": "--scenarios",
    "filters": "--filter",
    "sample_ids": "--sample-id",
    "timeout_s": "--timeout",
    "retry_delay_s": "--retry-delay",
}


def given_values(args: Any) -> dict[str, Any]:
    """Flags the user actually passed (None: not given); scenario paths made absolute."""
    return {
        "models": list(dict.fromkeys(args.models)) if args.models else None,
        "arms": list(dict.fromkeys(args.arms)) if args.arms else None,
        "scenario_paths": [absolute_path(p) for p in args.scenarios] if args.scenarios else None,
        "filters": list(args.filter) if args.filter else None,
        "limit": getattr(args, "limit", None),
        "sample_ids": list(dict.fromkeys(args.sample_id)) if getattr(args, "sample_id", None) else None,
        "epochs": args.epochs,
        "seed": args.seed,
        "max_tool_rounds": args.max_tool_rounds,
        "max_tokens": getattr(args, "max_tokens", None),
        "temperature": args.temperature,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "retry_delay_s": getattr(args, "retry_delay", None),
        "max_concurrency": args.max_concurrency,
        "workers": getattr(args, "workers", None),
    }


def absolute_path(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def stored_path(path: str, run_dir: Path) -> str:
    """A scenario path from ``run.json`` as an absolute path that exists, when one can be found.

    Absolute paths are kept. A relative one (written by an older harness)
    is tried from the working directory, then from the run folder and each
    of its parents (the default run folder is ``reports/<stamp>`` under the
    directory the run was started from).
    """
    if Path(path).is_absolute():
        return path
    for base in (Path.cwd(), run_dir.resolve(), *run_dir.resolve().parents):
        candidate = base / path
        if candidate.exists():
            return str(candidate.resolve())
    return path


def plugin_systems(arms: list[str]) -> dict[str, Any]:
    """``{"memory_systems": {arm: "<distribution> <version> (...)"}}`` for plug-in arms; nothing when all are built in.

    compare treats a parameter it does not know as changing results, so two
    runs of a plug-in arm at different plug-in versions are not compared
    silently; runs of built-in arms only record nothing and stay comparable
    with runs made before plug-ins existed.
    """
    from harness.memory_systems import resolve_arm

    origins = {}
    for arm in arms:
        try:
            origin = resolve_arm(arm).origin
        except UnknownArmError:
            continue  # reported by the option checks
        if origin != "built-in":
            origins[arm] = origin
    return {"memory_systems": origins} if origins else {}


def flag_name(name: str) -> str:
    return _FLAG.get(name, "--" + name.replace("_", "-"))


def check_values(values: dict[str, Any]) -> None:
    for name, minimum in (("epochs", 1), ("max_concurrency", 1), ("max_tool_rounds", 0), ("max_tokens", 1), ("retries", 0), ("workers", 1)):
        if values[name] < minimum:
            raise RunOptionsError(f"{flag_name(name)} {values[name]}: must be at least {minimum}")
    if values["workers"] > values["max_concurrency"]:
        raise RunOptionsError(
            f"--workers {values['workers']} exceeds --max-concurrency {values['max_concurrency']}: "
            "the concurrency is split among the workers; raise --max-concurrency or lower --workers"
        )
    if values["retry_delay_s"] < 0:
        raise RunOptionsError(f"--retry-delay {values['retry_delay_s']}: must not be negative")
    if values["timeout_s"] <= 0:
        raise RunOptionsError(f"--timeout {values['timeout_s']}: must be positive")
    check_arms(values["arms"])  # an unknown arm or a plug-in's bad contract is a flag problem (exit 2), not a crash


def resumed_values(args: Any, given: dict[str, Any]) -> tuple[Path, RunManifest, dict[str, Any]]:
    run_dir = Path(args.resume)
    previous = read_manifest(run_dir)
    if args.out and Path(args.out).resolve() != run_dir.resolve():
        raise RunOptionsError(f"--out {args.out} conflicts with --resume {args.resume}; drop --out")
    stored = {
        "models": previous.models,
        "arms": previous.arms,
        "scenario_paths": [stored_path(p, run_dir) for p in previous.scenario_paths],
        "filters": previous.parameters.get("filters", []),
        "limit": previous.parameters.get("limit"),
        "sample_ids": previous.parameters.get("sample_ids", []),
        "epochs": previous.epochs,
        "seed": previous.seed,
        **{k: previous.parameters.get(k, RUN_DEFAULTS[k]) for k in INHERITED},
    }
    conflicts = [f"{flag_name(k)} {given[k]} (the run has {stored[k]})" for k in FIXED if given[k] is not None and given[k] != stored[k]]
    if conflicts:
        raise RunOptionsError(
            f"{run_dir / 'run.json'}: flags conflict with the run being resumed: {'; '.join(conflicts)}. "
            "Drop them to resume, or start a new run with --out."
        )
    return run_dir, previous, {**stored, **{k: v for k, v in given.items() if v is not None}}
