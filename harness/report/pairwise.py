"""``report --pairwise-judge``: recall's answers judged against history_only's (and the logged reply), probe by probe.

For every model, each probe x epoch where both the treatment arm (``recall``
unless the verdict's thresholds say otherwise) and the baseline finished ok
is judged in both orders by :class:`harness.score.PairwiseJudge`. The
baseline is ``history_only``; a run without it uses ``shadow``, whose answers
are history_only's by construction. Where a probe carries a logged reply
(``expect.logged_reply``, the assistant's reply an imported transcript
kept: a reference, never gold), the treatment is also judged against it.
The verdict of each comparison is the sign test over conversations of
:mod:`harness.analysis.pairwise`. ``summary.json``'s ``pairwise`` holds the
judge's counts, every comparison and the judge's calibration
(``pairwise_calibration.yaml``: agreement, position-bias rate, kappa).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.records import SampleRecord
from harness.scenarios import Scenario

LOGGED = "logged reply"
NO_ANSWER = "(no answer)"


def logged_reply(scenario: Scenario) -> str | None:
    """The probe's logged assistant reply (``expect.logged_reply``, set by ``import transcripts``), else None.

    Read by name: a suite written before the field existed simply has none.
    """
    value = getattr(scenario.expect, "logged_reply", None)
    return value if isinstance(value, str) and value.strip() else None


def _baseline_arm(arms: set[str], baseline: str) -> str | None:
    if baseline in arms:
        return baseline
    return "shadow" if "shadow" in arms else None


def pairwise_block(records: Sequence[SampleRecord], scenarios: Mapping[str, Scenario], judge: Any, *,
                   treatment: str = "recall", baseline: str = "history_only") -> dict[str, Any]:
    """``summary.json``'s ``pairwise``: the judge's counts, one entry per comparison and model, its calibration."""
    from harness.analysis import JudgedPair, sign_test
    from harness.score import calibrate_pairwise, calibrating, judge_context, usage_block

    answers: dict[tuple[str, str, str, int], str] = {}
    for record in records:
        if record.status == "ok" and record.scenario_id in scenarios:
            answers[(record.model, record.arm, record.scenario_id, record.epoch)] = record.final_answer or NO_ANSWER
    base = _baseline_arm({arm for _, arm, _, _ in answers}, baseline)
    comparisons: list[dict[str, Any]] = []
    contexts: dict[str, str] = {}
    for model in sorted({m for m, _, _, _ in answers}):
        found: dict[str, list[Any]] = {}
        for (m, arm, sid, epoch), answer in sorted(answers.items()):
            if m != model or arm != treatment:
                continue
            scenario = scenarios[sid]
            context = contexts.setdefault(sid, judge_context(scenario))
            against = [(base, answers.get((model, base, sid, epoch)))] if base else []
            if (reply := logged_reply(scenario)) is not None:
                against.append((LOGGED, reply))
            for name, other in against:
                if other is None:
                    continue
                got = judge.compare(context, scenario.probe.message, answer, other)
                found.setdefault(name, []).append(
                    JudgedPair(sid, epoch, got.score, got.position_biased, got.malformed))
        for name, pairs in found.items():
            comparisons.append({"model": model, "treatment": treatment, "baseline": name, **sign_test(pairs)})
    block = {**judge.summary(), **usage_block(judge, "grading"), "baseline_arm": base, "treatment_arm": treatment,
             "comparisons": comparisons}
    with calibrating(judge):
        block["calibration"] = {**calibrate_pairwise(judge).as_dict(), **usage_block(judge, "calibration")}
    return block


#: (key of a comparison, column header), in table order.
COLUMNS = (
    ("conversations", "conversations"), ("wins", "wins"), ("ties", "ties"), ("losses", "losses"),
    ("p_value", "sign test p"), ("decision", "decision"), ("win_share", "win share [95% CI]"),
    ("mean_preference", "mean preference [95% CI]"), ("probes", "probes (w/t/l)"),
    ("position_biased", "position-biased"),
)


def _cell(key: str, row: Mapping[str, Any]) -> str:
    from harness.report import formatting as fmt

    if key == "win_share":
        low, high = row.get("win_share_ci") or (None, None)
        return f"{fmt.num(row.get(key))} [{fmt.num(low)}, {fmt.num(high)}]"
    if key == "mean_preference":
        low, high = row.get("mean_preference_ci") or (None, None)
        return f"{fmt.signed(row.get(key))} [{fmt.signed(low)}, {fmt.signed(high)}]"
    if key == "p_value":
        return fmt.pvalue(row.get(key))
    if key == "decision":
        return str(row.get(key))
    if key == "probes":
        return f"{row.get('probes')} ({row.get('probe_wins')}/{row.get('probe_ties')}/{row.get('probe_losses')})"
    return fmt.num(row.get(key))


def pairwise_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report section (one table per model), or None when no pairwise judge ran."""
    block = summary.get("pairwise")
    if not isinstance(block, Mapping):
        return None
    tables: dict[str, list[dict[str, Any]]] = {}
    for row in block.get("comparisons") or []:
        tables.setdefault(str(row["model"]), []).append(
            {"label": f"{row['treatment']} vs {row['baseline']}", "cells": [_cell(k, row) for k, _ in COLUMNS]})
    cal = block.get("calibration") or {}
    calibration = None
    if cal:
        from harness.report import formatting as fmt

        calibration = (f"Calibration on {cal.get('n')} labelled pairs ({fmt.num(cal.get('labelled_ties'))} ties), "
                       f"both orders asked: agreement {fmt.num(cal.get('agreement'))}, position-bias rate "
                       f"{fmt.num(cal.get('position_bias_rate'))}, Cohen's kappa {fmt.num(cal.get('cohen_kappa'))}.")
    note = (f"Judge {block.get('model')} ({block.get('prompt_version')}): {block.get('calls')} calls, "
            f"{block.get('cached')} cached, {block.get('malformed')} unreadable replies (ties). Each probe is asked "
            "in both orders; a conversation wins when its probes' mean preference for the treatment is above 0. "
            "The sign test is over conversations, the unit of inference; probe counts are shown beside, untested.")
    return {"headers": [h for _, h in COLUMNS], "note": note, "calibration": calibration,
            "tables": [{"caption": model, "rows": rows} for model, rows in sorted(tables.items())]}


def pairwise_terminal_lines(block: Mapping[str, Any] | None) -> list[str]:
    """One line per comparison (within 80 columns), then the calibration; none without a pairwise block."""
    if not block:
        return []
    lines = []
    for row in block.get("comparisons") or []:
        p = row.get("p_value")
        lines.append(f"pairwise {row['treatment']} vs {row['baseline']}: {row['wins']}W {row['ties']}T "
                     f"{row['losses']}L of {row['conversations']} conversations, p {p:.2g}")
        lines.append(f"  {row.get('decision')} (sign test over conversations)")
    cal = block.get("calibration") or {}
    if cal.get("n"):
        def show(value: Any) -> str:
            return "—" if value is None else f"{value:.2f}"
        lines.append(f"  pairwise calibration: agreement {show(cal.get('agreement'))}, position bias "
                     f"{show(cal.get('position_bias_rate'))}, kappa {show(cal.get('cohen_kappa'))} (n {cal['n']})")
    return lines
