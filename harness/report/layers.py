"""The report's "Which layer has earned its complexity": seed 000's ladder answered from the run itself.

Seed 000 adds a layer only "against a measured failure". Each line below is
one rung, measured on this run's samples, and ends in one of three outcomes:
``justified``, ``not justified`` or ``not measured by this suite``, with why.
The decision rule (``docs/layers.md``) is the same for every line, so a
sceptical reader can check it:

- a **gain** (a layer's arm against ``recall``, exact/prefix keys) is paired by
  scenario: each scenario's mean over its epochs in both arms, decided by the
  shared rule (:func:`harness.analysis.decision.decide_paired`): the exact
  sign-flip test over scenarios (conversations, for ``conv/probe`` ids) and the
  95% interval inverted from it; ``justified`` only when the test rejects and
  the interval lies above 0 (4 scenarios improved and none worsened is exact
  p 0.125: not justified);
- a **failure rate** (the trigger of a layer) is the mean of each scenario's
  share of failing samples, decided by the same rule against
  :data:`RATE_THRESHOLD`: ``justified`` only when the exact test of (rate -
  threshold) rejects and its interval lies above the threshold (a failure too
  rare to pay for a layer is not one);
- either needs at least :data:`MIN_SCENARIOS` scenarios behind the estimate,
  else the line is ``not measured by this suite``, as it is when the arm or
  the kind of question it needs is absent. An interval that crosses the bar
  with enough scenarios is ``not justified``: not shown, which is not the
  same as shown absent (the line prints the interval).

A line with two tests (the working projection: repeats and misses) takes each
at 97.5% (Bonferroni), so the line as a whole errs at most 5%.

Every figure is a pure function of the scored samples and the scenarios; the
report calls nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["BASE_ARM", "EPISODE_CATEGORIES", "INDEX_ARMS", "JUSTIFIED", "LEVEL", "MIN_SCENARIOS", "NOT_JUSTIFIED",
           "NOT_MEASURED", "RATE_THRESHOLD", "layers_block", "layers_lines", "layers_section"]

JUSTIFIED, NOT_JUSTIFIED, NOT_MEASURED = "justified", "not justified", "not measured by this suite"
BASE_ARM = "recall"
"""Exact/prefix keys over the item store: the rung every index is measured against."""
INDEX_ARMS = (("fulltext", "recall_fts", "full text (FTS5)"), ("vector", "recall_vector", "vectors"),
              ("hybrid", "recall_hybrid", "full text and vectors (hybrid)"))
"""(line id, arm, what it adds): the index layers of seed 000's ladder."""
CEILING_ARM = "full_history"
MIN_SCENARIOS = 10
"""Scenarios an estimate needs before it decides anything."""
RATE_THRESHOLD = 0.10
"""A trigger's failure rate must exceed this (its interval's lower bound) to justify a layer."""
LEVEL = 0.95
EPISODE_CATEGORIES = frozenset({"multi_hop", "multi_session"})
"""Categories whose questions need an episode (LoCoMo's multi-hop, LongMemEval's multi-session)."""
UBIQUITOUS_KINDS = frozenset({"preference"})
"""Item kinds a working projection would pin into every prompt."""


def _stats() -> Any:
    from harness import analysis

    return analysis


def _interval(evidence: Any, offset: float = 0.0) -> dict[str, Any]:
    """A line's estimate: the evidence's difference (plus ``offset``: a rate's threshold) in display units, with the
    evidence itself (``evidence``: the exact test's fields) for the decision."""
    from harness.analysis import evidence_fields

    # "+ 0.0": a zero rate comes back as (0 - threshold) + threshold, which can round to -0.0 ("-0.0%" printed)
    r = lambda v: None if v is None else round(float(v) + offset, 4) + 0.0  # noqa: E731
    return {"value": r(evidence.diff), "ci_low": r(evidence.ci_low), "ci_high": r(evidence.ci_high),
            "n": int(evidence.n), "p_value": evidence.p_value, "evidence": evidence_fields(evidence)}


def _decided(iv: Mapping[str, Any], what: str) -> Any:
    """The shared rule (:func:`harness.analysis.decision.decide_paired`) on a line's evidence: a gain above 0."""
    from harness.analysis import decide_paired, evidence_from_row

    evidence = evidence_from_row(iv["evidence"])
    assert evidence is not None  # the line was built above from fresh evidence, its exact p included
    return decide_paired(evidence, direction="gain", threshold=0.0, what=what)


