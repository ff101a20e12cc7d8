"""Result records: what a run writes and what scoring and reporting read.

A run folder holds ``run.json`` (a :class:`RunManifest`) and ``results.jsonl``
(one :class:`SampleRecord` per line, written by :class:`ResultsWriter` as each
sample finishes). Both carry ``schema_version``; readers reject versions they
do not know. ``results.jsonl`` is only ever appended to: a resumed run adds
newer records for samples that failed or are missing, so readers take the
last record of each sample (:func:`scan_results`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.run.shards import ShardInfo

RESULTS_SCHEMA_VERSION = 1
RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "run.json"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelCallLog(_Record):
    """One completion request to the agent model."""

    round: int = Field(description="0 for the first call of a sample, +1 per tool round")
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    usage_source: Literal["response", "counted"] = Field(
        description="'response' when the provider reported usage, 'counted' when litellm's token counter estimated it"
    )
    cost_usd: float | None = Field(None, description="None when litellm knows no price for the model")
    finish_reason: str | None = None
    tool_call_count: int = 0
    cached: bool = Field(False, description="Served from the response cache")
    attempts: int = Field(1, description="Tries including retries after transient errors")
    deployment: str | None = Field(
        None, description="With --router-config: the model_info.id of the Router deployment that answered (no secrets)"
    )


class ToolCallLog(_Record):
    """One tool call as the Host executed it (the Host's own record plus loop context)."""

    round: int
    call_id: str
    name: str
    arguments: str = Field(description="Arguments exactly as the model produced them")
    status: str = Field(description="ok, invalid_arguments, unknown_tool, policy_denied or not_found")
    result_text: str = Field(description="The exact text given back to the model")
    result_chars: int
    result_tokens: int
    disclosed_item_ids: list[str] = Field(default_factory=list)
    storage_read: bool
    elapsed_s: float


class WriteSessionLog(_Record):
    """The write run after one earlier session (write mode ``agent``): the model's calls and every write call."""

    session_id: str
    workspace: str | None = Field(None, description="The session's workspace: the scope its writes went to")
    stop_reason: str = Field(description="final_answer, max_tool_rounds, empty_answer or error")
    final_answer: str | None = None
    model_calls: list[ModelCallLog] = Field(default_factory=list)
    tool_calls: list[ToolCallLog] = Field(default_factory=list, description="Every write call with its arguments and result")


class WritePhaseLog(_Record):
    """What the agent model wrote before the probe, session by session in time order."""

    sessions: list[WriteSessionLog] = Field(default_factory=list)

    @property
    def model_calls(self) -> list[ModelCallLog]:
        return [call for session in self.sessions for call in session.model_calls]

    @property
    def tool_calls(self) -> list[ToolCallLog]:
        return [call for session in self.sessions for call in session.tool_calls]


class SampleError(_Record):
    type: str
    message: str
    attempts: int = 1


class SampleRecord(_Record):
    """One scenario x arm x model x epoch, finished (ok) or failed (error).

    An error sample is excluded from accuracy, never scored as a wrong answer.
    """

    schema_version: Literal[1] = RESULTS_SCHEMA_VERSION
    sample_id: str = Field(description="'<scenario>|<arm>|<model>|<epoch>', unique within a run")
    scenario_id: str
    scenario_hash: str = Field(description="SHA-256 of the scenario's canonical JSON, to spot edited fixtures")
    category: str
    arm: str
    model: str
    epoch: int
    seed: int
    status: Literal["ok", "error"]
    error: SampleError | None = None
    final_answer: str | None = None
    stop_reason: str = Field(description="final_answer, max_tool_rounds, empty_answer or error")
    tools_offered: list[str] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list, description="Full transcript in OpenAI message format")
    model_calls: list[ModelCallLog] = Field(default_factory=list)
    tool_calls: list[ToolCallLog] = Field(default_factory=list)
    write_phase: WritePhaseLog | None = Field(
        None, description="The agent's writes before the probe (arms with write mode agent); None for other arms"
    )
    started_at: str = Field(description="ISO 8601 UTC")
    wall_time_s: float


class RunManifest(_Record):
    """``run.json``: what was run, with what, and whether it finished."""

    schema_version: Literal[1] = RESULTS_SCHEMA_VERSION
    run_id: str
    harness_version: str
    status: Literal["running", "complete", "interrupted", "failed"] = Field(
        description="running; complete; interrupted (Ctrl-C, SIGTERM or a stopped model: resumable); failed (a record could not be written: resumable)"
    )
    started_at: str
    finished_at: str | None = None
    models: list[str]
    arms: list[str]
    epochs: int
    seed: int
    scenario_paths: list[str]
    scenario_ids: list[str]
    suite_hash: str
    parameters: dict[str, Any] = Field(default_factory=dict, description="Loop, retry, cache and concurrency settings")
    sample_count: int = Field(0, description="Samples planned: scenarios x arms x models x epochs")
    cached_samples: int = Field(
        0, description="Finished samples whose every model call was served from the response cache (no model was called for them)"
    )
    shard: ShardInfo | None = Field(None, description="run --shard I/N: which shard this run is, and the whole suite it is part of")
    merged_from: list[str] | None = Field(None, description="recall-eval merge: the run ids of the shards merged into this run, by shard index")


