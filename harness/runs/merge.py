"""``recall-eval merge OUT RUN...``: the shard folders of one run (``run --shard I/N``) joined into one run folder.

Before anything is written the shards are checked to make one whole run: the
same whole suite (hash), models, arms, epochs, seed, answer-changing
parameters (:data:`harness.runs.comparability.RESULT_PARAMETERS` and any parameter
compare does not ignore) and harness version, every shard 1..N given once,
no scenario in two shards, and no record a shard's own ``run.json`` does not
plan. Each problem is named (which folder, which shard, which value) and
nothing is written.

``OUT/results.jsonl`` then holds one record per sample (each shard's last,
read with :func:`harness.records.scan_results`), in plan order, and
``OUT/run.json`` the whole run: the whole suite's hash and scenario ids, the
shards' summed sample and cached counts, the earliest start and latest end,
and ``complete`` only when every shard is. The report is built from them as
``recall-eval report OUT`` would: the same numbers as one unsharded run with
the same seed (a test holds this on the offline model).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.records import (
    MANIFEST_FILE,
    RESULTS_FILE,
    ResultsError,
    RunManifest,
    SampleRecord,
    ShardInfo,
    read_manifest,
    write_manifest,
)
from harness.wrapping import say, say_path

# Worst first: a merged run is as finished as its least finished shard.
_STATUS_RANK = {"failed": 0, "interrupted": 1, "running": 2, "complete": 3}


class MergeError(Exception):
    """The shards cannot be merged; ``problems`` names each reason (folder, shard, value)."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass
