"""The run's scenarios: the suites named by ``--scenarios`` loaded, narrowed by ``--filter``, redacted when sensitive.

Filters that match nothing are refused with a hint (a typo must not silently narrow the run).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.run.errors import RunOptionsError
from harness.run.selection import SelectionError
from harness.scenarios import Scenario


def incomplete_suite_files(paths: list[str]) -> dict[str, Any]:
    """``incomplete_suites``: the ``_suite.json`` files that say ``complete: false``, recorded only when there are any."""
    from harness.scenarios import incomplete_suites

    files = sorted({p.file for p in incomplete_suites(paths) if p.severity == "error"})
    return {"incomplete_suites": files} if files else {}


def load_selected(values: dict[str, Any], privacy: dict[str, Any] | None = None) -> tuple[Sequence[Scenario], dict[str, str]]:
    from harness.redaction import Redactor
    from harness.scenarios import load_scenario_shelf, redact_scenarios, shelve, with_store

    for path in values["scenario_paths"]:
        if not Path(path).exists():
            raise RunOptionsError(f"scenario path {path!r} does not exist (working directory {Path.cwd()}); pass --scenarios PATH")
    ids, categories, tags = [], [], []
    for expr in values["filters"]:
        kind, _, name = expr.partition(":")
        if kind == "category" and name:
            categories.append(name)
        elif kind == "tag" and name:
            tags.append(name)
        else:
            ids.append(expr)
    # Compressed, a few unpacked at a time: a LongMemEval S suite unpacked is ~2.3 GB (harness.scenarios.shelf).
    scenarios = load_scenario_shelf([Path(p) for p in values["scenario_paths"]], ids=ids, categories=categories, tags=tags)
    if not scenarios:
        raise RunOptionsError(f"no scenario in {', '.join(values['scenario_paths'])} matches --filter {values['filters']}"
                              + _misspelt(ids))
    unmatched = [glob for glob in ids if not any(fnmatch.fnmatchcase(sid, glob) for sid in scenarios.ids)]
    if unmatched:  # a typo (categ:leakage) must not silently narrow an OR of id globs
        raise RunOptionsError(f"--filter {unmatched[0]!r} matches no scenario id"
                              + (" among those the other filters keep" if categories or tags else "")
                              + _misspelt(unmatched) + "; fix or drop it")
    # as harness.scenarios.prepare_run_scenarios does for the report, counting what redaction replaced
    # (these unpack the suite once and shelve the changed scenarios again)
    if privacy and privacy["sensitive"]:
        redacted, _, privacy["redacted"] = redact_scenarios(scenarios, Redactor.build(privacy["redact"]),
                                                            privacy["store"])
        scenarios = shelve(redacted)
    elif privacy and privacy["store"] is not None:
        scenarios = shelve(with_store(scenarios, privacy["store"]))
    return scenarios, scenarios.hashes


def selection(function: Any, *args: Any) -> Any:
    """``function(*args)`` of :mod:`harness.run.selection`, its errors as :class:`RunOptionsError`."""
    try:
        return function(*args)
    except SelectionError as exc:
        raise RunOptionsError(str(exc)) from None


def _misspelt(globs: list[str]) -> str:
    """A hint when an id glob looks like a misspelt ``category:`` or ``tag:`` filter."""
    kinds = [g.partition(":")[0] for g in globs if ":" in g]
    if any(k and ("category".startswith(k) or "tag".startswith(k) or k.startswith(("cat", "tag"))) for k in kinds):
        return " (an id glob: did you mean category:NAME or tag:NAME?)"
    return ""
