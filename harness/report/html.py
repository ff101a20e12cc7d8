"""The self-contained ``index.html`` of a run: verdict, metrics, charts, flips and one panel per sample.

The page needs no network: CSS and JavaScript are inlined, charts are inline SVG
laid out here and drawn by the template. Everything a model or a scenario wrote
is escaped by Jinja2's autoescape. Transcripts, tool calls, score reasons and
answer keys travel in one embedded JSON blob (each distinct string stored once;
``<``, ``>`` and ``&`` escaped; deflated and base64-encoded when large) that a
small script turns into DOM nodes with ``textContent`` only when a panel is
opened. Without JavaScript every panel still shows its header, answer, scores
and costs, and every panel is visible.

Example:
    >>> from harness.report.html import render_html
    >>> page = render_html(summary, samples)  # doctest: +SKIP
    >>> Path("index.html").write_text(page, encoding="utf-8")  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
from markupsafe import Markup

_TEMPLATES = Path(__file__).parent / "templates"
_KNOWN_ARMS = ("history_only", "recall", "full_history")
_OUTCOMES = ("correct", "wrong", "abstained_correctly", "abstained_wrongly", "error")
METRIC_ORDER = (
    "continuity_accuracy", "adherence_rate", "unsupported_claim_rate", "abstention_rate_unanswerable",
    "over_abstention_rate", "coverage", "selective_accuracy", "answer_leakage_rate", "tool_leakage_count",
    "retrieved_precision", "retrieved_recall", "tool_calls", "model_calls", "prompt_tokens", "completion_tokens",
    "tool_result_tokens", "cost_usd", "latency_p50_s", "latency_p95_s", "tokens_per_correct", "cost_per_correct",
    "error_rate",
)  # fmt: skip
_ROLE_CODES = {"system": "s", "user": "u", "assistant": "a", "tool": "t"}
_NULL, _SAME_AS_ANSWER = -1, -2
_COMPRESS_ABOVE = 1_500_000  # characters of transcript JSON; smaller reports stay plain (greppable) JSON


def render_html(summary: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    """Render the report page.

    Args:
        summary: the ``summary.json`` dict (see the report contract); missing
            sections render as "not available" rather than failing.
        samples: one dict per sample record, with its scores and outcome.

    Returns:
        The whole page as one string; write it with ``encoding="utf-8"``.
    """
    ordered = _sorted_samples(samples, summary)
    filters_json, transcripts, encoding = _data_blobs(ordered, _COMPRESS_ABOVE)
    context = {
        "summary": summary,
        "run": summary.get("run") or {},
        "verdict": summary.get("verdict") or {},
        "judge": summary.get("judge"),
        "metric_tables": _metric_tables(summary),
        "paired": _paired_rows(summary),
        "latency_added": summary.get("added_latency") or [],
        "flips": _flip_rows(summary, ordered),
        "accuracy_charts": _accuracy_charts(summary),
        "latency_chart": _latency_chart(summary),
        "tokens_chart": _tokens_chart(summary),
        "panels": [_panel(sample) for sample in ordered],
        "filters": _filter_options(ordered),
        "filters_json": filters_json,
        "transcripts": transcripts,
        "transcripts_encoding": encoding,
    }
    page = _environment().get_template("index.html.j2").render(context)
    try:
        page.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a decoded model output
        page = page.encode("utf-8", "replace").decode("utf-8")
    return page


# ---------------------------------------------------------------- environment and formatting


def _autoescape(name: str | None) -> bool:
    # Only the static, data-free style sheet and script are included unescaped.
    return not (name or "").endswith((".css", ".js"))


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        autoescape=_autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.ChainableUndefined,
    )
    env.filters.update(metric=format_metric, num=_num, signed=_signed, pvalue=_pvalue, paired=_paired_diff)
    env.globals.update(arm_class=_arm_class, label=_label)
    return env


_LABELS = {
    "abstention_rate_unanswerable": "abstention on unanswerable",
    "over_abstention_rate": "over-abstention on answerable",
    "cost_usd": "cost (USD)",
    "cost_per_correct": "cost per correct (USD)",
    "latency_p50_s": "latency p50",
    "latency_p95_s": "latency p95",
    "tool_leakage_count": "tool leakage (count)",
    "tool_calls": "tool calls per sample",
    "model_calls": "model calls per sample",
}


def _label(name: Any) -> str:
    return _LABELS.get(str(name)) or str(name).replace("_", " ")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _num(value: Any, digits: int = 2) -> str:
    if not _is_number(value):
        return "—"
    if isinstance(value, int) or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _signed(value: Any, digits: int = 2) -> str:
    return f"{value:+.{digits}f}" if _is_number(value) else "—"


def _pvalue(value: Any) -> str:
    """``p < 0.001`` or ``p = 0.064``."""
    if not _is_number(value):
        return "p unknown"
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def _paired_diff(row: dict[str, Any]) -> str:
    """A signed difference with its interval, in the metric's unit: ``+0.180 [+0.090, +0.270]``."""
    kind = _metric_kind(str(row.get("metric", "")))

    def one(value: Any) -> str:
        if not _is_number(value):
            return "—"
        if kind == "int":
            return f"{value:+,.0f}"
        if kind == "s":
            return f"{value:+.2f} s"
        if kind == "usd":
            return f"{'+' if value >= 0 else '-'}${abs(value):.4g}"
        return f"{value:+.3f}"

    text = one(row.get("diff"))
    if _is_number(row.get("ci_low")) and _is_number(row.get("ci_high")):
        text += f" [{one(row['ci_low'])}, {one(row['ci_high'])}]"
    return text


