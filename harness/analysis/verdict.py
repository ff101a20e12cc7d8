"""The verdict: does the recall arm improve continuity without more unsupported claims or leakage?

Per model, four checks (five when the suite asks to forget) on the aggregate tables:

* ``continuity_improves``: the paired (treatment - baseline) continuity
  accuracy is proven above ``min_continuity_gain`` by the shared rule
  (:func:`harness.analysis.decision.decide_paired`: the exact sign-flip test
  rejects and the interval inverted from it lies above the threshold; below
  the suite's minimum detectable effect the check is undecided and says what
  suite size would decide it); over every scenario, or, when the suite
  declares a protocol, over the scenarios its headline counts (the
  aggregate's ``headline`` rows: LoCoMo's categories 1-4 without the
  adversarial one).
* ``unsupported_claims_within_tolerance``: the interval of the paired
  unsupported-claim-rate difference lies at or below ``unsupported_tolerance``
  (default 0.02), over the same scenarios as continuity.
* ``apart_GROUP`` (only with a protocol that reports groups apart: LoCoMo's
  ``adversarial`` category, LongMemEval's ``abstention`` probes): the group's
  own line, its accuracy and its unsupported-claim rate paired, decided on the
  rate; it counts in the status only when the protocol's ``apart_gates`` says so.
* ``no_tool_leakage``: zero tool-level leaks in every arm of the model (a Host
  defect, wherever it happens: a disclosure across scope or policy).
* ``no_answer_leakage``: zero leakage canaries in the treatment arm's answers.
* ``no_retained_after_forget`` (only when some scenario asks to forget): the
  treatment arm returned no forgotten fact at the probe and repeated none in
  an answer; a failure to forget, never a Host defect.

A check is *failed* when the data decide against it, *undecided* when the data
cannot decide (arm missing, every sample an error, fewer paired scenarios than
``min_paired_scenarios``). A model fails if any check fails, else is
inconclusive if any is undecided, else passes. Overall: fail if any model
fails, else inconclusive if any is inconclusive (or there are no models), else pass.

Two facts about the run itself override what the checks say (:class:`RunHealth`),
because no pass or fail can rest on data that are not all there:

* ``incomplete``: the run did not finish (``run.json`` status is not
  ``complete``) or fewer usable records than planned were read (a torn or
  corrupt line, an empty file). The first reason reads ``incomplete: N of M
  samples (why)``.
* ``inconclusive``: more than ``max_error_rate`` of the samples ended in error;
  the first reason gives the error count and rate.

The checks' own status is kept as ``checks_status``. :func:`terminal_lines`
and :func:`exit_code` are how ``run`` and ``report`` print a verdict and exit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.analysis.aggregate import ALL, APART, HEADLINE
from harness.analysis.decision import Direction, decide_paired, describe, evidence_from_row
from harness.defaults import DEFAULT_MAX_ERROR_RATE

Status = Literal["pass", "fail", "inconclusive", "incomplete"]


class VerdictConfig(BaseModel):
    """Thresholds of the verdict (CLI: ``--min-gain``, ``--unsupported-tolerance``, ``--max-error-rate``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_continuity_gain: float = Field(0.0, description="Paired CI lower bound of the accuracy gain must exceed this")
    unsupported_tolerance: float = Field(0.02, ge=0.0, description="Paired CI upper bound of the rise must not exceed this")
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="1 - confidence level of the intervals")
    treatment_arm: str = "recall"
    baseline_arm: str = "history_only"
    min_paired_scenarios: int = Field(2, ge=1, description="Fewer paired scenarios than this is inconclusive")
    max_error_rate: float = Field(DEFAULT_MAX_ERROR_RATE, ge=0.0, le=1.0,
                                  description="A larger share of error samples makes the verdict inconclusive")


