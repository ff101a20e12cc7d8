"""What a report is built from: the usable records of a run folder, and everything wrong with them.

``results.jsonl`` is read without trusting it (:func:`harness.records.scan_results`):
one record per sample id (the last complete one), every unusable line named
``file:line: what``, duplicates counted. Records that ``run.json`` does not
plan (another model, arm, scenario or epoch: lines appended from another run)
are refused unless the caller includes them on purpose. What is left is
compared with the plan, so a report can say it covers 79 of 180 samples
instead of passing or failing on them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.records import RESULTS_FILE, RunManifest, SampleRecord, foreign_check, scan_results
from harness.scenarios import Scenario

#: Unusable lines listed one by one in warnings; the rest are counted.
PROBLEMS_LISTED = 20


class ScenarioLoadError(Exception):
    """The scenarios a report needs do not load; the message names the paths and the first problems."""


def load_named_scenarios(manifest: RunManifest, ids: Iterable[str]) -> Mapping[str, Scenario]:
    """The scenarios of ``manifest.scenario_paths`` with these ids, by id; nothing else is validated.

    They are held compressed (a :class:`harness.scenarios.ScenarioShelf`'s view): the report scores
    record by record, a few scenarios unpacked at a time, never a LongMemEval S suite's 2.3 GB.

    A report scores only what its results name: 1 probe of a 2,000-probe suite
    loads (and checks) that probe and its conversation's shared part, not the suite.

    Raises:
        ScenarioLoadError: a named scenario does not load.
    """
    from harness.redaction import RedactionError
    from harness.scenarios import ScenarioError, StoreError, load_scenario_shelf, prepare_run_scenarios, shelve

    wanted = sorted(set(ids))
    if not wanted:
        return {}
    try:
        loaded = load_scenario_shelf(manifest.scenario_paths, ids=wanted)
    except ScenarioError as exc:
        problems = "; ".join(str(p) for p in exc.problems[:5])
        raise ScenarioLoadError(f"cannot load the run's scenarios {manifest.scenario_paths}: {exc} {problems}") from None
    parameters = manifest.parameters
    if parameters.get("sensitive") or parameters.get("store"):
        try:  # the run's --store items and redaction (run.json's parameters): score exactly what ran
            loaded = shelve(prepare_run_scenarios(loaded, parameters))
        except StoreError as exc:
            raise ScenarioLoadError(f"cannot load the run's store: {exc}") from None
        except RedactionError as exc:
            raise ScenarioLoadError(f"{exc} (recall-eval report RUN_DIR --redact PATTERN)") from None
    return loaded.by_id


class ForeignRecordsError(Exception):
    """Records outside ``run.json`` were found and not asked for; the message lists them."""


@dataclass(frozen=True)
class ReportInputs:
    """The records a report scores and the facts about them it must tell."""

    records: list[SampleRecord]
    #: Samples run.json planned (scenarios x arms x models x epochs).
    planned: int
    #: Usable records of planned samples (foreign ones not counted).
    present: int
    #: run.json status.
    run_status: str
    #: Unusable lines as ``file:line: what``.
    problems: list[str] = field(default_factory=list)
    #: Records dropped because a later line had the same sample id.
    duplicates: int = 0
    torn_last_line: bool = False
    #: Records outside run.json that were kept (``include_foreign``), counted by what made them foreign.
    foreign: dict[str, int] = field(default_factory=dict)
    #: Sample ids of those records.
    foreign_ids: frozenset[str] = frozenset()
    #: SHA-256 of ``results.jsonl`` as read (empty when unknown): the summary records it, ``compare`` checks it.
    results_sha256: str = ""
    #: ``run.json``'s ``sample_count`` when it disagrees with the plan (the plan's count is used).
    recorded_count: int | None = None

    @property
    def complete(self) -> bool:
        return self.run_status == "complete" and self.present >= self.planned

    def why_short(self) -> list[str]:
        """Reasons beyond the run status why records are missing: unusable and torn lines."""
        why = []
        bad = len(self.problems) - int(self.torn_last_line)
        if bad:
            why.append(f"{bad} unusable line(s) in {RESULTS_FILE}")
        if self.torn_last_line:
            why.append(f"a torn last line in {RESULTS_FILE}, from an interrupted write")
        return why

    def warnings(self) -> list[str]:
        """What a reader must be told about the reading, for ``run.warnings`` and the terminal."""
        out = list(self.problems[:PROBLEMS_LISTED])
        if len(self.problems) > PROBLEMS_LISTED:
            out.append(f"... and {len(self.problems) - PROBLEMS_LISTED} more unusable line(s) in {RESULTS_FILE}")
        if self.duplicates:
            out.append(f"{self.duplicates} duplicate record(s) dropped: a sample id appeared more than once in "
                       f"{RESULTS_FILE}; the last complete record of each was kept")
        if self.foreign:
            out.append(f"{len(self.foreign_ids)} record(s) outside run.json scored on request "
                       f"(--include-foreign): {_describe(self.foreign)}")
        if self.recorded_count is not None:
            out.append(f"run.json says sample_count {self.recorded_count}, but its plan (scenarios x arms x models x "
                       f"epochs) has {self.planned}; the plan's count is used")
        return out


def planned_samples(manifest: RunManifest) -> int:
    """Scenarios x arms x models x epochs of the plan ``run.json`` records (distinct names counted once).

    Computed, never read from ``sample_count``: a lowered count would turn an
    incomplete run into a definitive verdict.
    """
    return len(set(manifest.scenario_ids)) * len(set(manifest.arms)) * len(set(manifest.models)) * max(manifest.epochs, 0)


def _describe(counts: dict[str, int], limit: int = 8) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{what} ({n})" for what, n in items[:limit])
    return text + (f", and {len(items) - limit} more" if len(items) > limit else "")


def read_inputs(run_dir: Path, manifest: RunManifest, *, include_foreign: bool = False) -> ReportInputs:
    """Read ``run_dir``'s results for a report.

    Raises:
        ForeignRecordsError: records outside ``manifest`` and ``include_foreign`` is False.
    """
    path = Path(run_dir) / RESULTS_FILE
    scan = scan_results(path)
    foreign: Counter[str] = Counter()
    foreign_ids = set()
    foreign_reasons = foreign_check(manifest)
    for record in scan.records:
        reasons = foreign_reasons(record)
        if reasons:
            foreign_ids.add(record.sample_id)
            foreign.update(reasons)
    if foreign and not include_foreign:
        raise ForeignRecordsError(
            f"{path}: {len(foreign_ids)} record(s) are outside the run run.json describes: {_describe(dict(foreign))} "
            f"(run.json lists models {manifest.models}, arms {manifest.arms}, epochs 0-{manifest.epochs - 1} and "
            f"{len(manifest.scenario_ids)} scenario(s)). Lines of another run appended? Remove them, or pass "
            "--include-foreign to score them anyway"
        )
    planned = planned_samples(manifest)
    return ReportInputs(
        records=scan.records, planned=planned, present=len(scan.records) - len(foreign_ids),
        results_sha256=scan.sha256, recorded_count=manifest.sample_count if manifest.sample_count not in (0, planned) else None,
        run_status=manifest.status, problems=list(scan.problems), duplicates=scan.duplicates,
        torn_last_line=scan.torn_last_line, foreign=dict(foreign), foreign_ids=frozenset(foreign_ids),
    )
