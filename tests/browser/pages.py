"""Pages the browser tests (and ``benchmarks/browser_bench.py``) open: hostile text, long tool results, 10,000 samples.

``hostile_page`` is the XSS fixture: every text a model or a scenario writes
(answer, transcript, tool result, write call, score reason, title, model
name, arm name in the write-path tables, error, answer key) holds markup that would run script or add elements if any of it
were inserted as HTML. Opening it must add no element and run nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.report.html import render_html
from tests.report.report_fixtures import make_report_data

#: Each payload sets ``window.__xss`` or adds an element with the ``injected`` class if it ever runs or parses.
PAYLOADS = (
    "<img src=x class=injected onerror=\"window.__xss=(window.__xss||0)+1\">",
    "</script><script class=injected>window.__xss=1</script>",
    "\"><svg class=injected onload=\"window.__xss=1\"></svg>",
    "</pre></details><iframe class=injected srcdoc=\"<script>parent.__xss=1</script>\"></iframe>",
    "<a class=injected href=\"javascript:window.__xss=1\">click</a>",
)
LONG_RESULT_CHARS = 5000
THIRD = 1 / 3


def _hostile(i: int) -> str:
    return f"payload {i}: {PAYLOADS[i % len(PAYLOADS)]}"


def hostile_data() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A small report whose every model- or scenario-written text is hostile; one sample has a long tool result."""
    summary, samples = make_report_data(n_scenarios=4, seed=11)
    for n, sample in enumerate(samples):
        sample["model"] = "m/" + PAYLOADS[0]
        sample["title"] = _hostile(n)
        if sample["status"] == "ok":
            sample["final_answer"] = _hostile(n + 1) + "\nsecond line " + _hostile(n + 2)
            sample["messages"][-1]["content"] = sample["final_answer"]
        sample["messages"].insert(1, {"role": "user", "content": _hostile(n + 3)})
        for score in sample["scores"]:
            score["reason"] = _hostile(n + 4)
        sample["expected"] = {"must_contain_any": [_hostile(n)], "abstain": False}
        sample["model_calls"] = [{"round": 0, "latency_s": 0.2, "prompt_tokens": 900, "completion_tokens": 40,
                                  "usage_source": "response", "cost_usd": 0.0021, "finish_reason": _hostile(n),
                                  "tool_call_count": 0, "cached": False, "attempts": 1}]
        sample["tools_offered"] = [_hostile(n)] if sample["arm"] == "recall" else []
    long_one = next(s for s in samples if s["arm"] == "recall" and s["tool_calls"] and s["status"] == "ok")
    text = json.dumps({"results": [{"text": _hostile(k) + " " + "lorem ipsum " * 20} for k in range(30)]})
    long_one["tool_calls"][0]["result_text"] = text
    next(m for m in long_one["messages"] if m["role"] == "tool")["content"] = text
    long_one["scores"][0]["value"] = THIRD
    long_one["scenario_id"] = "long-tool-result"
    long_one["sample_id"] = "long-tool-result|" + "|".join(long_one["sample_id"].split("|")[1:])
    error = next((s for s in samples if s["status"] == "error"), samples[0])
    error["status"], error["error"] = "error", {"type": _hostile(1), "message": _hostile(2)}
    _add_hostile_write_phase(summary, samples)
    return summary, samples


def _add_hostile_write_phase(summary: dict[str, Any], samples: list[dict[str, Any]]) -> None:
    """Write calls whose arguments and results are hostile, and write-path rows naming hostile models and arms."""
    for n, sample in enumerate(s for s in samples if s["arm"] == "recall"):
        sample["write_calls"] = [{
            "call_id": f"w{n}", "name": f"[write phase, session {_hostile(n)}] remember", "status": "ok",
            "arguments": json.dumps({"name": _hostile(n + 1), "text": _hostile(n + 2)}), "result_text": _hostile(n + 3),
            "disclosed_item_ids": [], "result_tokens": 12, "elapsed_s": 0.001, "storage_read": False,
        }]
        sample["write_model_calls"], sample["write_tokens"] = 2, 550
    model = (summary.get("run") or {}).get("models", ["openai/gpt-4o-mini"])[0]
    summary["metrics"] = [*(summary.get("metrics") or []), *(
        {"model": model, "arm": "recall", "category": "all", "metric": metric, "value": value, "ci_low": None,
         "ci_high": None, "n": 4}
        for metric, value in (("write_model_calls", 2.0), ("write_prompt_tokens", 500.0),
                              ("write_completion_tokens", 50.0)))]
    stages = {"correct": 1, "extraction": 1, "retrieval": 1, "answer": 0}
    summary["write_path"] = [
        {"model": "m/" + PAYLOADS[0], "arm": arm, "samples": 4, "memories_written": 3, "write_duplicates": 1,
         "writes_rejected": 1, "forgets_requested": 1, "forgets_done": 1, "written_holds_expected_rate": 0.5,
         "retrieved_holds_expected_rate": 0.25, "stages": stages}
        for arm in ("recall", _hostile(2))
    ]
    summary["oracle_vs_extracted"] = [
        {"model": _hostile(4), "oracle_arm": _hostile(1), "extracted_arm": _hostile(3), "n_scenarios": 3,
         "both_correct": 1, "extraction_failures": 1, "retrieval_failures": 1, "answer_failures": 0,
         "oracle_failed_too": 0, "extracted_only_correct": 0}
    ]


def write_page(path: Path, summary: dict[str, Any], samples: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(summary, samples), encoding="utf-8")
    return path


def large_data(samples: int = 10_000) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """About ``samples`` samples: scenarios x 3 arms x 2 models, one epoch (as benchmarks/html_bench.py)."""
    return make_report_data(n_scenarios=-(-samples // 6), models=("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku"))
