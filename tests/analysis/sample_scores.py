"""Scored samples built directly (no scenario, no transcript) for the aggregation tests."""

from __future__ import annotations

from harness.score.models import SampleScores


def sample(scenario: int, arm: str, epoch: int, correct: bool, *, latency: float = 1.0, category: str = "project_fact",
           ok: bool = True, cached: bool = False, tool_calls: int = 0, abstain: bool = False,
           unsupported: bool = False, tokens: int = 100) -> SampleScores:
    """One scored sample with the fields aggregation reads."""
    answered = ok and not (abstain and correct)
    return SampleScores(
        sample_id=f"sc-{scenario:03d}/{arm}/m/{epoch}", scenario_id=f"sc-{scenario:03d}", category=category, arm=arm,
        model="m", epoch=epoch, status="ok" if ok else "error",
        outcome=("correct" if correct else "wrong") if ok else "error", should_abstain=abstain,
        abstained=(not answered) if ok else None, continuity_correct=correct if ok else None,
        adherence=correct if ok else None,
        unsupported_claims=[{"kind": "stale", "text": "Postgres 13"}] if ok and unsupported else [],
        tool_calls=tool_calls, model_calls=1, prompt_tokens=tokens, completion_tokens=tokens // 10,
        tool_result_tokens=tool_calls * 50, cost_usd=tokens / 1024, latency_s=latency, cached=cached,
        tools_offered=2 if arm == "recall" else 0,
        retrieved_precision=(0.5 if correct else 0.25) if arm == "recall" and ok else None)
