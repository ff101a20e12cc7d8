"""``recall-eval compare RUN_A RUN_B``: what changed between two runs, with a regression gate.

Two runs are compared only when their numbers mean the same thing: the same
suite (hash and scenario ids), models, arms, epochs, seed, the parameters that
change what a sample answers (:data:`RESULT_PARAMETERS`), judge model, scoring
setup and harness version, and both runs complete and readable. Every
difference is printed as ``name: A -> B``; runs that differ are *not
comparable* (exit 2) unless ``--force``, which compares what both runs have and
lists what only one of them has (models, arms, scenarios, categories).

A metric *regresses* when B's interval lies entirely on the bad side of A's
(below it for higher-is-better metrics, above it for lower-is-better ones):
a change beyond both intervals, not noise. ``tool_leakage_count`` has no
interval and regresses when B has more leaks than A. Cost and token metrics
are reported but never gate. A verdict that goes from pass to anything else
is a regression too.

Exit codes: 0 no regression, 1 regression, 2 not comparable or bad input.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results import ResultsScan, RunManifest

HIGHER_IS_BETTER = frozenset({
    "continuity_accuracy", "adherence_rate", "abstention_rate_unanswerable", "coverage", "selective_accuracy",
    "retrieved_precision", "retrieved_recall",
})
LOWER_IS_BETTER = frozenset({
    "unsupported_claim_rate", "answer_leakage_rate", "tool_leakage_count", "over_abstention_rate",
    "latency_p50_s", "latency_p95_s", "error_rate",
})

# run.json `parameters` that change what a sample answers: runs differing in one are not comparable.
# api_base is here because the same model string on another server may be another model.
RESULT_PARAMETERS = ("max_tool_rounds", "temperature", "max_tokens", "api_base")
# run.json `parameters` that change how a run executes, never what a sample answers, so compare ignores them:
# filters (their effect, the scenario ids, is compared), timeout/retries (how hard to try; failures show as
# error_rate), concurrency, workers, progress, the cache switch and its folder (a cached answer is the same
# answer), and judge_model (the judge that scored is compared from summary.json instead).
# A parameter in neither list (added later) counts as changing results until it is listed here.
IGNORED_PARAMETERS = frozenset({
    "filters", "timeout_s", "retries", "retry_delay_s", "max_concurrency", "workers", "progress", "cache",
    "cache_dir", "judge_model",
})
# How many ids a difference names before "and N more".
_SHOWN_IDS = 5
_COMPLETE = "complete"
# The metric table; a regression is marked REGRESSION after its difference.
_METRIC_COLUMNS = ("metric", "A", "B", "B - A")


class CompareError(Exception):
    """A run folder cannot be compared; the message names the file and what to do."""


@dataclass(frozen=True)
class Difference:
    """One way the two runs differ that changes what their numbers mean, printed ``name: A -> B``."""

    name: str
    a: str
    b: str
    #: Lines under the difference, e.g. which scenario ids only one run has.
    details: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        return [f"{self.name}: {self.a} -> {self.b}", *(f"  {d}" for d in self.details)]


@dataclass(frozen=True)
class MetricChange:
    model: str
    arm: str
    category: str
    metric: str
    a: Mapping[str, Any]
    b: Mapping[str, Any]
    regression: bool

    @property
    def diff(self) -> float | None:
        if self.a.get("value") is None or self.b.get("value") is None:
            return None
        return float(self.b["value"]) - float(self.a["value"])

    @property
    def changed(self) -> bool:
        """False when A and B print the same (value and interval): such rows are hidden unless ``--all``."""
        return _fmt(self.a) != _fmt(self.b)


@dataclass
class RunData:
    """What compare reads of one run folder."""

    path: Path
    manifest: RunManifest
    summary: dict[str, Any]
    samples: list[dict[str, Any]]
    scan: ResultsScan
    #: Records whose sample the manifest does not plan, as ``sample_id: why``.
    foreign: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """The report's warnings (duplicates, unreadable lines, edited scenarios, ...), wherever summary.json keeps them."""
        run = self.summary.get("run") or {}
        found = [*(run.get("warnings") or []), *(self.summary.get("warnings") or [])]
        return [str(w) for w in dict.fromkeys(str(w) for w in found)]


