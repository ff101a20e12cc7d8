"""Honest headlines: what a reader must know before trusting a run's numbers, only where true.

Each headline has a machine-readable ``code``, a sentence, and ``lead`` (it
belongs before the verdict: the run is incomplete, it has too many errors, or
the treatment arm rarely used the tools it was offered, which makes the
recall-vs-history comparison say nothing about memory). Order: leads first
(incomplete, errors, low tool use), then the notes.

Codes: ``incomplete``, ``errors``, ``low_tool_use``, ``offline_baseline``,
``below_mde``, ``protocol``, ``not_judged``, ``no_relevant_item`` (suites with a
protocol), ``suite_incomplete``, ``unlabelled`` (probes without gold), ``unjudged_rubric``, ``cached``, ``unusable_lines``,
``duplicates``, ``foreign``, ``out_of_scope_attempts`` (the model asked for
other workspaces' items and the Host refused: refused reads are evidence of
an attack, and that the gate held); ``gold_audit`` is added by :mod:`harness.report.build` (the suite's import audit).

Also here: the per-arm tables the headlines rest on (``tool_use``,
``unsupported_by_kind``), pure functions of the scored samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.analysis import RunHealth, VerdictConfig
from harness.records import RESULTS_FILE
from harness.report.inputs import ReportInputs
from harness.score import SampleScores

#: Below this share of tool-offered samples with a tool call, the treatment arm "rarely" used its tools.
LOW_TOOL_USE = 0.5
OFFLINE_PREFIX = "offline/"


def tool_use(scored: Sequence[SampleScores], metrics: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Per model x arm that offered tools: ok samples offered tools, how many called one, and the rate.

    The rate is the aggregate's ``tool_use_rate`` metric (category "all") when
    present, else ``used / offered`` counted here.
    """
    offered: Counter[tuple[str, str]] = Counter()
    used: Counter[tuple[str, str]] = Counter()
    for s in scored:
        if s.status == "ok" and s.tools_offered > 0:
            offered[(s.model, s.arm)] += 1
            used[(s.model, s.arm)] += s.tool_calls > 0
    from_metrics = {(str(r.get("model")), str(r.get("arm"))): r for r in metrics
                    if r.get("metric") == "tool_use_rate" and r.get("category", "all") == "all"
                    and r.get("value") is not None}
    rows = []
    for key in sorted(offered.keys() | from_metrics.keys()):
        metric = from_metrics.get(key)
        rate = float(metric["value"]) if metric else used[key] / offered[key]
        rows.append({"model": key[0], "arm": key[1], "offered": offered[key], "used": used[key],
                     "rate": round(rate, 4)})
    return rows


def unsupported_by_kind(scored: Sequence[SampleScores]) -> list[dict[str, Any]]:
    """Per model x arm x claim kind: unsupported claims found and the samples holding at least one."""
    claims: Counter[tuple[str, str, str]] = Counter()
    samples: Counter[tuple[str, str, str]] = Counter()
    for s in scored:
        if s.status != "ok" or not s.unsupported_claims:
            continue
        kinds = Counter(c.kind for c in s.unsupported_claims)
        for kind, n in kinds.items():
            claims[(s.model, s.arm, kind)] += n
            samples[(s.model, s.arm, kind)] += 1
    return [{"model": m, "arm": a, "kind": k, "claims": claims[(m, a, k)], "samples": samples[(m, a, k)]}
            for m, a, k in sorted(claims)]


def _find_overall(rows: Sequence[Mapping[str, Any]], **match: Any) -> Mapping[str, Any] | None:
    return next((r for r in rows if r.get("category", "all") == "all"
                 and all(r.get(k) == v for k, v in match.items())), None)