def _decide_gain(iv: dict[str, Any] | None, what: str) -> tuple[str, str]:
    """The rule for a paired gain: the exact test rejects and its interval lies above 0, with enough scenarios."""
    if iv is None or iv["n"] < MIN_SCENARIOS or iv["value"] is None:
        n = 0 if iv is None else iv["n"]
        return NOT_MEASURED, f"{what}: {n} paired scenario(s), fewer than the {MIN_SCENARIOS} a decision needs"
    from harness.analysis import p_text

    # The p-value as the decision's own text prints it, read from the evidence (not parsed out of that text).
    shown = (f"{what} {_show(iv)} over {iv['n']} paired {iv['evidence']['unit']}s ({iv['evidence']['up']} up, "
             f"{iv['evidence']['down']} down), exact p {p_text(iv['p_value'])}")
    if _decided(iv, what).passed is True:
        return JUSTIFIED, f"{shown}: the interval is above 0"
    return NOT_JUSTIFIED, f"{shown}: not shown above 0"


def _decide_rate(iv: dict[str, Any] | None, what: str) -> tuple[str, str]:
    """The rule for a trigger's failure rate: the exact test of (rate - threshold) rejects and its interval lies
    above the threshold, with enough scenarios."""
    if iv is None or iv["n"] < MIN_SCENARIOS or iv["value"] is None:
        n = 0 if iv is None else iv["n"]
        return NOT_MEASURED, f"{what}: {n} scenario(s), fewer than the {MIN_SCENARIOS} a decision needs"
    shown = f"{_show(iv)} over {iv['n']} {iv['evidence']['unit']}s (exact p {iv['p_value']:.2g} against " \
            f"{RATE_THRESHOLD:.0%})"
    if _decided(iv, what).passed is True:
        return JUSTIFIED, f"{what} {shown}: above {RATE_THRESHOLD:.0%} with its interval"
    return NOT_JUSTIFIED, f"{what} {shown}: the interval does not lie above {RATE_THRESHOLD:.0%}"


def _show(iv: Mapping[str, Any]) -> str:
    def p(v: Any) -> str:
        return "?" if v is None else f"{v * 100:+.1f}" if iv.get("signed") else f"{v * 100:.1f}"

    unit = " pp" if iv.get("signed") else "%"
    return f"{p(iv['value'])}{unit} [{p(iv['ci_low'])}, {p(iv['ci_high'])}]"


def _ok(scored: Iterable[Any]) -> list[Any]:
    return [s for s in scored if s.status == "ok"]


def _scenario_means(rows: Iterable[Any], value: Any) -> dict[str, float]:
    """Scenario -> mean over its samples of ``value(sample)`` (None values left out; a scenario with none absent)."""
    sums: dict[str, list[float]] = defaultdict(list)
    for s in rows:
        v = value(s)
        if v is not None:
            sums[s.scenario_id].append(float(v))
    return {sid: sum(vs) / len(vs) for sid, vs in sums.items()}


def _paired(a: Mapping[str, float], b: Mapping[str, float], keep: Any = None) -> dict[str, Any] | None:
    """The exact paired evidence of mean(b - a) over the scenarios both have (and ``keep`` admits), by conversation."""
    from harness.analysis import conversation_of, paired_evidence

    common = sorted(sid for sid in a.keys() & b.keys() if keep is None or keep(sid))
    if not common:
        return None
    evidence = paired_evidence([a[s] for s in common], [b[s] for s in common], [conversation_of(s) for s in common],
                               alpha=1.0 - LEVEL)
    return {**_interval(evidence), "signed": True}


def _rate(rows: Sequence[Any], failed: Any, *, level: float = LEVEL) -> dict[str, Any] | None:
    """The share of ``rows`` that ``failed`` (each scenario's share, then their mean), with the exact evidence
    of that share against :data:`RATE_THRESHOLD` (units: each scenario's conversation)."""
    from harness.analysis import conversation_of, paired_evidence

    if not rows:
        return None
    shares = _scenario_means(rows, lambda s: 1.0 if failed(s) else 0.0)
    order = sorted(shares)
    units = [conversation_of(sid) for sid in order]
    evidence = paired_evidence([RATE_THRESHOLD] * len(order), [shares[sid] for sid in order], units,
                               alpha=1.0 - level, bounds=(-RATE_THRESHOLD, 1.0 - RATE_THRESHOLD))
    return _interval(evidence, RATE_THRESHOLD)


