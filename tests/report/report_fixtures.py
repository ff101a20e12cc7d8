"""Realistic fake ``summary`` and ``samples`` dicts, shaped as /work/report_contract.md says.

Used by the HTML report tests and its benchmark; the scoring side may reuse it.
Everything is deterministic for a given seed.

Example:
    >>> summary, samples = make_report_data(n_scenarios=4, epochs=2)
    >>> len(samples) == 4 * 3 * 1 * 2
    True
"""

from __future__ import annotations

import json
import random
from typing import Any

CATEGORIES = ("preference", "project_fact", "decision", "knowledge_update", "abstention", "leakage", "temporal")
DEFAULT_ARMS = ("history_only", "recall", "full_history")
OUTCOMES_ANSWERABLE = ("correct", "wrong")
OUTCOMES_UNANSWERABLE = ("abstained_correctly", "wrong")
METRIC_NAMES = (
    "continuity_accuracy",
    "adherence_rate",
    "unsupported_claim_rate",
    "abstention_rate_unanswerable",
    "over_abstention_rate",
    "coverage",
    "selective_accuracy",
    "answer_leakage_rate",
    "tool_leakage_count",
    "retrieved_precision",
    "retrieved_recall",
    "tool_calls",
    "model_calls",
    "prompt_tokens",
    "completion_tokens",
    "tool_result_tokens",
    "cost_usd",
    "latency_p50_s",
    "latency_p95_s",
    "tokens_per_correct",
    "cost_per_correct",
    "error_rate",
)
_WORDS = (
    "postgres migration schema deploy staging friday review tabs spaces python typescript budget vendor "
    "release branch freeze owner alice bob carol decided prefers concise answers metric dashboard latency "
    "invoice quarterly roadmap api gateway retry timeout cache eviction backup restore region eu us"
).split()
SYSTEM_PROMPT = (
    "You are a helpful assistant working with one user across many sessions. "
    "Answer the user's question from the conversation so far. "
    + "When you are not sure, say that you do not know rather than guessing. " * 12
)


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def _ci(rng: random.Random, value: float, width: float = 0.08) -> tuple[float, float]:
    low = max(0.0, value - rng.uniform(0.02, width))
    high = min(1.0, value + rng.uniform(0.02, width))
    return round(low, 4), round(high, 4)


def _scenario(rng: random.Random, index: int) -> dict[str, Any]:
    category = CATEGORIES[index % len(CATEGORIES)]
    history = []
    for turn in range(rng.randint(2, 6)):
        history.append({"role": "user" if turn % 2 == 0 else "assistant", "content": _sentence(rng, 8, 30)})
    return {
        "id": f"{category.replace('_', '-')}-{index:04d}",
        "title": f"{_sentence(rng, 3, 7)[:-1]} ({category})",
        "category": category,
        "tags": sorted({rng.choice(("starter", "smoke", "hard", "multi-session"))}),
        "history": history,
        "question": _sentence(rng, 6, 14)[:-1] + "?",
        "expected": {
            "abstain": category == "abstention",
            "relevant_items": [] if category == "abstention" else [f"item-{index}-{k}" for k in range(rng.randint(1, 2))],
            "must_contain_any": [] if category == "abstention" else [rng.choice(_WORDS)],
            "must_not_contain": [rng.choice(_WORDS)],
            "canaries": [{"id": f"canary-{index}", "text": "ZEBRA-7731", "kind": "leakage"}]
            if category == "leakage"
            else [],
        },
    }


def _tool_exchange(rng: random.Random, scenario: dict[str, Any], call_no: int) -> tuple[list[dict], list[dict], int]:
    call_id = f"call_{call_no}_{rng.randrange(16**8):08x}"
    query = _sentence(rng, 2, 5)[:-1].lower()
    hits = [
        {"id": f"item-{scenario['id']}-{k}", "text": _sentence(rng, 10, 30), "score": round(rng.random(), 3)}
        for k in range(rng.randint(1, 3))
    ]
    result = json.dumps({"results": hits, "truncated": False})
    arguments = json.dumps({"query": query, "limit": 5})
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "memory_search", "arguments": arguments}}],
    }
    tool_msg = {"role": "tool", "tool_call_id": call_id, "content": result}
    tokens = len(result) // 4
    log = {
        "round": call_no,
        "call_id": call_id,
        "name": "memory_search",
        "arguments": arguments,
        "status": "ok",
        "result_text": result,
        "result_chars": len(result),
        "result_tokens": tokens,
        "disclosed_item_ids": [hit["id"] for hit in hits],
        "storage_read": True,
        "elapsed_s": round(rng.uniform(0.002, 0.05), 4),
    }
    return [assistant, tool_msg], [log], tokens


