"""Records: the run folder's files, the contract between the stage that runs samples and every stage that reads them.

Takes: what the run stage produced for each sample. Gives: ``run.json`` (a
:class:`RunManifest`) and ``results.jsonl`` (one :class:`SampleRecord` per
line, written by :class:`ResultsWriter` as each sample finishes; a pasted
history once per run in ``histories.jsonl``, by reference), and the
readers that score, analyse, report and compare them. Both files carry
``schema_version``; readers reject versions they do not know.
``results.jsonl`` is only ever appended to: a resumed run adds newer records
for samples that failed or are missing, so readers take the last record of
each sample (:func:`scan_results`).
"""

from harness.records.histories import HistoryBook, by_reference_line, history_digest, pasted_span
from harness.records.jsontext import json_text, load_model, model_json, sendable
from harness.records.models import (
    HISTORIES_FILE,
    MANIFEST_FILE,
    RESULTS_FILE,
    RESULTS_SCHEMA_VERSION,
    RESULTS_SCHEMA_VERSIONS,
    SHADOW_SCHEMA_VERSION,
    ArmContract,
    ArmFingerprint,
    EmbeddingUsageLog,
    IngestLog,
    ModelCallLog,
    PastedHistory,
    ResultsError,
    RunManifest,
    SampleError,
    SampleRecord,
    ShadowSearchLog,
    ShardInfo,
    ToolCallLog,
    WritePhaseLog,
    WriteSessionLog,
    sample_id,
)
from harness.records.reading import (
    ResultsScan,
    foreign_check,
    foreign_reasons,
    iter_records,
    read_manifest,
    scan_results,
)
from harness.records.terminal import guard_streams, raw_stream, terminal_text
from harness.records.urls import is_redacted, redact_url, url_secrets
from harness.records.writing import ResultsWriteError, ResultsWriter, append_line, append_record, write_manifest

__all__ = [
    "HISTORIES_FILE",
    "HistoryBook",
    "MANIFEST_FILE",
    "ModelCallLog",
    "PastedHistory",
    "RESULTS_FILE",
    "RESULTS_SCHEMA_VERSION",
    "RESULTS_SCHEMA_VERSIONS",
    "ResultsError",
    "ResultsScan",
    "ResultsWriteError",
    "ResultsWriter",
    "ArmContract",
    "ArmFingerprint",
    "RunManifest",
    "SampleError",
    "SampleRecord",
    "ShardInfo",
    "SHADOW_SCHEMA_VERSION",
    "ShadowSearchLog",
    "ToolCallLog",
    "WritePhaseLog",
    "EmbeddingUsageLog",
    "IngestLog",
    "WriteSessionLog",
    "append_line",
    "append_record",
    "by_reference_line",
    "foreign_check",
    "foreign_reasons",
    "history_digest",
    "iter_records",
    "json_text",
    "load_model",
    "model_json",
    "pasted_span",
    "read_manifest",
    "sample_id",
    "scan_results",
    "sendable",
    "terminal_text",
    "guard_streams",
    "raw_stream",
    "redact_url",
    "is_redacted",
    "url_secrets",
    "write_manifest",
]
