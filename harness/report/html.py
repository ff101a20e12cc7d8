"""The self-contained ``index.html`` of a run: verdict, metrics, charts, flips and one panel per sample.

The page needs no network: CSS and JavaScript are inlined, charts are inline SVG
laid out in :mod:`harness.report.charts` and drawn by the template. Everything a
model or a scenario wrote is escaped by Jinja2's autoescape. Transcripts, tool
calls, score reasons and answer keys travel in one embedded JSON blob
(:mod:`harness.report.page_data`) that a small script turns into DOM nodes with
``textContent`` only when a panel is opened. Without JavaScript every panel
still shows its header, answer, scores and costs, and every panel is visible.
Units and labels come from :mod:`harness.report.formatting`.

Example:
    >>> from harness.report.html import render_html
    >>> page = render_html(summary, samples)  # doctest: +SKIP
    >>> Path("index.html").write_text(page, encoding="utf-8")  # doctest: +SKIP
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, get_args

import jinja2

from harness.records import sendable
from harness.report import charts
from harness.report import formatting as fmt
from harness.report.document_v03 import document_v03_section
from harness.report.forgetting import HTML_COLUMNS as FORGETTING_COLUMNS
from harness.report.forgetting import forgetting_section
from harness.report.formatting import format_metric, label
from harness.report.grid import scenario_grid
from harness.report.layers import layers_section
from harness.report.page_data import data_blobs
from harness.report.pairwise import pairwise_section
from harness.report.paper_tables import paper_tables
from harness.report.shadow import shadow_section
from harness.report.summary_tables import (
    METRIC_ORDER,
    category_tables,
    judge_sensitivity,
    metric_tables,
    paired_rows,
    protocol_tables,
    unsupported_kinds,
    verdict_reasons,
)
from harness.report.systems import systems_section
from harness.report.verdict_box import verdict_box
from harness.report.write_path import PAIR_COLUMNS, STAGE_COLUMNS, WRITE_COLUMNS, write_path_section
from harness.score import CORRECT_OUTCOMES, Outcome

__all__ = ["METRIC_ORDER", "format_metric", "render_html"]

_TEMPLATES = Path(__file__).parent / "templates"
_OUTCOMES: tuple[str, ...] = get_args(Outcome)
_COMPRESS_ABOVE = 1_500_000  # characters of transcript JSON; smaller reports stay plain (greppable) JSON


def render_html(summary: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    """The report page as one string (:func:`render_page`'s pieces joined); write it with ``encoding="utf-8"``."""
    return "".join(render_page(summary, samples))


def render_page(summary: dict[str, Any], samples: list[dict[str, Any]]) -> list[str]:
    """Render the report page, in pieces.

    Args:
        summary: the ``summary.json`` dict (see the report contract); missing
            sections render as "not available" rather than failing.
        samples: one dict per sample record, with its scores and outcome.

    Returns:
        The whole page in the pieces the template produced, rendered to the end (so a template error
        raises before anything is written); the embedded transcripts are the pieces
        :func:`data_blobs` made, never joined. Written piece by piece (:func:`harness.report.outputs.write_index_html`),
        a page is never joined into a second copy of itself: a LongMemEval S page is hundreds of MB.
    """
    ordered = _sorted_samples(samples, summary)
    filters_json, transcripts, encoding = data_blobs(ordered, _COMPRESS_ABOVE,
                                                     (summary.get("run") or {}).get("parameters"))
    context = {
        "summary": summary,
        "run": summary.get("run") or {},
        "verdict": summary.get("verdict") or {},
        "headlines": [h for h in summary.get("headlines") or [] if isinstance(h, dict)],
        "reasons": verdict_reasons(summary),
        "box": verdict_box(summary, ordered),
        "tool_use": summary.get("tool_use") or [],
        "unsupported_kinds": unsupported_kinds(summary),
        "category_tables": [] if summary.get("protocol") else category_tables(summary),
        "protocol": summary.get("protocol"),
        "protocol_tables": protocol_tables(summary),
        "paper_tables": paper_tables(summary),
        "judge_sensitivity": judge_sensitivity(summary),
        "effect_charts": charts.effect_charts(summary),
        "judge": summary.get("judge"),
        "metric_tables": metric_tables(summary),
        "write_path": write_path_section(summary),
        "forgetting": forgetting_section(summary),
        "shadow": shadow_section(summary),
        "pairwise": pairwise_section(summary),
        "systems": systems_section(summary),
        "layers": layers_section(summary),
        "document_v03": document_v03_section(summary),
        "paired": paired_rows(summary),
        "latency_added": summary.get("added_latency") or [],
        "flips": _flip_rows(summary, ordered),
        "grid": scenario_grid(ordered, summary),
        "accuracy_charts": charts.accuracy_charts(summary),
        "latency_chart": charts.latency_chart(summary),
        "tokens_chart": charts.tokens_chart(summary),
        "panels": [_panel(sample) for sample in ordered],
        "filters": _filter_options(ordered),
        "filters_json": filters_json,
        "transcripts": transcripts,
        "transcripts_encoding": encoding,
    }
    pieces = page_environment().get_template("index.html.j2").generate(context)
    return [sendable(piece) for piece in pieces]  # a model's lone surrogates shown as U+FFFD (the data keeps escapes)


# ---------------------------------------------------------------- environment


def _autoescape(name: str | None) -> bool:
    # Only the static, data-free style sheet and script are included unescaped.
    return not (name or "").endswith((".css", ".js"))


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's per-user cache of compiled templates (in the temp folder, private to the user).

    Compiling the page's templates costs about a quarter of a second per
    report, a twentieth of a benchmark-sized one. Entries are keyed by the
    template's source, so an edited template is compiled again. A cache that
    cannot be read or written (a full or read-only disk) is skipped: the page
    is the same without it.
    """

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            pass

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    try:
        return _BytecodeCache()
    except (OSError, RuntimeError):  # no private cache folder can be made: compile every time
        return None


@lru_cache(maxsize=1)
def page_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        bytecode_cache=_bytecode_cache(),
        autoescape=_autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.ChainableUndefined,
    )
    env.filters.update(metric=format_metric, num=fmt.num, signed=fmt.signed, pvalue=fmt.pvalue,
                       paired=fmt.paired_diff, seconds=fmt.seconds)
    env.globals.update(arm_class=fmt.arm_class, label=fmt.label, seconds_interval=fmt.seconds_interval,
                       write_columns=[h for _, h in WRITE_COLUMNS], stage_columns=[h for _, h in STAGE_COLUMNS],
                       pair_columns=[h for _, h in PAIR_COLUMNS],
                       forgetting_columns=[h for h, _ in FORGETTING_COLUMNS])
    return env


# ---------------------------------------------------------------- tables


_FLIP_LINKS = 6  # per arm; with many epochs the rest are counted, not listed


def _flip_rows(summary: dict[str, Any], samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flips with links to the panels of both arms' samples of that scenario and model.

    Per arm the samples that show the flip come first (for "fixed": the baseline's
    wrong answers and the treatment's right ones), at most ``_FLIP_LINKS`` of them.
    """
    panels: dict[tuple[str, str, str], list[tuple[Any, str, bool]]] = {}
    for sample in samples:
        key = (str(sample.get("scenario_id")), str(sample.get("model")), str(sample.get("arm")))
        panels.setdefault(key, []).append((sample.get("epoch"), sample["_pid"], sample["_outcome"] in CORRECT_OUTCOMES))
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
    arms = fmt.run_arms(summary, samples)
    rank = {arm: index for index, arm in enumerate(arms)}

    def order(sample: dict[str, Any]) -> tuple[Any, ...]:
        epoch = sample.get("epoch")
        return (str(sample.get("scenario_id")), str(sample.get("model")), rank.get(str(sample.get("arm")), len(rank)),
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
    kinds = sample.get("unsupported_kinds")
    split = ""
    if isinstance(kinds, dict) and kinds:  # the unsupported-claim count split by kind
        split = " (" + ", ".join(f"{label(kind)} {n}" for kind, n in sorted(kinds.items())) + ")"
    scores = " · ".join(
        f"{score.get('name')} {fmt.score_value(score.get('value'))}"
        f"{split if score.get('name') == 'unsupported_claims' else ''}{_mark(score.get('passed'))}"
        for score in sample.get("scores") or []
        if isinstance(score, dict)
    )
    cost = sample.get("cost_usd")
    replay = " (cache replay)" if sample.get("cached") is True else ""
    costs = (
        f"tokens {fmt.num(sample.get('prompt_tokens'))} prompt · "
        f"{fmt.num(sample.get('completion_tokens'))} completion · "
        f"{fmt.num(sample.get('tool_result_tokens'))} tool result · cost "
        f"{f'${cost:.4g}' if fmt.is_number(cost) else 'unknown'} · {fmt.seconds(sample.get('latency_s'))}{replay} · "
        f"stop {sample.get('stop_reason')}"
    )
    if sample.get("write_model_calls"):  # apart from the probe's figures above
        costs += f" · write phase {fmt.num(sample.get('write_model_calls'))} model calls, {fmt.num(sample.get('write_tokens'))} tokens"
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
        "arm": fmt.arm_order(str(s.get("arm")) for s in samples),
        "category": values("category"),
        "model": values("model"),
        "outcome": [o for o in _OUTCOMES if o in outcomes] + sorted(outcomes - set(_OUTCOMES)),
    }