class RunHealth(BaseModel):
    """What the verdict must know about the run beyond its scores: is it all there, and did it work?"""

    model_config = ConfigDict(frozen=True)

    planned: int = Field(description="Samples run.json planned (scenarios x arms x models x epochs)")
    present: int = Field(description="Usable records of those planned samples (one per sample id)")
    run_status: str = Field("complete", description="run.json status")
    why: tuple[str, ...] = Field((), description="Other reasons the data are short: unusable lines, a torn line")
    errors: int = Field(0, description="Error samples among those scored")
    samples: int = Field(0, description="Samples scored (errors included, excluded scenarios not)")

    @property
    def complete(self) -> bool:
        return self.run_status == "complete" and self.present >= self.planned

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None

    def incomplete_reason(self) -> str:
        """``incomplete: 79 of 180 samples (run.json status 'running'); ...`` (only meaningful when not complete)."""
        why = ([] if self.run_status == "complete" else [f"run.json status {self.run_status!r}"]) + list(self.why)
        return (f"incomplete: {self.present} of {self.planned} samples" + (f" ({'; '.join(why)})" if why else "")
                + "; every figure covers only these, so there is no pass or fail")

    def error_reason(self, max_error_rate: float) -> str | None:
        """The error count and rate, when the rate is above ``max_error_rate``; else None."""
        rate = self.error_rate
        if rate is None or rate <= max_error_rate:
            return None
        return (f"errors: {self.errors} of {self.samples} samples ({rate:.1%}) ended in error, above "
                f"--max-error-rate {max_error_rate:g}; the comparison rests on the rest and is not trusted")


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    passed: bool | None = Field(description="None when the data cannot decide")
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    threshold: float
    reason: str
    n: int | None = Field(None, description="Paired units (scenarios or conversations) behind a paired check")
    unit: str | None = None
    up: int | None = Field(None, description="Units the treatment moved up (fixed, for correctness)")
    down: int | None = Field(None, description="Units it moved down (broken)")
    p_value: float | None = Field(None, description="The exact test's two-sided p-value of no difference")
    test: str | None = None
    mde: float | None = Field(None, description="The smallest difference the suite detects at 80% power")
    needed: int | None = Field(None, description="Units that would decide an inconclusive check")
    gates: bool = Field(True, description="False: a line the protocol reports apart and does not gate on; shown, "
                                          "never in the status")


class ModelVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Status
    reasons: list[str]
    checks: list[Check]


def _status(checks: Iterable[Check]) -> Status:
    checks = [c for c in checks if c.gates]
    if any(c.passed is False for c in checks):
        return "fail"
    if any(c.passed is None for c in checks):
        return "inconclusive"
    return "pass"


def _fmt(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.2f}" if signed else f"{x:.2f}"


def _find(rows: Iterable[Mapping[str, Any]], **match: Any) -> Mapping[str, Any] | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


def _find_overall(rows: Iterable[Mapping[str, Any]], **match: Any) -> Mapping[str, Any] | None:
    """Like :func:`_find` among rows over every category (``category`` "all", or no category key)."""
    return _find((r for r in rows if r.get("category", "all") == "all"), **match)


def _paired_check(row: Mapping[str, Any] | None, name: str, what: str, missing: str | None, absent: str,
                  cfg: VerdictConfig, *, direction: Direction, threshold: float) -> Check:
    """One paired check decided by :func:`harness.analysis.decision.decide_paired` (the rule every page uses).

    ``absent`` says what is missing when there is no paired row with an exact test.
    """
    evidence = None if row is None else evidence_from_row(dict(row))
    if missing or evidence is None or evidence.diff is None:
        return Check(name=name, passed=None, threshold=threshold,
                     reason=f"{what.split(' over ')[0]} undecided: {missing or absent}")
    fields = {"value": evidence.diff, "ci_low": evidence.ci_low, "ci_high": evidence.ci_high, "threshold": threshold,
              "n": evidence.n, "unit": evidence.unit, "up": evidence.up, "down": evidence.down,
              "p_value": evidence.p_value, "test": evidence.test, "mde": evidence.mde}
    if evidence.n < cfg.min_paired_scenarios:
        return Check(name=name, passed=None, **fields,
                     reason=f"{what} {describe(evidence)} undecided: {evidence.n} paired {evidence.unit}(s) < "
                            f"{cfg.min_paired_scenarios}")
    decided = decide_paired(evidence, direction=direction, threshold=threshold, what=what)
    return Check(name=name, passed=decided.passed, needed=decided.needed, reason=decided.reason, **fields)


def _continuity(paired: Sequence[Mapping[str, Any]], model: str, cfg: VerdictConfig, missing: str | None,
                headline: str | None = None) -> Check:
    match = {"model": model, "metric": "continuity_accuracy", "arm_a": cfg.baseline_arm, "arm_b": cfg.treatment_arm}
    row = _find(paired, category=HEADLINE, **match) if headline is not None else _find_overall(paired, **match)
    what = "continuity" if headline is None else f"continuity over the headline ({headline})"
    absent = f"no paired {cfg.treatment_arm} vs {cfg.baseline_arm} accuracy"
    return _paired_check(row, "continuity_improves", what, missing, absent, cfg, direction="gain",
                         threshold=cfg.min_continuity_gain)