def _coverage_lines(by_arm: Mapping[str, list[Any]], categories: Mapping[str, str], arms: Sequence[str]) -> list[dict[str, Any]]:
    lines = []
    base = by_arm.get(BASE_ARM, [])
    base_recall = _scenario_means(base, lambda s: s.retrieved_recall)
    base_correct = _scenario_means(base, lambda s: s.continuity_correct)
    for line_id, arm, adds in INDEX_ARMS:
        what = f"retrieved-item recall@k gained by {adds} ({arm} - {BASE_ARM})"
        line: dict[str, Any] = {"id": line_id, "layer": f"an index: {adds}",
                                "trigger": "exact/prefix key search has inadequate measured coverage",
                                "arm": arm, "against": BASE_ARM}
        if arm not in arms or BASE_ARM not in arms:
            missing = arm if arm not in arms else BASE_ARM
            lines.append({**line, "outcome": NOT_MEASURED, "why": f"the run has no {missing} arm", "estimate": None,
                          "continuity_gain": None, "by_category": []})
            continue
        rows = by_arm.get(arm, [])
        recall_b = _scenario_means(rows, lambda s: s.retrieved_recall)
        correct_b = _scenario_means(rows, lambda s: s.continuity_correct)
        overall = _paired(base_recall, recall_b)
        outcome, why = _decide_gain(overall, what)
        continuity = _paired(base_correct, correct_b)
        if continuity is not None and continuity["value"] is not None:
            why += f"; continuity accuracy {_show(continuity)}"
        by_category = []
        for category in sorted(set(categories.values())):
            keep = lambda sid, c=category: categories.get(sid) == c  # noqa: E731
            cov, cont = _paired(base_recall, recall_b, keep), _paired(base_correct, correct_b, keep)
            if cov is None and cont is None:
                continue
            by_category.append({"category": category, "recall_gain": cov, "continuity_gain": cont})
        lines.append({**line, "outcome": outcome, "why": why, "estimate": overall, "continuity_gain": continuity,
                      "by_category": by_category})
    return lines


def _stage_line(base: Sequence[Any]) -> dict[str, Any]:
    from harness.score import failure_stage

    wrong = [s for s in base if failure_stage(s) in ("extraction", "retrieval", "answer")]
    shares = {stage: _rate(wrong, lambda s, st=stage: failure_stage(s) == st)
              for stage in ("extraction", "retrieval", "answer")}
    line = {"id": "stages", "layer": "a better index (losses at retrieval)",
            "trigger": "wrong answers are lost where the stored fact was not returned", "arm": BASE_ARM,
            "shares": shares, "wrong": len(wrong)}
    if not wrong:
        return {**line, "outcome": NOT_MEASURED, "estimate": None,
                "why": f"no wrong answer of {BASE_ARM} with a stored fact to place (or no {BASE_ARM} arm)"}
    outcome, why = _decide_rate(shares["retrieval"], f"share of {BASE_ARM}'s wrong answers lost at retrieval")
    parts = ", ".join(f"{stage} {_show(iv)}" for stage, iv in shares.items() if iv is not None)
    return {**line, "outcome": outcome, "estimate": shares["retrieval"], "why": f"{why} (of {len(wrong)}: {parts})"}


def _retrieved(s: Any) -> bool:
    """The probe's tools returned a relevant item (by id), or, without relevant ids, the expected answer."""
    if s.retrieved_recall is not None:
        return s.retrieved_recall > 0
    return s.retrieved_holds_expected is True


def _source_range_line(base: Sequence[Any]) -> dict[str, Any]:
    rows = [s for s in base if not s.should_abstain and s.continuity_correct is not None and _retrieved(s)]
    estimate = _rate(rows, lambda s: s.continuity_correct is False or bool(s.unsupported_claims))
    outcome, why = _decide_rate(estimate, "wrong or unsupported answers despite the relevant item retrieved")
    if not rows:
        why = f"no answerable {BASE_ARM} sample retrieved its relevant item"
    return {"id": "source_range", "layer": "source-range recall (the original evidence)",
            "trigger": "unsupported answers or trust failures although the item was found", "arm": BASE_ARM,
            "outcome": outcome, "why": why, "estimate": estimate}


def _conversation(scenario_id: str) -> str | None:
    return scenario_id.split("/", 1)[0] if "/" in scenario_id else None