def _below_mde(summary: Mapping[str, Any], cfg: VerdictConfig) -> list[str]:
    out = []
    for mde in summary.get("min_detectable_effect") or []:
        if (mde.get("arm_a"), mde.get("arm_b")) != (cfg.baseline_arm, cfg.treatment_arm) or mde.get("mde") is None:
            continue
        match = {"model": mde.get("model"), "metric": "continuity_accuracy", "arm_a": cfg.baseline_arm,
                 "arm_b": cfg.treatment_arm}
        row = _find_overall(summary.get("paired") or [], **match)
        if summary.get("protocol"):  # the difference the verdict decides on (the MDE itself is over every scenario)
            row = next((r for r in summary.get("paired") or [] if r.get("category") == "headline"
                        and all(r.get(k) == v for k, v in match.items())), row)
        if row is None or row.get("diff") is None or abs(row["diff"]) >= mde["mde"]:
            continue
        out.append(f"{mde['model']}: the observed continuity difference {row['diff']:+.2f} ({cfg.treatment_arm} - "
                   f"{cfg.baseline_arm}) is below the suite's minimum detectable effect {mde['mde']:.2f} "
                   f"({mde.get('n_scenarios')} scenarios, 80% power): the suite is too small to detect an effect "
                   "of this size reliably")
    return out


def _tool_use_notes(rows: Sequence[Mapping[str, Any]], cfg: VerdictConfig) -> tuple[list[str], list[str]]:
    """(leads, notes): tool use below :data:`LOW_TOOL_USE`, leading in the treatment arm."""
    leads, notes = [], []
    for row in rows:
        if row["rate"] >= LOW_TOOL_USE:
            continue
        counted = f" in {row['used']} of {row['offered']} samples" if row["offered"] else ""
        text = f"low tool use: {row['model']} called the tools it was offered in arm {row['arm']}{counted} " \
               f"(rate {row['rate']:.2f})"
        if row["arm"] == cfg.treatment_arm:
            leads.append(text + f", so the {cfg.treatment_arm}-vs-{cfg.baseline_arm} comparison says little "
                                "about memory")
        else:
            notes.append(text)
    return leads, notes


def _unlabelled_count(metrics: Sequence[Mapping[str, Any]]) -> int:
    """Samples of unlabelled probes over every model and arm (the ``unlabelled_probes`` rows of category all)."""
    return sum(int(r.get("value") or 0) for r in metrics
               if r.get("metric") == "unlabelled_probes" and r.get("category") == "all")