@dataclass
class Comparison:
    """Everything ``compare`` found; :func:`cli_compare` prints it and picks the exit code."""

    a: RunData
    b: RunData
    differences: list[Difference]
    #: Why a run is no basis for a gate (incomplete, unreadable lines).
    problems: list[str]
    verdict_a: str
    verdict_b: str
    metrics: list[MetricChange]
    scenarios: list[dict[str, Any]]
    #: kind -> (only in A, only in B), for models, arms, scenarios and categories.
    only_in: dict[str, tuple[list[str], list[str]]]

    @property
    def comparable(self) -> bool:
        return not self.differences and not self.problems

    @property
    def verdict_regression(self) -> bool:
        return self.verdict_a == "pass" and self.verdict_b != "pass"

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.metrics if c.regression]


def is_regression(metric: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when B is worse than A beyond both intervals (see the module docstring)."""
    if a.get("value") is None or b.get("value") is None:
        return False
    if metric == "tool_leakage_count":
        return float(b["value"]) > float(a["value"])
    if None in (a.get("ci_low"), a.get("ci_high"), b.get("ci_low"), b.get("ci_high")):
        return False
    if metric in HIGHER_IS_BETTER:
        return float(b["ci_high"]) < float(a["ci_low"])
    if metric in LOWER_IS_BETTER:
        return float(b["ci_low"]) > float(a["ci_high"])
    return False


# ---------------------------------------------------------------- reading a run


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CompareError(f"{path}: not UTF-8 text (byte {exc.start}); rebuild it with `recall-eval report {path.parent}`") from None
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); rebuild it with `recall-eval report {path.parent}`") from None
    if not isinstance(data, dict):
        raise CompareError(f"{path}: a JSON {type(data).__name__}, not an object; rebuild it with `recall-eval report {path.parent}`")
    return data


def _read_scores(path: Path) -> list[dict[str, Any]]:
    """``scores.jsonl`` rows, each checked for the fields compare uses; a bad line is named by file and line."""
    fix = f"rebuild it with `recall-eval report {path.parent}`"
    rows = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise CompareError(f"{path}:{number}: not UTF-8 text (byte {exc.start}); {fix}") from None
        except json.JSONDecodeError as exc:
            raise CompareError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); {fix}") from None
        if not isinstance(row, dict):
            raise CompareError(f"{path}:{number}: a JSON {type(row).__name__}, not a sample object; {fix}")
        missing = [k for k in ("model", "arm", "scenario_id", "status") if not isinstance(row.get(k), str)]
        if missing:
            raise CompareError(f"{path}:{number}: no {', '.join(missing)}; {fix}")
        rows.append(row)
    return rows


def _foreign(manifest: RunManifest, scan: ResultsScan) -> list[str]:
    """Records of samples the manifest does not plan (another run's lines appended, an edited run.json)."""
    scenarios, arms, models = set(manifest.scenario_ids), set(manifest.arms), set(manifest.models)
    out = []
    for r in scan.records:
        why = ("scenario not in run.json" if r.scenario_id not in scenarios else "arm not in run.json" if r.arm not in arms
               else "model not in run.json" if r.model not in models else f"epoch beyond {manifest.epochs}"
               if not 0 <= r.epoch < manifest.epochs else None)
        if why:
            out.append(f"{r.sample_id}: {why}")
    return out


def _foreign_keyword(build_report: Any, include_foreign: bool) -> dict[str, bool]:
    """``include_foreign=True`` for build_report when asked and when this build_report has the keyword."""
    import inspect

    return {"include_foreign": True} if include_foreign and "include_foreign" in inspect.signature(build_report).parameters else {}


def load_run(run_dir: Path, *, include_foreign: bool = False) -> RunData:
    """Read a run folder's manifest, results, summary and scores, rebuilding a missing report.

    Raises:
        CompareError, ReportError, ResultsError, OSError: the folder cannot be read; messages name the file.
    """
    from harness.report import SUMMARY_SCHEMA_VERSION, build_report
    from harness.report.outputs import SCORES_FILE, SUMMARY_FILE
    from harness.results import RESULTS_FILE, read_manifest, scan_results

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CompareError(f"{run_dir}: no such run folder")
    manifest = read_manifest(run_dir)
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        raise CompareError(f"{results}: missing; the run wrote no results (finish it with `recall-eval run --resume {run_dir}`)")
    scan = scan_results(results)
    foreign = _foreign(manifest, scan)
    if foreign and not include_foreign:
        raise CompareError(f"{results}: {len(foreign)} record(s) of samples its run.json does not plan, e.g. "
                           f"{foreign[0]}; remove them, or pass --include-foreign to count them")
    summary_path, scores_path = run_dir / SUMMARY_FILE, run_dir / SCORES_FILE
    if not summary_path.is_file() or not scores_path.is_file():
        build_report(run_dir, **_foreign_keyword(build_report, include_foreign))
    summary = _read_json_object(summary_path)
    if summary.get("schema_version") != SUMMARY_SCHEMA_VERSION:
        raise CompareError(f"{summary_path}: schema_version {summary.get('schema_version')!r} is not supported "
                           f"(expected {SUMMARY_SCHEMA_VERSION}); rebuild it with `recall-eval report {run_dir}`")
    if not isinstance((summary.get("verdict") or {}).get("status"), str) or not isinstance(summary.get("metrics"), list):
        raise CompareError(f"{summary_path}: no verdict.status or metrics; rebuild it with `recall-eval report {run_dir}`")
    return RunData(run_dir, manifest, summary, _read_scores(scores_path), scan, foreign)


# ---------------------------------------------------------------- comparability


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "none"
    return str(value)


def _some(ids: Iterable[str], limit: int = _SHOWN_IDS) -> str:
    """``a, b, c and 7 more``: a sorted list cut to what a reader can take in."""
    ids = sorted(ids)
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _only_lines(a_only: Sequence[str], b_only: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"only in {side} ({len(ids)}): {_some(ids)}" for side, ids in (("A", a_only), ("B", b_only)) if ids)


def _set_difference(name: str, a: Sequence[str], b: Sequence[str]) -> Difference | None:
    if set(a) == set(b):
        return None
    a_only, b_only = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    return Difference(name, _show(sorted(a)), _show(sorted(b)), _only_lines(a_only, b_only))


def _edited_scenarios(a: ResultsScan, b: ResultsScan) -> list[str]:
    """Scenario ids whose hash in the results differs between the runs (the same id, another text)."""
    def hashes(scan: ResultsScan) -> dict[str, str]:
        return {r.scenario_id: r.scenario_hash for r in scan.records}

    ha, hb = hashes(a), hashes(b)
    return sorted(sid for sid in ha.keys() & hb.keys() if ha[sid] != hb[sid])


def _parameter(manifest: RunManifest, name: str) -> Any:
    """A run.json parameter; one an older run did not record reads as the run's default then."""
    from harness.cli import RUN_DEFAULTS

    return manifest.parameters.get(name, RUN_DEFAULTS.get(name))


def _judge(summary: Mapping[str, Any]) -> str | None:
    return (summary.get("judge") or {}).get("model")


def differences(a: RunData, b: RunData) -> list[Difference]:
    """Every way A and B differ that changes what their numbers mean (see the module docstring)."""
    ma, mb = a.manifest, b.manifest
    out: list[Difference | None] = []
    ids_a, ids_b = set(ma.scenario_ids), set(mb.scenario_ids)
    if ma.suite_hash != mb.suite_hash:
        edited = _edited_scenarios(a.scan, b.scan) if ids_a == ids_b else []
        why = (f"edited: {_some(edited)}",) if edited else ()
        out.append(Difference("suite hash", ma.suite_hash[:12], f"{mb.suite_hash[:12]} (the suites differ)", why))
    if ids_a != ids_b:
        out.append(Difference("scenario ids", f"{len(ids_a)} scenarios", f"{len(ids_b)} scenarios ({len(ids_a & ids_b)} in both)",
                              _only_lines(sorted(ids_a - ids_b), sorted(ids_b - ids_a))))
    out.append(_set_difference("models", ma.models, mb.models))
    out.append(_set_difference("arms", ma.arms, mb.arms))
    for name, va, vb in (("epochs", ma.epochs, mb.epochs), ("seed", ma.seed, mb.seed),
                         ("harness version", ma.harness_version, mb.harness_version)):
        if va != vb:
            out.append(Difference(name, _show(va), _show(vb)))
    unknown = sorted((ma.parameters.keys() | mb.parameters.keys()) - IGNORED_PARAMETERS - set(RESULT_PARAMETERS))
    for name in (*RESULT_PARAMETERS, *unknown):
        va, vb = _parameter(ma, name), _parameter(mb, name)
        if va != vb:
            out.append(Difference(name.replace("_", " "), _show(va), _show(vb)))
    sa, sb = a.summary, b.summary
    ra, rb = sa.get("run") or {}, sb.get("run") or {}
    scoring = (
        ("judge model", _judge(sa), _judge(sb)),
        ("excluded scenarios", sorted(ra.get("excluded_scenarios") or []), sorted(rb.get("excluded_scenarios") or [])),
        ("report harness version", sa.get("harness_version"), sb.get("harness_version")),
    )
    for name, va, vb in scoring:
        if va != vb:
            out.append(Difference(name, _show(va), _show(vb)))
    ca, cb = (s["verdict"].get("config") or {} for s in (sa, sb))
    for key in sorted(ca.keys() | cb.keys()):
        if ca.get(key) != cb.get(key):
            out.append(Difference(f"verdict {key.replace('_', ' ')}", _show(ca.get(key)), _show(cb.get(key))))
    return [d for d in out if d is not None]


def run_problems(side: str, run: RunData) -> list[str]:
    """Why one run is no basis for a gate: it is incomplete, or lines of its results are unreadable."""
    from harness.results import MANIFEST_FILE, RESULTS_FILE

    where = f"{side} ({run.path})"
    problems = []
    if run.manifest.status != _COMPLETE:
        problems.append(f"{where} is not complete ({run.path / MANIFEST_FILE} status {run.manifest.status!r}); "
                        f"finish it with `recall-eval run --resume {run.path}`")
    elif run.summary["verdict"]["status"] == "incomplete":
        problems.append(f"{where} is incomplete (verdict 'incomplete'): its samples are not all there")
    if run.scan.problems:
        more = f" (+{len(run.scan.problems) - 3} more)" if len(run.scan.problems) > 3 else ""
        problems.append(f"{where}: {len(run.scan.problems)} unreadable line(s) in {RESULTS_FILE}: "
                        f"{'; '.join(run.scan.problems[:3])}{more}")
    return problems


# ---------------------------------------------------------------- what changed


def metric_changes(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any]) -> list[MetricChange]:
    """Every metric present in both runs (same model, arm, category), with its regression flag."""
    def key(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
        return row["model"], row["arm"], row["category"], row["metric"]

    a_rows = {key(r): r for r in summary_a.get("metrics", [])}
    changes = []
    for row in summary_b.get("metrics", []):
        if key(row) in a_rows:
            a = a_rows[key(row)]
            changes.append(MetricChange(*key(row), a=a, b=row, regression=is_regression(row["metric"], a, row)))
    return changes


def scenario_changes(samples_a: list[Mapping[str, Any]], samples_b: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Scenarios whose correct rate changed, per model and arm (error samples left out)."""
    from harness.scoring import CORRECT_OUTCOMES

    def rates(samples: list[Mapping[str, Any]]) -> dict[tuple[str, str, str], float]:
        tally: dict[tuple[str, str, str], list[int]] = {}
        for s in samples:
            if s.get("status") != "ok":
                continue
            good = s.get("outcome") in CORRECT_OUTCOMES
            tally.setdefault((s["model"], s["arm"], s["scenario_id"]), []).append(int(good))
        return {k: sum(v) / len(v) for k, v in tally.items()}

    ra, rb = rates(samples_a), rates(samples_b)
    return [
        {"model": k[0], "arm": k[1], "scenario_id": k[2], "a_correct_rate": ra[k], "b_correct_rate": rb[k],
         "change": "fixed" if rb[k] > ra[k] else "broken"}
        for k in sorted(ra.keys() & rb.keys()) if ra[k] != rb[k]
    ]


def _only_in(a: RunData, b: RunData) -> dict[str, tuple[list[str], list[str]]]:
    def split(xs: Iterable[str], ys: Iterable[str]) -> tuple[list[str], list[str]]:
        xs, ys = set(xs), set(ys)
        return sorted(xs - ys), sorted(ys - xs)

    def categories(run: RunData) -> set[str]:
        return {str(r.get("category")) for r in run.summary.get("metrics", []) if r.get("category") != "all"}

    ma, mb = a.manifest, b.manifest
    found = {
        "models": split(ma.models, mb.models), "arms": split(ma.arms, mb.arms),
        "scenarios": split(ma.scenario_ids, mb.scenario_ids), "categories": split(categories(a), categories(b)),
    }
    return {kind: sides for kind, sides in found.items() if sides[0] or sides[1]}


def compare_runs(run_a: Path, run_b: Path, *, include_foreign: bool = False) -> Comparison:
    """Load (or rebuild) both runs, check they are comparable, and diff what they share."""
    a = load_run(Path(run_a), include_foreign=include_foreign)
    b = load_run(Path(run_b), include_foreign=include_foreign)
    problems = [*run_problems("A", a), *run_problems("B", b)]
    return Comparison(
        a=a, b=b, differences=differences(a, b), problems=problems,
        verdict_a=a.summary["verdict"]["status"], verdict_b=b.summary["verdict"]["status"],
        metrics=metric_changes(a.summary, b.summary), scenarios=scenario_changes(a.samples, b.samples),
        only_in=_only_in(a, b),
    )


# ---------------------------------------------------------------- printing


def _fmt(row: Mapping[str, Any]) -> str:
    """``0.82 [0.74, 0.89]``; durations as in the HTML report (``3.2 ms [3.0 ms, 3.5 ms]``); tokens grouped."""
    from harness.report.formatting import metric_kind, seconds_interval

    if row.get("value") is None:
        return "n/a"
    kind = metric_kind(str(row.get("metric", "")))
    if kind == "s":
        return seconds_interval(row["value"], row.get("ci_low"), row.get("ci_high"))
    one = (lambda v: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}") if kind == "int" else (lambda v: f"{v:.3g}")
    ci = "" if row.get("ci_low") is None or row.get("ci_high") is None else f" [{one(row['ci_low'])}, {one(row['ci_high'])}]"
    return f"{one(row['value'])}{ci}"


def _fmt_diff(change: MetricChange) -> str:
    from harness.report.formatting import metric_kind, seconds

    if change.diff is None:
        return "n/a"
    kind = metric_kind(change.metric)
    if kind == "s":
        return seconds(change.diff, sign=True)
    return f"{change.diff:+,.0f}" if kind == "int" and abs(change.diff) >= 1000 else f"{change.diff:+.3g}"


def _console() -> Any:
    """A terminal's own width; elsewhere (CI logs, pipes) ``COLUMNS`` when set, else 120."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, width=120)
    return console


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _say(console: Any, text: str) -> None:
    """A plain line: never parsed as markup (ids and paths may hold brackets), wrapped by the terminal only."""
    console.print(text, markup=False, soft_wrap=True)


def _header(console: Any, cmp: Comparison) -> None:
    for side, run in (("A", cmp.a), ("B", cmp.b)):
        m = run.manifest
        _say(console, f"{side}: {run.path}: {_plural(len(m.scenario_ids), 'scenario')} x {_plural(len(m.arms), 'arm')} x "
                      f"{_plural(len(m.models), 'model')} x {_plural(m.epochs, 'epoch')}, {m.status}, "
                      f"verdict {run.summary['verdict']['status']}")
    for side, run in (("A", cmp.a), ("B", cmp.b)):
        warnings = run.warnings
        for warning in warnings:
            _say(console, f"{side} warning: {warning}")
        if run.scan.duplicates and not any("duplicate" in w for w in warnings):
            _say(console, f"{side} warning: {run.scan.duplicates} duplicate record(s) in results.jsonl "
                          "(the last one per sample id counts)")
        if run.foreign:
            _say(console, f"{side} warning: {len(run.foreign)} record(s) outside run.json: {_some(run.foreign, 3)}")


def _comparability(console: Any, cmp: Comparison, force: bool) -> None:
    if cmp.comparable:
        _say(console, "comparable: same suite, models, arms, epochs, seed, parameters and scoring")
        return
    _say(console, "NOT COMPARABLE" + (" (compared anyway: --force)" if force else "") + ":")
    for problem in cmp.problems:
        _say(console, f"  {problem}")
    for difference in cmp.differences:
        for line in difference.lines():
            _say(console, f"  {line}")
    if force and cmp.only_in:
        _say(console, "compared only what both runs have; left out:")
        for kind, (a_only, b_only) in cmp.only_in.items():
            for side, ids in (("A", a_only), ("B", b_only)):
                if ids:
                    _say(console, f"  {kind} only in {side} ({len(ids)}): {_some(ids)}")


def _name(change: MetricChange) -> str:
    return change.metric if change.category == "all" else f"{change.metric} ({change.category})"


def _widths(total: int, rows: Sequence[Sequence[str]], min_name: int) -> list[int]:
    """Widths of the metric table's columns that fit ``total`` columns without cutting a metric name.

    The metric column gets its longest name (wrapping before a "(category)"
    when room is short), ``B - A`` its longest number (a REGRESSION mark then
    goes on a second line), and A and B share the rest, wrapping an interval
    under its value on a narrow terminal. No column is narrower than its header.
    """
    longest = [max([len(header), *(len(r[i]) for r in rows)]) for i, header in enumerate(_METRIC_COLUMNS)]
    overhead = 3 * (len(_METRIC_COLUMNS) - 1)  # between columns: a divider and a space each side
    if sum(longest) + overhead <= total:
        return longest
    diff = max(len("REGRESSION"), *(len(r[3].split(" REGRESSION")[0]) for r in rows))
    name = longest[0]
    if name + 2 * max(longest[1], longest[2]) > total - overhead - diff:  # wrap names at their category first
        name = max(min_name, len(_METRIC_COLUMNS[0]), *(len(r[0].split(" (")[0]) for r in rows))
    side = max(len("A"), (total - overhead - diff - name) // 2)
    return [name, min(side, longest[1]), min(side, longest[2]), diff]


def _fit(cell: str, width: int) -> str:
    """A cell too wide for its column breaks before its interval or REGRESSION mark, not inside the interval."""
    if len(cell) <= width:
        return cell
    return cell.replace(" [", "\n[", 1).replace(" REGRESSION", "\nREGRESSION", 1)


def _metric_table(console: Any, cmp: Comparison, show_all: bool) -> int:
    """One table per model and arm (so no column repeats them and the rest fits 80 columns); returns the rows shown."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    shown = [c for c in cmp.metrics if c.regression or (c.category == "all" and (show_all or c.changed))]
    if not shown:
        return 0
    _say(console, "metrics " + ("(every row of category all, and regressing categories):" if show_all else
                                "that changed (category all, and regressing categories; --all adds unchanged rows):"))
    groups: dict[tuple[str, str], list[MetricChange]] = {}
    for c in shown:
        groups.setdefault((c.model, c.arm), []).append(c)
    rows = {id(c): (_name(c), _fmt(c.a), _fmt(c.b), _fmt_diff(c) + (" REGRESSION" if c.regression else "")) for c in shown}
    widths = _widths(console.width, [rows[id(c)] for c in shown], min(len(c.metric) for c in shown))
    for (model, arm), changes in groups.items():
        table = Table(title=Text(f"{model} / {arm}"), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False, padding=(0, 1))
        for column, width in zip(_METRIC_COLUMNS, widths, strict=True):
            table.add_column(column, width=width, justify="left" if column == "metric" else "right", overflow="fold")
        for c in changes:
            table.add_row(*(Text(_fit(cell, width)) for cell, width in zip(rows[id(c)], widths, strict=True)))
        console.print(table)
    return len(shown)


def _scenario_table(console: Any, cmp: Comparison) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="scenarios whose correct rate changed", box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for column in ("model", "arm", "scenario", "A", "B", "change"):
        table.add_column(column, overflow="fold")
    for s in cmp.scenarios:
        cells = (s["model"], s["arm"], s["scenario_id"], f"{s['a_correct_rate']:.2f}", f"{s['b_correct_rate']:.2f}", s["change"])
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)


def print_comparison(cmp: Comparison, *, force: bool = False, show_all: bool = False) -> None:
    """The report on standard output: the runs, their warnings, comparability, then (when compared) the changes."""
    console = _console()
    _header(console, cmp)
    _comparability(console, cmp, force)
    if not cmp.comparable and not force:
        return
    _say(console, f"verdict: A {cmp.verdict_a} -> B {cmp.verdict_b}")
    rows = _metric_table(console, cmp, show_all)
    if cmp.scenarios:
        _scenario_table(console, cmp)
    if not rows and not cmp.scenarios:
        _say(console, "no changes: every metric and every scenario's correct rate are the same")
    elif not rows:
        _say(console, "no metric changed")
    n = len(cmp.regressions) + int(cmp.verdict_regression)
    _say(console, f"{n} regression(s) beyond the intervals" if n else "no regression beyond the intervals")


def cli_compare(args: Any) -> int:
    """``recall-eval compare RUN_A RUN_B``: exit 1 on a regression, 0 otherwise, 2 when not comparable or on bad input."""
    from harness.report import ReportError
    from harness.results import ResultsError
    from harness.scenarios import ScenarioError

    force, include_foreign = bool(getattr(args, "force", False)), bool(getattr(args, "include_foreign", False))
    try:
        cmp = compare_runs(Path(args.run_a), Path(args.run_b), include_foreign=include_foreign)
    except (CompareError, ReportError, ResultsError, ScenarioError) as exc:
        print(f"recall-eval compare: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"recall-eval compare: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print_comparison(cmp, force=force, show_all=bool(getattr(args, "all", False)))
    if not cmp.comparable and not force:
        what = ", ".join([*(["run problems"] if cmp.problems else []), *(d.name for d in cmp.differences)])
        print(f"recall-eval compare: the runs are not comparable ({what}); fix that, or pass --force to compare "
              "what both runs have", file=sys.stderr)
        return 2
    return 1 if cmp.regressions or cmp.verdict_regression else 0
