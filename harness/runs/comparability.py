"""Whether two run folders can be compared, and how each one is read for that.

Two runs are comparable when their numbers mean the same thing: the same
suite (hash and scenario ids), models, arms, epochs and seed, the same
parameters that change what a sample answers (:data:`RESULT_PARAMETERS`), the
same retrieval budget (top-k and result characters every system got) and
the same configuration of each arm's system (its fingerprint's hash) and
contract (what it ingests, embeds with, is told, sees of times, may disclose
and forgets, and whether it runs at its vendor's defaults), the
same judge, excluded scenarios, verdict thresholds and harness version. Each
difference is a :class:`Difference`, printed ``name: A -> B``. A run is no basis
for a gate at all when it is incomplete or lines of its results are
unreadable (:func:`run_problems`). ``harness.runs.compare`` decides what to do with
both; this module only reads and judges.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.records import ResultsScan, RunManifest
from harness.runs.verdict_check import verdict_disagreement

# run.json `parameters` that change what a sample answers: runs differing in one are not comparable.
# api_base is here because the same model string on another server may be another model.
RESULT_PARAMETERS = ("max_tool_rounds", "temperature", "max_tokens", "api_base", "router_config_hash")
# run.json `parameters` that change how a run executes, never what a sample answers, so compare ignores them:
# filters (their effect, the scenario ids, is compared), timeout/retries (how hard to try; failures show as
# error_rate), concurrency, workers, progress, the cache switch and its folder (a cached answer is the same
# answer), and judge_model, judge_api_base, judge_preset and judge_prompt (the judge that scored, model and
# prompt, is compared from summary.json instead).
# A parameter in neither list (added later) counts as changing results until it is listed here.
IGNORED_PARAMETERS = frozenset({
    "filters", "timeout_s", "retries", "retry_delay_s", "max_concurrency", "workers", "progress", "cache",
    "cache_dir", "judge_model", "judge_api_base", "judge_preset", "judge_prompt",
    # --router-config's path (its hash is compared), and --rpm/--tpm (how fast, never what is answered)
    "router_config", "rpm", "tpm",
    # where the retrieval budget came from (flag, suite or default); the budget itself is compared on its own
    "retrieval_budget_source",
})
#: run.json's retrieval budget: compared as one difference naming both budgets (``top_k=10,chars=4000``), and
#: read as the default when an older run did not record it.
BUDGET_PARAMETER = "retrieval_budget"
# How many ids a difference names before "and N more".
_SHOWN_IDS = 5
_COMPLETE = "complete"


class CompareError(Exception):
    """A run folder cannot be compared; the message names the file and what to do."""


@dataclass(frozen=True)
class Difference:
    """One way the two runs differ that changes what their numbers mean, printed ``name: A -> B``."""

    name: str
    a: str
    b: str
    #: Lines under the difference, e.g. which scenarios were edited.
    details: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        return [f"{self.name}: {self.a} -> {self.b}", *(f"  {d}" for d in self.details)]


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
    #: What compare itself found and did, e.g. a verdict that did not follow, rebuilt (printed as warnings).
    notes: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """Compare's notes, then the report's warnings (duplicates, bad lines, edited scenarios ...), wherever
        summary.json keeps them."""
        found = [*self.notes, *_list(_dict(self.summary.get("run")).get("warnings")), *_list(self.summary.get("warnings"))]
        return list(dict.fromkeys(str(w) for w in found))


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else empty: optional blocks of summary.json read defensively."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rebuild(run_dir: Path) -> str:
    return f"rebuild it with `recall-eval report {run_dir}`"


def _json(raw: bytes, path: Path, line: int | None, fix: str) -> Any:
    """One JSON document (a whole file, or its line ``line``), or a CompareError naming file, line and fault."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        where = path if line is None else f"{path}:{line}"
        raise CompareError(f"{where}: not UTF-8 text (byte {exc.start}); {fix}") from None
    except json.JSONDecodeError as exc:
        where = f"{path}:{exc.lineno if line is None else line}"
        raise CompareError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); {fix}") from None