def _protocol_notes(protocol: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a reader of a suite with a protocol must know: what the headline is, what is apart, what went unjudged."""
    out = [("protocol", f"the suite's protocol decides the headline: {protocol.get('description')}; the verdict's "
                        "continuity and unsupported claims are over these scenarios, each group reported apart has "
                        "its own line, and the leakage checks and the rows marked all cover every scenario")]
    if protocol.get("mixed"):
        out.append(("protocol", "the run's scenarios declare different protocols; the first one's is reported"))
    rows = (protocol.get("tables") or [{}])[0].get("rows") or []
    not_judged = [r for r in rows if r.get("group") == "not_judged"]
    if not_judged:
        listed = ", ".join(f"{r['category']} ({r['scenarios']})" for r in not_judged)
        out.append(("not_judged", f"not judged: {listed} can only be graded by a judge (no --judge-model); they "
                                  "count in no accuracy and not in the headline"))
    head = next((r for r in rows if r.get("category") == "headline"), None)
    missing = sum(r.get("no_relevant_item") or 0 for r in rows if r.get("category") != "headline")
    if missing:
        where = ", ".join(f"{r['category']} {r['no_relevant_item']}" for r in rows
                          if r.get("category") != "headline" and r.get("no_relevant_item"))
        in_headline = f"; {head['no_relevant_item']} in the headline" if head else ""
        out.append(("no_relevant_item", f"{missing} answerable scenario(s) have no relevant item "
                                        f"({where}{in_headline}): retrieval recall leaves them out of its n"))
    return out


def _blocked_notes(metrics: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per model x arm whose model asked for other workspaces' items: how often the Host refused, and the leaks beside it."""
    notes = []
    for row in metrics:
        if row.get("metric") != "out_of_scope_attempts" or row.get("category", "all") != "all" or not row.get("value"):
            continue
        leaks = _find_overall(metrics, metric="tool_leakage_count", model=row.get("model"), arm=row.get("arm"))
        leaked = int((leaks or {}).get("value") or 0)
        notes.append(f"blocked: {row['model']} in arm {row['arm']} asked memory_get for another workspace's items "
                     f"{int(row['value'])} time(s), and the Host refused each (tool-level leaks {leaked}): the arm was "
                     "under attack (a prompt-injected item, say), and the scope gate "
                     + ("held" if leaked == 0 else "held for these calls; the leaks are another matter"))
    return notes


def headlines(summary: Mapping[str, Any], *, health: RunHealth, inputs: ReportInputs, config: VerdictConfig,
              unjudged_rubric: int) -> list[dict[str, Any]]:
    """The true headlines of a run, leads first (see the module docstring).

    Args:
        summary: the summary built so far (``run``, ``metrics``, ``paired``, ``min_detectable_effect``, ``tool_use``).
        health: the run's completeness and errors, as the verdict saw them.
        inputs: what reading the results found (bad lines, duplicates, foreign records).
        config: the verdict thresholds (arms, ``max_error_rate``).
        unjudged_rubric: rubric scenarios scored without a judge.
    """
    run = summary.get("run") or {}
    leads: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    if not health.complete:
        leads.append(("incomplete", health.incomplete_reason()))
    error_text = health.error_reason(config.max_error_rate)
    if error_text is not None:
        leads.append(("errors", error_text))
    incomplete_suites = (run.get("parameters") or {}).get("incomplete_suites") or []
    if incomplete_suites:
        leads.append(("suite_incomplete", f"incomplete suite: {', '.join(incomplete_suites)} says complete: false "
                                          "(the import stopped before the end of its source file); every figure "
                                          "covers only the part imported, not the benchmark"))
    tool_leads, tool_notes = _tool_use_notes(summary.get("tool_use") or [], config)
    leads += [("low_tool_use", t) for t in tool_leads]
    offline = [m for m in run.get("models") or [] if str(m).startswith(OFFLINE_PREFIX)]
    for model in offline:
        notes.append(("offline_baseline", f"{model} is the offline keyword baseline, a lexical agent and not an "
                                          "LLM: its figures describe keyword search, not a language model"))
    notes += [("below_mde", t) for t in _below_mde(summary, config)]
    protocol = summary.get("protocol")
    if protocol:
        notes += [(code, text) for code, text in _protocol_notes(protocol)]
    unlabelled = _unlabelled_count(summary.get("metrics") or [])
    if unlabelled:
        notes.append(("unlabelled", f"{unlabelled} sample(s) answer unlabelled probes (logged traffic, no gold): "
                                    "continuity n/a for them, left out of every accuracy and of over-abstention; "
                                    "unsupported claims, leakage and costs count as for any sample"))
    if unjudged_rubric:
        notes.append(("unjudged_rubric", f"{unjudged_rubric} rubric scenario(s) went unjudged (no --judge-model): "
                                         "scored by their patterns only"))
    if error_text is None and health.errors:
        notes.append(("errors", f"{health.errors} of {health.samples} samples ended in error "
                                f"({health.error_rate:.1%}), within --max-error-rate {config.max_error_rate:g}; "
                                "error samples are left out of every rate"))
    notes += [("low_tool_use", t) for t in tool_notes]
    notes += [("out_of_scope_attempts", t) for t in _blocked_notes(summary.get("metrics") or [])]
    cached = run.get("cached_samples") or 0
    if cached:
        notes.append(("cached", f"{cached} of {run.get('samples')} samples came from the cache; their latency is "
                                "a replay and is left out of latency figures"))
    if inputs.problems:
        notes.append(("unusable_lines", f"{len(inputs.problems)} unusable line(s) in {RESULTS_FILE} were skipped "
                                        f"(nothing was deleted); first: {inputs.problems[0]}"))
    if inputs.duplicates:
        notes.append(("duplicates", f"{inputs.duplicates} duplicate record(s) dropped; the last record of each "
                                    "sample id was kept"))
    if inputs.foreign_ids:
        notes.append(("foreign", f"{len(inputs.foreign_ids)} record(s) outside run.json were scored "
                                 "(--include-foreign)"))
    return ([{"code": c, "lead": True, "text": t} for c, t in leads]
            + [{"code": c, "lead": False, "text": t} for c, t in notes])
