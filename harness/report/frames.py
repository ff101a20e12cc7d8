"""pandas views of a run, for notebooks and ad-hoc analysis.

The report itself aggregates with numpy (it must stay fast on 10,000 samples
and not pay pandas' import); researchers who want to slice a run their own way
get tidy DataFrames here, built from the same scoring functions the report uses.

Example:
    >>> from harness.report.frames import scores_frame          # doctest: +SKIP
    >>> df = scores_frame("reports/20261130T062553Z")           # doctest: +SKIP
    >>> df.groupby(["arm", "category"]).continuity_correct.mean()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.records import RESULTS_FILE, read_manifest, scan_results

if TYPE_CHECKING:  # pragma: no cover
    import pandas

# SampleScores fields that are lists: the frame holds their length (and the ids, joined).
_COUNTED = ("unsupported_claims", "answer_leaks", "tool_leaks")


def _row(scores: Any, tags: Sequence[str] = ()) -> dict[str, Any]:
    data = scores.model_dump(exclude={"scores", *_COUNTED, "retrieved_items"})
    for name in _COUNTED:
        data[name] = len(getattr(scores, name))
    data["retrieved_items"] = " ".join(scores.retrieved_items)
    for prefix in ("", "ours_"):  # one column per figure and population, as metrics.csv
        for key, value in (data.pop(f"{prefix}session_retrieval", None) or {}).items():
            data[f"{prefix}session_{key}"] = value
    data["unsupported"] = scores.unsupported
    data["tags"] = list(tags)
    return data


def scores_frame(run_dir: str | Path, *, exclude: Sequence[str] = ()) -> pandas.DataFrame:
    """One row per sample: identity (scenario, arm, model, epoch), outcome and every score.

    Args:
        run_dir: a run folder written by ``recall-eval run``.
        exclude: scenario ids to leave out (exact ids).

    Records are read as the report reads them: one per sample id (the last),
    unusable lines skipped (the report names them).

    Columns include ``category`` (a built-in or suite-declared name), ``tags``
    (the scenario's tags, a list: ``df.explode("tags")`` gives one row per
    tag), ``continuity_correct``, ``adherence``, ``abstained``,
    ``should_abstain``, ``unsupported`` and ``unsupported_claims`` (a count),
    ``answer_leaks``/``tool_leaks`` (counts), ``token_f1`` and ``bleu1``
    (informational, LoCoMo's; NaN without ``expect.f1_reference``),
    ``retrieved_precision``, ``retrieved_recall``, ``session_recall_any@5`` ...
    ``session_ndcg@10`` (LongMemEval's, on its population), ``ours_session_*``
    (the same on ours; both NaN where they do not apply), tokens,
    ``cost_usd``, ``latency_s`` and ``tool_latency_s`` (the tools' share). Error samples
    are rows with ``status == "error"``; filter them out before computing rates,
    as the report does.
    """
    import pandas as pd

    from harness.report.build import load_run_scenarios
    from harness.score import score_sample

    run_dir = Path(run_dir)
    records = [r for r in scan_results(run_dir / RESULTS_FILE).records if r.scenario_id not in exclude]
    # Only the scenarios the results name, as the report does: one probe of a 2,000-probe suite loads that probe.
    manifest = read_manifest(run_dir)
    scenarios = load_run_scenarios(manifest.model_copy(update={"scenario_ids": sorted({r.scenario_id for r in records})}))
    rows = [
        _row(score_sample(record, scenarios[record.scenario_id]), scenarios[record.scenario_id].tags)
        for record in records
        if record.scenario_id in scenarios
    ]
    return pd.DataFrame(rows)


def metrics_frame(run_dir: str | Path) -> pandas.DataFrame:
    """``metrics.csv`` as a DataFrame (model, arm, category, metric, value, ci_low, ci_high, n),
    building the report first when the run has none yet."""
    import pandas as pd

    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        from harness.report import build_report

        build_report(Path(run_dir))
    return pd.read_csv(path)
