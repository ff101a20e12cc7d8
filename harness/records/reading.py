"""Reading a run folder's records without trusting them.

A resumed run appends newer records for samples that failed or are missing,
so readers take the last record of each sample (:func:`scan_results`); every
line that cannot be used is named by file and line, and nothing is ever
deleted by reading. :func:`foreign_check` is the one rule of what a run
folder may hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from harness.records.histories import HistoryBook
from harness.records.models import (
    MANIFEST_FILE,
    RESULTS_SCHEMA_VERSIONS,
    ResultsError,
    RunManifest,
    SampleRecord,
    sample_id,
)


@dataclass
class ResultsScan:
    """What a ``results.jsonl`` holds, read without trusting it.

    ``records`` keeps one record per sample id: the last complete one in the
    file (a resumed or re-run sample appends a newer record). Every line that
    could not be used is in ``problems`` as ``file:line: what was wrong``;
    nothing is ever deleted from the file by reading it.
    """

    records: list[SampleRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: Records dropped because a later record had the same sample id.
    duplicates: int = 0
    #: The last line was cut off (an interrupted write); it is also in ``problems``.
    torn_last_line: bool = False
    #: Lines read, blank lines excluded.
    lines: int = 0
    #: SHA-256 of the file's bytes as read (empty for a missing file): what a summary built from it records.
    sha256: str = ""


def _first_error(exc: ValidationError, whole: str) -> str:
    """``field: message (+N more)``: pydantic's first error on one line (its own text spans lines, two per error)."""
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"]) or whole
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def _parse_line(raw: bytes, where: str, book: HistoryBook) -> tuple[SampleRecord | None, str | None]:
    """One results line as a record (its pasted history spliced back from ``book``), or the problem with it (never raises)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"{where}: not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(data, dict):
        return None, f"{where}: a JSON {type(data).__name__}, not a sample record object"
    version = data.get("schema_version")
    if version not in RESULTS_SCHEMA_VERSIONS or type(version) is not int:
        known = " or ".join(str(v) for v in RESULTS_SCHEMA_VERSIONS)
        return None, f"{where}: schema_version {version!r} is not supported (expected {known})"
    if version == 1 and "pasted" in data:
        return None, f"{where}: invalid sample record: pasted: a schema 1 record holds its history inline (pasted is schema 2)"
    try:
        record = SampleRecord.model_validate(data)
    except ValidationError as exc:
        return None, f"{where}: invalid sample record: {_first_error(exc, '(record)')}"
    own = sample_id(record.scenario_id, record.arm, record.model, record.epoch)
    if record.sample_id != own:  # it would stand in for another sample (another arm's, say) and hide this one
        return None, (f"{where}: sample_id {record.sample_id!r} does not match the record's own scenario, arm, model "
                      f"and epoch ({own!r}): a corrupt or forged record")
    problem = book.resolve(record)
    if problem is not None:
        return None, f"{where}: invalid sample record: {problem}"
    return record, None


def scan_results(path: Path) -> ResultsScan:
    """Read a ``results.jsonl`` leniently: every usable record, and every problem by file and line.

    Use this wherever results feed numbers (report, compare, resume): callers
    decide whether problems are fatal, and must say how many duplicates were
    dropped. A missing file reads as empty.
    """
    path = Path(path)
    scan = ResultsScan()
    if not path.is_file():
        return scan
    data = path.read_bytes()
    scan.sha256 = hashlib.sha256(data).hexdigest()
    raw_lines = data.split(b"\n")
    ends_cleanly = data.endswith(b"\n") or not data
    kept: dict[str, SampleRecord] = {}
    book = HistoryBook(path)
    last_index = max((i for i, line in enumerate(raw_lines) if line.strip()), default=-1)
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        scan.lines += 1
        record, problem = _parse_line(raw, f"{path}:{index + 1}", book)
        if problem is not None:
            if index == last_index and not ends_cleanly:
                scan.torn_last_line = True
                problem += " [the last line is incomplete: an interrupted write]"
            scan.problems.append(problem)
            continue
        assert record is not None
        if record.sample_id in kept:
            scan.duplicates += 1
            del kept[record.sample_id]  # re-insert: order follows the newest record
        kept[record.sample_id] = record
    scan.records = list(kept.values())
    return scan


def iter_records(path: Path) -> Iterator[SampleRecord]:
    """Yield the records of a ``results.jsonl`` strictly (tests and tools that expect a clean file).

    A truncated last line (an interrupted write) is skipped; any other
    unusable line raises :class:`ResultsError` naming the file and line.
    Duplicates are yielded as they are; use :func:`scan_results` to read
    leniently and de-duplicated.
    """
    data = Path(path).read_bytes()
    raw_lines = data.split(b"\n")
    last_index = max((i for i, line in enumerate(raw_lines) if line.strip()), default=-1)
    book = HistoryBook(Path(path))
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        record, problem = _parse_line(raw, f"{path}:{index + 1}", book)
        if problem is not None:
            if index == last_index:
                return
            raise ResultsError(problem)
        yield record  # type: ignore[misc]


def foreign_reasons(record: SampleRecord, manifest: RunManifest) -> list[str]:
    """What puts ``record`` outside the run ``manifest`` describes (empty when it belongs).

    The one rule of what a run folder may hold, used by ``report``, ``compare`` and ``merge`` alike:
    a model, arm, scenario or epoch that ``run.json`` does not plan is foreign. To check many
    records against one manifest, use :func:`foreign_check` (it indexes the manifest once).
    """
    return foreign_check(manifest)(record)


def foreign_check(manifest: RunManifest) -> Callable[[SampleRecord], list[str]]:
    """:func:`foreign_reasons` against ``manifest`` as it is now, its lists read once into sets."""
    models, arms, ids, epochs = frozenset(manifest.models), frozenset(manifest.arms), frozenset(manifest.scenario_ids), manifest.epochs

    def reasons_for(record: SampleRecord) -> list[str]:
        reasons = []
        if record.model not in models:
            reasons.append(f"model {record.model!r}")
        if record.arm not in arms:
            reasons.append(f"arm {record.arm!r}")
        if record.scenario_id not in ids:
            reasons.append(f"scenario {record.scenario_id!r}")
        if not 0 <= record.epoch < epochs:
            reasons.append(f"epoch {record.epoch}")
        return reasons

    return reasons_for


def read_manifest(run_dir: Path) -> RunManifest:
    path = Path(run_dir) / MANIFEST_FILE
    if not Path(run_dir).exists():
        raise ResultsError(f"{run_dir}: no such run folder (the folder does not exist); pass a run folder written "
                           "by `recall-eval run`")
    if not path.is_file():
        raise ResultsError(f"{path}: no run manifest; is {run_dir} a recall-eval run folder?")
    try:
        return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ResultsError(f"{path}: invalid run manifest: {_first_error(exc, '(manifest)')}") from None
    except Exception as exc:
        raise ResultsError(f"{path}: invalid run manifest: {exc}") from None