class _Shard:
    path: Path
    manifest: RunManifest
    info: ShardInfo
    records: list[SampleRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    duplicates: int = 0


@dataclass
class MergeOutcome:
    """What :func:`merge_runs` wrote and what a reader must be told."""

    run_dir: Path
    manifest: RunManifest
    samples: int
    warnings: list[str] = field(default_factory=list)


def _info(manifest: RunManifest) -> ShardInfo:
    """The run's shard; a run made without ``--shard`` is shard 1/1 of its own suite."""
    if manifest.shard is not None:
        return manifest.shard
    return ShardInfo(index=1, count=1, suite_hash=manifest.suite_hash, scenario_count=len(manifest.scenario_ids),
                     sample_count=manifest.sample_count)


def _plan_parameters(manifest: RunManifest) -> dict[str, Any]:
    """The parameters that change what a sample answers (as ``compare`` judges them)."""
    from harness.runs.comparability import IGNORED_PARAMETERS, RESULT_PARAMETERS

    names = (set(manifest.parameters) - IGNORED_PARAMETERS) | set(RESULT_PARAMETERS)
    return {name: manifest.parameters.get(name) for name in sorted(names)}


def _plan_key(shard: _Shard) -> dict[str, Any]:
    m = shard.manifest
    return {
        "whole-suite hash": shard.info.suite_hash[:12], "shard count": shard.info.count, "models": sorted(m.models),
        "arms": sorted(m.arms), "epochs": m.epochs, "seed": m.seed, "harness version": m.harness_version,
        **{f"parameter {k}": v for k, v in _plan_parameters(m).items()},
    }


def _read(paths: Sequence[Path]) -> list[_Shard]:
    shards, problems = [], []
    for path in paths:
        try:
            manifest = read_manifest(path)
        except ResultsError as exc:
            problems.append(str(exc))
            continue
        if not (path / RESULTS_FILE).is_file():
            problems.append(f"{path / RESULTS_FILE}: missing; the shard wrote no results (finish it with `recall-eval run --resume {path}`)")
            continue
        shards.append(_Shard(path, manifest, _info(manifest)))
    if problems:
        raise MergeError("cannot read every shard", problems)
    return shards


def check_plan(shards: Sequence[_Shard]) -> list[str]:
    """Every reason the shards do not make one whole run (empty: they do)."""
    problems = []
    first = shards[0]
    key = _plan_key(first)
    for shard in shards[1:]:
        other = _plan_key(shard)
        for name in key.keys() | other.keys():
            if key.get(name) != other.get(name):
                problems.append(f"{shard.path}: {name} {other.get(name)} differs from {first.path} ({key.get(name)}): not shards of one run")
    if problems:
        return problems
    count = first.info.count
    by_index: dict[int, list[Path]] = {}
    for shard in shards:
        by_index.setdefault(shard.info.index, []).append(shard.path)
    for index, paths in sorted(by_index.items()):
        if len(paths) > 1:
            problems.append(f"shard {index}/{count} given {len(paths)} times: {', '.join(map(str, paths))} (overlapping; give each shard once)")
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        problems.append(f"missing shard(s) {', '.join(missing)} of {count}: pass every shard's run folder")
    owner: dict[str, Path] = {}
    for shard in shards:
        for sid in shard.manifest.scenario_ids:
            if sid in owner and owner[sid] != shard.path:
                problems.append(f"scenario {sid!r} is in both {owner[sid]} and {shard.path} (overlapping shards)")
            owner.setdefault(sid, shard.path)
    if not problems and len(owner) != first.info.scenario_count:
        problems.append(f"the shards hold {len(owner)} scenarios, the whole suite has {first.info.scenario_count}")
    return problems


def _read_records(shards: Sequence[_Shard]) -> list[str]:
    """Each shard's records (last per sample); records its run.json does not plan are problems."""
    from harness.records import foreign_check, scan_results

    problems = []
    for shard in shards:
        scan = scan_results(shard.path / RESULTS_FILE)
        shard.records, shard.problems, shard.duplicates = scan.records, scan.problems, scan.duplicates
        foreign_reasons = foreign_check(shard.manifest)
        foreign = [(r.sample_id, why) for r in scan.records if (why := foreign_reasons(r))]
        if foreign:
            sid, why = foreign[0]
            problems.append(f"{shard.path / RESULTS_FILE}: {len(foreign)} record(s) outside its run.json, e.g. {sid} ({', '.join(why)}); "
                            "remove them from the shard first")
    return problems


def _merged_manifest(out: Path, shards: Sequence[_Shard]) -> RunManifest:
    first = min(shards, key=lambda s: s.info.index)
    status = min((s.manifest.status for s in shards), key=lambda st: _STATUS_RANK.get(st, 0))
    finished = [s.manifest.finished_at for s in shards]
    return first.manifest.model_copy(update={
        "run_id": out.name,
        "status": status,
        "started_at": min(s.manifest.started_at for s in shards),
        "finished_at": None if any(f is None for f in finished) else max(finished),  # type: ignore[type-var]
        "scenario_ids": sorted({sid for s in shards for sid in s.manifest.scenario_ids}),
        "suite_hash": first.info.suite_hash,
        "sample_count": sum(s.manifest.sample_count for s in shards),
        "cached_samples": sum(s.manifest.cached_samples for s in shards),
        "shard": None,
        "merged_from": [s.manifest.run_id for s in sorted(shards, key=lambda s: s.info.index)],
    })


def _plan_order(manifest: RunManifest) -> Any:
    """Sort key of a record in the order ``run`` plans samples (epoch, scenario, model, arm)."""
    models = {m: i for i, m in enumerate(manifest.models)}
    arms = {a: i for i, a in enumerate(manifest.arms)}
    return lambda r: (r.epoch, r.scenario_id, models.get(r.model, len(models)), arms.get(r.arm, len(arms)))


def merge_runs(out: Path, runs: Sequence[Path]) -> MergeOutcome:
    """Check the shard folders ``runs`` and write their merged run folder ``out`` (no report).

    Raises:
        MergeError: the shards do not make one whole run, cannot be read, or ``out`` holds a run; nothing was written.
    """
    out, paths = Path(out), [Path(r) for r in runs]
    if (out / MANIFEST_FILE).exists() or (out / RESULTS_FILE).exists():
        raise MergeError(f"{out} already holds a run ({MANIFEST_FILE} or {RESULTS_FILE}); choose a new folder for the merged run")
    if any(p.resolve() == out.resolve() for p in paths):
        raise MergeError(f"{out} is one of the shards; choose a new folder for the merged run")
    shards = _read(paths)
    problems = check_plan(shards)
    if problems:
        raise MergeError(f"the {len(shards)} folder(s) are not the shards of one run", problems)
    problems = _read_records(shards)
    if problems:
        raise MergeError("a shard holds records its run.json does not plan", problems)
    manifest = _merged_manifest(out, shards)
    records = sorted((r for s in shards for r in s.records), key=_plan_order(manifest))
    warnings = [f"{s.path}: status {s.manifest.status!r}: finish it with `recall-eval run --resume {s.path}` and merge again"
                for s in shards if s.manifest.status != "complete"]
    warnings += [problem for s in shards for problem in s.problems]
    warnings += [f"{s.path / RESULTS_FILE}: {s.duplicates} duplicate record(s) dropped (the last of each sample "
                 "kept)" for s in shards if s.duplicates]
    written = False
    try:
        out.mkdir(parents=True, exist_ok=True)
        with open(out / RESULTS_FILE, "x", encoding="utf-8") as handle:
            written = True
            handle.writelines(record.model_dump_json() + "\n" for record in records)
        write_manifest(out, manifest)
    except (OSError, ResultsError) as exc:
        if written:  # ours (opened with "x"): a results file without its run.json would make OUT refuse the retry
            (out / RESULTS_FILE).unlink(missing_ok=True)
        raise MergeError(f"cannot write the merged run to {out}: {getattr(exc, 'strerror', None) or exc}; choose another OUT") from None
    return MergeOutcome(out, manifest, len(records), warnings)


def cli_merge(args: Any) -> int:
    """Handler of ``recall-eval merge OUT RUN...``; returns the exit code."""
    from harness.analysis import VerdictConfig, exit_code
    from harness.report import ReportError, build_report, report_lines

    try:
        outcome = merge_runs(Path(args.out), [Path(r) for r in args.runs])
    except MergeError as exc:
        print(f"recall-eval merge: {exc}", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    for warning in outcome.warnings:
        say(f"warning: {warning}", file=sys.stderr)
    shards = len(outcome.manifest.merged_from or [])
    say_path(f"merged {shards} shard(s): {outcome.samples} samples of {outcome.manifest.sample_count} planned ->",
             outcome.run_dir)
    if getattr(args, "no_report", False):
        return 0
    thresholds = VerdictConfig(max_error_rate=getattr(args, "max_error_rate", VerdictConfig().max_error_rate))
    try:
        report = build_report(outcome.run_dir, thresholds=thresholds)
    except (ReportError, ResultsError) as exc:
        print(f"recall-eval merge: the merged results are written, the report is not ({exc}). "
              f"Retry with: recall-eval report {outcome.run_dir}", file=sys.stderr)
        return 2
    lines, errors = report_lines(report)  # the per-arm table, verdict and checks in the words of `run` and `report`
    for line in lines:
        print(line)
    for line in errors:
        print(line, file=sys.stderr)
    print(f"report: {report.index_html}")
    return exit_code(report, gate=bool(getattr(args, "gate", False)), incomplete_fails=True)
