"""What ``run`` and ``report`` print at their end, in the same words: a per-arm table, then the verdict.

The table has one row per model x arm: continuity accuracy with its 95%
interval, the unsupported-claim rate, leaks (tool-level count / answers with a
leaked canary), errors, tokens and cost per sample, and samples replayed from
the cache. When some arm wrote memory through the agent (a write phase), the
tokens read ``probe + write`` per sample and a column gives model calls the
same way, so the cost of building memory stands beside the probe's. Then the lead headlines, ``verdict: STATUS``, each check of each
model marked ``✓ pass``, ``✗ fail`` or ``? undecided`` (the words of the HTML
report), and the notes. The leads come first: they say what to know before trusting any number.
A suite with a protocol also gets its per-category table in its paper's order
(:func:`protocol_table`), the categories reported apart marked so; a suite
that asks to forget gets the forgetting table (:mod:`harness.report.forgetting`).
Plain text with no colour codes, so CI logs read the
same as a terminal.

Example of the table (it fits 80 columns for the built-in arms; long notes are wrapped to 80)::

    model · arm            continuity  unsupported  leaks  errors  tokens  cost
    offline/reference
      history_only  0.20 [0.10, 0.30]         0.00    0/0    0/60     211    $0
    continuity [95% CI]; leaks tool-level/answers; tokens and cost per sample
    cached: 0/60 in every arm (samples replayed from the response cache)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.report.forgetting import LEGEND as FORGETTING_LEGEND
from harness.report.forgetting import forgetting_lines

__all__ = ["arm_table", "check_mark", "protocol_table", "report_lines", "wrap_line"]

_HEADER = ("model · arm", "continuity", "unsupported", "leaks", "errors", "tokens", "cost")
_LEGEND = "continuity [95% CI]; leaks tool-level/answers; tokens and cost per sample"


def check_mark(passed: Any) -> str:
    """``✓ pass``, ``✗ fail`` or ``? undecided``: the words the HTML report's check table uses."""
    return "✓ pass" if passed is True else "✗ fail" if passed is False else "? undecided"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rate(row: Mapping[str, Any] | None, interval: bool = False) -> str:
    if not row or not _number(row.get("value")):
        return "n/a"
    text = f"{row['value']:.2f}"
    if interval and _number(row.get("ci_low")) and _number(row.get("ci_high")):
        text += f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"
    return text


def _count(row: Mapping[str, Any] | None, of_samples: bool) -> int | None:
    """A count from a metrics row: a rate times its n, or the value itself (a count metric)."""
    if not row or not _number(row.get("value")):
        return None
    return round(row["value"] * (row.get("n") or 0)) if of_samples else round(row["value"])


def _cost(row: Mapping[str, Any] | None) -> str:
    if not row or not _number(row.get("value")):
        return "unknown"
    return f"${row['value']:.4g}" if row["value"] else "$0"


_WRITE_TOKENS = ("write_prompt_tokens", "write_completion_tokens")


