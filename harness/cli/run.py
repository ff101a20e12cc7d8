"""``recall-eval run``: resolve the options, print the plan, lock the run folder, run what is missing, report.

The sample loop is :mod:`harness.run`; this command adds what only a
terminal needs: the plan line, the lock, SIGTERM handled like Ctrl-C, the
manifest's final status and the report with its verdict, leads first. One
process writes a run folder at a time (:mod:`harness.run.folder`). A record
that cannot be written (disk full) stops the run at once: no further model
call, ``run.json`` says ``failed``.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.offline_model import register_offline
from harness.records import (
    RESULTS_FILE,
    ResultsError,
    ResultsWriteError,
    ResultsWriter,
    RunManifest,
    scan_results,
    terminal_text,
    write_manifest,
)
from harness.run import (
    EarlierAttempt,
    RunFolderError,
    RunOptions,
    RunOptionsError,
    RunProgress,
    check_fresh,
    fault_note,
    lock_folder,
    needs_litellm,
    now_iso,
    plan_samples,
    prepare_folder,
    read_earlier_attempt,
    record_flags,
    redact,
    resolve_options,
    run_specs,
    secret_values,
)
from harness.scenarios import Scenario, ScenarioShelf, release_store_templates, scenarios_by_id
from harness.wrapping import say, say_path


def _build_report(options: RunOptions, scenarios: Any = None) -> int:
    """Build the run's report and print its verdict, leads first; the exit code of ``run``.

    ``scenarios``: the run's own (a :class:`harness.scenarios.ScenarioShelf`), scored as they ran instead of
    being loaded, checked and packed again (a LongMemEval S suite's load is ~45 s of CPU).

    Non-zero when the report cannot be built (2), when a judge call would pass ``--max-cost-usd`` (3), and (1) when the run is
    incomplete, its error rate is above ``--max-error-rate``, or ``--gate``
    is given and the verdict is not pass.
    """
    from harness.analysis import VerdictConfig, exit_code
    from harness.report import build_report, report_lines
    from harness.run import BudgetExceeded, judge_budget

    thresholds = VerdictConfig(max_error_rate=options.max_error_rate)
    budget = None
    try:
        if options.max_cost_usd is not None and options.judge_model:  # the judges' calls count against the cap too
            budget = judge_budget(options.run_dir, options.max_cost_usd, options.judge_model)
        shelf = scenarios.by_id if isinstance(scenarios, ScenarioShelf) else None
        outcome = build_report(options.run_dir, judge_model=options.judge_model, thresholds=thresholds, scenarios=shelf,
                               judge_api_base=options.judge_api_base, judge_preset=options.judge_preset,
                               judge_prompt=options.judge_prompt, pairwise_judge=options.pairwise_judge, judge_budget=budget)
    except BudgetExceeded:
        agent = (options.max_cost_usd or 0.0) - budget.limit_usd if budget is not None else 0.0
        print(f"stopped: --max-cost-usd ${options.max_cost_usd:,.4f} reached before the next judge call (the run's model "
              f"calls recorded ${agent:,.4f}, its judge calls ${budget.recorded_usd if budget else 0:,.4f}); the samples are "
              "saved and the judge verdicts paid for are cached, but the report was not built. Continue with: "
              f"recall-eval run --resume {options.run_dir} --max-cost-usd <a higher limit>", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - the results are safe; the report can be rebuilt
        print(terminal_text(f"error: report not built ({type(exc).__name__}: {exc}). Retry with: recall-eval "
                            f"report {options.run_dir}"), file=sys.stderr)
        return 2
    out, err = report_lines(outcome)  # the same words as `recall-eval report`
    for line in out:
        print(line)
    for line in err:
        print(line, file=sys.stderr)
    print(f"report: {outcome.index_html}")
    return exit_code(outcome, gate=options.gate, incomplete_fails=True)


def _arm_warnings(arms: Any) -> list[str]:
    """Said before any model call: without both the verdict's baseline and treatment arm there is no paired
    difference, so the verdict can only be inconclusive."""
    from harness.analysis import VerdictConfig

    config = VerdictConfig()
    missing = [arm for arm in (config.baseline_arm, config.treatment_arm) if arm not in arms]
    if not missing:
        return []
    wanted = " ".join(dict.fromkeys([config.baseline_arm, config.treatment_arm, *arms]))
    return [f"--arms {' '.join(arms)} has no {' and no '.join(missing)} arm: the verdict compares "
            f"{config.treatment_arm} with {config.baseline_arm}, so it will be inconclusive (no paired "
            f"difference); for a verdict run --arms {wanted}"]


def _model_names_fail(options: RunOptions) -> bool:
    """Say what is wrong with the ``--model`` strings litellm cannot call (True: stop, nothing run)."""
    if getattr(options, "router_config", None):
        return False
    from harness.run import model_name_problems

    errors, warnings = model_name_problems(options.models)
    for warning in warnings:
        say(f"warning: {warning}", file=sys.stderr)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if errors:
        print("nothing was run", file=sys.stderr)
    return bool(errors)


def _remove_empty_folder(run_dir: Path, lock: Any) -> None:
    """The folder this run created holds only its lock: release it and leave no trace of a run that never ran."""
    lock.release()
    try:
        for entry in run_dir.iterdir():
            if entry.name != ".lock":
                return
        (run_dir / ".lock").unlink(missing_ok=True)
        run_dir.rmdir()
    except OSError:
        pass


def cli_run(args: Any) -> int:
    """Handler of ``recall-eval run``; returns the exit code."""
    from harness.scenarios import ScenarioError

    if getattr(args, "rerun_failing", None):
        from harness.cli.rerun import RerunError, rerun_args

        try:
            args, line = rerun_args(args)
        except RerunError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(line, file=sys.stderr)
        if args is None:
            return 0
    try:
        options, scenarios, hashes, manifest = resolve_options(args)
    except ScenarioError as exc:
        print("error: the scenarios do not load:", file=sys.stderr)
        for shown in [str(p) for p in exc.problems] or [str(exc)]:
            print(f"  {shown}", file=sys.stderr)
        return 2
    except (RunOptionsError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from harness.run import cli_plan, price_problem

    for incomplete in options.incomplete_suites():  # run it, but never silently: its numbers are not the benchmark's
        say(f"warning: {incomplete} (recorded in run.json; the report says so)", file=sys.stderr)
    for warning in _arm_warnings(options.arms):
        say(f"warning: {warning}", file=sys.stderr)
    if options.plan_only:
        return cli_plan(options, scenarios)
    if (problem := price_problem(options)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    existed = options.run_dir.exists()
    try:
        prepare_folder(options.run_dir)
        lock = lock_folder(options.run_dir, now_iso())
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        # after the lock (a second run on the folder is refused at once), before anything is written
        if _model_names_fail(options):
            if not existed:
                _remove_empty_folder(options.run_dir, lock)
            return 2
        with _sigterm_as_ctrl_c() as terminated:
            return _run_locked(options, scenarios, hashes, manifest, terminated)
    finally:
        lock.release()


def _run_locked(options: RunOptions, scenarios: Sequence[Scenario], hashes: dict[str, str], manifest: RunManifest,
                terminated: threading.Event) -> int:
    """The run itself, with the run folder locked: check the folder, run what is missing, record the outcome, report."""
    from harness.run import WorkerError

    run_dir = options.run_dir
    try:
        earlier = read_earlier_attempt(run_dir) if options.resume else EarlierAttempt()
        if not options.resume:
            check_fresh(run_dir)  # again under the lock: another run may have finished here meanwhile
        writer = ResultsWriter(run_dir / RESULTS_FILE)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write the run folder {run_dir}: {exc.strerror or exc} ({run_dir / RESULTS_FILE}); "
              "choose another --out", file=sys.stderr)
        return 2
    resume_hint = f"recall-eval run --resume {run_dir}"
    with writer:
        try:
            write_manifest(run_dir, manifest)
        except ResultsError as exc:
            print(f"error: {exc}; nothing was run. Free space or choose another --out", file=sys.stderr)
            return 2
        for warning in earlier.warnings():
            say(f"warning: {warning}", file=sys.stderr)
        if options.workers > 1:
            from harness.run import start_server

            start_server(options)  # its litellm import overlaps ours (register_offline)
        # The built-in offline models alone never import litellm; a judge (even offline/...) is always called through it.
        if needs_litellm(options.models, options.router_config) or options.judge_model:
            register_offline()
        # Cancelling in-flight litellm calls (Ctrl-C, a stopped model) leaves its inner coroutines unawaited; harmless.
        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
        # A malformed response (content a list, a number for a name) makes the provider SDK warn as litellm dumps it;
        # the call records the fault and one line says so (harness.run.responses), not a multi-line pydantic warning.
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
        done_ids = {r.sample_id for r in earlier.done}
        specs = [
            s
            for s in plan_samples(
                scenarios, options.arms, options.models, options.epochs, options.seed, options.sample_ids
            )
            if s.sample_id not in done_ids
        ]
        from harness.run import PlanInterrupted, start_line

        # The plan, first; the budget left. SIGTERM or Ctrl-C stops it between scenarios, even if a system swallowed it.
        with _ctrl_c_flag() as interrupted:
            stop = lambda: terminated.is_set() or interrupted.is_set()  # noqa: E731 - the plan's flag, read between scenarios
            try:
                options, problem = start_line(options, scenarios, specs, earlier.done, should_stop=stop)
            except (KeyboardInterrupt, PlanInterrupted):
                return _stopped_while_planning(run_dir, manifest, terminated.is_set(), resume_hint)
        if stop():
            return _stopped_while_planning(run_dir, manifest, terminated.is_set(), resume_hint)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        again = f", {earlier.failed} failed before and run again" if earlier.failed else ""
        say_path(f"{len(specs)} samples to run ({len(done_ids)} already done{again}) in", run_dir, file=sys.stderr)
        progress = RunProgress(len(specs), live=options.progress, scorer=continuity_scorer(scenarios), arms=options.arms)
        status, stopped, failure, crash, stalled = "interrupted", dict[str, Any](), None, None, False
        try:
            status, stopped = run_specs(specs, options, scenarios, hashes, writer, progress)
        except KeyboardInterrupt:
            status = "interrupted"
        except ResultsWriteError as exc:
            status, failure = "failed", exc
        except WorkerError as exc:
            crash = exc
        finally:
            progress.close()
            cached = sum(record_flags(r)[1] for r in earlier.done) + progress.cached
            stalled = status == "stalled"  # calls kept timing out at one in flight (harness.run.watchdog)
            status = "interrupted" if stalled else status  # resumable, as any stop
            final = manifest.model_copy(update={"status": status, "finished_at": now_iso(), "cached_samples": cached})
            if progress.concurrency is not None:  # timeouts lowered the calls in flight (harness.run.concurrency)
                final = final.model_copy(update={"parameters": {**final.parameters, "adaptive_concurrency": progress.concurrency}})
            try:
                write_manifest(run_dir, final)
                manifest_problem = None
            except ResultsError as exc:
                manifest_problem = exc
    if manifest_problem is not None:
        say(f"warning: {manifest_problem}; it may still say 'running' (the run is {status})", file=sys.stderr)
    if progress.cached:
        print(f"{_samples(progress.cached)} from the cache (no model call); --no-cache calls the model again", file=sys.stderr)
    if progress.cut_off:
        print(
            f"{_samples(progress.cut_off)} had a model call cut off at --max-tokens {options.max_tokens} (finish_reason length); "
            "the answers are scored as given",
            file=sys.stderr,
        )
    release_store_templates()  # the samples are done: scoring and the report open no store
    fault = fault_note(scan_results(run_dir / RESULTS_FILE).records)
    if fault is not None:
        print(terminal_text(fault), file=sys.stderr)
    if crash is not None:
        print(terminal_text(f"error: {redact(str(crash), secret_values())}"), file=sys.stderr)
        return 2
    if failure is not None:
        print(
            f"error: {failure}. The run stopped there: no further model calls ({progress.done} samples written). "
            f"Free space or fix the folder, then: {resume_hint}",
            file=sys.stderr,
        )
        return 2
    if options.max_cost_usd is not None and status == "interrupted" and not terminated.is_set():
        from harness.run import budget_stop

        message = budget_stop(run_dir, options.max_cost_usd)
        if message is not None:
            print(f"{message}. Continue with: {resume_hint} --max-cost-usd <a higher limit>", file=sys.stderr)
            return 3
    if stalled:
        from harness.run import stall_message

        print(stall_message(options.timeout_s, options.max_tokens, resume_hint), file=sys.stderr)
        return 2
    if stopped:
        for model, reason in stopped.items():
            print(terminal_text(f"error: stopped model {model}: its first samples all failed with {reason}"), file=sys.stderr)
        print(f"Fix the API key or --api-base (keys come from the environment, e.g. OPENAI_API_KEY), then: {resume_hint}. "
              "A wrong model name needs a new run (--resume keeps the run's models): "
              "recall-eval run --model PROVIDER/NAME --out NEW_DIR", file=sys.stderr)
        return 2
    all_failed = status == "complete" and progress.done > 0 and progress.errors == progress.done
    if all_failed:
        print(
            f"error: every sample failed, the last with {terminal_text(progress.last_error)} (all errors are in {run_dir / RESULTS_FILE}). "
            f"Fix the cause, then: {resume_hint}",
            file=sys.stderr,
        )
    if status == "interrupted":
        cause = "terminated (SIGTERM)" if terminated.is_set() else "interrupted"
        print(f"{cause}: finished samples are saved. Continue with: {resume_hint}", file=sys.stderr)
        return 143 if terminated.is_set() else 130
    code = _build_report(options, scenarios)
    return 2 if all_failed else code


def _stopped_while_planning(run_dir: Path, manifest: RunManifest, by_sigterm: bool, resume_hint: str) -> int:
    """Ctrl-C or SIGTERM while the plan was built: run.json says ``interrupted`` (resumable), 130 or 143, no traceback."""
    try:
        write_manifest(run_dir, manifest.model_copy(update={"status": "interrupted", "finished_at": now_iso()}))
    except ResultsError as exc:
        say(f"warning: {exc}; it may still say 'running'", file=sys.stderr)
    cause = "terminated (SIGTERM)" if by_sigterm else "interrupted"
    print(f"{cause} while planning: no sample was run. Continue with: {resume_hint}", file=sys.stderr)
    return 143 if by_sigterm else 130


def continuity_scorer(scenarios: Sequence[Scenario]) -> Any:
    """A finished record -> did it keep continuity (None for an error sample), as the report scores it by patterns.

    For the running scores of the progress display. A record that cannot be
    scored is left out of them (None) rather than stopping the run: the
    report scores it again and names what is wrong.
    """
    from harness.score import score_sample

    by_id = scenarios_by_id(scenarios)  # a shelf's view: the scenario a record names, unpacked while it runs

    def right(record: Any) -> bool | None:
        scenario = by_id.get(record.scenario_id)
        if scenario is None or record.status != "ok":
            return None
        try:
            return score_sample(record, scenario).continuity_correct
        except Exception:  # noqa: BLE001 - a display must never end a run; the report scores it again
            return None

    return right


def _samples(count: int) -> str:
    return f"{count} sample" + ("" if count == 1 else "s")


@contextlib.contextmanager
def _ctrl_c_flag() -> Iterator[threading.Event]:
    """While the plan is built, Ctrl-C (SIGINT) also sets the event yielded, then raises KeyboardInterrupt as usual.

    A memory system opened by the plan may swallow the KeyboardInterrupt (a broad retry loop): the flag, read
    between scenarios, still stops the plan. Only Python's own handler is replaced (an ignored SIGINT stays
    ignored), and it is put back before the samples run (asyncio installs its own Ctrl-C handler only over it).
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield interrupted
        return

    def on_int(signum: int, frame: Any) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_int)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[threading.Event]:
    """Handle SIGTERM (what CI systems send on cancel and timeout) as Ctrl-C: the run stops, saved and resumable.

    While asyncio runs the samples its own Ctrl-C handler is called, which
    cancels the run so that it ends between records; elsewhere (a
    ``--workers`` parent, or SIGINT ignored in a background job)
    KeyboardInterrupt is raised, as Ctrl-C does. The event yielded is set
    once SIGTERM arrived. A SIGTERM ignored by the caller stays ignored.
    """
    terminated = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield terminated
        return

    def on_term(signum: int, frame: Any) -> None:
        terminated.set()
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not signal.default_int_handler:
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield terminated
    finally:
        signal.signal(signal.SIGTERM, previous)
