"""Layout of the report's inline SVG charts: every coordinate, tick and tooltip text.

Each function turns the ``summary`` dict into plain data (numbers and texts)
that ``templates/_charts.html.j2`` draws as SVG; the template autoescapes
every text, so nothing here builds markup. ``None`` means "no chart".
"""

from __future__ import annotations

import math
from typing import Any

from harness.report.formatting import arm_class, format_metric, is_number, label, run_arms, seconds

_LEFT, _WIDTH, _ROW_H = 260, 560, 30  # horizontal charts: label column, plot width, row height


def _ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 past ``top`` (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [round(step * i, 10) for i in range(count + 2) if step * (i - 1) < top]


def _seconds_ticks(ticks: list[float]) -> list[str]:
    """Axis labels in one unit for the whole axis: ms when the axis ends below a second."""
    if ticks[-1] < 1.0:
        return [f"{round(t * 1000.0, 6):g} ms" if t else "0" for t in ticks]
    return [f"{t:g} s" for t in ticks]


def accuracy_charts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Grouped bars of continuity accuracy per category (plus "all"), one chart per model."""
    rows = [r for r in summary.get("metrics") or [] if r.get("metric") == "continuity_accuracy"]
    arms = run_arms(summary, rows)
    charts = []
    for model in sorted({str(r.get("model")) for r in rows}):
        mine = {(str(r.get("category")), str(r.get("arm"))): r for r in rows if str(r.get("model")) == model}
        categories = sorted({c for c, _ in mine}, key=lambda c: (c != "all", c))
        chart_arms = [a for a in arms if any((c, a) in mine for c in categories)]
        bar, gap, left, top, height = 18, 16, 40, 10, 180
        group = bar * len(chart_arms) + gap
        bars, missing = [], []
        for ci, category in enumerate(categories):
            for ai, arm in enumerate(chart_arms):
                row = mine.get((category, arm))
                x = left + ci * group + ai * bar + gap / 2
                if row is None or not is_number(row.get("value")):
                    # no scored sample: said in words, never drawn as a zero bar
                    missing.append({"x": x + (bar - 2) / 2, "y": top + height - 4,
                                    "title": f"{category} · {arm}: no data (n=0)"})
                    continue
                value = min(max(float(row["value"]), 0.0), 1.0)
                shown = format_metric(row, "continuity_accuracy")
                bar_data = {"x": x, "y": top + height * (1 - value),
                            "h": height * value, "w": bar - 2, "cls": arm_class(arm, arms), "zero": value == 0.0,
                            "title": f"{category} · {arm}: {shown} (n={row.get('n')})"}
                if is_number(row.get("ci_low")) and is_number(row.get("ci_high")):
                    bar_data["lo"] = top + height * (1 - min(max(row["ci_low"], 0.0), 1.0))
                    bar_data["hi"] = top + height * (1 - min(max(row["ci_high"], 0.0), 1.0))
                bars.append(bar_data)
        labels = [{"x": left + ci * group + group / 2, "text": f"{label(c)} ({_n_text(mine, c, chart_arms)})"}
                  for ci, c in enumerate(categories)]
        ticks = [{"y": top + height * (1 - t), "text": f"{t:.2f}"} for t in (0, 0.25, 0.5, 0.75, 1.0)]
        charts.append({"model": model, "bars": bars, "missing": missing, "labels": labels, "ticks": ticks, "left": left,
                       "base": top + height, "width": left + len(categories) * group + 10, "height": top + height + 115,
                       "legend": [(a, arm_class(a, arms)) for a in chart_arms]})
    return charts


def _n_text(cells: dict[tuple[str, str], dict[str, Any]], category: str, arms: list[str]) -> str:
    """``n=8`` when every arm scored as many samples of the category, else ``n=8/7/8`` in arm order."""
    counts = [cells[(category, arm)].get("n") if (category, arm) in cells else 0 for arm in arms]
    counts = [n if isinstance(n, int) else 0 for n in counts]
    return f"n={counts[0]}" if len(set(counts)) == 1 else "n=" + "/".join(str(n) for n in counts)


_EFFECT_LEFT, _EFFECT_WIDTH, _EFFECT_TEXT = 200, 420, 230  # label column, plot width, value column


def _effect_scale(values: list[float]) -> tuple[float, float]:
    """(half-width of the symmetric axis, tick step): at least 0.1, at most 1, on a round step."""
    top = min(max([abs(v) for v in values] + [0.1]), 1.0)
    step = next(s for s in (0.05, 0.1, 0.2, 0.25, 0.5) if top / s <= 4)
    return min(math.ceil(top / step - 1e-9) * step, 1.0), step


def effect_charts(summary: dict[str, Any], metric: str = "continuity_accuracy") -> list[dict[str, Any]]:
    """The paired difference (treatment - baseline) of ``metric`` per category, with its interval and n.

    One chart per model x comparison, from ``paired`` rows (their ``category``:
    "all" or a category; a row without one counts as "all"). A category the
    model has samples in but no paired row for is drawn as "no paired data",
    never as a zero bar; a zero difference is drawn as a dot on the zero line.
    """
    rows = [r for r in summary.get("paired") or [] if r.get("metric") == metric]
    known: dict[str, set[str]] = {}
    for r in summary.get("metrics") or []:
        if r.get("metric") == "continuity_accuracy" and r.get("category") not in (None, "all"):
            known.setdefault(str(r.get("model")), set()).add(str(r.get("category")))
    arms = run_arms(summary)
    blocks: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        key = (str(r.get("model")), str(r.get("arm_a")), str(r.get("arm_b")))
        blocks.setdefault(key, {})[str(r.get("category") or "all")] = r

    def order(key: tuple[str, str, str]) -> tuple[Any, ...]:
        return (key[0], *(arms.index(a) if a in arms else len(arms) for a in key[1:]), key)

    charts = []
    for key in sorted(blocks, key=order):
        mine = blocks[key]
        # Categories the model ran but the comparison lacks show as missing, once the aggregate breaks
        # differences down by category at all (older summaries have only the overall row).
        expected = known.get(key[0], set()) if len(mine) > 1 or "all" not in mine else set()
        categories = ["all", *sorted((expected | set(mine)) - {"all"})]
        numbers = [float(r[k]) for r in mine.values() for k in ("diff", "ci_low", "ci_high") if is_number(r.get(k))]
        half, step = _effect_scale(numbers)

        def x(value: float, half: float = half) -> float:
            return _EFFECT_LEFT + _EFFECT_WIDTH * (min(max(value, -half), half) + half) / (2 * half)

        items = []
        for index, category in enumerate(categories):
            y = 10 + index * _ROW_H
            row = mine.get(category)
            n = row.get("n_scenarios") if row else None
            name = f"{label(category)} (n={n})" if row else label(category)
            if row is None or not is_number(row.get("diff")):
                items.append({"y": y, "label": name, "missing": True, "text": "no paired data",
                              "title": f"{category}: no scenario ran in both arms"})
                continue
            diff = float(row["diff"])
            item: dict[str, Any] = {"y": y, "label": name, "missing": False, "x0": x(0.0), "x": x(diff),
                    "cls": "pos" if diff > 0 else "neg" if diff < 0 else "zero",
                    "text": f"{diff:+.2f}", "title": f"{category}: {diff:+.3f}"}
            if is_number(row.get("ci_low")) and is_number(row.get("ci_high")):
                item.update(lo=x(float(row["ci_low"])), hi=x(float(row["ci_high"])))
                item["text"] += f" [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]"
                item["title"] += f" [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
            item["text"] += f" · n={n}"
            item["title"] += f", {n} paired scenario(s)"
            items.append(item)
        ticks = [round(-half + step * i, 10) for i in range(int(round(2 * half / step)) + 1)]
        axis_y = 10 + len(categories) * _ROW_H
        charts.append({"model": key[0], "arm_a": key[1], "arm_b": key[2], "metric": metric, "rows": items,
                       "left": _EFFECT_LEFT, "right": _EFFECT_LEFT + _EFFECT_WIDTH, "zero": x(0.0),
                       "axis_y": axis_y, "height": axis_y + 40, "width": _EFFECT_LEFT + _EFFECT_WIDTH + _EFFECT_TEXT,
                       "ticks": [{"x": x(t), "text": f"{t:+.2f}" if t else "0"} for t in ticks]})
    return charts


def _quantile(ordered: list[float], q: float) -> float:
    """The harness's one quantile definition, so the chart's p50/p95 are the summary's."""
    from harness.analysis import quantile

    return quantile(ordered, q) or 0.0


def latency_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """Horizontal box plots: box 25th-75th percentile, line at the median, whiskers 5th-95th."""
    rows = []
    arms = run_arms(summary, summary.get("latency") or [])

    def order(row: dict[str, Any]) -> tuple[str, int, str]:
        arm = str(row.get("arm"))
        return (str(row.get("model")), arms.index(arm) if arm in arms else len(arms), arm)

    for row in sorted(summary.get("latency") or [], key=order):
        values = sorted(float(v) for v in row.get("values_s") or [] if is_number(v))
        if values:
            rows.append((row, values))
    if not rows:
        return None
    ticks = _ticks(max(_quantile(values, 0.95) for _, values in rows) * 1.05 or 1.0)
    scale_top = ticks[-1]
    boxes = []
    for index, (row, values) in enumerate(rows):
        q = [_quantile(values, p) for p in (0.05, 0.25, 0.5, 0.75, 0.95)]
        xs = [_LEFT + _WIDTH * min(v, scale_top) / scale_top for v in q]
        boxes.append({"y": 10 + index * _ROW_H, "xs": xs, "cls": arm_class(str(row.get("arm")), arms),
                      "label": f"{row.get('model')} · {row.get('arm')}",
                      "title": f"n={len(values)}, p50 {seconds(q[2])}, p95 {seconds(q[4])}"})
    axis_y = 10 + len(rows) * _ROW_H
    return {"boxes": boxes, "left": _LEFT, "right": _LEFT + _WIDTH, "axis_y": axis_y, "height": axis_y + 40,
            "width": _LEFT + _WIDTH + 30,
            "ticks": [{"x": _LEFT + _WIDTH * t / scale_top, "text": text}
                      for t, text in zip(ticks, _seconds_ticks(ticks))]}


def tokens_chart(summary: dict[str, Any]) -> dict[str, Any] | None:
    """Stacked horizontal bars of mean prompt, completion and tool-result tokens per model x arm."""
    parts = ("prompt_tokens", "completion_tokens", "tool_result_tokens")
    cells: dict[tuple[str, str], dict[str, float]] = {}
    for row in summary.get("metrics") or []:
        if row.get("category", "all") == "all" and row.get("metric") in parts and is_number(row.get("value")):
            cells.setdefault((str(row.get("model")), str(row.get("arm"))), {})[row["metric"]] = float(row["value"])
    if not cells:
        return None
    arms = run_arms(summary)
    keys = sorted(cells, key=lambda k: (k[0], arms.index(k[1]) if k[1] in arms else len(arms), k[1]))
    ticks = _ticks(max(sum(c.values()) for c in cells.values()))
    scale_top = ticks[-1] or 1.0
    bars = []
    for index, key in enumerate(keys):
        x, segments = float(_LEFT), []
        for part_index, part in enumerate(parts):
            value = cells[key].get(part, 0.0)
            w = _WIDTH * value / scale_top
            segments.append({"x": x, "w": w, "cls": f"t{part_index}", "title": f"{label(part)}: {value:,.0f}"})
            x += w
        bars.append({"y": 10 + index * _ROW_H, "label": f"{key[0]} · {key[1]}", "segments": segments,
                     "total": f"{sum(cells[key].values()):,.0f}", "end": x})
    axis_y = 10 + len(keys) * _ROW_H
    return {"bars": bars, "left": _LEFT, "right": _LEFT + _WIDTH, "axis_y": axis_y, "height": axis_y + 40,
            "width": _LEFT + _WIDTH + 90, "legend": [(label(p), f"t{i}") for i, p in enumerate(parts)],
            "ticks": [{"x": _LEFT + _WIDTH * t / scale_top, "text": f"{t:,.0f}"} for t in ticks]}
