"""How numbers, labels and arms read in the HTML report: one place for every unit.

Durations under a second read in milliseconds (``3.2 ms``), longer ones in
seconds (``1.50 s``), in the metric table, the paired differences, the added
latency, the sample panels and the chart axes alike. A value and its interval
share one unit, chosen by the largest of them (``994 ms [978 ms, 1.01 s]``
would be hard to read; it is ``0.99 s [0.98 s, 1.01 s]``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

from harness.defaults import DEFAULT_ARMS

_LABELS = {
    "abstention_rate_unanswerable": "abstention on unanswerable",
    "over_abstention_rate": "over-abstention on answerable",
    "cost_usd": "cost (USD)",
    "cost_per_correct": "cost per correct (USD)",
    "latency_p50_s": "latency p50",
    "latency_p95_s": "latency p95",
    "tool_leakage_count": "tool leakage (count)",
    "out_of_scope_attempts": "out-of-scope reads refused (count)",
    "retained_after_forget_count": "retained after forget (forgotten facts back at the probe)",
    "answer_forgotten_rate": "answers repeating a forgotten fact",
    "tool_calls": "tool calls per sample",
    "model_calls": "model calls per sample",
    "token_f1": "token F1 (LoCoMo's metric, informational)",
    "bleu1": "BLEU-1 (LoCoMo papers' metric, informational)",
    "task_averaged_accuracy": "task-averaged accuracy (LongMemEval's metric)",
    "tool_latency_p50_s": "memory tool latency p50",
    "tool_latency_p95_s": "memory tool latency p95",
    "write_model_calls": "write-phase model calls per sample",
    "write_tool_calls": "write calls per sample",
    "write_prompt_tokens": "write-phase prompt tokens",
    "write_completion_tokens": "write-phase completion tokens",
    "write_holds_answer_rate": "writes holding the expected fact",
    "continuity_accuracy_headline": "continuity accuracy, the protocol's headline (the verdict's)",
}


def label(name: Any) -> str:
    """A metric or outcome name as a reader sees it: ``over_abstention_rate`` -> ``over-abstention on answerable``.

    LongMemEval's session-level retrieval reads ``session recall_all@5 (LongMemEval's metric)``.
    """
    text = str(name)
    if text.startswith("session_") and "@" in text:
        return f"session {text.removeprefix('session_')} (LongMemEval's metric)"
    return _LABELS.get(text) or text.replace("_", " ")


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite int or float (bools and None are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def num(value: Any, digits: int = 2) -> str:
    """``0.82``; thousands and ints grouped (``12,345``); ``—`` when not a number."""
    if not is_number(value):
        return "—"
    if isinstance(value, int) or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def signed(value: Any, digits: int = 2) -> str:
    return f"{value:+.{digits}f}" if is_number(value) else "—"


def _in_ms(*values: Any) -> bool:
    """True when every number among ``values`` is under a second (once rounded to 1.00 s)."""
    numbers = [abs(v) for v in values if is_number(v)]
    return bool(numbers) and max(numbers) < 0.9995 and max(numbers) > 0


def seconds(value: Any, sign: bool = False, *, ms: bool | None = None) -> str:
    """A duration: milliseconds below one second, else seconds (``ms`` forces the unit).

    Example:
        >>> seconds(0.0032), seconds(0.37), seconds(1.5), seconds(-0.0004, sign=True)
        ('3.2 ms', '370 ms', '1.50 s', '-0.40 ms')
    """
    if not is_number(value):
        return "—"
    plus = "+" if sign else ""
    if value == 0:
        return f"{0:{plus}d} {'ms' if ms else 's'}"
    if not (_in_ms(value) if ms is None else ms):
        return f"{value:{plus}.2f} s"
    millis = value * 1000.0
    digits = 0 if abs(millis) >= 99.95 else 1 if abs(millis) >= 0.995 else 2
    return f"{millis:{plus}.{digits}f} ms"


def seconds_interval(value: Any, low: Any = None, high: Any = None, sign: bool = False) -> str:
    """A duration with its interval in one unit: ``+371 ms [+346 ms, +398 ms]``, ``1.35 s [1.33 s, 1.38 s]``."""
    ms = _in_ms(value, low, high)
    text = seconds(value, sign, ms=ms)
    if is_number(low) and is_number(high):
        text += f" [{seconds(low, sign, ms=ms)}, {seconds(high, sign, ms=ms)}]"
    return text


def pvalue(value: Any) -> str:
    """``p < 0.001`` or ``p = 0.064``."""
    if not is_number(value):
        return "p unknown"
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def metric_kind(metric: str) -> str:
    """The unit family of a metric: ``usd``, ``s``, ``int``, ``count`` or ``rate``."""
    if metric.startswith("cost"):
        return "usd"
    if metric.startswith("latency") or metric.endswith("_s"):
        return "s"
    if metric.endswith("tokens") or metric in ("tokens_per_correct", "tool_leakage_count", "out_of_scope_attempts",
                                                                   "retained_after_forget_count"):
        return "int"
    if metric.endswith("_count") or metric in ("tool_calls", "model_calls"):
        return "count"
    return "rate"


def _one(value: Any, kind: str) -> str:
    if not is_number(value):
        return "—"
    if kind == "usd":
        return f"${value:.4g}" if value else "$0"
    if kind == "int":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def _with_interval(row: dict[str, Any], key: str, one: Any) -> str:
    text = one(row.get(key))
    if is_number(row.get("ci_low")) and is_number(row.get("ci_high")):
        text += f" [{one(row['ci_low'])}, {one(row['ci_high'])}]"
    return text


def format_metric(row: dict[str, Any] | None, metric: str | None = None) -> str:
    """``0.82 [0.74, 0.89]`` for a metrics row (interval left out when absent).

    Example:
        >>> format_metric({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.891})
        '0.82 [0.74, 0.89]'
        >>> format_metric({"metric": "latency_p50_s", "value": 0.0032, "ci_low": 0.003, "ci_high": 0.0035})
        '3.2 ms [3.0 ms, 3.5 ms]'
    """
    if not row:
        return "—"
    kind = metric_kind(metric or str(row.get("metric", "")))
    if kind == "s":
        return seconds_interval(row.get("value"), row.get("ci_low"), row.get("ci_high"))
    return _with_interval(row, "value", lambda value: _one(value, kind))


def paired_diff(row: dict[str, Any]) -> str:
    """A signed difference with its interval, in the metric's unit: ``+0.180 [+0.090, +0.270]``."""
    kind = metric_kind(str(row.get("metric", "")))
    if kind == "s":
        return seconds_interval(row.get("diff"), row.get("ci_low"), row.get("ci_high"), sign=True)

    def one(value: Any) -> str:
        if not is_number(value):
            return "—"
        if kind == "int":
            return f"{value:+,.0f}"
        if kind == "usd":
            return f"{'+' if value >= 0 else '-'}${abs(value):.4g}"
        return f"{value:+.3f}"

    return _with_interval(row, "diff", one)


def score_value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def arm_order(arms: Iterable[str]) -> list[str]:
    """Known arms in their usual order (baseline first), then the others alphabetically."""
    unique = dict.fromkeys(arms)
    return sorted(unique, key=lambda arm: (DEFAULT_ARMS.index(arm) if arm in DEFAULT_ARMS else len(DEFAULT_ARMS), arm))


def arm_class(arm: str, arms: Sequence[str]) -> str:
    """The CSS colour class of an arm (``c0``..``c5``), stable across tables and charts."""
    return f"c{arms.index(arm) % 6}" if arm in arms else "c5"


def run_arms(summary: dict[str, Any], rows: Iterable[dict[str, Any]] = ()) -> list[str]:
    """The run's arms plus any other arm the rows name, in :func:`arm_order`."""
    arms = list((summary.get("run") or {}).get("arms") or [])
    return arm_order(arms + [str(r.get("arm")) for r in rows if r.get("arm") is not None])
