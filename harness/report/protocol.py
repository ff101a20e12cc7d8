"""The suite's protocol applied to a run: which scored scenarios make the headline, and the per-category table.

A suite that declares a :class:`harness.scenarios.Protocol` is reported the
way its paper reports it: the verdict's continuity is decided on the headline
scenarios (the aggregate's ``headline`` rows), and ``summary.json`` gets a
``protocol`` block with one row per category in the paper's order, each in
its group (``headline``, ``apart``, ``not_judged``), with per arm the accuracy,
its n, the retrieval recall with its n, and the answerable scenarios that have
no relevant item (retrieval recall is undefined for them, so they are counted
here rather than silently dropped from its n). A run of a suite without a
protocol gets none of this: its summary is what it always was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.scenarios import Protocol, Scenario
from harness.score import SampleScores

#: The groups of the protocol table, in the order the report shows them.
GROUPS = ("headline", "apart", "not_judged")


@dataclass(frozen=True)
class RunProtocol:
    """The protocol of a run's scenarios (one suite: one protocol) and what it means for this run."""

    protocol: Protocol
    #: Scored scenarios the headline counts.
    headline_ids: frozenset[str]
    #: ``judge_only`` categories scored without a judge: not judged, out of every accuracy.
    not_judged: tuple[str, ...]
    #: Several different protocols among the scenarios (the first one, by scenario id, is used).
    mixed: bool = False
    #: Each group reported apart -> its scored scenarios: every ``reported_apart`` category, and ``abstention``
    #: (the abstention probes) with ``abstention_apart``. The verdict gives each its own line.
    apart: tuple[tuple[str, frozenset[str]], ...] = ()

    @property
    def apart_lines(self) -> list[tuple[str, bool]]:
        """(group, whether its line gates) for the verdict, in the protocol's order."""
        return [(name, self.protocol.apart_gates) for name, _ in self.apart]

    def description(self) -> str:
        """What the headline counts, in a few words, e.g. ``LoCoMo ...: single_hop, multi_hop``."""
        p = self.protocol
        cats = ", ".join(p.headline) if p.headline else "every category" + (
            f" but {', '.join(p.reported_apart)}" if p.reported_apart else "")
        extra = [*(["abstention probes apart"] if p.abstention_apart else []),
                 *([f"{', '.join(self.not_judged)} not judged"] if self.not_judged else [])]
        return f"{p.name}: {cats}" + (f"; {'; '.join(extra)}" if extra else "")


def run_protocol(scored: Sequence[SampleScores], scenarios: Mapping[str, Scenario], *,
                 judged: bool) -> RunProtocol | None:
    """The run's protocol, or None when no scored scenario declares one (the built-in behaviour).

    A scenario without a protocol in a run that has one counts in the headline.
    ``judged``: a judge model graded the rubric scenarios.
    """
    ids = sorted({s.scenario_id for s in scored if s.scenario_id in scenarios})
    protocols = [scenarios[sid].protocol for sid in ids]
    found = [p for p in protocols if p is not None]
    if not found:
        return None
    headline = frozenset(
        sid for sid, p in zip(ids, protocols)
        if p is None or p.in_headline(scenarios[sid].category, abstain=scenarios[sid].expect.abstain, judged=judged))
    categories = {scenarios[sid].category for sid in ids}
    not_judged = () if judged else tuple(found[0].order({c for c in found[0].judge_only if c in categories}))
    first = found[0]
    apart = [(category, frozenset(sid for sid in ids if scenarios[sid].category == category))
             for category in first.order(set(first.reported_apart))]
    if first.abstention_apart:
        apart.append(("abstention", frozenset(sid for sid in ids if scenarios[sid].expect.abstain)))
    return RunProtocol(first, headline, not_judged, mixed=any(p != first for p in found),
                       apart=tuple((name, group) for name, group in apart if group))


def is_not_judged(scenario: Scenario, *, judged: bool) -> bool:
    """A scenario of a ``judge_only`` category scored without a judge: its patterns cannot grade it."""
    return not judged and scenario.protocol is not None and scenario.category in scenario.protocol.judge_only


def _group(protocol: Protocol, category: str, not_judged: Sequence[str]) -> str:
    if category in not_judged:
        return "not_judged"
    if category in protocol.reported_apart or (protocol.headline and category not in protocol.headline):
        return "apart"
    return "headline"


