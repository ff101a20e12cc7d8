"""Report: pages and outputs, pure functions of a run folder.

Takes: a run folder (``run.json``, ``results.jsonl``) and its scenarios.
Gives: ``summary.json``, ``metrics.csv``, ``scores.jsonl``, ``junit.xml`` and
a self-contained ``index.html``, and the terminal's table and verdict lines.
It scores every sample (:mod:`harness.score`), aggregates them and decides
the verdict (:mod:`harness.analysis`); it never calls the agent model (a
judge model only when one is asked for). :func:`build_report` is the entry;
``recall-eval report RUN_DIR`` is :func:`cli_report`; for notebooks,
:func:`scores_frame` and :func:`metrics_frame` give pandas frames.
"""

from harness.report.build import ReportError, ReportOutcome, build_report, load_run_scenarios
from harness.report.commands import cli_report
from harness.report.formatting import arm_class, arm_order, label, metric_kind, paired_diff, seconds, seconds_interval
from harness.report.frames import metrics_frame, scores_frame
from harness.report.html import METRIC_ORDER, page_environment
from harness.report.inputs import ReportInputs, planned_samples
from harness.report.outputs import (
    SCORES_ADDED_IN,
    SCORES_FILE,
    SCORES_READABLE_VERSIONS,
    SCORES_SCHEMA_VERSION,
    SUMMARY_FILE,
    write_output,
)
from harness.report.protocol import run_protocol
from harness.report.summary import SUMMARY_SCHEMA_VERSION, build_summary, final_scores, protocol_place
from harness.report.terminal import report_lines

__all__ = [
    "METRIC_ORDER",
    "SCORES_ADDED_IN",
    "SCORES_FILE",
    "SCORES_READABLE_VERSIONS",
    "SCORES_SCHEMA_VERSION",
    "SUMMARY_FILE",
    "SUMMARY_SCHEMA_VERSION",
    "ReportError",
    "ReportInputs",
    "ReportOutcome",
    "arm_class",
    "arm_order",
    "build_report",
    "build_summary",
    "cli_report",
    "final_scores",
    "label",
    "load_run_scenarios",
    "metric_kind",
    "metrics_frame",
    "page_environment",
    "paired_diff",
    "planned_samples",
    "protocol_place",
    "report_lines",
    "run_protocol",
    "scores_frame",
    "seconds",
    "seconds_interval",
    "write_output",
]
