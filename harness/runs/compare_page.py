"""``recall-eval compare A B --html OUT``: the comparison as one self-contained page.

At the top, what makes the two runs differ (every :class:`harness.runs.comparability.Difference`,
the run problems, and the request parameters of both runs side by side); then the
verdicts and the gate; then each metric of category "all" with both intervals and
the difference, regressions marked (latency and cost worse beyond the floors but
not asked to gate marked "not gated", never red); then the scenarios whose correct rate changed,
each linking to its samples' transcripts in both runs' reports
(``index.html#sample=ID``, relative to the page, so the folders can move together).

No script: the page is static HTML and inline CSS, autoescaped by Jinja2.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.report import label

#: Sample links per run and scenario row; the rest are counted.
SAMPLE_LINKS = 6


def report_link(run_dir: Path, page_dir: Path, sample_id: str | None = None) -> str:
    """A relative URL from a page in ``page_dir`` to ``run_dir``'s report (and a sample in it).

    Example:
        >>> report_link(Path("/r/nightly-2"), Path("/r"), "a|recall|m|0")
        'nightly-2/index.html#sample=a%7Crecall%7Cm%7C0'
    """
    target = os.path.relpath(Path(run_dir).absolute() / "index.html", Path(page_dir).absolute())
    url = quote(Path(target).as_posix())
    return url + (f"#sample={quote(sample_id, safe='')}" if sample_id else "")


def _parameter_rows(cmp: Any) -> list[dict[str, Any]]:
    """What was asked of the model in A and in B, row by row, those that differ marked."""
    def values(run: Any) -> dict[str, Any]:
        manifest = run.manifest
        def text(value: Any) -> Any:
            return "none" if value is None or value == [] else ", ".join(map(str, value)) if isinstance(value, list) else value

        shown = {"models": ", ".join(manifest.models), "arms": ", ".join(manifest.arms), "epochs": manifest.epochs,
                 "seed": manifest.seed, "scenarios": len(manifest.scenario_ids),
                 "suite hash": manifest.suite_hash[:12], "harness version": manifest.harness_version}
        parameters = (run.summary.get("run") or {}).get("parameters") or manifest.parameters
        for key in sorted(parameters):
            if key != "cache_dir":
                shown[key] = text(parameters[key])
        return shown

    a, b = values(cmp.a), values(cmp.b)
    return [{"name": key, "a": a.get(key, "—"), "b": b.get(key, "—"), "differs": a.get(key) != b.get(key)}
            for key in dict.fromkeys([*a, *b])]


def _metric_rows(cmp: Any) -> list[dict[str, Any]]:
    from harness.report import METRIC_ORDER, arm_order
    from harness.runs.compare import format_diff, format_row

    arms = arm_order(c.arm for c in cmp.metrics)

    def order(change: Any) -> tuple[Any, ...]:
        metric = METRIC_ORDER.index(change.metric) if change.metric in METRIC_ORDER else len(METRIC_ORDER)
        return (change.model, arms.index(change.arm), change.category != "all", metric, change.metric)

    rows = []
    for change in sorted(cmp.metrics, key=order):
        if change.category != "all" and not change.regression:
            continue
        name = label(change.metric) + ("" if change.category == "all" else f" ({change.category})")
        rows.append({"model": change.models, "arm": change.arm, "metric": name, "a": format_row(change.a),
                     "b": format_row(change.b), "diff": format_diff(change), "regression": change.regression,
                     "not_gated": change.not_gated, "changed": change.changed, **_paired_cells(change)})
    return rows


def _paired_cells(change: Any) -> dict[str, Any]:
    """The paired change B - A (interval, exact p) and its status, for a metric with a per-sample form."""
    from harness.analysis import describe

    if change.paired is None:
        return {"paired": "", "status": ""}
    return {"paired": describe(change.paired.evidence), "status": change.paired.status}


def _flip_rows(cmp: Any, page_dir: Path) -> list[dict[str, Any]]:
    """The scenarios whose correct rate changed, with links to their samples in A's and B's reports."""
    def index(samples: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
        found: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for s in samples:
            found.setdefault((str(s.get("model")), str(s.get("arm")), str(s.get("scenario_id"))), []).append(s)
        return found

    a_samples, b_samples = index(cmp.a.samples), index(cmp.b.samples)
    rows = []
    for change in cmp.scenarios:
        key = (change["model"], change["arm"], change["scenario_id"])
        links = []
        for side, run, samples in (("A", cmp.a, a_samples), ("B", cmp.b, b_samples)):
            members = sorted(samples.get(key, []), key=lambda s: s.get("epoch") or 0)
            shown = [(s.get("epoch"), report_link(run.path, page_dir, str(s.get("sample_id"))),
                      "✓" if s.get("outcome") in ("correct", "abstained_correctly") else "✗")
                     for s in members[:SAMPLE_LINKS]]
            links.append((side, shown, max(len(members) - SAMPLE_LINKS, 0)))
        title = next((s.get("title") for s in b_samples.get(key, []) + a_samples.get(key, []) if s.get("title")), "")
        rows.append({**change, "title": title, "links": links})
    rows.sort(key=lambda r: (r["change"] != "broken", r["model"], r["arm"], r["scenario_id"]))
    return rows


def render_compare(cmp: Any, page_dir: Path, *, force: bool = False) -> str:
    """The comparison page (``cmp`` a :class:`harness.runs.compare.Comparison`); links are relative to ``page_dir``."""
    from harness.report import page_environment

    compared = cmp.comparable or force
    context = {
        "a": {"path": str(cmp.a.path), "run_id": cmp.a.manifest.run_id, "verdict": cmp.verdict_a,
              "link": report_link(cmp.a.path, page_dir), "warnings": cmp.a.warnings},
        "b": {"path": str(cmp.b.path), "run_id": cmp.b.manifest.run_id, "verdict": cmp.verdict_b,
              "link": report_link(cmp.b.path, page_dir), "warnings": cmp.b.warnings},
        "comparable": cmp.comparable, "force": force, "compared": compared,
        "differences": [line for d in cmp.differences for line in d.lines()],
        "pairing": None if cmp.pairing is None else cmp.pairing.sentence(),
        "noted": [line for d in cmp.noted for line in d.lines()],
        "problems": list(cmp.problems),
        "only_in": {kind: sides for kind, sides in cmp.only_in.items() if sides[0] or sides[1]},
        "parameters": _parameter_rows(cmp),
        "metrics": _metric_rows(cmp) if compared else [],
        "flips": _flip_rows(cmp, page_dir) if compared else [],
        "regressions": len(cmp.regressions), "verdict_regression": cmp.verdict_regression,
        "not_gated": len(cmp.not_gated),
    }
    page = page_environment().get_template("compare.html.j2").render(context)
    return page.encode("utf-8", "replace").decode("utf-8")


def write_compare_page(cmp: Any, out: Path, *, force: bool = False) -> Path:
    """Render and write the page atomically; raises OSError when ``out`` cannot be written."""
    from harness.report import write_output

    out = Path(out)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    return write_output(out, render_compare(cmp, out.parent, force=force))