def _cell(samples: list[SampleScores]) -> dict[str, Any]:
    ok = [s for s in samples if s.status == "ok"]
    graded = [s.continuity_correct for s in ok if s.continuity_correct is not None]
    recall = [s.retrieved_recall for s in ok if s.retrieved_recall is not None]
    return {"accuracy": round(sum(graded) / len(graded), 6) if graded else None, "n": len(graded),
            "retrieved_recall": round(sum(recall) / len(recall), 6) if recall else None, "recall_n": len(recall)}


def protocol_block(run: RunProtocol, scored: Sequence[SampleScores], scenarios: Mapping[str, Scenario],
                   metrics: Sequence[Mapping[str, Any]], arm_order: Sequence[str] = ()) -> dict[str, Any]:
    """``summary.json``'s ``protocol``: the protocol as declared, and its per-category table (docs/summary-json.md).

    Rows: ``headline`` first (the aggregate's ``headline`` rows, with their
    intervals), then every category in the paper's order with its group, then
    (``abstention_apart``) the abstention score over the abstention probes.
    With ``abstention_apart``, a category row counts its answerable probes
    only, so the rows add up to the headline.
    """
    p = run.protocol
    arms = [a for a in arm_order if any(s.arm == a for s in scored)]
    for s in scored:
        if s.arm not in arms:
            arms.append(s.arm)
    models = sorted({s.model for s in scored})
    by_key: dict[tuple[str, str, str], list[SampleScores]] = {}
    for s in scored:
        by_key.setdefault((s.model, s.arm, s.category), []).append(s)
    categories = p.order({s.category for s in scored})
    tables = []
    for model in models:
        rows: list[dict[str, Any]] = []
        head = {}
        for arm in arms:
            found = {r.get("metric"): r for r in metrics if r.get("model") == model and r.get("arm") == arm
                     and r.get("category") == "headline"}
            if "continuity_accuracy" in found:
                acc, recall = found["continuity_accuracy"], found.get("retrieved_recall") or {}
                head[arm] = {"accuracy": acc["value"], "ci_low": acc["ci_low"], "ci_high": acc["ci_high"],
                             "n": acc["n"], "retrieved_recall": recall.get("value"), "recall_n": recall.get("n", 0)}
        rows.append({"category": "headline", "group": "headline", "scenarios": len(run.headline_ids),
                     "no_relevant_item": _no_relevant(run.headline_ids, scenarios), "arms": head})
        for category in categories:
            ids = {s.scenario_id for s in scored if s.category == category}
            keep = [sid for sid in ids if not (p.abstention_apart and scenarios[sid].expect.abstain)]
            if not keep:
                continue
            cells = {arm: _cell([s for s in by_key.get((model, arm, category), []) if s.scenario_id in keep])
                     for arm in arms if (model, arm, category) in by_key}
            rows.append({"category": category, "group": _group(p, category, run.not_judged), "scenarios": len(keep),
                         "no_relevant_item": _no_relevant(keep, scenarios), "arms": cells})
        if p.abstention_apart:
            abst = [s for s in scored if s.model == model and s.should_abstain]
            if abst:
                rows.append({"category": "abstention", "group": "apart",
                             "scenarios": len({s.scenario_id for s in abst}), "no_relevant_item": 0,
                             "arms": {arm: _cell([s for s in abst if s.arm == arm]) for arm in arms
                                      if any(s.arm == arm for s in abst)}})
        tables.append({"model": model, "arms": arms, "rows": rows})
    return {
        "name": p.name, "headline": list(p.headline), "reported_apart": list(p.reported_apart),
        "abstention_apart": p.abstention_apart, "judge_only": list(p.judge_only), "not_judged": list(run.not_judged),
        "recent_history": p.recent_history.model_dump(exclude_none=True), "category_order": list(p.category_order),
        "description": run.description(), "mixed": run.mixed, "tables": tables,
    }


def _no_relevant(ids: Sequence[str] | frozenset[str], scenarios: Mapping[str, Scenario]) -> int:
    """Answerable scenarios without a relevant item: retrieval recall has nothing to find for them."""
    return sum(1 for sid in ids if not scenarios[sid].expect.abstain and not scenarios[sid].expect.relevant_items)