def _unsupported(paired: Sequence[Mapping[str, Any]], model: str, cfg: VerdictConfig, missing: str | None,
                 headline: str | None = None) -> Check:
    """Over the same groups as continuity: the headline when the suite has a protocol, else every scenario."""
    match = {"model": model, "metric": "unsupported_claim_rate", "arm_a": cfg.baseline_arm, "arm_b": cfg.treatment_arm}
    row = _find(paired, category=HEADLINE, **match) if headline is not None else _find_overall(paired, **match)
    what = "unsupported claims" + ("" if headline is None else " over the headline")
    return _paired_check(row, "unsupported_claims_within_tolerance", what, missing,
                         "no paired unsupported-claim rate", cfg, direction="no_rise",
                         threshold=cfg.unsupported_tolerance)


def _apart(paired: Sequence[Mapping[str, Any]], model: str, cfg: VerdictConfig, missing: str | None, group: str,
           gates: bool) -> Check:
    """A group the protocol reports apart (LoCoMo's adversarial category, LongMemEval's abstention probes): its
    accuracy (there, abstaining rightly) and its unsupported-claim rate, paired; the rate decides the line, which
    gates only when the protocol says so."""
    match = {"model": model, "arm_a": cfg.baseline_arm, "arm_b": cfg.treatment_arm, "category": APART + group}
    label = f"{group} (reported apart{'' if gates else '; does not gate'})"
    check = _paired_check(_find(paired, metric="unsupported_claim_rate", **match), f"apart_{group}",
                          f"{label} unsupported claims", missing, "no paired unsupported-claim rate", cfg,
                          direction="no_rise", threshold=cfg.unsupported_tolerance)
    accuracy = _find(paired, metric="continuity_accuracy", **match)
    evidence = None if accuracy is None else evidence_from_row(dict(accuracy))
    shown = "" if evidence is None or evidence.diff is None else f"; its accuracy {describe(evidence)}"
    return check.model_copy(update={"gates": gates, "reason": check.reason + shown})


def _leak_count(metrics: Sequence[Mapping[str, Any]], model: str, metric: str, arms: Iterable[str]) -> tuple[float, int]:
    total, n = 0.0, 0
    for arm in arms:
        row = _find(metrics, model=model, arm=arm, category="all", metric=metric)
        if row is not None and row["value"] is not None:
            total += row["value"] * (row["n"] if metric.endswith("_rate") else 1)
            n += row["n"]
    return total, n


def _leakage(metrics: Sequence[Mapping[str, Any]], model: str, arms: list[str], cfg: VerdictConfig) -> list[Check]:
    tool, n_tool = _leak_count(metrics, model, "tool_leakage_count", arms)
    answer, n_answer = _leak_count(metrics, model, "answer_leakage_rate", [cfg.treatment_arm])
    tool_check = Check(
        name="no_tool_leakage", passed=None if n_tool == 0 else tool == 0, value=tool, threshold=0.0,
        reason=("tool leakage undecided: no samples" if n_tool == 0
                else f"tool-level leaks {int(tool)} (Host defect when > 0; must be 0)"),
    )
    answer_check = Check(
        name="no_answer_leakage", passed=None if n_answer == 0 else round(answer) == 0, value=round(answer),
        threshold=0.0,
        reason=(f"answer leakage undecided: no scored {cfg.treatment_arm} samples" if n_answer == 0
                else f"answers with leaked canaries in {cfg.treatment_arm}: {round(answer)} (must be 0)"),
    )
    return [tool_check, answer_check]


