"""``run --rerun-failing RUN``: a new run of the scenarios an earlier run got wrong.

What counts as wrong (the README says the same): a scenario is re-run when,
in any model or epoch of RUN,

- a sample of a *memory arm* failed continuity (its outcome is neither
  ``correct`` nor ``abstained_correctly``); the memory arms are every arm
  but the reference arms ``history_only``, ``shadow`` (history_only's answer)
  and ``full_history``, which have no memory at the answer and exist to be compared against (the baseline gets most
  cross-session probes wrong by design, so counting it would re-run the
  whole suite); a run of reference arms only counts them;
- or a sample of any arm ended in an error (there is no answer to judge).

Every arm, model and epoch of those scenarios runs again, so the new run
stays paired, with RUN's settings (scenario paths, models, arms, epochs,
seed, rounds, tokens, temperature, endpoints, judge) unless flags say
otherwise. The outcomes are read from RUN's ``scores.jsonl`` (its report is
built first when missing). The selection is recorded in the new run's
``run.json`` (``parameters.sample_ids`` and ``parameters.rerun_of``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Arms without memory, kept for comparison; their wrong answers do not make a scenario fail (their errors do).
REFERENCE_ARMS = ("history_only", "full_history", "shadow")
#: What ``rerun_of.wrong`` records.
WRONG = "a memory arm's sample failed continuity, or any arm's sample ended in an error"
# Settings inherited from RUN when the flag is not given: argparse dest -> run.json parameters key.
_INHERITED = {
    "max_tool_rounds": "max_tool_rounds", "max_tokens": "max_tokens", "temperature": "temperature",
    "timeout": "timeout_s", "retries": "retries", "retry_delay": "retry_delay_s",
    "max_concurrency": "max_concurrency", "workers": "workers", "api_base": "api_base",
    "judge_model": "judge_model", "judge_api_base": "judge_api_base",
}


class RerunError(Exception):
    """``--rerun-failing`` cannot be used as given; the message names the folder or flag and the fix."""


def failing_scenarios(scores: list[dict[str, Any]], arms: list[str]) -> list[str]:
    """The scenario ids (sorted) that :data:`WRONG` selects among ``scores.jsonl`` rows of a run with ``arms``."""
    from harness.score import CORRECT_OUTCOMES

    memory_arms = {arm for arm in arms if arm not in REFERENCE_ARMS} or set(arms)
    return sorted({
        row["scenario_id"] for row in scores
        if row.get("status") == "error" or (row.get("arm") in memory_arms and row.get("outcome") not in CORRECT_OUTCOMES)
    })


def rerun_args(args: Any) -> tuple[Any, str | None]:
    """``args`` made into a run of what ``args.rerun_failing`` got wrong, and a line telling what was selected.

    The args are None when nothing was wrong (the line says so): there is nothing to run.

    Raises:
        RerunError: RUN is not a readable run folder, or flags that cannot go with it.
    """
    from harness.records import ResultsError, sample_id
    from harness.report import ReportError
    from harness.runs import CompareError, load_run

    run_dir = Path(args.rerun_failing)
    for flag, value in (("--resume", args.resume), ("--sample-id", getattr(args, "sample_id", None))):
        if value:
            raise RerunError(f"--rerun-failing {run_dir} conflicts with {flag}: a re-run is a new run of a selection; drop {flag}")
    if not run_dir.is_dir():
        raise RerunError(f"--rerun-failing {run_dir}: no such folder; pass a run folder written by `recall-eval run`")
    if not (run_dir / "run.json").is_file():
        raise RerunError(f"--rerun-failing {run_dir}: not a run folder (no run.json); pass a folder written by `recall-eval run`")
    try:
        data = load_run(run_dir)
    except (CompareError, ReportError, ResultsError, OSError) as exc:
        raise RerunError(f"--rerun-failing {run_dir}: {exc}") from None
    manifest = data.manifest
    failing = failing_scenarios(data.samples, manifest.arms)
    scored = len({row["scenario_id"] for row in data.samples})
    short = "" if manifest.status == "complete" else (f" (RUN is {manifest.status}: its missing samples are not "
                                                      f"re-run; `recall-eval run --resume {run_dir}` runs them)")
    if not failing:
        return None, f"nothing to re-run: no scenario of {run_dir} was wrong ({WRONG}){short}"
    out = vars(args).copy()
    out["scenarios"] = args.scenarios or list(manifest.scenario_paths)
    out["models"] = args.models or list(manifest.models)
    out["arms"] = args.arms or list(manifest.arms)
    out["epochs"] = args.epochs if args.epochs is not None else manifest.epochs
    out["seed"] = args.seed if args.seed is not None else manifest.seed
    for dest, key in _INHERITED.items():
        if out.get(dest) is None and manifest.parameters.get(key) is not None:
            out[dest] = manifest.parameters[key]
    recorded = manifest.parameters.get("retrieval_budget")
    if out.get("retrieval_budget") is None and manifest.parameters.get("retrieval_budget_source") == "--retrieval-budget" \
            and isinstance(recorded, dict):  # a suite's or the default budget comes back with the suite itself
        from harness.scenarios import RetrievalBudgetError, budget_from_mapping

        try:
            out["retrieval_budget"] = budget_from_mapping(recorded, f"{run_dir / 'run.json'} parameters.retrieval_budget")
        except RetrievalBudgetError as exc:
            raise RerunError(str(exc)) from None
    out["sample_id"] = [sample_id(sid, arm, model, epoch)
                        for epoch in range(out["epochs"]) for sid in failing for model in out["models"] for arm in out["arms"]]
    out["rerun_of"] = {"run": manifest.run_id, "path": str(run_dir.resolve()), "wrong": WRONG, "scenarios": failing}
    line = (f"rerun-failing {run_dir}: {len(failing)} of {scored} scenario(s) were wrong ({WRONG}): "
            f"{', '.join(failing[:8])}{f' and {len(failing) - 8} more' if len(failing) > 8 else ''}{short}")
    return type(args)(**out), line
