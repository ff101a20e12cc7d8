"""The ``recall-eval`` command line, on top of every stage.

Takes: the command line. Gives: the exit code. Each command's work lives in
the stage that owns it (``validate``/``list`` in scenarios, ``run`` in
:mod:`harness.cli.run` over :mod:`harness.run`, ``report`` in report,
``compare``/``merge``/``history`` in runs, ``import`` in importers); this file only parses
arguments and imports that module when the command runs, so ``--help``,
``validate``, ``list`` and ``report`` never pay for importing litellm.
Every handler takes the parsed arguments and returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from harness import __version__
from harness.cli.flags import (
    add_export_parser,
    add_iteration_flags,
    add_judge_prompt_flags,
    add_max_error_rate,
    add_new_parser,
    add_pairwise_flag,
    add_report_scenarios,
    add_scale_flags,
    add_scenario_filters,
    add_view_parser,
    jobs_value,
    number_value,
    usd_value,
)
from harness.cli.parsing import model_value, parse_command_line, without_abbreviations
from harness.cli.project_config import ProjectConfigError, apply_project_settings
from harness.defaults import COMPARE_FLOORS, DEFAULT_ARMS, DEFAULT_MODEL, DEFAULT_SUITE, RUN_DEFAULTS
from harness.records import guard_streams
from harness.scenarios import use_shipped_suites
from harness.wrapping import wrapped_stderr

# command -> "module:function"
_HANDLERS = {
    "validate": "harness.scenarios.commands:cli_validate",
    "list": "harness.scenarios.commands:cli_list",
    "schema": "harness.scenarios.schema:cli_schema",
    "run": "harness.cli.run:cli_run",
    "report": "harness.report:cli_report",
    "compare": "harness.runs.compare_cli:cli_compare",
    "import": "harness.importers:cli_import",
    "audit": "harness.importers:cli_audit",
    "history": "harness.runs.history:cli_history",
    "merge": "harness.runs.merge:cli_merge",
    "new": "harness.scenarios.skeleton:cli_new",
    "view": "harness.runs.viewer:cli_view",
    "export": "harness.runs.inspect_export:cli_export",
}


#: An argparse type: a finite number, 0 or more (the compare floors).
_non_negative = number_value("10")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall-eval",
        description=(
            "Does an agent with memory_search/memory_get keep continuity across sessions better than "
            "the same agent with recent history alone, without more unsupported claims or leakage?"
        ),
    )
    parser.add_argument("--version", action="version", version=f"recall-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("validate", help="check scenario files and suites; exit 1 on any error")
    p.add_argument("paths", nargs="*", default=["scenarios"], metavar="PATH", help="files or folders (default: scenarios)")
    p.add_argument("--store", metavar="FILE", help="also check this memory-item store (SQLite or JSON export) and say what it gives each probe")
    p.add_argument("--jobs", type=jobs_value, default=None, metavar="N",
                   help="processes checking files of a large suite (8 MB or more) at once (default: one per CPU this process may use)")

    p = sub.add_parser("list", help="list scenarios with category and tags")
    p.add_argument("paths", nargs="*", default=[DEFAULT_SUITE], metavar="PATH")
    add_scenario_filters(p)

    p = sub.add_parser("schema", help="print the scenario JSON Schema")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    add_new_parser(sub)
    add_view_parser(sub)
    add_export_parser(sub)

    p = sub.add_parser("run", help="run scenarios in every arm on one or more models and write a report")
    _d = RUN_DEFAULTS
    p.add_argument("--model", action="append", dest="models", type=model_value, metavar="M",
                   help=f"litellm model string (repeat the flag for several models; default {DEFAULT_MODEL})")
    p.add_argument("--arms", nargs="+", metavar="ARM",
                   help=f"arms to run (default: {' '.join(DEFAULT_ARMS)}); also built in: memory_document, "
                        "recall_fts, recall_extracted, named_memory, named_memory_cold, memory_document_extracted, "
                        "memory_document_topk_fts, memory_document_topk_vector, memory_document_topk_judge, "
                        "memory_document_dream; installed memory-system plug-ins add theirs (docs/memory-systems.md)")
    p.add_argument("--scenarios", nargs="+", metavar="PATH",
                   help=f"scenario files or folders (default: {DEFAULT_SUITE}); with --resume, where the run's "
                        "scenarios are now if they moved (they must hash the same)")
    p.add_argument("--filter", action="append", default=[], metavar="EXPR",
                   help="id glob, category:NAME or tag:NAME (repeatable: filters of one kind combine with OR, "
                   "kinds with AND, e.g. --filter category:decision --filter category:preference --filter tag:rationale "
                   "runs the scenarios of either category tagged rationale)")
    p.add_argument("--epochs", type=int, default=None, help=f"repeats of every sample (default {_d['epochs']})")
    p.add_argument("--seed", type=int, default=None, help=f"base seed (default {_d['seed']})")
    p.add_argument("--max-concurrency", "--max-connections", type=int, default=None, metavar="C",
                   help=f"samples in flight at once (default {_d['max_concurrency']}; --max-connections is inspect_ai's name for it)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help=f"processes running samples, sharing --max-concurrency (default {_d['workers']})")
    p.add_argument("--max-tool-rounds", type=int, default=None, help=f"tool rounds before the loop stops (default {_d['max_tool_rounds']})")
    p.add_argument(
        "--max-tokens", type=int, default=None, metavar="N",
        help=f"limit of tokens the model generates per call (default {_d['max_tokens']}: answers here are a few sentences and "
        "tool calls a few dozen tokens, so this is 10x headroom, while a model that rambles until its context is full "
        "no longer holds its server for minutes; raise it for reasoning models, whose hidden reasoning counts against it). "
        "A call cut off by it is recorded with finish_reason 'length' and its answer scored as given",
    )
    p.add_argument("--timeout", type=number_value("120", positive=True), default=None, help=f"seconds per model call (default {_d['timeout_s']:g})")
    p.add_argument("--retries", type=int, default=None, help=f"retries of a transient provider error (default {_d['retries']})")
    p.add_argument("--retry-delay", type=number_value("1"), default=None, metavar="S",
                   help="backoff scale in seconds: retry n waits up to S*2^n, or the server's Retry-After when "
                        f"longer (default {_d['retry_delay_s']:g})")
    p.add_argument("--temperature", type=number_value("0.7"), default=None, help=f"sampling temperature (default {_d['temperature']:g})")
    p.add_argument("--api-base", metavar="URL", help="endpoint of an OpenAI-compatible server, forwarded to litellm")
    from harness.cli.system_flags import add_system_flags

    add_system_flags(p)  # --embedding-*, --instructions
    p.add_argument("--out", metavar="DIR", help="run folder (default reports/<timestamp>); one process writes it at a time")
    p.add_argument("--resume", metavar="DIR",
                   help="complete an interrupted or failed run in DIR: re-runs missing and failed samples, appending (nothing is deleted)")
    p.add_argument("--no-cache", action="store_true", help="bypass the on-disk response cache")
    p.add_argument("--store", metavar="FILE",
                   help="seed the recall arms from this memory-item SQLite file (or its JSON export, "
                        "docs/store-export.md), read-only, instead of the scenarios' items; the run is sensitive")
    p.add_argument("--redact", action="append", default=[], metavar="REGEX",
                   help="also redact what this regex matches in every scenario text before any model sees it "
                        "(repeatable; the secret patterns are on in every sensitive run); the run is sensitive; "
                        "run.json records its digest, never the pattern, so give it again to --resume and report")
    p.add_argument("--cache-dir", metavar="DIR", help="response cache folder (default .recall-eval-cache)")
    p.add_argument("--judge-model", type=model_value, metavar="M",
                   help="litellm model for rubric scenarios and the grounding judge, which lists unsupported specifics in every answer (optional)")
    p.add_argument("--judge-api-base", metavar="URL",
                   help="endpoint of an OpenAI-compatible server for --judge-model (e.g. a local llama.cpp "
                        "server); recorded in run.json, so --resume keeps it")
    add_judge_prompt_flags(p)
    add_pairwise_flag(p)
    p.add_argument("--gate", action="store_true", help="exit 1 when the verdict is not pass")
    add_max_error_rate(p)
    p.add_argument("--no-progress", action="store_true", help="plain log lines even on a terminal")
    add_scale_flags(p)
    add_iteration_flags(p)

    p = sub.add_parser(
        "merge", help="merge the run folders of one sharded run (run --shard I/N) into one run folder and build its report",
        description="Check that the shard folders belong to one plan (same whole-suite hash, models, arms, epochs, seed, "
                    "parameters, harness version; every shard 1..N once, none overlapping), write OUT/run.json and "
                    "OUT/results.jsonl (one record per sample) and build the report, as `recall-eval report OUT` would.",
        epilog="exit codes: 0 merged (and, with --gate, the verdict passed), 1 the verdict asks for it (as `report`), "
               "2 the shards do not make one whole run (missing, overlapping or from different plans: each named) or cannot be read",
    )
    p.add_argument("out", metavar="OUT", help="the merged run folder (must not hold a run yet)")
    p.add_argument("runs", nargs="+", metavar="RUN", help="the shard run folders (any order)")
    p.add_argument("--gate", action="store_true", help="exit 1 when the verdict is not pass (incomplete included)")
    add_max_error_rate(p)
    p.add_argument("--no-report", action="store_true",
                   help="write run.json and results.jsonl only (build the report later with `recall-eval report OUT`)")

    p = sub.add_parser("report", help="rebuild summary.json, metrics.csv, junit.xml and index.html from a run folder")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--judge-model", type=model_value, metavar="M",
                   help="litellm model for rubric scenarios and the grounding judge, which lists unsupported specifics in every answer (optional)")
    p.add_argument("--judge-api-base", metavar="URL",
                   help="endpoint of an OpenAI-compatible server for --judge-model (e.g. a local llama.cpp server)")
    add_judge_prompt_flags(p)
    add_pairwise_flag(p)
    p.add_argument("--exclude", action="append", default=[], metavar="ID",
                   help="leave out the scenarios whose id matches this glob (a known-bad answer key); repeatable; "
                        "one matching no scenario in the results is an error (exit 2)")
    p.add_argument("--gate", action="store_true", help="exit 1 when the verdict is not pass (incomplete included)")
    add_max_error_rate(p)
    p.add_argument("--include-foreign", action="store_true",
                   help="score records whose model, arm, scenario or epoch run.json does not list (refused otherwise)")
    p.add_argument("--min-gain", type=float, metavar="X", help="paired CI lower bound of the accuracy gain must exceed X (default 0)")
    p.add_argument("--unsupported-tolerance", type=float, metavar="X",
                   help="allowed rise of the unsupported-claim rate, CI upper bound (default 0.02)")
    add_report_scenarios(p)
    p.add_argument("--redact", action="append", default=[], metavar="REGEX",
                   help="the run's own --redact patterns again (run.json holds only their digests)")
    p.add_argument("--max-cost-usd", type=usd_value, metavar="X",
                   help="stop before a judge call (grading or calibration) whose worst case would take this "
                        "report's judge spending past X (exit 3, nothing written; cached verdicts cost nothing)")

    p = sub.add_parser(
        "compare", help="per-metric and per-scenario differences between two runs; exit 1 on a regression",
        description=(
            "Check that two runs are comparable (suite hash and scenario ids, models, arms, epochs, seed, "
            "max tool rounds, temperature, max tokens, API base, judge model, excluded scenarios, verdict "
            "thresholds, harness version; both runs complete and readable), print every difference as "
            "'name: A -> B', then the metrics and scenarios that changed and the regression gate."
        ),
        epilog="exit codes: 0 no regression, 1 a regression beyond the intervals (or the verdict left pass), "
               "2 the runs are not comparable (without --force) or a run folder is missing or unreadable. "
               "Latency and cost never fail the gate unless --gate-on names them; even then only beyond the "
               "intervals and both floors (B - A above the percentage of A and above the absolute floor).",
    )
    p.add_argument("run_a", metavar="RUN_A", help="baseline run (e.g. the last good nightly)")
    p.add_argument("run_b", metavar="RUN_B", help="candidate run")
    p.add_argument("--force", action="store_true",
                   help="compare runs that are not comparable: what both have is compared, what only one has is listed")
    p.add_argument("--full", action="store_true",
                   help="print every changed metric row and every scenario whose correct rate changed (by default: "
                        "per arm the continuity change and the scenarios broken and fixed, then the rows worse "
                        "beyond the intervals)")
    p.add_argument("--all", action="store_true", help="as --full, and also the metrics that did not change")
    p.add_argument("--pair", action="append", metavar="OLD=NEW",
                   help="compare A's model OLD with B's model NEW scenario by scenario (repeatable; automatic when "
                        "each run has one model): only suite, scenarios, arms, budget and judge must match")
    p.add_argument("--json", metavar="OUT", help="also write every row of the comparison as JSON to OUT")
    p.add_argument("--include-foreign", action="store_true",
                   help="count results records of samples the run's run.json does not plan (refused otherwise)")
    p.add_argument("--html", metavar="OUT",
                   help="also write the comparison as one self-contained page to OUT: the differences between the "
                        "runs first, then metric deltas with intervals and the scenarios that changed, linking to "
                        "their transcripts in both reports")
    _f = COMPARE_FLOORS
    p.add_argument("--gate-on", action="append", choices=("latency", "cost"), metavar="latency|cost",
                   help="also fail (exit 1) on latency (p50, p95) or cost (per sample, per correct answer) worse "
                        "beyond the intervals and floors (repeatable); without it they are shown, marked "
                        "'not gated', and never change the exit code")
    p.add_argument("--latency-floor-pct", type=_non_negative, metavar="P",
                   help=f"latency is worse only when B - A exceeds P%% of A (default {_f['latency_pct']:g})")
    p.add_argument("--latency-floor-ms", type=_non_negative, metavar="MS",
                   help=f"... and exceeds MS milliseconds (default {_f['latency_ms']:g})")
    p.add_argument("--cost-floor-pct", type=_non_negative, metavar="P",
                   help=f"cost is worse only when B - A exceeds P%% of A (default {_f['cost_pct']:g})")
    p.add_argument("--cost-floor-usd", type=usd_value, metavar="X",
                   help=f"... and exceeds X US dollars per sample or per correct answer (default {_f['cost_usd']:g})")

    p = sub.add_parser("import", help="write a suite from a public benchmark file (LoCoMo, LongMemEval) or logged transcripts",
                       description="Convert a benchmark's published JSON into conversation files; see docs/importers.md.")
    p.add_argument("format", choices=["locomo", "longmemeval", "transcripts"],
                   help="the benchmark the file comes from, or transcripts: a team's logged conversations (JSONL, or a folder of session files)")
    p.add_argument("file", metavar="FILE", help="the published JSON file (locomo10.json, longmemeval_s_cleaned.json, ...)")
    p.add_argument("out", metavar="OUT", help="suite folder to write: new, empty, or an earlier import (replaced)")
    p.add_argument("--force", action="store_true", help="write even inside a git work tree (the data must never be committed)")
    p.add_argument("--limit", type=int, metavar="N", help="import only the first N samples or questions")
    p.add_argument("--jobs", type=jobs_value, default=None, metavar="N",
                   help="processes converting the elements of a large file (8 MB or more) at once (default: one per CPU this process may use)")
    p.add_argument("--redact", action="append", default=[], metavar="REGEX",
                   help="transcripts: also redact what this regex matches (repeatable; the secret patterns are "
                        "always on; _suite.json records its digest, never the pattern)")

    p = sub.add_parser(
        "audit", help="list gold checks no answer could pass (absent from the conversation, glued words, split dates)",
        description="Read a suite's files and list the answer checks that look unpassable: a check string found in "
                    "no session text or item after normalisation, glued words in a gold, a list split inside a date "
                    "or number, a real answer on an abstention probe; counts per kind and category. Changes nothing.",
        epilog="exit codes: 0 no finding, 1 findings listed, 2 the suite is missing or unreadable",
    )
    p.add_argument("paths", nargs="+", metavar="SUITE", help="suite folders or scenario files")
    p.add_argument("--json", action="store_true", help="print the findings as JSON (counts, flagged ids, every finding)")

    p = sub.add_parser(
        "history", help="one page with the verdict and key metrics of many runs over time (nightly runs)",
        description="Read each run's summary.json (no results, no model) and write one self-contained page: per "
                    "model, the paired continuity and unsupported-claim differences and continuity per arm over "
                    "time, intervals as bands, each point linking to its run's report. Only like runs are joined: "
                    "a series breaks (visibly, and printed) where the suite hash, models, arms, judge, epochs, seed "
                    "or answer-changing parameters change.",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="a run folder, or a folder of run folders (repeatable)")
    p.add_argument("--out", metavar="FILE", default="history.html", help="the page to write (default history.html)")
    p.add_argument("--include-sensitive", action="store_true",
                   help="also chart runs that hold real user data (run.json parameters.sensitive; left out by default)")
    p.add_argument("--include-shards", action="store_true",
                   help="also show shard folders (run --shard I/N); left out by default, their merged run is the point")
    _exit_code_epilogs(parser, sub)
    return without_abbreviations(parser)


#: What each command's exit code means, printed at the end of its ``--help``. Across commands 0 is success,
#: 1 "the answer is no" (a verdict, a regression, an invalid scenario) and 2 bad input: a path that does not
#: exist, a file that cannot be read or written, flags that do not fit.
EXIT_CODES = {
    "validate": "0 every file valid (warnings allowed), 1 a file has an error, 2 a path does not exist",
    "list": "0 listed, 1 a scenario file has an error, 2 a path does not exist",
    "schema": "0 printed or written, 2 --out cannot be written",
    "run": "0 finished (and, with --gate, the verdict passed), 1 the verdict asks for it (--gate) or more errors "
           "than --max-error-rate or the run is incomplete, 2 bad input (a path, a flag, a model that cannot be "
           "called), a record could not be written or calls kept timing out alone (resumable), 3 stopped by "
           "--max-cost-usd before an agent or judge call (resumable), 130/143 interrupted by Ctrl-C/SIGTERM (resumable)",
    "report": "0 built (and, with --gate, the verdict passed), 1 the verdict asks for it (--gate) or more errors "
              "than --max-error-rate, 2 the folder does not exist or cannot be read, or a flag is wrong, 3 stopped by "
              "--max-cost-usd before a judge call",
    "import": "0 written, 2 the file does not exist or is not the benchmark's format, or OUT cannot be written",
    "history": "0 the page is written, 2 a folder does not exist or holds no run with a summary, or --out "
               "cannot be written",
}


_GENERAL_EXIT_CODES = ("0 success, 1 the answer is no (a verdict, a regression, an invalid scenario), 2 bad input "
                       "(a missing path, an unreadable file, a wrong flag)")


def _exit_code_epilogs(parser: argparse.ArgumentParser, commands: Any) -> None:
    """Every command's ``--help`` ends with its exit codes (merge and compare write theirs in place; a command
    not in :data:`EXIT_CODES` gets the codes every command shares)."""
    for name, command in commands.choices.items():
        if not command.epilog:
            command.epilog = f"exit codes: {EXIT_CODES.get(name, _GENERAL_EXIT_CODES)}"
    parser.epilog = f"exit codes: {_GENERAL_EXIT_CODES}; each command's --help says exactly"


#: Thread counts of numpy's BLAS, set before numpy loads unless the user set them.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """One BLAS thread unless the user chose otherwise: the report's bootstrap is many small matrix-vector
    products, where OpenBLAS's extra threads spin-wait for work and, on a busy 2-core machine, doubled the
    report's CPU time (13 s against 7 s for 6,000 samples) for no gain in wall time."""
    for name in BLAS_THREAD_VARIABLES:
        environ.setdefault(name, "1")


def main(argv: Sequence[str] | None = None) -> int:
    # No provider- or model-supplied text drives the terminal (harness.records.terminal), and every line on
    # standard error (each command's errors, warnings and notes, argparse's too) wraps to the terminal's width
    # (harness.wrapping).
    with guard_streams(), wrapped_stderr():
        return _run_command(argv)


def _run_command(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = use_shipped_suites(parse_command_line(parser, argv))  # scenarios/starter from any folder: the installed copy
    if not args.command:
        parser.print_help()
        return 2
    try:  # .env, RECALL_EVAL_* and recall-eval.toml / [tool.recall-eval]: flag > environment > file > default
        args.project_settings = apply_project_settings(args)
    except ProjectConfigError as exc:
        print(f"recall-eval {args.command}: error: {exc}", file=sys.stderr)
        return 2
    single_threaded_blas()  # before any command imports numpy
    module_name, func_name = _HANDLERS[args.command].split(":")
    handler = getattr(importlib.import_module(module_name), func_name)
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` or similar: stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