class ResultsError(Exception):
    """A results file or manifest cannot be read; the message names the file and line."""


def sample_id(scenario_id: str, arm: str, model: str, epoch: int) -> str:
    return f"{scenario_id}|{arm}|{model}|{epoch}"


def append_record(handle: Any, record: SampleRecord) -> None:
    """Write one record as a line and flush it, so a crash loses at most that line."""
    append_line(handle, record.model_dump_json())


def append_line(handle: Any, line: str) -> None:
    """Write one record already dumped as JSON (by a worker process) and flush it, like :func:`append_record`."""
    handle.write(line + "\n")
    handle.flush()


class ResultsWriteError(ResultsError):
    """A record could not be appended (disk full, quota, I/O error); the run must stop."""

    def __init__(self, message: str, cause: OSError) -> None:
        super().__init__(message)
        self.cause = cause


def _write_fd(fd: int, data: bytes) -> int:
    """``os.write``; a seam for tests that inject a failing disk."""
    return os.write(fd, data)


class ResultsWriter:
    """Appends lines to ``results.jsonl``: one unbuffered write per line, nothing held back.

    Text-file-like (``write``/``flush``/``close``) so :func:`append_line` can use
    it. Why not ``open(..., "a")``: a buffered file that fails to flush keeps
    the failed bytes and raises again on every later write and at close, and a
    failed line stays half-written. Here a failed write is cut back to the
    last complete line (nothing of an earlier line is touched), remembered
    in :attr:`error`, and raised once as :class:`ResultsWriteError`; later
    writes raise it again without touching the file.

    If the file does not end with a newline (an earlier write was cut off),
    the first line written starts with one, so the new record is never
    glued to the torn fragment.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.error: ResultsWriteError | None = None
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(self._fd).st_size
            self._newline_first = size > 0 and _last_byte(self.path, size) != b"\n"
        except OSError:
            os.close(self._fd)
            raise

    def write(self, text: str) -> int:
        """Append ``text`` whole, or raise :class:`ResultsWriteError` leaving the file as it was."""
        if self.error is not None:
            raise self.error
        data = ("\n" + text if self._newline_first else text).encode("utf-8")
        start = os.lseek(self._fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[_write_fd(self._fd, view):]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)  # only this line's bytes: every earlier line stays whole
            self.error = ResultsWriteError(f"{self.path}: cannot append a record: {exc.strerror or exc}", exc)
            raise self.error from exc
        self._newline_first = False
        return len(text)

    def flush(self) -> None:
        """Nothing to do: every write went to the file at once."""

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


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


def _parse_line(raw: bytes, where: str) -> tuple[SampleRecord | None, str | None]:
    """One results line as a record, or the problem with it (never raises)."""
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
    if version != RESULTS_SCHEMA_VERSION:
        return None, f"{where}: schema_version {version!r} is not supported (expected {RESULTS_SCHEMA_VERSION})"
    try:
        return SampleRecord.model_validate(data), None
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"]) or "(record)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return None, f"{where}: invalid sample record: {loc}: {first['msg']}{more}"


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
    raw_lines = data.split(b"\n")
    ends_cleanly = data.endswith(b"\n") or not data
    kept: dict[str, SampleRecord] = {}
    last_index = max((i for i, line in enumerate(raw_lines) if line.strip()), default=-1)
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        scan.lines += 1
        record, problem = _parse_line(raw, f"{path}:{index + 1}")
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
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        record, problem = _parse_line(raw, f"{path}:{index + 1}")
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
    if not path.is_file():
        raise ResultsError(f"{path}: no run manifest; is {run_dir} a recall-eval run folder?")
    try:
        return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except Exception as exc:
        raise ResultsError(f"{path}: invalid run manifest: {exc}") from None


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    """Replace ``run.json`` atomically (write a temp file, then rename).

    On a full disk, where the temp file cannot be written, ``run.json`` is
    rewritten in place instead (it keeps its blocks, so a manifest of about
    the same size fits); if even that fails, the old content is put back.

    Raises:
        ResultsError: the manifest could not be written (no temp file is left behind).
    """
    path = Path(run_dir) / MANIFEST_FILE
    tmp = path.with_suffix(".json.tmp")
    data = (manifest.model_dump_json(indent=2) + "\n").encode("utf-8")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
        return
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not path.is_file():
            raise ResultsError(f"{path}: cannot write the run manifest: {exc.strerror or exc}") from None
        failure = exc
    try:
        _rewrite_in_place(path, data)
    except OSError:
        raise ResultsError(f"{path}: cannot write the run manifest: {failure.strerror or failure}") from None


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path`` with ``data`` without allocating a new file; restore the old bytes on failure."""
    old = path.read_bytes()
    fd = os.open(path, os.O_WRONLY)
    try:
        try:
            _pwrite_all(fd, data)
            os.ftruncate(fd, len(data))
        except OSError:
            with contextlib.suppress(OSError):
                _pwrite_all(fd, old)
                os.ftruncate(fd, len(old))
            raise
    finally:
        os.close(fd)


def _pwrite_all(fd: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