def _sample(rng: random.Random, scenario: dict[str, Any], arm: str, model: str, epoch: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    if arm == "full_history":
        pasted = "\n".join(f"{m['role']}: {m['content']}" for m in scenario["history"])
        messages.append({"role": "user", "content": "Earlier sessions:\n" + pasted})
    messages.extend(scenario["history"])
    messages.append({"role": "user", "content": scenario["question"]})
    tool_logs: list[dict[str, Any]] = []
    tool_tokens = 0
    if arm == "recall":
        for call_no in range(rng.choice((1, 1, 2))):
            extra, logs, tokens = _tool_exchange(rng, scenario, call_no)
            messages.extend(extra)
            tool_logs.extend(logs)
            tool_tokens += tokens
    is_error = rng.random() < 0.01
    unanswerable = scenario["expected"]["abstain"]
    if is_error:
        outcome, answer, stop = "error", None, "error"
        error = {"type": "RateLimitError", "message": "provider returned 429 after 5 attempts"}
    else:
        pool = OUTCOMES_UNANSWERABLE if unanswerable else OUTCOMES_ANSWERABLE
        weights = (0.7, 0.3) if arm != "history_only" else (0.45, 0.55)
        outcome = rng.choices(pool, weights=weights)[0]
        answer = " ".join(_sentence(rng, 6, 20) for _ in range(rng.randint(1, 4)))
        if outcome == "abstained_correctly":
            answer = "I don't know: nothing in our earlier sessions says. " + answer
        messages.append({"role": "assistant", "content": answer})
        stop, error = "final_answer", None
    correct = outcome in ("correct", "abstained_correctly")
    scores: list[dict[str, Any]] = []
    if not is_error:
        scores = [
            {"name": "continuity", "value": correct, "passed": correct,
             "reason": "matched must_contain_any" if correct else "no expected phrase in the answer"},
            {"name": "unsupported_claims", "value": 0 if correct else rng.choice((0, 1)), "passed": True,
             "reason": "no stale or invented value"},
            {"name": "abstention", "value": outcome.startswith("abstained"), "passed": None, "reason": "abstain phrase"},
            {"name": "answer_leakage", "value": False, "passed": True, "reason": "no canary in the answer"},
            {"name": "tool_leakage", "value": 0, "passed": True, "reason": "no canary in tool results"},
        ]
        if arm == "recall":
            scores.append({"name": "retrieved_precision", "value": round(rng.random(), 3), "passed": None,
                           "reason": "relevant / returned"})
            scores.append({"name": "retrieved_recall", "value": round(rng.random(), 3), "passed": None,
                           "reason": "returned relevant / relevant"})
    prompt_tokens = sum(len(m.get("content") or "") for m in messages[:-1]) // 4
    return {
        "sample_id": f"{scenario['id']}|{arm}|{model}|{epoch}",
        "scenario_id": scenario["id"],
        "title": scenario["title"],
        "category": scenario["category"],
        "tags": scenario["tags"],
        "arm": arm,
        "model": model,
        "epoch": epoch,
        "status": "error" if is_error else "ok",
        "error": error,
        "outcome": outcome,
        "final_answer": answer,
        "stop_reason": stop,
        "messages": messages,
        "tool_calls": tool_logs,
        "scores": scores,
        "latency_s": round(rng.uniform(0.4, 3.0) + (0.6 if arm == "recall" else 0.0), 3),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 0 if is_error else len(answer) // 4,
        "tool_result_tokens": tool_tokens,
        "cost_usd": round(prompt_tokens * 2.5e-6, 6),
        "expected": scenario["expected"],
    }


def make_samples(
    *,
    n_scenarios: int = 6,
    models: tuple[str, ...] = ("openai/gpt-4o-mini",),
    arms: tuple[str, ...] = DEFAULT_ARMS,
    epochs: int = 1,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Samples for every scenario x arm x model x epoch."""
    rng = random.Random(seed)
    scenarios = [_scenario(rng, index) for index in range(n_scenarios)]
    return [
        _sample(rng, scenario, arm, model, epoch)
        for scenario in scenarios
        for model in models
        for arm in arms
        for epoch in range(epochs)
    ]


def _check(name: str, passed: bool, value: float, low: float, high: float, threshold: float, reason: str) -> dict:
    return {"name": name, "passed": passed, "value": value, "ci_low": low, "ci_high": high,
            "threshold": threshold, "reason": reason}


def make_summary(samples: list[dict[str, Any]], *, seed: int = 0, status: str = "pass") -> dict[str, Any]:
    """A summary consistent in shape (not in exact statistics) with ``samples``."""
    rng = random.Random(seed + 1)
    models = sorted({s["model"] for s in samples}) or ["openai/gpt-4o-mini"]
    arms = sorted({s["arm"] for s in samples}, key=lambda a: (DEFAULT_ARMS + (a,)).index(a)) or list(DEFAULT_ARMS)
    categories = sorted({s["category"] for s in samples})
    metrics: list[dict[str, Any]] = []
    for model in models:
        for arm in arms:
            mine = [s for s in samples if s["model"] == model and s["arm"] == arm]
            for category in ["all", *categories]:
                subset = mine if category == "all" else [s for s in mine if s["category"] == category]
                ok = [s for s in subset if s["status"] == "ok"]
                acc = sum(s["outcome"] in ("correct", "abstained_correctly") for s in ok) / len(ok) if ok else None
                low, high = _ci(rng, acc) if acc is not None else (None, None)
                metrics.append({"model": model, "arm": arm, "category": category, "metric": "continuity_accuracy",
                                "value": acc, "ci_low": low, "ci_high": high, "n": len(ok)})
            n = len(mine)
            for metric in METRIC_NAMES[1:]:
                if metric.endswith(("_tokens",)):
                    key = metric
                    value = sum(s[key] for s in mine) / n if n else None
                    low = high = None
                elif metric in ("tool_calls", "model_calls"):
                    value, low, high = (sum(len(s["tool_calls"]) for s in mine) / n if n else None), None, None
                elif metric == "cost_usd":
                    value, low, high = sum(s["cost_usd"] or 0 for s in mine) / n if n else None, None, None
                elif metric.startswith("latency"):
                    value, low, high = rng.uniform(0.5, 3.0), None, None
                elif metric in ("tokens_per_correct", "cost_per_correct"):
                    value, low, high = rng.uniform(500, 4000) if metric[0] == "t" else rng.uniform(0.001, 0.02), None, None
                elif metric == "tool_leakage_count":
                    value, low, high = 0, None, None
                elif metric.startswith("retrieved") and arm != "recall":
                    value, low, high = None, None, None
                else:
                    value = round(rng.random() * (0.1 if "rate" in metric else 1.0), 4)
                    low, high = _ci(rng, value, 0.05)
                metrics.append({"model": model, "arm": arm, "category": "all", "metric": metric, "value": value,
                                "ci_low": low, "ci_high": high, "n": n})
    n_scen = len({s["scenario_id"] for s in samples})
    paired, mcnemar, mde, added, flips, latency, per_model = [], [], [], [], [], [], {}
    for model in models:
        for arm in arms:
            values = [s["latency_s"] for s in samples if s["model"] == model and s["arm"] == arm]
            ordered = sorted(values) or [0.0]
            latency.append({"model": model, "arm": arm, "p50_s": ordered[len(ordered) // 2],
                            "p95_s": ordered[int(len(ordered) * 0.95) - 1 if len(ordered) > 1 else 0],
                            "values_s": values})
        for baseline in [a for a in arms if a != "recall"]:
            if "recall" not in arms:
                break
            for metric in ("continuity_accuracy", "unsupported_claim_rate"):
                diff = round(rng.uniform(0.05, 0.25) if metric == "continuity_accuracy" else rng.uniform(-0.02, 0.01), 4)
                paired.append({"model": model, "metric": metric, "arm_a": baseline, "arm_b": "recall", "diff": diff,
                               "ci_low": round(diff - 0.07, 4), "ci_high": round(diff + 0.07, 4),
                               "n_scenarios": n_scen, "category": "all"})
            for category in categories[:-1]:  # the last category has no paired row: drawn as missing
                diff = round(rng.uniform(-0.2, 0.4), 4) if category != categories[0] else 0.0
                n_cat = len({s["scenario_id"] for s in samples if s["category"] == category})
                paired.append({"model": model, "metric": "continuity_accuracy", "arm_a": baseline, "arm_b": "recall",
                               "diff": diff, "ci_low": round(diff - 0.3, 4), "ci_high": round(diff + 0.3, 4),
                               "n_scenarios": n_cat, "category": category})
            fixed, broken = rng.randint(3, 12), rng.randint(0, 4)
            mcnemar.append({"model": model, "arm_a": baseline, "arm_b": "recall", "n_pairs": n_scen,
                            "both_correct": max(0, n_scen - fixed - broken - 2), "fixed": fixed, "broken": broken,
                            "both_wrong": 2, "p_value": round(rng.uniform(0.0001, 0.2), 5),
                            "test": "mcnemar_exact"})
            mde.append({"model": model, "arm_a": baseline, "arm_b": "recall", "mde": round(rng.uniform(0.05, 0.2), 3),
                        "n_scenarios": n_scen})
            added.append({"model": model, "arm_a": baseline, "arm_b": "recall", "p50_s": 0.61, "p95_s": 1.4,
                          "ci_low_p50": 0.4, "ci_high_p50": 0.8})
            by_scenario: dict[str, dict[str, Any]] = {}
            for s in samples:
                if s["model"] == model and s["arm"] in (baseline, "recall"):
                    by_scenario.setdefault(s["scenario_id"], {"title": s["title"], "category": s["category"]})
            for k, (sid, info) in enumerate(sorted(by_scenario.items())[:8]):
                kind = "fixed" if k % 3 else "broken"
                flips.append({"model": model, "arm_a": baseline, "arm_b": "recall", "scenario_id": sid,
                              "title": info["title"], "category": info["category"], "kind": kind,
                              "a_correct_rate": 0.0 if kind == "fixed" else 1.0,
                              "b_correct_rate": 1.0 if kind == "fixed" else 0.0})
        passed = status == "pass"
        checks = [
            _check("continuity_improves", passed, 0.18, 0.09 if passed else -0.02, 0.27, 0.0,
                   "continuity +0.18 [0.09, 0.27] > 0.00" if passed else "interval includes 0"),
            _check("unsupported_claims_within_tolerance", True, -0.01, -0.03, 0.01, 0.02,
                   "unsupported claims -0.01 [-0.03, 0.01] <= +0.02"),
            _check("no_tool_leakage", True, 0, None, None, 0, "0 canaries in tool results"),
            _check("no_answer_leakage", True, 0.0, 0.0, 0.02, 0, "0 canaries in answers"),
        ]
        per_model[model] = {"status": status, "reasons": [c["reason"] for c in checks], "checks": checks}
    errors = sum(s["status"] == "error" for s in samples)
    n_used = {m: (sum(bool(s["tool_calls"]) for s in samples if s["model"] == m and s["arm"] == "recall"
                      and s["status"] == "ok"),
                  sum(1 for s in samples if s["model"] == m and s["arm"] == "recall" and s["status"] == "ok"))
              for m in models}
    return {
        "schema_version": 1,
        "generated_at": "2025-11-30T06:00:00Z",
        "harness_version": "0.1.0",
        "verdict": {
            "status": status,
            "reasons": [f"{m}: {per_model[m]['reasons'][0]}" for m in models],
            "per_model": per_model,
            "checks_status": status,
            "config": {"min_continuity_gain": 0.0, "unsupported_tolerance": 0.02, "alpha": 0.05,
                       "treatment_arm": "recall", "baseline_arm": "history_only", "max_error_rate": 0.05},
        },
        "headlines": [],
        "run": {"run_id": "20251130-060000-ab12cd", "models": models, "arms": arms,
                "epochs": max((s["epoch"] for s in samples), default=0) + 1, "seed": seed,
                "suite_hash": "9f2c1e0a7b", "samples": len(samples), "errors": errors,
                "error_rate": round(errors / len(samples), 4) if samples else None, "cached_samples": 0,
                "planned_samples": len(samples), "present_samples": len(samples), "complete": True,
                "unusable_lines": 0, "torn_last_line": False, "duplicates_dropped": 0, "foreign_records": 0,
                "excluded_scenarios": [],
                "started_at": "2025-11-30T05:40:00Z", "finished_at": "2025-11-30T05:58:00Z", "status": "complete"},
        "metrics": metrics,
        "paired": paired,
        "mcnemar": mcnemar,
        "flips": flips,
        "latency": latency,
        "added_latency": added,
        "min_detectable_effect": mde,
        "tool_use": [{"model": m, "arm": "recall", "offered": n_used[m][1], "used": n_used[m][0],
                      "rate": round(n_used[m][0] / n_used[m][1], 4) if n_used[m][1] else 0.0}
                     for m in models if "recall" in arms],
        "unsupported_by_kind": [{"model": m, "arm": "recall", "kind": "stale", "claims": 2, "samples": 1}
                                for m in models if "recall" in arms],
        "judge": {"model": "openai/gpt-4o", "calls": 120, "cached": 40,
                  "calibration": {"false_positive_rate": 0.03, "false_negative_rate": 0.05, "n": 60}},
    }


def make_report_data(
    *,
    n_scenarios: int = 6,
    models: tuple[str, ...] = ("openai/gpt-4o-mini",),
    arms: tuple[str, ...] = DEFAULT_ARMS,
    epochs: int = 1,
    seed: int = 0,
    status: str = "pass",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A ``(summary, samples)`` pair ready for ``render_html``."""
    samples = make_samples(n_scenarios=n_scenarios, models=models, arms=arms, epochs=epochs, seed=seed)
    return make_summary(samples, seed=seed, status=status), samples