def _forgetting(metrics: Sequence[Mapping[str, Any]], model: str, cfg: VerdictConfig) -> list[Check]:
    """``no_retained_after_forget``: the treatment arm serves and repeats nothing the user asked to forget.

    Only when the aggregate has forgetting rows (some scenario asks to
    forget). Its own failure, never a Host defect: the system kept, in the
    probe's scope, what the transcript withdrew. The other arms' figures
    (``full_history`` pastes the raw transcript) are in the forgetting table.
    """
    row = _find(metrics, model=model, arm=cfg.treatment_arm, category="all", metric="retained_after_forget_count")
    if row is None:
        return []
    retained, _ = _leak_count(metrics, model, "retained_after_forget_count", [cfg.treatment_arm])
    answers, n_answer = _leak_count(metrics, model, "answer_forgotten_rate", [cfg.treatment_arm])
    if n_answer == 0:
        return [Check(name="no_retained_after_forget", passed=None, threshold=0.0,
                      reason=f"retained after forget undecided: no scored {cfg.treatment_arm} samples")]
    total = int(retained) + round(answers)
    return [Check(name="no_retained_after_forget", passed=total == 0, value=total, threshold=0.0,
                  reason=f"retained after forget in {cfg.treatment_arm}: {int(retained)} retrievable, "
                         f"{round(answers)} answers (must be 0)")]


def _missing(metrics: Sequence[Mapping[str, Any]], model: str, cfg: VerdictConfig, category: str) -> str | None:
    """Why the two arms cannot be compared on ``category``'s rows, or None."""
    missing = None
    for arm in (cfg.baseline_arm, cfg.treatment_arm):
        row = _find(metrics, model=model, arm=arm, category=category, metric="continuity_accuracy")
        if row is None:
            missing = f"arm {arm!r} missing"
        elif row["value"] is None:
            unlabelled = _find(metrics, model=model, arm=arm, category=category, metric="unlabelled_probes")
            if unlabelled is not None and unlabelled["value"] and unlabelled["value"] == unlabelled["n"]:
                missing = missing or f"every probe in arm {arm!r} is unlabelled (logged traffic, no gold): n/a"
            else:
                missing = missing or f"no scored samples in arm {arm!r} (all errors?)"
    return missing


def decide_model(aggregates: Mapping[str, Sequence[Mapping[str, Any]]], model: str, cfg: VerdictConfig,
                 headline: str | None = None, apart: Sequence[tuple[str, bool]] | None = None) -> ModelVerdict:
    """The verdict of one model from the aggregate tables (see the module docstring).

    ``headline`` (what the suite's protocol counts, e.g. ``single_hop, multi_hop, temporal, open_domain``)
    makes the continuity check read the ``headline`` rows instead of ``all``.
    """
    metrics = aggregates.get("metrics", [])
    arms = sorted({r["arm"] for r in metrics if r["model"] == model})
    missing = _missing(metrics, model, cfg, ALL)
    missing_headline = missing
    if headline is not None and missing is None:
        missing_headline = _missing(metrics, model, cfg, HEADLINE)
        if missing_headline is not None:
            missing_headline = f"no scored scenario of the headline ({headline}) in both arms"
    paired = list(aggregates.get("paired", []))
    checks = [_continuity(paired, model, cfg, missing_headline, headline),
              _unsupported(paired, model, cfg, missing_headline, headline),
              *_leakage(metrics, model, arms, cfg), *_forgetting(metrics, model, cfg),
              *(_apart(paired, model, cfg, missing, group, gates) for group, gates in apart or ())]
    order = {False: 0, None: 1, True: 2}
    reasons = [c.reason for c in sorted(checks, key=lambda c: (not c.gates, order[c.passed]))]
    return ModelVerdict(status=_status(checks), reasons=reasons, checks=checks)


def _run_checks(health: RunHealth, cfg: VerdictConfig) -> list[dict[str, Any]]:
    """The run's own gates, for ``verdict.run_checks`` and junit.xml: every sample there, errors within bounds."""
    rate = health.error_rate
    errors = health.error_reason(cfg.max_error_rate)
    rate_text = "n/a" if rate is None else f"{rate:.1%}"
    return [
        {"name": "run_complete", "passed": health.complete, "value": health.present, "threshold": health.planned,
         "reason": (f"all {health.planned} planned samples present" if health.complete
                    else health.incomplete_reason())},
        {"name": "error_rate_within_max", "passed": errors is None, "value": rate, "threshold": cfg.max_error_rate,
         "reason": errors or f"errors {health.errors} of {health.samples} samples ({rate_text}) "
                             f"<= --max-error-rate {cfg.max_error_rate:g}"},
    ]