def _read_summary(path: Path) -> dict[str, Any]:
    """``summary.json``, checked for what compare uses: schema version, verdict status, metric rows."""
    from harness.report import SUMMARY_SCHEMA_VERSION

    fix = _rebuild(path.parent)
    summary = _json(path.read_bytes(), path, None, fix)
    if not isinstance(summary, dict):
        raise CompareError(f"{path}: a JSON {type(summary).__name__}, not an object; {fix}")
    if summary.get("schema_version") != SUMMARY_SCHEMA_VERSION:
        raise CompareError(f"{path}: schema_version {summary.get('schema_version')!r} is not supported "
                           f"(expected {SUMMARY_SCHEMA_VERSION}); {fix}")
    verdict, metrics = summary.get("verdict"), summary.get("metrics")
    if not isinstance(verdict, dict) or not isinstance(verdict.get("status"), str) or not isinstance(metrics, list):
        raise CompareError(f"{path}: no verdict.status or metrics; {fix}")
    for index, row in enumerate(metrics):
        keys = ("model", "arm", "category", "metric")
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
            raise CompareError(f"{path}: metrics[{index}] lacks model, arm, category or metric; {fix}")
        for key in ("value", "ci_low", "ci_high"):
            if row.get(key) is not None and (isinstance(row[key], bool) or not isinstance(row[key], int | float)):
                raise CompareError(f"{path}: metrics[{index}].{key} is {row[key]!r}, not a number or null; {fix}")
    return summary


def _read_scores(path: Path) -> list[dict[str, Any]]:
    """``scores.jsonl`` rows, each checked for the fields compare uses; a bad line is named by file and line."""
    fix = _rebuild(path.parent)
    rows = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        row = _json(raw, path, number, fix)
        if not isinstance(row, dict):
            raise CompareError(f"{path}:{number}: a JSON {type(row).__name__}, not a sample object; {fix}")
        missing = [k for k in ("model", "arm", "scenario_id", "status") if not isinstance(row.get(k), str)]
        if missing:
            raise CompareError(f"{path}:{number}: no {', '.join(missing)}; {fix}")
        rows.append(row)
    return rows


def _foreign(manifest: RunManifest, scan: ResultsScan) -> list[str]:
    """Records of samples the manifest does not plan (another run's lines appended, an edited run.json)."""
    from harness.records import foreign_check

    foreign_reasons = foreign_check(manifest)
    return [f"{r.sample_id}: {', '.join(why)} not in run.json" for r in scan.records if (why := foreign_reasons(r))]


def _foreign_keyword(build_report: Any, include_foreign: bool) -> dict[str, bool]:
    """``include_foreign=True`` for build_report when asked, and only when this build_report takes it."""
    import inspect

    takes_it = "include_foreign" in inspect.signature(build_report).parameters
    return {"include_foreign": True} if include_foreign and takes_it else {}


def load_run(run_dir: Path, *, include_foreign: bool = False) -> RunData:
    """Read a run folder's manifest, results, summary and scores, rebuilding a missing report.

    Raises:
        CompareError, ReportError, ResultsError, OSError: the folder cannot be read; messages name the file.
    """
    from harness.records import RESULTS_FILE, read_manifest, scan_results
    from harness.report import SCORES_FILE, SUMMARY_FILE, build_report

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CompareError(f"{run_dir}: no such run folder")
    manifest = read_manifest(run_dir)
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        raise CompareError(f"{results}: missing; the run wrote no results (`recall-eval run --resume {run_dir}`)")
    scan = scan_results(results)
    foreign = _foreign(manifest, scan)
    if foreign and not include_foreign:
        raise CompareError(f"{results}: {len(foreign)} record(s) of samples its run.json does not plan, e.g. "
                           f"{foreign[0]}; remove them, or pass --include-foreign to count them")
    summary_path, scores_path = run_dir / SUMMARY_FILE, run_dir / SCORES_FILE
    summary: dict[str, Any] | None = None
    why: str | None = "summary.json or scores.jsonl is missing"
    scores: list[dict[str, Any]] = []
    disagreement: str | None = None
    if summary_path.is_file():  # read even with scores lost: it says how they were made (judge, exclusions, thresholds)
        summary = _read_summary(summary_path)
        if scores_path.is_file():
            why = _stale(summary, scan, scores_path)
        if why is None:  # the digests match: the verdict must still follow from the tables and the records
            scores = _read_scores(scores_path)
            why = disagreement = verdict_disagreement(summary, manifest, scan, foreign, scores)
    notes = []
    if why is not None:
        _check_rebuildable(run_dir, summary, why)
        build_report(run_dir, **_rebuild_keywords(build_report, summary, include_foreign))
        summary, scores = _read_summary(summary_path), _read_scores(scores_path)
        if disagreement is not None:
            notes.append(f"{summary_path}: {disagreement}; the report was rebuilt from the results")
    assert summary is not None
    return RunData(run_dir, manifest, summary, scores, scan, foreign, notes)


def _stale(summary: Mapping[str, Any], scan: ResultsScan, scores_path: Path) -> str | None:
    """Why ``summary.json`` no longer describes the folder (its results or scores changed since), or None."""
    import hashlib

    run = _dict(summary.get("run"))
    if run.get("results_sha256") is None or run.get("scores_sha256") is None:
        return "summary.json records no digest of the results it was built from (an older report)"
    if run["results_sha256"] != scan.sha256:
        return "results.jsonl changed after summary.json was built"
    if run["scores_sha256"] != hashlib.sha256(scores_path.read_bytes()).hexdigest():
        return "scores.jsonl changed after summary.json was built"
    return None


