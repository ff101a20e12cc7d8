"""``recall-eval report RUN_DIR``: rebuild a run's outputs, print its table and verdict, and the exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness.analysis import VerdictConfig, exit_code
from harness.records import ResultsError, terminal_text
from harness.report.build import ReportError, build_report


def _thresholds_from_args(args: Any) -> VerdictConfig:
    """``--min-gain``, ``--unsupported-tolerance``, ``--max-error-rate`` (when given) as a VerdictConfig."""
    values = {}
    if getattr(args, "min_gain", None) is not None:
        values["min_continuity_gain"] = args.min_gain
    if getattr(args, "unsupported_tolerance", None) is not None:
        values["unsupported_tolerance"] = args.unsupported_tolerance
    if getattr(args, "max_error_rate", None) is not None:
        values["max_error_rate"] = args.max_error_rate
    return VerdictConfig(**values)


def _judge_budget(args: Any) -> Any:
    """``--max-cost-usd X``: a :class:`harness.run.budget.Budget` of X for this report's judge calls (grading and
    calibration, each reserved at its worst case before it is made); None without the flag.

    Raises:
        ReportError: the flag without ``--judge-model`` (a report makes no other model call), or a judge model
            litellm has no price for (its cost cannot be bounded).
    """
    limit = getattr(args, "max_cost_usd", None)
    if limit is None:
        return None
    judge_model = getattr(args, "judge_model", None)
    if not judge_model:
        raise ReportError("--max-cost-usd caps the judge's calls, and a report makes no other model call; also pass "
                          "--judge-model M, or drop --max-cost-usd")
    from harness.run import PriceError, judge_budget

    try:
        return judge_budget(None, limit, judge_model)
    except PriceError as exc:
        raise ReportError(str(exc)) from None


def run_in_progress(run_dir: Path) -> str | None:
    """Why ``run_dir`` must not be reported on now: a live ``run`` holds its lock (None when no writer lives).

    A report beside a writer would summarise half the records and overwrite
    the outputs the run writes at its end; a stale lock (its holder died)
    does not count.
    """
    from harness.run import describe_writer, live_writer

    holder = live_writer(run_dir)
    if holder is None:
        return None
    return (f"{run_dir}: its run is in progress (being written by {describe_writer(holder)}); nothing was written. "
            "Wait for it to finish, or report a copy of the folder")


def cli_report(args: Any) -> int:
    """``recall-eval report RUN_DIR``: leads and verdict first, then the paths.

    Exit 1 when the error rate is above ``--max-error-rate``, or with ``--gate``
    unless the verdict is pass (an incomplete run included); 2 on bad input or
    when the folder's run is still writing (nothing is written then).
    """
    from pydantic import ValidationError

    from harness.redaction import RedactionError, Redactor
    from harness.scenarios import ScenarioError
    from harness.score import JudgeError, PaperMetricsError

    try:
        Redactor.build(getattr(args, "redact", None) or ())  # run.json names them by digest (harness.redaction)
    except RedactionError as exc:
        print(terminal_text(f"recall-eval report: {exc}"), file=sys.stderr)
        return 2
    busy = run_in_progress(Path(args.run_dir))
    if busy is not None:
        print(f"recall-eval report: {busy}", file=sys.stderr)
        return 2
    from harness.run import BudgetExceeded

    budget = None
    try:
        budget = _judge_budget(args)
        try:
            thresholds = _thresholds_from_args(args)
        except ValidationError as exc:
            raise ReportError(f"bad threshold: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None
        outcome = build_report(Path(args.run_dir), judge_model=getattr(args, "judge_model", None),
                               exclude=getattr(args, "exclude", None) or (), thresholds=thresholds,
                               judge_api_base=getattr(args, "judge_api_base", None),
                               include_foreign=bool(getattr(args, "include_foreign", False)),
                               judge_preset=getattr(args, "judge_preset", None),
                               judge_prompt=getattr(args, "judge_prompt", None),
                               scenario_paths=getattr(args, "scenarios", None),
                               pairwise_judge=bool(getattr(args, "pairwise_judge", False)), judge_budget=budget)
    except (ReportError, ResultsError, JudgeError, ScenarioError, PaperMetricsError) as exc:
        print(terminal_text(f"recall-eval report: {exc}"), file=sys.stderr)  # a judge error quotes its provider
        return 2
    except BudgetExceeded:
        assert budget is not None
        print(f"stopped: --max-cost-usd ${budget.limit_usd:,.4f} reached before the next judge call (this report's "
              f"judge calls recorded ${budget.recorded_usd:,.4f}); the judge verdicts paid for are cached, and nothing was "
              "written (the run's earlier report, if any, is untouched). Continue with the same `recall-eval report` "
              "command and a higher --max-cost-usd: cached verdicts cost nothing again", file=sys.stderr)
        return 3
    from harness.report.terminal import report_lines

    out, err = report_lines(outcome)  # the same words as the end of `recall-eval run`
    for line in out:
        print(terminal_text(line))
    for line in err:
        print(terminal_text(line), file=sys.stderr)
    for name, path in outcome.paths.items():
        print(f"{name:13} {path}")
    return exit_code(outcome, gate=bool(getattr(args, "gate", False)))
