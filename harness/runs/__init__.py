"""Runs: tools over finished run folders: whether two runs may be compared, what changed, shards joined, a history.

Takes: run folders (each with its ``run.json``, ``results.jsonl`` and,
rebuilt when missing, its report). Gives: ``recall-eval compare`` (the
comparability check, the metrics and scenarios that changed and the
regression gate: ``comparability``, ``compare``, ``compare_cli``,
``compare_page``), ``recall-eval merge`` (shards into one run: ``merge``)
and ``recall-eval history`` (many runs over time as one page: ``history``).
"""

from harness.runs.comparability import CompareError, Difference, RunData, differences, load_run
from harness.runs.compare import Comparison, MetricChange, compare_runs, is_regression
from harness.runs.merge import MergeError, merge_runs

__all__ = [
    "CompareError",
    "Comparison",
    "Difference",
    "MergeError",
    "MetricChange",
    "RunData",
    "compare_runs",
    "differences",
    "is_regression",
    "load_run",
    "merge_runs",
]