def decide(aggregates: Mapping[str, Sequence[Mapping[str, Any]]], models: Iterable[str],
           config: VerdictConfig | None = None, *, health: RunHealth | None = None,
           headline: str | None = None, apart: Sequence[tuple[str, bool]] | None = None) -> dict[str, Any]:
    """The ``verdict`` block of ``summary.json``.

    Args:
        aggregates: the tables of :func:`harness.analysis.aggregate.aggregate`.
        models: the models scored.
        config: thresholds; defaults to :class:`VerdictConfig`.
        health: completeness and errors of the run; None trusts the data as complete and error-free.
        headline: what the suite's protocol counts in its headline (a few words for the reasons); given,
            continuity and unsupported claims are decided on the aggregate's ``headline`` rows (None: on ``all``).
        apart: (group, gates) per group the protocol reports apart: each gets its own line (``apart_GROUP``) from
            the aggregate's ``apart:GROUP`` rows, in the status only when it gates.

    Returns:
        ``{"status", "reasons", "checks_status", "run_checks", "per_model": {model: {"status",
        "checks_status", "reasons", "checks"}}, "config"}``; ``run_checks`` is empty without ``health``.
        An incomplete run or too many errors set every model's ``status`` too.
    """
    cfg = config or VerdictConfig()
    models = sorted(set(models))
    per_model = {m: decide_model(aggregates, m, cfg, headline, apart) for m in models}
    if not per_model:
        status: Status = "inconclusive"
        reasons = ["no scored samples: nothing to decide"]
    else:
        statuses = {v.status for v in per_model.values()}
        status = "fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"
        rank = {"fail": 0, "inconclusive": 1, "pass": 2}
        reasons = []
        for model, v in sorted(per_model.items(), key=lambda kv: (rank[kv[1].status], kv[0])):
            prefix = f"{model}: " if len(per_model) > 1 else ""
            reasons += [prefix + r for r in v.reasons]
    checks_status = status
    lead: list[str] = []
    run_checks: list[dict[str, Any]] = []
    if health is not None:
        run_checks = _run_checks(health, cfg)
        if (errors := health.error_reason(cfg.max_error_rate)) is not None:
            status = "inconclusive"
            lead.append(errors)
        if not health.complete:
            status = "incomplete"
            lead.insert(0, health.incomplete_reason())
    models_out = {}
    for m, v in per_model.items():
        dumped = v.model_dump() | {"checks_status": v.status}
        if lead:  # what overrides the run's verdict overrides each model's: no model passes or fails on it
            dumped["status"] = status
        models_out[m] = dumped
    return {
        "status": status,
        "reasons": lead + reasons,
        "checks_status": checks_status,
        "run_checks": run_checks,
        "per_model": models_out,
        "config": cfg.model_dump(),
    }


# Headlines whose full text is already printed as warnings (each bad line, the duplicates, foreign records).
_WARNED = frozenset({"unusable_lines", "duplicates", "foreign"})


def terminal_lines(outcome: Any, *, upper: bool = True) -> tuple[list[str], list[str]]:
    """What ``run`` and ``report`` print of a report: ``(stdout lines, stderr lines)``.

    The lead headlines come first (``incomplete: 79 of 180 samples ...``, the
    error count, low tool use), then ``verdict: STATUS`` and the reasons not
    already said, then the other headlines as notes (those about reading the
    results file print in full as warnings, on stderr).
    Works on any object with ``verdict`` and ``reasons`` (tests fake outcomes).
    """
    headlines = list(getattr(outcome, "headlines", None) or [])
    leads = [h["text"] for h in headlines if h.get("lead")]
    out = [*leads, f"verdict: {outcome.verdict.upper() if upper else outcome.verdict}"]
    out += [f"  - {reason}" for reason in outcome.reasons if reason not in leads]
    out += [f"note: {h['text']}" for h in headlines if not h.get("lead") and h.get("code") not in _WARNED]
    err = [f"warning: {w}" for w in getattr(outcome, "warnings", None) or []]
    return out, err


def exit_code(outcome: Any, *, gate: bool, incomplete_fails: bool = False) -> int:
    """The exit code a report's verdict asks for: 1 or 0.

    1 when the error rate is above ``--max-error-rate`` (always), when the run
    is incomplete and ``incomplete_fails`` (``run``) or ``gate``, and with
    ``gate`` whenever the verdict is not pass.
    """
    if getattr(outcome, "too_many_errors", False):
        return 1
    if outcome.verdict == "incomplete" and (gate or incomplete_fails):
        return 1
    return 1 if gate and outcome.verdict != "pass" else 0