def _check_rebuildable(run_dir: Path, summary: Mapping[str, Any] | None, why: str) -> None:
    """Refuse (CompareError) to rebuild a report where it cannot be done here: a run still writing, or a judge's scores."""
    from harness.run import describe_writer, live_writer

    holder = live_writer(run_dir)
    if holder is not None:
        raise CompareError(f"{run_dir}: its run is in progress (being written by {describe_writer(holder)}) and its "
                           f"report is not current ({why}); compare it once the run has finished")
    judge = _judge(summary) if summary is not None else None
    if judge:
        raise CompareError(f"{run_dir / 'summary.json'}: {why}, and it was scored with the judge {judge}, which "
                           f"compare does not call; rebuild it with `recall-eval report {run_dir} "
                           f"{_judge_options(summary or {})}`")


def _judge_options(summary: Mapping[str, Any]) -> str:
    """The ``report`` options that grade again as the summary's judge did: its model, and its preset or prompt file."""
    judge = _dict(summary.get("judge"))
    prompt = _dict(judge.get("prompt"))
    options = f"--judge-model {judge.get('model')}"
    if prompt.get("file"):
        options += f" --judge-prompt {prompt['file']}"
    elif prompt.get("name") not in (None, "strict"):
        options += f" --judge-preset {prompt['name']}"
    return options


def _rebuild_keywords(build_report: Any, summary: Mapping[str, Any] | None, include_foreign: bool) -> dict[str, Any]:
    """The rebuilt report keeps what the stale one was built with: excluded scenarios and verdict thresholds."""
    from harness.analysis import VerdictConfig

    keywords: dict[str, Any] = _foreign_keyword(build_report, include_foreign)
    if summary is None:
        return keywords
    excluded = [str(s) for s in _list(_dict(summary.get("run")).get("excluded_scenarios"))]
    if excluded:
        keywords["exclude"] = excluded
    try:
        keywords["thresholds"] = VerdictConfig(**_dict(_dict(summary.get("verdict")).get("config")))
    except (TypeError, ValueError):
        pass  # an unreadable config: the default thresholds
    return keywords


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "none"
    return str(value)


def abbreviated(ids: Iterable[str], limit: int = _SHOWN_IDS) -> str:
    """``a, b, c and 7 more``: a sorted list cut to what a reader can take in."""
    ids = sorted(ids)
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _set_difference(name: str, a: Sequence[str], b: Sequence[str]) -> Difference | None:
    return None if set(a) == set(b) else Difference(name, _show(sorted(a)), _show(sorted(b)))


def _edited_scenarios(a: ResultsScan, b: ResultsScan) -> list[str]:
    """Scenario ids whose hash in the results differs between the runs (the same id, another text)."""
    def hashes(scan: ResultsScan) -> dict[str, str]:
        return {r.scenario_id: r.scenario_hash for r in scan.records}

    ha, hb = hashes(a), hashes(b)
    return sorted(sid for sid in ha.keys() & hb.keys() if ha[sid] != hb[sid])


def _parameter(manifest: RunManifest, name: str) -> Any:
    """A run.json parameter; one an older run did not record reads as the default it ran with then.

    ``max_tokens`` came later than the others: a run that did not record it sent no limit
    (None), which is not today's default, so it is read as None.
    """
    from harness.defaults import RUN_DEFAULTS

    if name in _ADDED_LATER:
        return manifest.parameters.get(name, _ADDED_LATER[name])
    return manifest.parameters.get(name, RUN_DEFAULTS.get(name))


#: Parameters recorded only by newer runs -> the value an older run (without the key) used.
_ADDED_LATER: dict[str, Any] = {"max_tokens": None}


def _judge(summary: Mapping[str, Any]) -> str | None:
    """The judge's model, with its prompt version when it is not the strict default (``m (locomo-v1)``)."""
    judge = _dict(summary.get("judge"))
    model, version = judge.get("model"), _dict(judge.get("prompt")).get("version")
    return f"{model} ({version})" if model and version and version != "strict-v2" else model


