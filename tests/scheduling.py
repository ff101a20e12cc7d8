"""How the README's test command (``-n auto --dist loadfile``) spreads the suite over pytest-xdist workers.

Each test file runs whole on one worker (its module fixtures, an offline run or an installed plug-in, are built once).
Two things made that slow on two cores, measured per file with CPU and wall figures (docs/test-suite-speed.md):

- xdist hands out files by how many tests they hold, most first. The slowest files hold few tests (a handful of real
  ``recall-eval`` processes each, or a mypy run), so they all started at the end and one of them set the tail while
  the other core idled. :data:`SLOWEST_FILES` go first, slowest first (longest-processing-time-first scheduling), and
  the rest follow in collection order.
- Many fault tests wait on real time (a server that answers slowly, a timeout, a heartbeat, a signal sent mid-run):
  a worker in such a test leaves its core idle. ``-n auto`` starts one worker more than there are cores, so another
  file keeps that core busy; each worker costs one collection of the suite (~15 CPU-s), so not more.
"""

from __future__ import annotations

import os

import pytest

#: The slowest files, slowest first (CPU of the test process and its children plus time spent waiting, per file,
#: measured on the two-core machine). A file missing here only starts later; tests/test_scheduling.py checks that
#: each one listed exists, so a rename updates the list.
SLOWEST_FILES: tuple[str, ...] = (
    "tests/fault/test_signals.py",
    "tests/integration/test_mcp_servers.py",
    "tests/fault/test_spending_cap.py",
    "tests/integration/test_installed_wheel.py",
    "tests/fault/test_run_folder_lock.py",
    "tests/fault/test_slow_local_server.py",
    "tests/fault/test_secrets_in_urls.py",
    "tests/run/test_run_holds_few_scenarios.py",
    "tests/cli/test_eighty_columns.py",
    "tests/fault/test_report_beside_run.py",
    "tests/fault/test_forged_records.py",
    "tests/browser/test_report_pages.py",
    "tests/runs/test_compare_brief.py",
    "tests/fault/test_mcp_faults.py",
    "tests/test_types.py",
    "tests/fault/test_compare_inputs.py",
    "tests/fault/test_terminal_injection.py",
    "tests/integration/test_mem0_plugin.py",
    "tests/run/test_direct_calls.py",
    "tests/runs/test_merge.py",
)

#: xdist's own override of the worker count for ``-n auto``, honoured here too.
WORKERS_ENV = "PYTEST_XDIST_AUTO_NUM_WORKERS"


def usable_cpus() -> int:
    """The cores this process may run on (its affinity where the platform tells, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def auto_workers(cpus: int, environ: dict[str, str] | os._Environ[str] = os.environ) -> int:
    """Workers for ``-n auto``: one more than the cores (see the module docstring), or the environment's number."""
    if environ.get(WORKERS_ENV):
        return int(environ[WORKERS_ENV])
    return cpus + 1


def slowest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: the files of :data:`SLOWEST_FILES` in its order, then the rest as collected.

    Stable and the same on every worker (xdist checks that all workers collected one order)."""
    rank = {path: index for index, path in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
