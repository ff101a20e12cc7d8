"""Seed 001's two V0.3 questions on the layer ladder (``summary.json`` ``layers``), decided by its one rule.

A top-K lane against the whole document (``memory_document``), and Dream Mode
against extraction alone (``memory_document_extracted``), each a paired
continuity gain decided by :mod:`harness.report.layers`'s rule (the exact
sign-flip test over at least 10 scenarios, the interval above 0); the paired
change in unsupported answers and the arm's measured cost and risks
(:mod:`harness.report.document_v03`) print beside the reason. The lines are
added only to a run with a top-K or Dream Mode arm.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.document_v03 import DREAM_ARM, EXTRACTED_ARM, TOPK, WHOLE_ARM
from harness.report.layers import NOT_MEASURED, _decide_gain, _paired, _scenario_means, _show


def document_layer_lines(by_arm: Mapping[str, list[Any]], arms: Sequence[str], risks: Mapping[str, Mapping[str, Any]],
                         ) -> list[dict[str, Any]]:
    """The ladder's two questions: each top-K lane against the whole file, Dream Mode against extraction alone.

    ``risks``: arm -> its row of :func:`document_v03_block` (for the reason's figures), may be empty.
    """
    def line(line_id: str, layer: str, trigger: str, arm: str, against: str, extra: str) -> dict[str, Any]:
        base: dict[str, Any] = {"id": line_id, "layer": layer, "trigger": trigger, "arm": arm, "against": against}
        if arm not in arms or against not in arms:
            missing = arm if arm not in arms else against
            return {**base, "outcome": NOT_MEASURED, "why": f"the run has no {missing} arm", "estimate": None}
        gain = _paired(_scenario_means(by_arm.get(against, []), lambda s: s.continuity_correct),
                       _scenario_means(by_arm.get(arm, []), lambda s: s.continuity_correct))
        outcome, why = _decide_gain(gain, f"continuity accuracy gained ({arm} - {against})")
        unsup = _paired(_scenario_means(by_arm.get(against, []), lambda s: 1.0 if s.unsupported_claims else 0.0),
                        _scenario_means(by_arm.get(arm, []), lambda s: 1.0 if s.unsupported_claims else 0.0))
        if unsup is not None and unsup["value"] is not None:
            why += f"; unsupported answers {_show(unsup)}"
        return {**base, "outcome": outcome, "why": why + extra, "estimate": gain}

    out = []
    for lane, arm, what in TOPK:
        row = risks.get(arm) or {}
        extra = f"; judge {_num(row.get('selection_tokens'))} tokens per sample" if lane == "judge" and row else ""
        out.append(line(f"topk_{lane}", f"top-K document retrieval by {what}",
                        "the whole memory document is cut by the prompt cap or buries the relevant entry", arm,
                        WHOLE_ARM, extra))
    row = risks.get(DREAM_ARM) or {}
    extra = (f"; per sample {_num(row.get('consolidation_calls'))} consolidation calls, {_num(row.get('consolidation_tokens'))} "
             f"tokens, {_num(row.get('entries_superseded'))} entries superseded; facts lost "
             f"{row.get('facts_lost')}, superseded served {row.get('superseded_served')}, secrets "
             f"written {row.get('secrets_written')}, other workspaces' content written {row.get('foreign_written')} "
             "(the last two must be 0)") if row else ""
    out.append(line("dream", "Dream Mode (idle-window consolidation)",
                    "extraction alone leaves duplicates and superseded entries the probe is shown", DREAM_ARM,
                    EXTRACTED_ARM, extra))
    return out


def _num(value: Any) -> str:
    return "?" if not isinstance(value, (int, float)) else f"{value:.1f}"


def with_document_lines(blocks: list[dict[str, Any]], scored: Sequence[Any], arms: Sequence[str],
                        rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``blocks`` (``layers_block``'s, one per model) with the two questions' lines appended to each."""
    for block in blocks:
        by_arm: dict[str, list[Any]] = defaultdict(list)
        for s in scored:
            if s.status == "ok" and s.model == block.get("model"):
                by_arm[s.arm].append(s)
        risks = {str(r.get("arm")): r for r in rows if r.get("model") == block.get("model")}
        block["lines"] = [*block["lines"], *document_layer_lines(by_arm, arms, risks)]
    return blocks