def _metric_kind(metric: str) -> str:
    if metric.startswith("cost"):
        return "usd"
    if metric.startswith("latency") or metric.endswith("_s"):
        return "s"
    if metric.endswith("tokens") or metric in ("tokens_per_correct", "tool_leakage_count"):
        return "int"
    if metric.endswith("_count") or metric in ("tool_calls", "model_calls"):
        return "count"
    return "rate"


def _one(value: Any, kind: str) -> str:
    if not _is_number(value):
        return "—"
    if kind == "usd":
        return f"${value:.4g}" if value else "$0"
    if kind == "s":
        return f"{value:.2f} s"
    if kind == "int":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def format_metric(row: dict[str, Any] | None, metric: str | None = None) -> str:
    """``0.82 [0.74, 0.89]`` for a metrics row (interval left out when absent).

    Example:
        >>> format_metric({"metric": "coverage", "value": 0.82, "ci_low": 0.74, "ci_high": 0.891})
        '0.82 [0.74, 0.89]'
    """
    if not row:
        return "—"
    kind = _metric_kind(metric or str(row.get("metric", "")))
    text = _one(row.get("value"), kind)
    if _is_number(row.get("ci_low")) and _is_number(row.get("ci_high")):
        text += f" [{_one(row['ci_low'], kind)}, {_one(row['ci_high'], kind)}]"
    return text


def _score_value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _arm_order(arms: Iterable[str]) -> list[str]:
    unique = dict.fromkeys(arms)
    return sorted(unique, key=lambda arm: (_KNOWN_ARMS.index(arm) if arm in _KNOWN_ARMS else len(_KNOWN_ARMS), arm))


def _arm_class(arm: str, arms: Sequence[str]) -> str:
    return f"c{arms.index(arm) % 6}" if arm in arms else "c5"


# ---------------------------------------------------------------- tables


def _run_arms(summary: dict[str, Any], rows: Iterable[dict[str, Any]] = ()) -> list[str]:
    run_arms = list((summary.get("run") or {}).get("arms") or [])
    return _arm_order(run_arms + [str(r.get("arm")) for r in rows if r.get("arm") is not None])


