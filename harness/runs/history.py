"""``recall-eval history DIR... --out FILE``: the verdict and key metrics of many runs over time, on one page.

For nightly runs: a CI keeps its run folders (``reports/nightly-*``); this
reads each one's ``summary.json`` (never the results: it is fast and changes
nothing) and writes one self-contained page. Per model, three charts over the
runs in time order: the paired continuity difference (treatment - baseline)
and the unsupported-claim difference, each with its 95% interval as a band,
and continuity accuracy per arm with its band; every point is coloured by the
run's verdict and links to that run's report. A table lists every run.

A DIR is a run folder (it holds ``run.json``) or a folder of run folders.
A run without ``summary.json`` is skipped with a warning that says how to
build it (``recall-eval report DIR``); so is one whose ``summary.json`` cannot
be shown (not a regular file, NaN, a block of another type such as
``"verdict": "pass"``: :mod:`harness.runs.summary_file`), the warning naming the
file and the field. With no run left, one line and exit 2. Shard folders (``run --shard I/N``)
are left out unless ``--include-shards``: their merged run is the point.

Only like is joined to like: a *series* is a stretch of consecutive runs with
the same suite (hash, and the scenarios excluded), models, arms, judge, epochs,
seed and answer-changing parameters (:func:`series_key`). Where any of them
changes the series breaks: the charts' lines and bands stop and restart
across a dashed marker naming what changed, the runs table has a row saying
so, and the command prints it.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.regular_files import read_regular_text
from harness.runs.comparability import RESULT_PARAMETERS
from harness.runs.compare_page import report_link
from harness.runs.history_layout import LANE_HEIGHT, break_label_lanes, shown_dates
from harness.runs.summary_file import SummaryFileError, read_summary_file
from harness.wrapping import say, say_path

__all__ = ["HistoryError", "RunPoint", "cli_history", "find_runs", "history_charts", "read_points", "render_history",
           "series_breaks", "series_key"]

_LEFT, _PLOT_W, _PLOT_H, _TOP = 120, 640, 160, 14


class HistoryError(Exception):
    """No history can be drawn: a folder is missing or holds no run; the message says which."""


@dataclass(frozen=True)
class RunPoint:
    """What the history page shows of one run (read from its ``summary.json``)."""

    path: Path
    run_id: str
    started_at: str
    verdict: str
    treatment: str
    baseline: str
    summary: dict[str, Any] = field(repr=False)
    #: What the run's ``run.json`` says of its suite: ``scenarios`` (count), ``suite`` (the folder's name),
    #: ``shard`` (``I/N`` or None); empty when run.json cannot be read.
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def scenario_count(self) -> int | None:
        return self.manifest.get("scenarios")

    @property
    def shard(self) -> str | None:
        return self.manifest.get("shard")

    def suite_label(self) -> str:
        """``starter · 60 scenarios · abc38a3e5135``: the suite as the runs table shows it."""
        run = self.summary.get("run") or {}
        parts = [str(self.manifest.get("suite") or ""), f"{self.scenario_count} scenarios"
                 if self.scenario_count is not None else "", str(run.get("suite_hash") or "")[:12]]
        return " · ".join(p for p in parts if p) or "—"

    def models(self) -> list[str]:
        return sorted(str(m) for m in (self.summary.get("run") or {}).get("models") or [])

    def paired(self, model: str, metric: str) -> dict[str, Any] | None:
        """The overall paired difference treatment - baseline of ``metric`` for ``model``."""
        return next((r for r in self.summary.get("paired") or []
                     if r.get("category", "all") == "all" and r.get("model") == model and r.get("metric") == metric
                     and r.get("arm_a") == self.baseline and r.get("arm_b") == self.treatment), None)

    def metric(self, model: str, arm: str, metric: str) -> dict[str, Any] | None:
        return next((r for r in self.summary.get("metrics") or []
                     if r.get("category", "all") == "all" and r.get("model") == model and r.get("arm") == arm
                     and r.get("metric") == metric), None)


def series_key(point: RunPoint) -> dict[str, str]:
    """What must stay the same for two runs to share a series, as printable values by name."""
    run = point.summary.get("run") or {}
    parameters = run.get("parameters") or {}
    judge = point.summary.get("judge") or {}
    grounding = " + grounding" if isinstance(judge, dict) and judge.get("grounding") else ""
    key = {
        "suite": f"{str(run.get('suite_hash') or '?')[:12]} ({point.scenario_count if point.scenario_count is not None else '?'} scenarios)",
        "excluded scenarios": ", ".join(map(str, run.get("excluded_scenarios") or [])) or "none",
        "models": ", ".join(sorted(map(str, run.get("models") or []))) or "none",
        "arms": ", ".join(map(str, run.get("arms") or [])) or "none",
        "judge": str((judge.get("model") if isinstance(judge, dict) else None) or parameters.get("judge_model")
                     or "none") + grounding,
        "epochs": str(run.get("epochs")),
        "seed": str(run.get("seed")),
    }
    for name in RESULT_PARAMETERS:
        key[name.replace("_", " ")] = str(parameters.get(name))
    return key


def series_breaks(points: Sequence[RunPoint]) -> list[tuple[int, list[str]]]:
    """Where the series breaks: ``(index of the first run of the new series, ["name: old -> new", ...])``."""
    breaks = []
    for i in range(1, len(points)):
        before, after = series_key(points[i - 1]), series_key(points[i])
        changed = [f"{name}: {before.get(name)} -> {value}" for name, value in after.items() if before.get(name) != value]
        if changed:
            breaks.append((i, changed))
    return breaks


def _segments(count: int, breaks: Sequence[tuple[int, list[str]]]) -> list[range]:
    starts = [0, *(i for i, _ in breaks), count]  # breaks are distinct indexes 1 .. count - 1: no range is empty
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def _manifest_facts(run: Path) -> dict[str, Any]:
    """The suite's folder name, its scenario count and the shard of ``run/run.json`` (empty when unreadable)."""
    try:
        data = json.loads(read_regular_text(run / "run.json"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    paths = _v if isinstance(_v := data.get("scenario_paths"), list) else []
    ids = _v if isinstance(_v := data.get("scenario_ids"), list) else None
    shard = _v if isinstance(_v := data.get("shard"), dict) else None
    return {"suite": ", ".join(Path(str(p)).name for p in paths), "scenarios": len(ids) if ids is not None else None,
            "shard": f"{shard.get('index')}/{shard.get('count')}" if shard else None,
            "sensitive": _sensitive_manifest(data)}


def _sensitive_manifest(data: Any) -> bool:
    parameters = data.get("parameters") if isinstance(data, dict) else None
    return isinstance(parameters, dict) and parameters.get("sensitive") is True


def is_sensitive_run(run: Path, *, unreadable: bool = True) -> bool:
    """``run/run.json`` says the run holds real user data (``parameters.sensitive``; see :mod:`harness.scenarios.privacy`).

    An unreadable ``run.json`` counts as ``unreadable`` says: sensitive by default (when in doubt, serve nothing
    of it); the viewer's index still lists it as a row saying it is unreadable, which shows none of its text.
    """
    try:
        data = json.loads(read_regular_text(run / "run.json"))  # never a FIFO: it would hang the viewer's request
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return unreadable
    return _sensitive_manifest(data)


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """Run folders named by ``paths`` (a run folder, or a folder whose subfolders are runs), each once.

    Raises:
        HistoryError: a path does not exist, or is a folder holding no run.
    """
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            raise HistoryError(f"{path}: no such folder; pass run folders (or folders of them) written by "
                               "`recall-eval run`")
        if (path / "run.json").is_file():
            found[path] = None
            continue
        runs = sorted(p for p in path.iterdir() if p.is_dir() and (p / "run.json").is_file())
        if not runs:
            raise HistoryError(f"{path}: neither a run folder (no run.json) nor a folder of run folders")
        found.update(dict.fromkeys(runs))
    return list(found)


def read_points(runs: Iterable[Path], *, include_shards: bool = False,
                include_sensitive: bool = False) -> tuple[list[RunPoint], list[str]]:
    """Each run's point, oldest first (by start time, then id), and warnings for runs left out.

    Shard folders are left out (one warning counting them) unless ``include_shards``; runs holding real user data
    (``run.json`` ``parameters.sensitive``) unless ``include_sensitive``.
    """
    points, warnings, shards, sensitive = [], [], [], []
    for run in runs:
        facts = _manifest_facts(run)
        if (facts.get("sensitive") or (not facts and is_sensitive_run(run))) and not include_sensitive:
            sensitive.append(run)
            continue
        if facts.get("shard") and not include_shards:
            shards.append(run)
            continue
        path = run / "summary.json"
        if not path.exists():  # a FIFO or folder named so is "unreadable", below
            warnings.append(f"{run}: no summary.json, left out; build it with `recall-eval report {run}`")
            continue
        try:
            summary = read_summary_file(path)
        except (SummaryFileError, OSError) as exc:
            warnings.append(f"{path}: unreadable ({_reason(exc, path)}), left out; "
                            f"rebuild it with `recall-eval report {run}`")
            continue
        info = _v if isinstance(_v := summary.get("run"), dict) else {}
        verdict = _v if isinstance(_v := summary.get("verdict"), dict) else {}
        config = _v if isinstance(_v := verdict.get("config"), dict) else {}
        points.append(RunPoint(path=run, run_id=str(info.get("run_id") or run.name),
                               started_at=str(info.get("started_at") or summary.get("generated_at") or ""),
                               verdict=str(verdict.get("status") or "none"),
                               treatment=str(config.get("treatment_arm") or "recall"),
                               baseline=str(config.get("baseline_arm") or "history_only"), summary=summary,
                               manifest=facts))
    if shards:
        names = ", ".join(str(p) for p in shards[:3]) + (f" and {len(shards) - 3} more" if len(shards) > 3 else "")
        warnings.append(f"{len(shards)} shard folder(s) left out (their merged run is the point; "
                        f"--include-shards shows them): {names}")
    if sensitive:
        warnings.append(f"{len(sensitive)} sensitive run folder(s) left out (they hold real user data; "
                        "--include-sensitive shows them)")
    points.sort(key=lambda p: (p.started_at, p.run_id))
    return points, warnings


def _reason(exc: Exception, path: Path) -> str:
    """Why ``path`` could not be read, without the file name and fix the warning already gives."""
    text = str(exc).removeprefix(f"{path}: ")
    return text.split("; rebuild it with")[0]


def _num(value: Any) -> float | None:
    """A finite number, else None (a hand-edited NaN would leave a chart's axis undefined)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return float(value) if math.isfinite(value) else None
    except OverflowError:  # an integer of 400 digits
        return None


def _series_chart(points: Sequence[RunPoint], series: list[dict[str, Any]], *, symmetric: bool, title: str,
                  page_dir: Path, threshold: float | None = None,
                  breaks: Sequence[tuple[int, list[str]]] = ()) -> dict[str, Any]:
    """One chart: per series a line through its values, a band between its interval bounds, linked points;
    lines and bands stop at each series break (a dashed marker there names what changed).

    ``series``: ``{"name", "cls", "values": [(value, low, high) or None per point]}``.
    """
    numbers = [v for s in series for triple in s["values"] if triple for v in triple if v is not None]
    if symmetric:
        top = max([abs(v) for v in numbers] + [0.1, abs(threshold or 0.0)])
        top = min(1.0, math.ceil(top * 10 - 1e-9) / 10)  # a round axis: ±0.1, ±0.2 ... ±1
        low_end, high_end = -top, top
    else:
        low_end, high_end = 0.0, 1.0
    step = _PLOT_W / max(len(points) - 1, 1)

    def x(i: int) -> float:
        return round(_LEFT + (i * step if len(points) > 1 else _PLOT_W / 2), 1)

    def y(v: float) -> float:
        v = min(max(v, low_end), high_end)
        return round(_TOP + _PLOT_H * (high_end - v) / (high_end - low_end), 1)

    drawn = []
    segments = _segments(len(points), breaks)
    for s in series:
        lines, bands = [], []
        for segment in segments:
            values = [(i, s["values"][i]) for i in segment]
            line = [(x(i), y(t[0])) for i, t in values if t and t[0] is not None]
            upper = [(x(i), y(t[2])) for i, t in values if t and t[1] is not None and t[2] is not None]
            lower = [(x(i), y(t[1])) for i, t in values if t and t[1] is not None and t[2] is not None]
            if len(upper) > 1:
                bands.append(" ".join(f"{px},{py}" for px, py in upper + lower[::-1]))
            if len(line) > 1:
                lines.append(" ".join(f"{px},{py}" for px, py in line))
        dots = []
        for i, t in enumerate(s["values"]):
            if not t or t[0] is None:
                continue
            text = f"{t[0]:+.3f}" if symmetric else f"{t[0]:.3f}"
            if t[1] is not None and t[2] is not None:
                text += f" [{t[1]:+.3f}, {t[2]:+.3f}]" if symmetric else f" [{t[1]:.3f}, {t[2]:.3f}]"
            point = points[i]
            dots.append({"x": x(i), "y": y(t[0]), "verdict": point.verdict,
                         "href": report_link(point.path, page_dir),
                         "title": f"{point.run_id} ({point.started_at}) · {s['name']}: {text} · verdict {point.verdict}",
                         "lo": y(t[1]) if t[1] is not None else None, "hi": y(t[2]) if t[2] is not None else None})
        drawn.append({"name": s["name"], "cls": s["cls"], "bands": bands, "lines": lines, "dots": dots})
    ticks = [low_end + (high_end - low_end) * k / 4 for k in range(5)]
    return {
        "title": title, "series": drawn, "width": _LEFT + _PLOT_W + 20, "height": _TOP + _PLOT_H + 70,
        "left": _LEFT, "right": _LEFT + _PLOT_W, "base": _TOP + _PLOT_H,
        "zero": y(0.0) if symmetric else None, "threshold": y(threshold) if threshold is not None else None,
        "ticks": [{"y": y(t), "text": f"{t:+.2f}" if symmetric and t else f"{t:.2f}"} for t in ticks],
        "labels": [{"x": x(i), "text": (points[i].started_at or points[i].run_id)[:16]}
                   for i in shown_dates(len(points), step)],
        "breaks": _break_marks([(round((x(i - 1) + x(i)) / 2, 1), changed) for i, changed in breaks]),
    }


def _break_marks(marks: list[tuple[float, list[str]]]) -> list[dict[str, Any]]:
    """Each break's marker, tooltip and label row (None: no free row; the marker and tooltip stay)."""
    lanes = break_label_lanes([x for x, _ in marks], lanes=int((_PLOT_H - 20) // LANE_HEIGHT))
    return [{"x": x, "title": "series break: " + "; ".join(changed),
             "text_y": None if lane is None else round(_TOP + 10 + lane * LANE_HEIGHT, 1)}
            for (x, changed), lane in zip(marks, lanes)]


def _triple(row: dict[str, Any] | None, key: str) -> tuple[float | None, float | None, float | None] | None:
    if not row or _num(row.get(key)) is None:
        return None
    return _num(row.get(key)), _num(row.get("ci_low")), _num(row.get("ci_high"))


def history_charts(points: Sequence[RunPoint], page_dir: Path) -> list[dict[str, Any]]:
    """Per model: the paired continuity and unsupported-claim differences, and continuity per arm, over the runs."""
    from harness.report import arm_class, arm_order

    models = sorted({m for p in points for m in p.models()})
    breaks = series_breaks(points)
    blocks = []
    for model in models:
        latest = points[-1]  # the models are the points' own, so there is a point
        treatment, baseline = latest.treatment, latest.baseline
        tolerance = _num(((latest.summary.get("verdict") or {}).get("config") or {}).get("unsupported_tolerance"))
        diff = [{"name": f"{treatment} − {baseline}", "cls": "c1",
                 "values": [_triple(p.paired(model, "continuity_accuracy"), "diff") for p in points]}]
        unsupported = [{"name": f"{treatment} − {baseline}", "cls": "c2",
                        "values": [_triple(p.paired(model, "unsupported_claim_rate"), "diff") for p in points]}]
        arms = arm_order(str(r.get("arm")) for p in points for r in p.summary.get("metrics") or []
                         if r.get("model") == model and r.get("metric") == "continuity_accuracy")
        per_arm = [{"name": arm, "cls": arm_class(arm, arms),
                    "values": [_triple(p.metric(model, arm, "continuity_accuracy"), "value") for p in points]}
                   for arm in arms]
        blocks.append({"model": model, "charts": [
            _series_chart(points, diff, symmetric=True, page_dir=page_dir, breaks=breaks,
                          title=f"Continuity difference {treatment} − {baseline} (paired, 95% CI band)"),
            _series_chart(points, unsupported, symmetric=True, page_dir=page_dir, threshold=tolerance, breaks=breaks,
                          title=f"Unsupported-claim difference {treatment} − {baseline} (95% CI band"
                                + (f"; dashed: tolerance {tolerance:g})" if tolerance is not None else ")")),
            _series_chart(points, per_arm, symmetric=False, page_dir=page_dir, breaks=breaks,
                          title="Continuity accuracy per arm (95% CI bands)"),
        ]})
    return blocks


def _table(points: Sequence[RunPoint], page_dir: Path) -> list[dict[str, Any]]:
    from harness.report import paired_diff

    rows = []
    changes = dict(series_breaks(points))
    for index in range(len(points) - 1, -1, -1):  # newest first
        p = points[index]
        run = p.summary.get("run") or {}
        cells = []
        for model in p.models():
            row = p.paired(model, "continuity_accuracy")
            unsupported = p.paired(model, "unsupported_claim_rate")
            cells.append({"model": model, "continuity": paired_diff(row) if row else "—",
                          "unsupported": paired_diff(unsupported) if unsupported else "—"})
        rows.append({"run_id": p.run_id, "started_at": p.started_at, "verdict": p.verdict,
                     "href": report_link(p.path, page_dir), "models": cells, "samples": run.get("samples"),
                     "errors": run.get("errors"), "suite": p.suite_label(),
                     "shard": p.shard, "break": changes.get(index)})
    return rows


def render_history(points: Sequence[RunPoint], page_dir: Path, warnings: Sequence[str] = ()) -> str:
    """The history page; links are relative to ``page_dir`` (where the page is written)."""
    from harness.report import page_environment

    context = {"points": points, "blocks": history_charts(points, page_dir), "rows": _table(points, page_dir),
               "series": len(series_breaks(points)) + 1 if points else 0,
               "warnings": list(warnings),
               "first": points[0].started_at if points else "", "last": points[-1].started_at if points else ""}
    page = page_environment().get_template("history.html.j2").render(context)
    return page.encode("utf-8", "replace").decode("utf-8")


def cli_history(args: Any) -> int:
    """``recall-eval history DIR... [--out FILE]``: 0 when the page is written, 2 when it cannot be.

    ``args`` is the CLI parser's (``harness/cli/__init__.py``), which always sets both ``--include-*`` flags.
    """
    from harness.report import write_output

    out = Path(args.out)
    try:
        points, warnings = read_points(find_runs(args.dirs), include_shards=args.include_shards,
                                       include_sensitive=args.include_sensitive)
    except HistoryError as exc:
        print(f"recall-eval history: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        say(f"warning: {warning}", file=sys.stderr)
    if not points:
        print("recall-eval history: no run with a summary.json; build the reports first (`recall-eval report DIR`)"
              + ("" if args.include_sensitive else " (sensitive runs need --include-sensitive)"),
              file=sys.stderr)
        return 2
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_output(out, render_history(points, out.parent, warnings))
    except OSError as exc:
        print(f"recall-eval history: {exc.filename or out}: cannot write the page ({exc.strerror or exc}); "
              "choose another --out", file=sys.stderr)
        return 2
    breaks = series_breaks(points)
    for index, changed in breaks:
        say(f"series break before {points[index].run_id} ({points[index].started_at}): {'; '.join(changed)}")
    say_path(f"history of {len(points)} run(s) in {len(breaks) + 1} series, {points[0].started_at} to "
             f"{points[-1].started_at}:", out)
    return 0
