"""The flag groups several commands share, and the value types their flags parse.

A value type raises ``argparse.ArgumentTypeError`` with an example of a good value, so a typo is one
line and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.defaults import DEFAULT_MAX_ERROR_RATE


def rate_value(text: str) -> float:
    """An argparse type: a share between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a share such as 0.05") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1; give a share such as 0.05 (5%)")
    return value


def jobs_value(text: str) -> int:
    """An argparse type: a count of worker processes, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give a count of processes such as 2") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give 1 (one process) or more")
    return value


def add_max_error_rate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-error-rate", type=rate_value, default=DEFAULT_MAX_ERROR_RATE, metavar="X",
        help=f"above this share of error samples the verdict is inconclusive, the error count leads the summary "
             f"and the command exits 1, with or without --gate (default {DEFAULT_MAX_ERROR_RATE:g})",
    )


#: ``harness.score.JUDGE_PRESETS``, spelled here so building the parser imports no stage (a test keeps them equal).
JUDGE_PRESET_CHOICES = ("locomo", "longmemeval")


def add_judge_prompt_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge-preset", choices=JUDGE_PRESET_CHOICES, metavar="NAME",
                        help="grade with --judge-model as the benchmark's paper does: locomo (CORRECT/WRONG against "
                             "the gold answer) or longmemeval (yes/no, the instruction per question type)")
    parser.add_argument("--judge-prompt", type=Path, metavar="FILE",
                        help="grade with this prompt, verbatim (e.g. an official one): placeholders {question}, "
                             "{gold}, {answer}, {rubric}, {category}, or three {} (question, gold, answer); recorded "
                             "by SHA-256 in summary.json")


def add_pairwise_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairwise-judge", action="store_true",
                        help="also ask --judge-model, per probe and in both orders, whether recall's answer or "
                             "history_only's (and a logged reply, where the probe has one) uses earlier context "
                             "correctly; a sign test over conversations, no gold needed (summary.json pairwise)")


def add_scenario_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--id", action="append", default=[], metavar="ID", help="only this scenario id (glob; repeatable: any of them)")
    parser.add_argument("--category", action="append", default=[],
                        help="only this category (repeatable: any of them; --id, --category and --tag combine with AND)")
    parser.add_argument("--tag", action="append", default=[], help="only scenarios with this tag (repeatable: any of them)")


def usd_value(text: str) -> float:
    """An argparse type: an amount of US dollars, 0 or more (NaN and infinity are no amount)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount; give US dollars such as 12.50") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount; give US dollars such as 12.50")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must not be negative")
    return value


def retrieval_budget_value(text: str) -> Any:
    """An argparse type: ``top_k=N,chars=N`` -> a :class:`harness.scenarios.RetrievalBudget` (exit 2 with the fault named)."""
    from harness.scenarios import RetrievalBudgetError, parse_retrieval_budget

    try:
        return parse_retrieval_budget(text, where=repr(text))
    except RetrievalBudgetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def number_value(example: str, *, positive: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number, 0 or more (``positive``: more than 0); NaN, infinities and negatives are refused."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; give one such as {example}") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            bound = "more than 0" if positive else "0 or more"
            raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number, {bound} (such as {example})")
        return value

    parse.__name__ = "number"  # argparse names the type in its message
    return parse


def add_scale_flags(parser: argparse.ArgumentParser) -> None:
    """``run``'s flags for Routers, rate limits, shards, the plan and the budget."""
    parser.add_argument(
        "--router-config", metavar="FILE",
        help="a litellm Router configuration (YAML or JSON, litellm's model_list format, optional router_settings); "
             "--model values name its model groups and calls go through the Router (load balancing, per-deployment "
             "limits, cooldowns, fallbacks). Each model call records the deployment that answered; run.json the "
             "config's hash (credentials left out)",
    )
    parser.add_argument("--rpm", action="append", metavar="N|MODEL=N",
                        help="at most N requests per minute per model, over all workers, retries included (repeatable; MODEL=N for one model)")
    parser.add_argument("--tpm", action="append", metavar="N|MODEL=N",
                        help="at most N tokens per minute per model (prompt by litellm's counter plus --max-tokens, refunded "
                             "to the usage reported), over all workers (repeatable; MODEL=N for one model)")
    parser.add_argument("--shard", metavar="I/N",
                        help="run only shard I of N (counting from 1): a deterministic split by scenario (every arm, model "
                             "and epoch of a scenario in one shard), balanced by samples; join the shards with `recall-eval merge`")
    parser.add_argument("--plan", action="store_true",
                        help="print the plan (samples, model calls expected and at the round cap, input tokens by litellm's "
                             "counter, cost from litellm's price map per model) and stop: no model call, no file written")
    parser.add_argument("--retrieval-budget", type=retrieval_budget_value, metavar="top_k=N,chars=N",
                        help="the retrieval budget every memory system gets: top_k records and chars characters of "
                             "memory text per retrieval, JSON not counted (a key left out keeps its default, "
                             "top_k=10,chars=4000); overrides the suite's "
                             "retrieval_budget; recorded in run.json and each arm's fingerprint, and compare refuses runs "
                             "whose budgets differ")
    parser.add_argument("--max-cost-usd", type=usd_value, metavar="X",
                        help="stop before a model call whose worst case (prompt plus --max-tokens at litellm's prices) would take "
                             "the run's recorded cost past X; the run is resumable (exit 3); cached answers cost nothing")