def _metric_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One table per model: a row per metric, a column per arm (category "all")."""
    rows = [r for r in summary.get("metrics") or [] if r.get("category", "all") == "all"]
    arms = _run_arms(summary, rows)
    tables: dict[str, dict[str, Any]] = {}
    for row in rows:
        table = tables.setdefault(str(row.get("model")), {"model": str(row.get("model")), "cells": {}})
        table["cells"][(str(row.get("metric")), str(row.get("arm")))] = row
    out = []
    for table in tables.values():
        present = {metric for metric, _ in table["cells"]}
        metrics = [m for m in METRIC_ORDER if m in present] + sorted(present - set(METRIC_ORDER))
        table_arms = [a for a in arms if any((m, a) in table["cells"] for m in metrics)]
        body = [(m, [table["cells"].get((m, a)) for a in table_arms]) for m in metrics]
        out.append({"model": table["model"], "arms": table_arms, "rows": body})
    return out


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("model")), str(row.get("arm_a")), str(row.get("arm_b")))


def _paired_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One block per model x comparison: paired differences, McNemar and the detectable effect."""
    blocks: dict[tuple[str, str, str], dict[str, Any]] = {}

    def block(row: dict[str, Any]) -> dict[str, Any]:
        return blocks.setdefault(_key(row), {"key": _key(row), "diffs": [], "mcnemar": None, "mde": None})

    for row in summary.get("paired") or []:
        block(row)["diffs"].append(row)
    for row in summary.get("mcnemar") or []:
        block(row)["mcnemar"] = row
    for row in summary.get("min_detectable_effect") or []:
        block(row)["mde"] = row
    arms = _run_arms(summary)

    def order(key: tuple[str, str, str]) -> tuple[Any, ...]:
        return (key[0], *(arms.index(a) if a in arms else len(arms) for a in key[1:]), key)

    return [blocks[key] for key in sorted(blocks, key=order)]


_CORRECT = frozenset({"correct", "abstained_correctly"})
_FLIP_LINKS = 6  # per arm; with many epochs the rest are counted, not listed


