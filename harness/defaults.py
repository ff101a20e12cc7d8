"""Defaults every stage shares: the suite, model and arms a bare ``recall-eval run`` uses, and run settings.

They live beneath every package so that a lower stage (the verdict, the
report's arm order, comparability) can read them without importing the
command line above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import multiprocessing.context

DEFAULT_SUITE = "scenarios/starter"
DEFAULT_MODEL = "offline/reference"
DEFAULT_ARMS = ("history_only", "recall", "full_history")
# `run` settings when neither a flag nor a resumed run's manifest gives them (flags default to None to tell).
RUN_DEFAULTS: dict[str, int | float] = {
    "epochs": 1,
    "seed": 0,
    "max_tool_rounds": 4,
    "max_tokens": 2048,
    "temperature": 0.0,
    "timeout_s": 120.0,
    "retries": 4,
    "retry_delay_s": 1.0,
    "max_concurrency": 8,
    "workers": 1,
}

# A larger share of error samples makes the verdict inconclusive (and `run`/`report` exit 1).
DEFAULT_MAX_ERROR_RATE = 0.05

# `compare`: latency and cost differences count as worse only beyond both floors (and the intervals), and gate
# (exit 1) only when `--gate-on latency` / `--gate-on cost` asks: two runs of one deterministic model differ in
# latency by tens of milliseconds on a busy machine, which is noise, not a regression.
COMPARE_FLOORS: dict[str, float] = {
    "latency_pct": 50.0,   # B slower than A by more than this share of A's value ...
    "latency_ms": 500.0,   # ... and by more than this many milliseconds
    "cost_pct": 20.0,      # B dearer than A by more than this share of A's value ...
    "cost_usd": 0.001,     # ... and by more than this many US dollars (per sample, or per correct answer)
}


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, as a container or ``taskset`` limits it), at least 1.

    The default number of worker processes of ``validate`` and ``import`` on a large suite or file.
    """
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def worker_context() -> multiprocessing.context.BaseContext:
    """How ``validate`` and ``import`` start their worker processes: fork where it is safe and cheap (Linux: the
    workers start with everything imported, and the commands are single-threaded when they fork), spawn elsewhere."""
    import multiprocessing
    import sys

    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
