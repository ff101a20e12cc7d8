"""How the README's test command (``-n auto --dist loadfile``) hands the suite's files to pytest-xdist workers.

Each test file runs whole on one worker (its module fixtures, an offline run or an installed plug-in, are built once).
xdist hands files out by how many tests they hold, most first. The slowest files hold few tests (a handful of real
``recall-eval`` processes each, a server that answers slowly, a mypy run), so they all started at the end and one of
them set the suite's tail while the other core idled. :data:`SLOWEST_FILES` go first, slowest first
(longest-processing-time-first scheduling), and the rest follow in collection order.

Measured from a clean checkout on the idle two-core machine (docs/test-suite-speed.md): 400.5 s without this order,
375.8 s with it (both with warm bytecode, the same tree). A third worker (one more than the cores, so a worker waiting
on a slow server leaves no core idle) was tried before and reverted: in two of three whole-suite runs with it, the
Ctrl-C MCP fault test failed, cause not found; the worker count is xdist's own.
"""

from __future__ import annotations

import pytest

#: The slowest files, slowest first: the wall time of each file's tests in one whole-suite run on the two-core
#: machine (docs/test-suite-speed.md). A file missing here only starts later; tests/test_scheduling.py checks that
#: each one listed exists (a rename updates it).
SLOWEST_FILES: tuple[str, ...] = (
    "tests/fault/test_slow_local_server.py",
    "tests/integration/test_mcp_servers.py",
    "tests/fault/test_signals.py",
    "tests/cli/test_eighty_columns.py",
    "tests/fault/test_mcp_faults.py",
    "tests/integration/test_router.py",
    "tests/fault/test_run_folder_lock.py",
    "tests/fault/test_judge_replies.py",
    "tests/fault/test_forged_records.py",
    "tests/fault/test_report_beside_run.py",
    "tests/runs/test_verdict_check.py",
    "tests/browser/test_report_pages.py",
    "tests/scenarios/test_schema.py",
    "tests/runs/test_compare.py",
    "tests/runs/test_merge.py",
    "tests/run/test_run_holds_few_scenarios.py",
    "tests/memory_tools/test_store_properties.py",
    "tests/fault/test_secrets_in_urls.py",
    "tests/analysis/test_stats.py",
    "tests/integration/test_mem0_plugin.py",
    "tests/fault/test_unencodable_text.py",
    "tests/integration/test_interrupt_resume.py",
    "tests/runs/test_compare_brief.py",
    "tests/fault/test_mcp_sampling.py",
    "tests/fault/test_spending_cap.py",
)


def slowest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: the files of :data:`SLOWEST_FILES` in its order, then the rest as collected.

    Stable and the same on every worker (xdist checks that all workers collected one order)."""
    rank = {path: index for index, path in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