def _projection_line(base: Sequence[Any], scenarios: Mapping[str, Any]) -> dict[str, Any]:
    from harness.analysis import paired_evidence

    level = 1 - (1 - LEVEL) / 2  # two tests on one line: Bonferroni
    ubiquitous = {sid: {i.id for i in s.items if str(i.kind) in UBIQUITOUS_KINDS} for sid, s in scenarios.items()}
    # Repeats: a ubiquitous item a probe retrieved that another probe of the same conversation retrieved too.
    seen: dict[tuple[str, str, int, str], set[str]] = defaultdict(set)  # (model, conversation, epoch, item) -> probes
    for s in base:
        conversation = _conversation(s.scenario_id)
        for item in set(s.retrieved_items) & ubiquitous.get(s.scenario_id, set()):
            if conversation is not None:
                seen[(s.model, conversation, s.epoch, item)].add(s.scenario_id)
    numerator, denominator, clusters = [], [], []
    for s in base:
        conversation = _conversation(s.scenario_id)
        mine = set(s.retrieved_items) & ubiquitous.get(s.scenario_id, set())
        if conversation is None or not mine:
            continue
        numerator.append(float(sum(len(seen[(s.model, conversation, s.epoch, i)]) > 1 for i in mine)))
        denominator.append(float(len(mine)))
        clusters.append(conversation)
    repeats = None
    if clusters:  # each probe's share of its preferences repeated, tested by conversation
        evidence = paired_evidence([RATE_THRESHOLD] * len(clusters), [k / d for k, d in zip(numerator, denominator)],
                                   clusters, alpha=1.0 - level, bounds=(-RATE_THRESHOLD, 1.0 - RATE_THRESHOLD))
        repeats = {**_interval(evidence, RATE_THRESHOLD), "unit": "conversations"}
    asks = [s for s in base if not s.should_abstain and s.retrieved_recall is not None
            and set(scenarios[s.scenario_id].expect.relevant_items) & ubiquitous.get(s.scenario_id, set())]
    misses = _rate(asks, lambda s: s.retrieved_recall == 0, level=level)
    outcome_r, why_r = _decide_rate(repeats, "ubiquitous preferences retrieved again by another probe of the "
                                             "same conversation")
    outcome_m, why_m = _decide_rate(misses, "questions on a stored preference whose item was not retrieved")
    if repeats is None:
        why_r = "no conversation whose probes share stored preferences (one probe per story)"
    if misses is None:
        why_m = "no answerable question whose relevant item is a stored preference"
    if JUSTIFIED in (outcome_r, outcome_m):
        outcome = JUSTIFIED
    elif NOT_JUSTIFIED in (outcome_r, outcome_m):
        outcome = NOT_JUSTIFIED
    else:
        outcome = NOT_MEASURED
    return {"id": "working_projection", "layer": "a small working projection (pinned preferences)",
            "trigger": "repeatedly retrieving ubiquitous preferences creates measurable cost or misses",
            "arm": BASE_ARM, "outcome": outcome, "why": f"{why_r}; {why_m} (each at {level:.1%})",
            "estimate": misses, "repeats": repeats, "misses": misses}


def _needs_episode(scenario: Any) -> bool:
    return len(scenario.expect.relevant_items) >= 2 or scenario.category in EPISODE_CATEGORIES


def _episode_line(by_arm: Mapping[str, list[Any]], scenarios: Mapping[str, Any], arms: Sequence[str]) -> dict[str, Any]:
    line = {"id": "observation", "layer": "observation/reflection (episodes)",
            "trigger": "atomic item recall fails on questions that need several items or an episode",
            "arm": BASE_ARM, "against": CEILING_ARM}
    episodic = {sid for sid, s in scenarios.items() if _needs_episode(s) and not s.expect.abstain}
    base = [s for s in by_arm.get(BASE_ARM, []) if s.scenario_id in episodic]
    failures = _rate([s for s in base if s.continuity_correct is not None], lambda s: s.continuity_correct is False)
    if not episodic:
        return {**line, "outcome": NOT_MEASURED, "estimate": None, "failure_rate": None,
                "why": "no answerable question needs two or more relevant items or an episode"}
    if CEILING_ARM not in arms or BASE_ARM not in arms:
        missing = CEILING_ARM if CEILING_ARM not in arms else BASE_ARM
        return {**line, "outcome": NOT_MEASURED, "estimate": None, "failure_rate": failures,
                "why": f"the run has no {missing} arm: without the pasted sessions, a failure of atomic recall "
                       "cannot be told from a question nothing could answer"}
    ceiling = _scenario_means([s for s in by_arm.get(CEILING_ARM, []) if s.scenario_id in episodic],
                              lambda s: s.continuity_correct)
    gap = _paired(_scenario_means(base, lambda s: s.continuity_correct), ceiling)
    outcome, why = _decide_gain(gap, f"accuracy the pasted sessions reach and atomic recall misses "
                                     f"({CEILING_ARM} - {BASE_ARM}, on multi-item or episode questions)")
    if failures is not None and failures["value"] is not None:
        why += f"; {BASE_ARM} fails {_show(failures)} of them"
    return {**line, "outcome": outcome, "why": why, "estimate": gap, "failure_rate": failures}