def _sum(metrics: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> float | None:
    """The sum of the named per-sample means that are numbers; None when none is."""
    values = [metrics[k]["value"] for k in names if k in metrics and _number(metrics[k].get("value"))]
    return sum(values) if values else None


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _calls(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _cached_line(cached: Mapping[str, str]) -> str:
    """``cached: 0/60 in every arm`` (or per arm when they differ): samples replayed from the response cache."""
    counts = set(cached.values())
    if len(counts) == 1:
        return f"cached: {counts.pop()} in every arm (samples replayed from the response cache)"
    return "cached: " + ", ".join(f"{arm} {count}" for arm, count in cached.items())


def arm_table(summary: Mapping[str, Any]) -> list[str]:
    """The per-arm table as aligned lines (header first), fitting 80 columns for the built-in arms.

    Under the header each model has a line of its own and its arms an
    indented row each (with a suite protocol, continuity is the headline's, as the verdict decides it); a legend
    line and the cached samples follow. Empty when
    the summary has no metrics.
    """
    cells: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    headline: dict[tuple[str, str], Mapping[str, Any]] = {}  # a suite with a protocol: the verdict's continuity
    for row in summary.get("metrics") or []:
        key = (str(row.get("model")), str(row.get("arm")))
        if row.get("category", "all") == "all":
            cells.setdefault(key, {})[str(row.get("metric"))] = row
        elif row.get("category") == "headline" and row.get("metric") == "continuity_accuracy":
            headline[key] = row
    if not cells:
        return []
    from harness.report.formatting import run_arms

    arms = run_arms(dict(summary), [{"arm": arm} for _, arm in cells])
    keys = sorted(cells, key=lambda k: (k[0], arms.index(k[1]) if k[1] in arms else len(arms), k[1]))
    written = any(_number((m.get("write_model_calls") or {}).get("value")) and m["write_model_calls"]["value"] > 0
                  for m in cells.values())
    header = _HEADER if not written else (*_HEADER[:5], "tokens/sample probe + write", "model calls probe + write",
                                          *_HEADER[6:])
    rows: list[tuple[str, ...] | str] = [header]
    cached_by_arm: dict[str, str] = {}
    model_seen = None
    for model, arm in keys:
        if model != model_seen:
            rows.append(model)
            model_seen = model
        m = cells[(model, arm)]
        samples = (m.get("error_rate") or {}).get("n")
        errors = _count(m.get("error_rate"), of_samples=True)
        tool_leaks = _count(m.get("tool_leakage_count"), of_samples=False)
        answer_leaks = _count(m.get("answer_leakage_rate"), of_samples=True)
        tokens = _sum(m, ("prompt_tokens", "completion_tokens"))
        cached = _count(m.get("cached_samples"), of_samples=False)
        total = "?" if samples is None else str(samples)
        cached_by_arm[arm if len({k[0] for k in keys}) == 1 else f"{model} · {arm}"] = (
            f"{'?' if cached is None else cached}/{total}")
        rows.append((
            f"  {arm}",
            _rate(headline.get((model, arm)) if summary.get("protocol") else m.get("continuity_accuracy"), interval=True),
            _rate(m.get("unsupported_claim_rate")),
            f"{'?' if tool_leaks is None else tool_leaks}/{'?' if answer_leaks is None else answer_leaks}",
            f"{'?' if errors is None else errors}/{total}",
            _tokens(tokens) + (f" + {_tokens(_sum(m, _WRITE_TOKENS))}" if written else ""),
            *((f"{_calls(_sum(m, ('model_calls',)))} + {_calls(_sum(m, ('write_model_calls',)))}",) if written else ()),
            _cost(m.get("cost_usd")),
        ))
    table = [r for r in rows if isinstance(r, tuple)]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [r if isinstance(r, str) else
             "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             .rstrip() for r in rows]
    legend = _LEGEND if not summary.get("protocol") else (
        "headline continuity [95% CI]; leaks tool-level/answers; tokens, cost per sample")
    return [*lines, legend, _cached_line(cached_by_arm)]


_GROUP_WORDS = {"headline": "headline", "apart": "reported apart", "not_judged": "not judged"}


def _cell_text(cell: Mapping[str, Any] | None, group: str) -> str:
    if not cell:
        return "-"
    text = "not judged" if group == "not_judged" and cell.get("accuracy") is None else (
        f"{_rate({'value': cell.get('accuracy')})} ({cell.get('n')})")
    if cell.get("recall_n"):
        text += f" r {_rate({'value': cell.get('retrieved_recall')})} ({cell['recall_n']})"
    return text


def protocol_table(summary: Mapping[str, Any]) -> list[str]:
    """The per-category table of a suite with a protocol, in its paper's order (empty without a protocol).

    One row per category with its group (headline, reported apart, not
    judged), its scenarios and those without a relevant item, and per arm the
    accuracy with its n and, where retrieval ran, ``r`` the retrieved-item recall with its n.
    """
    protocol = summary.get("protocol")
    if not protocol:
        return []
    lines: list[str] = []
    for table in protocol.get("tables") or []:
        arms = list(table.get("arms") or [])
        rows = [("category", "group", "scenarios", "no relevant item", *arms)]
        for row in table.get("rows") or []:
            cells = row.get("arms") or {}
            rows.append((str(row.get("category")), _GROUP_WORDS.get(str(row.get("group")), str(row.get("group"))),
                         str(row.get("scenarios")), str(row.get("no_relevant_item")),
                         *(_cell_text(cells.get(a), str(row.get("group"))) for a in arms)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines.append(f"by category, as the suite's protocol reports it ({protocol.get('name')}; "
                     f"{table.get('model')}): accuracy (n), r = retrieved-item recall (n)")
        lines += ["  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    return lines


def _check_lines(summary: Mapping[str, Any]) -> list[str]:
    per_model = (summary.get("verdict") or {}).get("per_model") or {}
    several = len(per_model) > 1
    lines = []
    for model in sorted(per_model):
        for check in per_model[model].get("checks") or []:
            prefix = f"{model}: " if several else ""
            mark = "· apart" if check.get("gates") is False else check_mark(check.get("passed"))
            lines.append(f"  {mark}  {prefix}{check.get('reason')}")
    return lines


def report_lines(outcome: Any) -> tuple[list[str], list[str]]:
    """``(stdout lines, stderr lines)`` that ``run`` and ``report`` print for a built report.

    The lead headlines, the per-arm table, ``verdict: STATUS``, each check
    marked pass/fail/undecided (or, for an outcome without a summary, the
    verdict's reasons), then the notes; warnings go to stderr.
    """
    from harness.analysis import terminal_lines

    summary = getattr(outcome, "summary", None) or {}
    out, err = terminal_lines(outcome, upper=True)
    verdict_at = next((i for i, line in enumerate(out) if line.startswith("verdict: ")), None)
    if verdict_at is None:  # no verdict line to place the table and checks around: print what the verdict said
        return out, err
    checks = [piece for line in _check_lines(summary) for piece in wrap_line(line)]  # a check's mark stays first
    if checks:
        said = set(out[:verdict_at])
        rest = [line for line in out[verdict_at + 1:] if not line.startswith("  - ")]
        extra = [f"  - {r}" for r in outcome.reasons if r not in said and not _is_check_reason(r, summary)]
        out = [*out[:verdict_at + 1], *extra, *checks, *rest]
    # leads, notes and checks wrap to 80 columns (a check's mark stays on its first line, so `grep '✗ fail'` still
    # finds it; a path never breaks, it only moves to the next line)
    out = [piece for line in out for piece in wrap_line(line)]
    err = [piece for line in err for piece in wrap_line(line)]
    verdict_at = out.index(next(line for line in out if line.startswith("verdict: ")))
    table = arm_table(summary)
    by_category = protocol_table(summary)
    if by_category:
        table = [*table, "", *by_category]
    forgetting = forgetting_lines(summary.get("forgetting") or [], WIDTH)
    if forgetting and table:  # what each arm did with forget requests, beside its mechanism
        table = [*table, "", *forgetting, *wrap_line(FORGETTING_LEGEND)]
    table = [*table, *head_to_head_lines(summary)]
    if table:  # after the leads (what to know before trusting any number), before the verdict
        out = [*out[:verdict_at], *table, "", *out[verdict_at:]]
    from harness.report.pairwise import pairwise_terminal_lines
    from harness.report.shadow import shadow_terminal_lines

    extra = shadow_terminal_lines(summary.get("shadow")) + pairwise_terminal_lines(summary.get("pairwise"))
    return out + judge_spread_lines(summary) + extra, err


def head_to_head_lines(summary: Mapping[str, Any]) -> list[str]:
    """The systems table and the layer ladder, for a run with an arm beyond the default three (a head-to-head run).

    A default run's terminal output stays as it was; its page and ``summary.json`` have both sections.
    """
    from harness.defaults import DEFAULT_ARMS
    from harness.report.contracts import contracts_lines
    from harness.report.layers import layers_lines
    from harness.report.systems import systems_lines

    arms = {str(r.get("arm")) for r in summary.get("systems") or [] if isinstance(r, Mapping)}
    if not arms - set(DEFAULT_ARMS):
        return []
    from harness.report.document_v03 import document_v03_lines

    systems, layers = systems_lines(summary, WIDTH) + contracts_lines(summary, WIDTH), layers_lines(summary, WIDTH)
    v03 = document_v03_lines(summary)
    return [*([""] if systems else []), *systems, *([""] if v03 else []), *v03, *([""] if layers else []), *layers]


def judge_spread_lines(summary: Mapping[str, Any]) -> list[str]:
    """With two or more judges recorded: one line per model · arm, its accuracy range over the judges.

    Example:
        >>> judge_spread_lines({"judge_sensitivity": {"judges": [{}, {}], "spread": [
        ...     {"model": "m", "arm": "recall", "judges": 2, "min": 0.5, "max": 0.7, "spread": 0.2}]}})
        ['judge sensitivity (2 judges):', '  m · recall: continuity 0.50-0.70 (spread 0.20)']
    """
    found = summary.get("judge_sensitivity") or {}
    judges = found.get("judges") or []
    if len(judges) < 2:
        return []
    return [f"judge sensitivity ({len(judges)} judges):"] + [
        f"  {r['model']} · {r['arm']}: continuity {r['min']:.2f}-{r['max']:.2f} (spread {r['spread']:.2f})"
        for r in found.get("spread") or []]


#: Terminal width the printed lines keep to (CI logs and an 80-column terminal read the same).
WIDTH = 80


def wrap_line(line: str, width: int | None = None) -> list[str]:
    """A line longer than ``width`` (the terminal's: 80 when piped) broken at spaces, its continuation indented
    under its text.

    Example:
        >>> wrap_line("note: " + "word " * 20, 40)[1]
        '      word word word word word word word'
    """
    if width is None:
        from harness.wrapping import terminal_width

        width = terminal_width()
    if len(line) <= width:
        return [line]
    import re
    import textwrap

    lead = re.match(r"(note: |warning: |error: |  [✓✗?·] \w+  |  - |\s*)", line)
    indent = " " * len(lead.group(1)) if lead else ""
    # "about 9,545 scenarios": an estimate stays with its number (a no-break space textwrap does not split at)
    glued = re.sub(r"\babout (?=\d)", "about\u00a0", line)
    return [piece.replace("\u00a0", " ") for piece in
            textwrap.wrap(glued, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)]


def _is_check_reason(reason: str, summary: Mapping[str, Any]) -> bool:
    """True when ``reason`` is a check's reason (possibly prefixed by its model), printed as a check line instead."""
    per_model = (summary.get("verdict") or {}).get("per_model") or {}
    texts: Sequence[str] = [str(c.get("reason")) for v in per_model.values() for c in v.get("checks") or []]
    return any(reason == t or reason.endswith(": " + t) for t in texts)