def differences(a: RunData, b: RunData) -> list[Difference]:
    """Every way A and B differ that changes what their numbers mean (see the module docstring)."""
    ma, mb = a.manifest, b.manifest
    out: list[Difference | None] = []
    ids_a, ids_b = set(ma.scenario_ids), set(mb.scenario_ids)
    if ma.suite_hash != mb.suite_hash:
        edited = _edited_scenarios(a.scan, b.scan)
        why = (f"edited: {abbreviated(edited)}",) if edited else ()
        out.append(Difference("suite hash", ma.suite_hash[:12], f"{mb.suite_hash[:12]} (the suites differ)", why))
    if ids_a != ids_b:
        both = len(ids_a & ids_b)
        out.append(Difference("scenario ids", f"{len(ids_a)} scenarios", f"{len(ids_b)} scenarios ({both} in both)"))
    out.append(_set_difference("models", ma.models, mb.models))
    out.append(_set_difference("arms", ma.arms, mb.arms))
    for name, va, vb in (("epochs", ma.epochs, mb.epochs), ("seed", ma.seed, mb.seed),
                         ("harness version", ma.harness_version, mb.harness_version)):
        if va != vb:
            out.append(Difference(name, _show(va), _show(vb)))
    unknown = sorted((ma.parameters.keys() | mb.parameters.keys()) - IGNORED_PARAMETERS - set(RESULT_PARAMETERS)
                     - {BUDGET_PARAMETER})
    for name in (*RESULT_PARAMETERS, *unknown):
        va, vb = _parameter(ma, name), _parameter(mb, name)
        if va != vb:
            out.append(Difference(name.replace("_", " "), _show(va), _show(vb)))
    out.extend(_budget_differences(ma, mb))
    sa, sb = a.summary, b.summary
    ra, rb = _dict(sa.get("run")), _dict(sb.get("run"))
    scoring: tuple[tuple[str, Any, Any], ...] = (
        ("judge model", _judge(sa), _judge(sb)),
        ("excluded scenarios", sorted(map(str, _list(ra.get("excluded_scenarios")))),
         sorted(map(str, _list(rb.get("excluded_scenarios"))))),
        ("report harness version", sa.get("harness_version"), sb.get("harness_version")),
    )
    for what, va, vb in scoring:
        if va != vb:
            out.append(Difference(what, _show(va), _show(vb)))
    ca, cb = (_dict(s["verdict"].get("config")) for s in (sa, sb))
    for key in sorted(ca.keys() | cb.keys()):
        if ca.get(key) != cb.get(key):
            out.append(Difference(f"verdict {key.replace('_', ' ')}", _show(ca.get(key)), _show(cb.get(key))))
    return [d for d in out if d is not None]


def recorded_budget(manifest: RunManifest) -> str:
    """The retrieval budget a run recorded, as ``top_k=10,chars=4000`` (a run that recorded none ran at the default)."""
    from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET

    recorded = manifest.parameters.get("retrieval_budget")
    if recorded is None:
        return DEFAULT_RETRIEVAL_BUDGET.label()
    if isinstance(recorded, dict) and set(recorded) == {"top_k", "chars"}:
        return f"top_k={recorded['top_k']},chars={recorded['chars']}"
    return str(recorded)


def _budget_differences(ma: RunManifest, mb: RunManifest) -> list[Difference]:
    """The retrieval budgets, when they differ; else each arm both runs fingerprinted whose configuration differs."""
    ba, bb = recorded_budget(ma), recorded_budget(mb)
    if ba != bb:
        return [Difference("retrieval budget", ba, bb)]
    out = []
    for arm in sorted(ma.arm_fingerprints.keys() & mb.arm_fingerprints.keys()):
        fa, fb = ma.arm_fingerprints[arm], mb.arm_fingerprints[arm]
        if fa.config_hash != fb.config_hash:
            out.append(Difference(f"arm {arm} configuration", f"{fa.system} {fa.version} {fa.config_hash[:12]}",
                                  f"{fb.system} {fb.version} {fb.config_hash[:12]}"))
        out.extend(_contract_differences(arm, fa.contract, fb.contract))
    return out


def _contract_differences(arm: str, ca: Any, cb: Any) -> list[Difference]:
    """Each term of ``arm``'s contract the two runs differ in (none when either run predates contracts)."""
    from harness.memory_systems import contract_differences

    if ca is None or cb is None:
        return []
    pairs = contract_differences(ca.model_dump(mode="json"), cb.model_dump(mode="json"))
    return [Difference(f"arm {arm} contract {name.replace('_', ' ')}", a, b) for name, a, b in pairs]


def run_problems(side: str, run: RunData) -> list[str]:
    """Why one run is no basis for a gate: it is incomplete, or lines of its results are unreadable."""
    from harness.records import MANIFEST_FILE, RESULTS_FILE

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


def only_in(a: RunData, b: RunData) -> dict[str, tuple[list[str], list[str]]]:
    """What only one run has, by kind (models, arms, scenarios, categories): ``kind -> (only in A, only in B)``.

    Compare lists these rather than dropping them: a comparison with
    ``--force`` covers only what both runs have.
    """
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