def add_iteration_flags(parser: argparse.ArgumentParser) -> None:
    """``run``'s flags of the daily loop: a few scenarios, one sample, what a run got wrong."""
    parser.add_argument("--limit", type=int, metavar="N",
                        help="only the first N scenarios the filters keep, in the suite's order (as `list` prints them); "
                             "recorded in run.json")
    parser.add_argument("--sample-id", action="append", metavar="ID",
                        help="only this sample, named as the records name it: SCENARIO|ARM|MODEL|EPOCH (repeatable; quote it); "
                             "without --arms, --model or --epochs those of the ids are used")
    parser.add_argument("--rerun-failing", metavar="RUN",
                        help="a new run of the scenarios the run folder RUN got wrong: those where a sample of a memory arm "
                             "(any arm but history_only and full_history) failed continuity, or any arm's sample ended in an "
                             "error; every arm, model and epoch of them is run again, with RUN's settings unless given")


def add_new_parser(sub: Any) -> None:
    """``new scenario NAME`` / ``new suite NAME``."""
    p = sub.add_parser("new", help="write a commented scenario or suite skeleton that validates, to edit",
                       description="Write a small complete example with comments saying what each field is for; "
                                   "it validates as written. Nothing is overwritten.",
                       epilog="exit codes: 0 written, 2 the name is not an id or the file or folder exists (nothing written)")
    p.add_argument("kind", choices=["scenario", "suite"],
                   help="scenario: NAME.yaml (id: the file's stem); suite: the folder NAME with _defaults.yaml and NAME-01.yaml")
    p.add_argument("name", metavar="NAME", help="the scenario id or file (scenario), or the folder (suite)")


def add_report_scenarios(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenarios", nargs="+", metavar="PATH",
                        help="where the run's scenarios are now, when the run folder moved away from its suite (a CI "
                             "artifact); instead of run.json's paths (a scenario whose text changed is named in the warnings)")


def add_view_parser(sub: Any) -> None:
    """``view [DIR] [--port N]``."""
    p = sub.add_parser(
        "view", help="serve, on 127.0.0.1, an index of every run folder below DIR, their reports, compare and history pages",
        description="Index every run folder below DIR (suite, models, arms, verdict, continuity difference, started, "
                    "status; a run in progress counts up live) and serve its report; tick two runs to open their "
                    "compare page, or open the history page of every run. The run folders are only read: compare and "
                    "history pages are built on request into a temporary folder. Nothing outside DIR is served.",
        epilog="exit codes: 0 stopped with Ctrl-C, 2 DIR is not a folder or the port cannot be had",
    )
    p.add_argument("dir", nargs="?", default="reports", metavar="DIR", help="the folder holding run folders (default reports)")
    p.add_argument("--port", type=int, default=8765, metavar="N", help="port on 127.0.0.1 (default 8765; 0 picks a free one, printed)")
    p.add_argument("--include-sensitive", action="store_true",
                   help="also list and serve runs that hold real user data (run.json parameters.sensitive)")


def add_export_parser(sub: Any) -> None:
    """``export inspect RUN OUT``."""
    p = sub.add_parser(
        "export", help="write a run as inspect_ai eval logs (one per model and arm), for `inspect view` and its dataframes",
        description="Write one inspect_ai eval log per model and arm of RUN into OUT: samples with their messages, tool "
                    "calls, scores and metadata, the run's parameters as the eval's. Needs the optional extra: "
                    "pip install 'recall-eval[inspect]'.",
        epilog="exit codes: 0 written, 2 RUN is not a readable run folder, OUT cannot be written, or inspect_ai is not installed",
    )
    p.add_argument("format", choices=["inspect"], help="inspect: inspect_ai's .eval log format")
    p.add_argument("run", metavar="RUN", help="a run folder")
    p.add_argument("out", metavar="OUT", help="the folder to write the logs into")