def _flip_rows(summary: dict[str, Any], samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flips with links to the panels of both arms' samples of that scenario and model.

    Per arm the samples that show the flip come first (for "fixed": the baseline's
    wrong answers and the treatment's right ones), at most ``_FLIP_LINKS`` of them.
    """
    panels: dict[tuple[str, str, str], list[tuple[Any, str, bool]]] = {}
    for sample in samples:
        key = (str(sample.get("scenario_id")), str(sample.get("model")), str(sample.get("arm")))
        panels.setdefault(key, []).append((sample.get("epoch"), sample["_pid"], sample["_outcome"] in _CORRECT))
    rows = []
    for flip in summary.get("flips") or []:
        scenario, model = str(flip.get("scenario_id")), str(flip.get("model"))
        links = []
        for side in ("arm_a", "arm_b"):
            wanted = (side == "arm_b") == (flip.get("kind") == "fixed")  # the correctness that shows the flip
            found = sorted(panels.get((scenario, model, str(flip.get(side))), []), key=lambda p: p[2] != wanted)
            shown = [(epoch, pid, "✓" if correct else "✗") for epoch, pid, correct in found[:_FLIP_LINKS]]
            links.append((str(flip.get(side)), shown, len(found) - len(shown)))
        rows.append({**flip, "links": links})
    rows.sort(key=lambda r: (str(r.get("model")), str(r.get("kind")) != "fixed", str(r.get("scenario_id"))))
    return rows


class _Panel(NamedTuple):
    """What the markup of one sample panel needs, pre-formatted (one escape per field)."""

    pid: str
    outcome: str
    scenario_id: str
    title: str
    where: str
    error: str
    answer: str | None
    scores: str
    costs: str


def _sorted_samples(samples: list[dict[str, Any]], summary: dict[str, Any]) -> list[dict[str, Any]]:
    arms = _run_arms(summary, samples)
    rank = {arm: index for index, arm in enumerate(arms)}

    def order(sample: dict[str, Any]) -> tuple[Any, ...]:
        epoch = sample.get("epoch")
        return (str(sample.get("scenario_id")), str(sample.get("model")), rank.get(sample.get("arm"), len(rank)),
                epoch if isinstance(epoch, int) else 0)

    out = []
    for index, sample in enumerate(sorted(samples, key=order)):
        view = dict(sample)
        view["_pid"] = f"s{index}"
        view["_outcome"] = str(sample.get("outcome") or ("error" if sample.get("status") == "error" else "unknown"))
        out.append(view)
    return out


def _mark(passed: Any) -> str:
    return " ✓" if passed is True else (" ✗" if passed is False else "")


def _panel(sample: dict[str, Any]) -> _Panel:
    error = sample.get("error")
    if isinstance(error, dict):
        error_text = f"{error.get('type', 'error')}: {error.get('message', '')}"
    else:
        error_text = str(error) if error else ""
    scores = " · ".join(
        f"{score.get('name')} {_score_value(score.get('value'))}{_mark(score.get('passed'))}"
        for score in sample.get("scores") or []
        if isinstance(score, dict)
    )
    cost = sample.get("cost_usd")
    costs = (
        f"tokens {_num(sample.get('prompt_tokens'))} prompt · {_num(sample.get('completion_tokens'))} completion · "
        f"{_num(sample.get('tool_result_tokens'))} tool result · cost "
        f"{f'${cost:.4g}' if _is_number(cost) else 'unknown'} · {_num(sample.get('latency_s'))} s · "
        f"stop {sample.get('stop_reason')}"
    )
    answer = sample.get("final_answer")
    return _Panel(
        pid=sample["_pid"],
        outcome=sample["_outcome"],
        scenario_id=str(sample.get("scenario_id")),
        title=str(sample.get("title") or ""),
        where=f"{sample.get('category')} · {sample.get('arm')} · {sample.get('model')} · epoch {sample.get('epoch')}",
        error=error_text,
        answer=answer if isinstance(answer, str) else None,
        scores=scores,
        costs=costs,
    )


def _filter_options(samples: list[dict[str, Any]]) -> dict[str, list[str]]:
    def values(field: str) -> list[str]:
        return sorted({str(s.get(field)) for s in samples})

    outcomes = {s["_outcome"] for s in samples}
    return {
        "arm": _arm_order(str(s.get("arm")) for s in samples),
        "category": values("category"),
        "model": values("model"),
        "outcome": [o for o in _OUTCOMES if o in outcomes] + sorted(outcomes - set(_OUTCOMES)),
    }


# ---------------------------------------------------------------- embedded data


def _string_table() -> tuple[dict[str, int], Callable[[Any], int]]:
    """A string table and its ``intern`` function: each distinct text is stored once in the blob."""
    table: dict[str, int] = {}
    setdefault = table.setdefault

    def intern(text: Any) -> int:
        if text is None:
            return _NULL
        if text.__class__ is not str:
            text = json.dumps(text, ensure_ascii=False, sort_keys=True, default=str)
        return setdefault(text, len(table))

    return table, intern


def _messages(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    answer = sample.get("final_answer")
    out = []
    for message in sample.get("messages") or []:
        if not isinstance(message, dict):
            out.append(["?", intern(message), 0, _NULL])
            continue
        role = str(message.get("role"))
        content = message.get("content")
        ref = _SAME_AS_ANSWER if (content == answer and answer and role == "assistant") else intern(content)
        calls = []
        for call in message.get("tool_calls") or []:
            function = (call.get("function") or {}) if isinstance(call, dict) else {}
            call_id = call.get("id") if isinstance(call, dict) else None
            calls.append([intern(call_id), intern(function.get("name")), intern(function.get("arguments"))])
        out.append([_ROLE_CODES.get(role, role), ref, calls or 0, intern(message.get("tool_call_id"))])
    return out


def _tool_logs(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    out = []
    for log in sample.get("tool_calls") or []:
        if not isinstance(log, dict):
            continue
        ids = ", ".join(str(i) for i in log.get("disclosed_item_ids") or [])
        out.append([
            intern(log.get("call_id")), intern(log.get("name")), intern(log.get("status")), intern(ids or None),
            log.get("result_tokens"), log.get("elapsed_s"), bool(log.get("storage_read")),
            intern(log.get("arguments")), intern(log.get("result_text")),
        ])  # fmt: skip
    return out


def _scores(sample: dict[str, Any], intern: Callable[[Any], int]) -> list[list[Any]]:
    return [
        [intern(str(s.get("name"))), s.get("value"), s.get("passed"), intern(s.get("reason"))]
        for s in sample.get("scores") or []
        if isinstance(s, dict)
    ]


def _script_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">``: ``<``, ``>``, ``&`` escaped, so ``</script>`` cannot occur."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _data_blobs(samples: list[dict[str, Any]], compress_above: int) -> tuple[Markup, Markup, str]:
    """The embedded data: filter fields (always plain JSON) and transcripts (plain, or deflate+base64 when large).

    Returns:
        ``(filters_json, transcripts, encoding)`` with encoding ``"json"`` or ``"deflate-base64"``. Both texts
        are free of ``<``, ``>`` and ``&``, which is what makes the ``Markup`` safe inside a script element;
        the page parses them with ``JSON.parse``, never evaluates them.
    """
    strings, intern = _string_table()
    id_table, ids = _string_table()
    fields: dict[str, dict[str, int]] = {"arm": {}, "category": {}, "model": {}, "outcome": {}}

    def code(field: str, value: Any) -> int:
        table = fields[field]
        return table.setdefault(str(value), len(table))

    filters, rows = [], []
    for sample in samples:
        filters.append([code("arm", sample.get("arm")), code("category", sample.get("category")),
                        code("model", sample.get("model")), code("outcome", sample["_outcome"]),
                        ids(str(sample.get("scenario_id")))])
        rows.append([_messages(sample, intern), _tool_logs(sample, intern), intern(sample.get("expected")),
                     _scores(sample, intern)])
    filter_text = _script_json({"f": {name: list(table) for name, table in fields.items()}, "ids": list(id_table),
                                "r": filters})
    text = _script_json({"s": list(strings), "r": rows})
    encoding = "json"
    if len(text) > compress_above:
        text = base64.b64encode(zlib.compress(text.encode("utf-8"), 1)).decode("ascii")
        encoding = "deflate-base64"
    return Markup(filter_text), Markup(text), encoding  # noqa: S704 - see docstring


# ---------------------------------------------------------------- charts (geometry here, SVG in the template)


def _ticks(top: float, count: int = 4) -> list[float]:
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [round(step * i, 10) for i in range(count + 2) if step * (i - 1) < top]


def _accuracy_charts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Grouped bars of continuity accuracy per category (plus "all"), one chart per model."""
    rows = [r for r in summary.get("metrics") or [] if r.get("metric") == "continuity_accuracy"]
    arms = _run_arms(summary, rows)
    charts = []
    for model in sorted({str(r.get("model")) for r in rows}):
        mine = {(str(r.get("category")), str(r.get("arm"))): r for r in rows if str(r.get("model")) == model}
        categories = sorted({c for c, _ in mine}, key=lambda c: (c != "all", c))
        chart_arms = [a for a in arms if any((c, a) in mine for c in categories)]
        bar, gap, left, top, height = 18, 16, 40, 10, 180
        group = bar * len(chart_arms) + gap
        bars = []
        for ci, category in enumerate(categories):
            for ai, arm in enumerate(chart_arms):
                row = mine.get((category, arm))
                if row is None or not _is_number(row.get("value")):
                    continue
                value = min(max(float(row["value"]), 0.0), 1.0)
                bar_data = {"x": left + ci * group + ai * bar + gap / 2, "y": top + height * (1 - value),
                            "h": height * value, "w": bar - 2, "cls": _arm_class(arm, arms),
                            "title": f"{category} · {arm}: {format_metric(row, 'continuity_accuracy')} (n={row.get('n')})"}
                if _is_number(row.get("ci_low")) and _is_number(row.get("ci_high")):
                    bar_data["lo"] = top + height * (1 - min(max(row["ci_low"], 0.0), 1.0))
                    bar_data["hi"] = top + height * (1 - min(max(row["ci_high"], 0.0), 1.0))
                bars.append(bar_data)
        labels = [{"x": left + ci * group + group / 2, "text": _label(c)} for ci, c in enumerate(categories)]
        ticks = [{"y": top + height * (1 - t), "text": f"{t:.2f}"} for t in (0, 0.25, 0.5, 0.75, 1.0)]
        charts.append({"model": model, "bars": bars, "labels": labels, "ticks": ticks, "left": left,
                       "base": top + height, "width": left + len(categories) * group + 10, "height": top + height + 75,
                       "legend": [(a, _arm_class(a, arms)) for a in chart_arms]})
    return charts


def _quantile(ordered: list[float], q: float) -> float:
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _latency_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """Horizontal box plots: box 25th-75th percentile, line at the median, whiskers 5th-95th."""
    rows = []
    arms = _run_arms(summary, summary.get("latency") or [])

    def order(row: dict[str, Any]) -> tuple[str, int, str]:
        arm = str(row.get("arm"))
        return (str(row.get("model")), arms.index(arm) if arm in arms else len(arms), arm)

    for row in sorted(summary.get("latency") or [], key=order):
        values = sorted(float(v) for v in row.get("values_s") or [] if _is_number(v))
        if values:
            rows.append((row, values))
    if not rows:
        return None
    top_value = max(_quantile(values, 0.95) for _, values in rows) * 1.05 or 1.0
    ticks = _ticks(top_value)
    scale_top = ticks[-1]
    left, width, row_h = 260, 560, 30
    boxes = []
    for index, (row, values) in enumerate(rows):
        q = [_quantile(values, p) for p in (0.05, 0.25, 0.5, 0.75, 0.95)]
        xs = [left + width * min(v, scale_top) / scale_top for v in q]
        boxes.append({"y": 10 + index * row_h, "xs": xs, "cls": _arm_class(str(row.get("arm")), arms),
                      "label": f"{row.get('model')} · {row.get('arm')}",
                      "title": f"n={len(values)}, p50 {q[2]:.2f} s, p95 {q[4]:.2f} s"})
    axis_y = 10 + len(rows) * row_h
    return {"boxes": boxes, "left": left, "right": left + width, "axis_y": axis_y, "height": axis_y + 40,
            "width": left + width + 30,
            "ticks": [{"x": left + width * t / scale_top, "text": f"{t:g} s"} for t in ticks]}


def _tokens_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """Stacked horizontal bars of mean prompt, completion and tool-result tokens per model x arm."""
    parts = ("prompt_tokens", "completion_tokens", "tool_result_tokens")
    cells: dict[tuple[str, str], dict[str, float]] = {}
    for row in summary.get("metrics") or []:
        if row.get("category", "all") == "all" and row.get("metric") in parts and _is_number(row.get("value")):
            cells.setdefault((str(row.get("model")), str(row.get("arm"))), {})[row["metric"]] = float(row["value"])
    if not cells:
        return None
    arms = _run_arms(summary)
    keys = sorted(cells, key=lambda k: (k[0], arms.index(k[1]) if k[1] in arms else len(arms), k[1]))
    ticks = _ticks(max(sum(c.values()) for c in cells.values()))
    scale_top = ticks[-1] or 1.0
    left, width, row_h = 260, 560, 30
    bars = []
    for index, key in enumerate(keys):
        x, segments = float(left), []
        for part_index, part in enumerate(parts):
            value = cells[key].get(part, 0.0)
            w = width * value / scale_top
            segments.append({"x": x, "w": w, "cls": f"t{part_index}", "title": f"{_label(part)}: {value:,.0f}"})
            x += w
        bars.append({"y": 10 + index * row_h, "label": f"{key[0]} · {key[1]}", "segments": segments,
                     "total": f"{sum(cells[key].values()):,.0f}", "end": x})
    axis_y = 10 + len(keys) * row_h
    return {"bars": bars, "left": left, "right": left + width, "axis_y": axis_y, "height": axis_y + 40,
            "width": left + width + 90, "legend": [(_label(p), f"t{i}") for i, p in enumerate(parts)],
            "ticks": [{"x": left + width * t / scale_top, "text": f"{t:,.0f}"} for t in ticks]}