def layers_block(scored: Sequence[Any], scenarios: Mapping[str, Any], arms: Sequence[str]) -> list[dict[str, Any]]:
    """``summary.json`` ``layers``: per model, the ladder's lines with outcome, why and estimates.

    Args:
        scored: every :class:`harness.score.SampleScores` of the run.
        scenarios: scenario id -> scenario (items' kinds, relevant items, categories).
        arms: the run's arms (an absent arm makes its lines "not measured by this suite").
    """
    ok = _ok(scored)
    models = sorted({s.model for s in scored})
    used = {s.scenario_id for s in ok}
    categories = {sid: scenarios[sid].category for sid in used if sid in scenarios}
    known = {sid: scenarios[sid] for sid in used if sid in scenarios}
    out = []
    for model in models:
        by_arm: dict[str, list[Any]] = defaultdict(list)
        for s in ok:
            if s.model == model and s.scenario_id in known:
                by_arm[s.arm].append(s)
        base = by_arm.get(BASE_ARM, [])
        lines = [*_coverage_lines(by_arm, categories, arms), _stage_line(base), _source_range_line(base),
                 _projection_line(base, known), _episode_line(by_arm, known, arms)]
        out.append({"model": model, "rule": rule(), "lines": lines})
    return out


def rule() -> dict[str, Any]:
    """The decision rule every line follows (also in ``docs/layers.md``)."""
    return {"level": LEVEL, "min_scenarios": MIN_SCENARIOS, "rate_threshold": RATE_THRESHOLD, "base_arm": BASE_ARM,
            "gain": "exact sign-flip test of the per-scenario differences (by conversation) and the interval "
                    "inverted from it; justified when the test rejects and the interval lies above 0",
            "rate": f"exact sign-flip test of each scenario's rate minus {RATE_THRESHOLD:.0%} and the interval "
                    f"inverted from it; justified when the test rejects and the interval lies above "
                    f"{RATE_THRESHOLD:.0%}"}


def layers_lines(summary: Mapping[str, Any], width: int = 80) -> list[str]:
    """The section for a terminal: one line per rung, its outcome first (the page has the intervals)."""
    blocks = [b for b in summary.get("layers") or [] if isinstance(b, Mapping)]
    if not blocks:
        return []
    out = ["which layer has earned its complexity (seed 000; rule: docs/layers.md):"]
    for block in blocks:
        if len(blocks) > 1:
            out.append(f"  {block.get('model')}:")
        for line in block.get("lines") or []:
            text = f"  {line.get('outcome')}: {line.get('layer')}"
            out.append(text if len(text) <= width else text[: width - 3] + "...")
    return out


def _pct_interval(iv: Any) -> str:
    if not isinstance(iv, Mapping) or iv.get("value") is None:
        return "—"
    return _show(iv)


def layers_section(summary: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The HTML section: per model, each line's outcome, rung, trigger and why, and per-category gains."""
    blocks = [b for b in summary.get("layers") or [] if isinstance(b, Mapping)]
    if not blocks:
        return None
    out = []
    for block in blocks:
        lines = []
        for line in block.get("lines") or []:
            if not isinstance(line, Mapping):
                continue
            categories = [{"category": c.get("category"), "recall_gain": _pct_interval(c.get("recall_gain")),
                           "continuity_gain": _pct_interval(c.get("continuity_gain"))}
                          for c in line.get("by_category") or [] if isinstance(c, Mapping)]
            outcome = str(line.get("outcome"))
            lines.append({"outcome": outcome, "cls": outcome.split(" ")[0] if outcome != NOT_MEASURED else "unmeasured",
                          "layer": line.get("layer"), "trigger": line.get("trigger"), "why": line.get("why"),
                          "by_category": categories})
        out.append({"model": block.get("model"), "lines": lines})
    return out
