"""Test-session setup shared by every test folder."""

from __future__ import annotations

import os
import sys

import pytest

from harness.cli import single_threaded_blas

# One BLAS thread, as every `recall-eval` command runs (harness.cli.main, before numpy is imported): the tests that
# build reports in this process called numpy with OpenBLAS's extra threads spin-waiting beside the other xdist
# worker (eight report-building files: 79 CPU-s for 63 s of wall, against 44 CPU-s for 50 s with one thread).
single_threaded_blas()


def pytest_configure(config: pytest.Config) -> None:
    """Once per session (the controller, before any xdist worker starts): the checkout's packages compiled for the
    child processes tests start, where the environment forbids writing bytecode, and with xdist the test modules
    rewritten once for all the workers (tests/bytecode_cache.py)."""
    if not hasattr(config, "workerinput"):
        from tests.bytecode_cache import compile_checkout_sources, rewrite_test_modules

        compile_checkout_sources()
        if getattr(config.option, "numprocesses", None):
            config.option.loadscopereorder = False  # the workers' order holds (tests/scheduling.py)
            if config.getoption("assertmode") == "rewrite":
                rewrite_test_modules(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: the files holding a ``slow`` test first, then the rest most tests first
    (tests/scheduling.py). Every worker orders the same collection the same way, as xdist requires."""
    if hasattr(config, "workerinput"):
        from tests.scheduling import slow_files_first

        items[:] = slow_files_first(items)


@pytest.hookimpl(wrapper=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> object:
    """``-n auto`` starts one xdist worker more than xdist's count of cores (unless ``PYTEST_XDIST_AUTO_NUM_WORKERS``
    sets the number, as xdist documents).

    About a third of the suite's wall time is spent waiting on real time: one-slot servers answering in 0.5-3 s,
    heartbeats, rpm windows, signals sent mid-run. A worker in such a test leaves its core idle; the extra worker
    keeps it busy. On the two-core machine (docs/test-suite-speed.md, "Fifth pass") the idle cores fell from 127 to
    31 core-s and the suite from 363 s to 312 s, for one more collection of the suite (~7 CPU-s).
    """
    counted = yield
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not isinstance(counted, int):
        return counted
    return counted + 1


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> object:
    """Collect with bytecode written even where the environment forbids it (``PYTHONDONTWRITEBYTECODE``).

    Each xdist worker collects the whole suite; without this every worker of every session parsed, assertion-rewrote
    and compiled the ~330 modules under tests/ again (collection 27.8 CPU-s with the variable set, 14.7
    without, docs/test-suite-speed.md). pytest's rewritten ``.pyc`` files are checked against the source's hash and
    written atomically (workers collecting at once are safe); like tests/bytecode_cache.py's they go to the
    git-ignored ``__pycache__`` folders. Only collection is affected: the tests' own imports and every child process
    keep the environment's setting.
    """
    forbidden = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = forbidden


@pytest.fixture(autouse=True, scope="session")
def _fresh_harness_caches() -> None:
    """Start each test session with empty ``lru_cache``s in the harness and memory_tools modules.

    The results are pure functions of their arguments, so clearing changes no
    test's outcome. It matters to mutation testing (docs/mutation-testing.md):
    mutmut runs the clean suite in its own process and forks one child per
    mutant, so without this a child would answer from caches filled by the
    unmutated code and never call the mutated helpers behind them.
    """
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("harness.", "memory_tools.")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and not isinstance(value, type) and getattr(value, "__module__", None) == name:
                clear()


@pytest.fixture(autouse=True)
def _unwrapped_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Print lines whole (``COLUMNS=1000``) so tests match messages, not where an 80-column terminal breaks them.

    Child processes inherit it. The 80-column promise has its own tests, which set ``COLUMNS`` (or unset it, for
    piped output) themselves: ``tests/cli/test_eighty_columns.py``, ``tests/runs/test_compare_pairs.py``.
    """
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture(autouse=True)
def _no_project_settings_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's ``RECALL_EVAL_MODEL`` (or any project setting variable) changes no test's run."""
    from harness.cli.project_config import ENV_PREFIX, ProjectSettings

    for key in ProjectSettings.model_fields:
        monkeypatch.delenv(ENV_PREFIX + key.upper(), raising=False)
