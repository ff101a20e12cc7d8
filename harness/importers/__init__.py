"""Importers of public long-term-memory benchmarks into recall-eval suites: ``recall-eval import``.

Takes: a benchmark's published JSON file. Gives: a suite folder that
:mod:`harness.scenarios` loads like any other, with its provenance.
``recall-eval import locomo FILE OUT`` and ``recall-eval import longmemeval
FILE OUT`` read the file a benchmark publishes (streamed, one element at a
time) and write one conversation file per conversation into OUT, with a
``_defaults.yaml`` declaring the suite's categories (and LoCoMo's system
prompt), and the provenance next to them: ``_suite.json`` and ``SUITE.md``
(source file name, sha256, licence, importer version, what was repaired,
dropped and reported, and the gold audit of :mod:`harness.importers.audit`,
which ``recall-eval audit SUITE`` runs on any suite). docs/importers.md
describes the mapping and the rules.

``recall-eval import transcripts FILE OUT`` reads a team's logged conversations
instead (:func:`import_transcripts`, :mod:`harness.importers.transcripts`).

Public surface: :func:`run_import`, :func:`import_transcripts`, :class:`ImportResult`, :class:`ImporterError`,
:class:`FaultLog`, :func:`cli_import`, the audit (:func:`audit_suite`, :class:`AuditResult`,
:func:`flagged_in_suites` for the report, :func:`cli_audit`); the converters
:func:`harness.importers.locomo.convert_sample` and
:func:`harness.importers.longmemeval.convert_question` work on the parsed
JSON and are what the tests drive.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.defaults import available_cpus
from harness.importers import locomo, longmemeval
from harness.importers.audit import KINDS as AUDIT_KINDS
from harness.importers.audit import AuditResult, audit_suite, cli_audit, flagged_in_suites
from harness.importers.faults import FaultLog, ImporterError
from harness.importers.jsonstream import iter_array
from harness.importers.output import (
    DEFAULTS,
    SuiteInfo,
    dump_yaml,
    file_sha256,
    prepare_out,
    write_provenance,
    write_text,
)
from harness.importers.parallel import convert_all
from harness.wrapping import say

__all__ = ["AUDIT_KINDS", "FORMATS", "AuditResult", "FaultLog", "ImportResult", "ImporterError", "audit_suite",
           "cli_audit", "cli_import", "flagged_in_suites", "import_transcripts", "run_import"]


# Below this size a source is converted in this process (LoCoMo's 2.8 MB in ~3 s); LongMemEval S is ~260 MB.
WORKER_MIN_BYTES = 8_000_000


@dataclass(frozen=True)
class _Format:
    convert: Callable[[Any, int, FaultLog, set[str]], dict[str, Any] | None]
    defaults: Callable[[], dict[str, Any]]
    licence: str
    licence_url: str
    dataset_url: str
    notes: tuple[str, ...]


FORMATS: dict[str, _Format] = {
    "locomo": _Format(
        locomo.convert_sample, locomo.defaults, locomo.LICENCE, locomo.LICENCE_URL, locomo.DATASET_URL,
        ("One conversation file per LoCoMo sample; observation facts are the memory items, citing their evidence "
         "turns.",
         "Categories as LoCoMo's evaluation code numbers them: 1 multi_hop, 2 temporal, 3 open_domain, 4 single_hop, "
         "5 adversarial (abstain; the adversarial answer is a someone_else canary).",
         "Gold answers become approximate checks (variants, list groups, salient words); f1_reference and a rubric "
         "carry the gold itself.")),
    "longmemeval": _Format(
        longmemeval.convert_question, longmemeval.defaults, longmemeval.LICENCE, longmemeval.LICENCE_URL,
        longmemeval.DATASET_URL,
        ("One conversation file (one probe) per LongMemEval question; _abs questions abstain.",
         longmemeval.EXTRACTION_NOTE)),
}


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote."""

    out: Path
    files: tuple[Path, ...]
    conversations: int
    probes: int
    items: int
    sha256: str
    faults: FaultLog
    audit: AuditResult


def _protocol_note(protocol: dict[str, Any] | None) -> str:
    """SUITE.md's line on the published protocol the suite declares (``protocol`` in ``_defaults.yaml``)."""
    if not protocol:
        return "No protocol declared: every category is in the headline."
    parts = [f"headline {', '.join(protocol['headline'])}" if protocol.get("headline") else "headline every category"]
    if protocol.get("reported_apart"):
        parts.append(f"reported apart {', '.join(protocol['reported_apart'])}")
    if protocol.get("abstention_apart"):
        parts.append("abstention questions reported apart as an abstention score")
    if protocol.get("judge_only"):
        parts.append(f"{', '.join(protocol['judge_only'])} graded by a judge only (not judged without --judge-model)")
    recent = protocol["recent_history"]
    parts.append(f"recent history {recent['kind']}" + (f" {recent['count']}" if recent.get("count") else ""))
    return f"Protocol ({protocol['name']}, `protocol` in {DEFAULTS}): " + "; ".join(parts) + "."


def _file_name(cid: str) -> str:
    return cid.replace(":", "_") + ".yaml"


def run_import(kind: str, source: Path, out: Path, *, force: bool = False, limit: int | None = None,
               echo: Callable[[str], None] = print, jobs: int = 1) -> ImportResult:
    """Import the benchmark file ``source`` of format ``kind`` into the suite folder ``out``.

    Args:
        kind: ``locomo`` or ``longmemeval``.
        source: The published JSON file.
        out: The suite folder to write (new, empty, or an earlier import).
        force: Write even inside a git work tree.
        limit: Import only the first ``limit`` elements (samples or questions).
        echo: Where progress and the fault summary go.
        jobs: Worker processes converting the elements of a source of :data:`WORKER_MIN_BYTES` or more
            (:mod:`harness.importers.parallel`: the same files and logs as one process).

    Raises:
        ImporterError: The source is unreadable or not the format's shape, or
            ``out`` cannot be written (see :func:`harness.importers.output.prepare_out`).
    """
    spec = FORMATS[kind]
    if limit is not None and limit < 1:
        raise ImporterError(f"--limit {limit}: give 1 or more (the number of samples or questions to import)")
    if not source.is_file():
        raise ImporterError(f"{source}: no such file; give the path of the {kind} JSON file you downloaded")
    sha256 = file_sha256(source)
    prepare_out(out, force=force)
    faults = FaultLog()
    notes = list(spec.notes)
    if kind == "longmemeval":
        release = "2025 cleaned release" if "cleaned" in source.name.lower() else "original release (or renamed file)"
        notes.append(f"Source release by file name: {release}.")
    notes.append(_protocol_note(spec.defaults().get("protocol")))
    info = SuiteInfo(kind, source, spec.licence, spec.licence_url, spec.dataset_url, notes)
    write_provenance(out, info, faults, sha256, complete=False)
    write_text(out / DEFAULTS, dump_yaml(spec.defaults()))
    files: list[Path] = []
    taken: set[str] = set()
    audit = AuditResult()
    elements = itertools.islice(enumerate(iter_array(source)), limit)
    workers = jobs if jobs > 1 and source.stat().st_size >= WORKER_MIN_BYTES else 1
    for converted in convert_all(spec.convert, elements, faults, taken, workers):
        if converted is None:
            continue
        path = out / _file_name(converted.id)
        write_text(path, converted.text)
        files.append(path)
        audit.merge(converted.audit)
        info.conversations += 1
        info.probes += len(converted.probes)
        info.items += converted.items
        for category, without_relevant in converted.probes:
            info.categories[category] = info.categories.get(category, 0) + 1
            if without_relevant:
                info.no_relevant[category] = info.no_relevant.get(category, 0) + 1
    if not files:
        raise ImporterError(f"{source}: no usable {kind} element in the file (see the drops above); "
                            f"is it the {kind} file?" + "".join(f"\n  {line}" for line in faults.lines()))
    write_provenance(out, info, faults, sha256, complete=True, audit=audit)
    echo(f"imported {info.conversations} conversations, {info.probes} probes, {info.items} items "
         f"from {source.name} (sha256 {sha256[:12]}..., licence {spec.licence}) into {out}")
    for line in faults.lines():
        echo(line)
    for line in audit.lines(limit=0):
        echo(line)
    return ImportResult(out, tuple(files), info.conversations, info.probes, info.items, sha256, faults, audit)


TRANSCRIPT_NOTES = (
    "Logged traffic: one scenario per later session of a user in a workspace; its first user message is an "
    "unlabelled probe (no gold; continuity n/a), its earlier sessions the group's sessions before it.",
    "The assistant's logged reply is expect.logged_reply: a reference for a pairwise judge, never a gold answer.",
    "SENSITIVE: these files hold real user data (secrets redacted); runs over them are marked sensitive.",
)


def import_transcripts(source: Path, out: Path, *, force: bool = False, redact: tuple[str, ...] = (),
                       echo: Callable[[str], None] = print) -> ImportResult:
    """Import logged conversations (:mod:`harness.importers.transcripts`) into the suite folder ``out``.

    Args:
        source: A JSONL file of messages, or a folder of one JSON file per session.
        out: The suite folder to write (new, empty, or an earlier import).
        force: Write even inside a git work tree.
        redact: ``--redact`` patterns, applied after the default secret patterns.
        echo: Where the figures and the fault summary go.

    Raises:
        ImporterError: the input breaks a rule that exits, a pattern does not compile, or ``out`` cannot be written.
    """
    from harness.importers import transcripts
    from harness.importers.output import source_sha256
    from harness.redaction import RedactionError, Redactor

    try:
        redactor = Redactor.build(redact)
    except RedactionError as exc:
        raise ImporterError(str(exc)) from None
    if not source.exists():
        raise ImporterError(f"{source}: no such file or folder; give a JSONL file of messages or a folder of "
                            "session files")
    sha256 = source_sha256(source)
    faults = FaultLog()
    stats = transcripts.TranscriptStats()
    scenarios = list(transcripts.read_transcripts(source, faults, redactor, stats))  # every exit before a write
    if not scenarios:
        raise ImporterError(f"{source}: no probe: {stats.sessions} usable session(s) in {stats.groups} user/workspace "
                            "group(s), and a probe needs a group with two sessions or more"
                            + "".join(f"\n  {line}" for line in faults.lines()))
    prepare_out(out, force=force)
    info = SuiteInfo("transcripts", source, "the team's own data: keep it private", "", "", list(TRANSCRIPT_NOTES))
    extra = {"sensitive": True, "redaction": {"default_patterns": True, "extra_patterns": redactor.digests,
                                              "redacted": stats.redactions},
             "transcripts": {"messages": stats.messages, "sessions": stats.sessions, "groups": stats.groups}}
    write_provenance(out, info, faults, sha256, complete=False, extra=extra)
    write_text(out / DEFAULTS, dump_yaml(transcripts.defaults()))
    files = []
    for data in scenarios:
        path = out / _file_name(data["id"])
        write_text(path, dump_yaml(data))
        files.append(path)
        info.conversations += 1
        info.probes += 1
        info.categories[data["category"]] = info.categories.get(data["category"], 0) + 1
    write_provenance(out, info, faults, sha256, complete=True, extra=extra)
    echo(f"imported {stats.messages} messages, {stats.sessions} sessions in {stats.groups} user/workspace groups: "
         f"{info.probes} unlabelled probes from {source.name} (sha256 {sha256[:12]}...) into {out}")
    echo(f"redacted: {stats.redactions} match(es) of the secret patterns"
         + (f" and {len(redactor.extra)} --redact pattern(s)" if redactor.extra else "")
         + "; the folder is sensitive (real user data): keep it out of version control")
    for line in faults.lines():
        echo(line)
    return ImportResult(out, tuple(files), info.conversations, info.probes, 0, sha256, faults, AuditResult())


def cli_import(args: argparse.Namespace) -> int:
    """``recall-eval import FORMAT FILE OUT``: 0 on success, 2 when the input or the output folder is refused."""
    try:
        if args.format == "transcripts":
            if args.limit is not None:
                raise ImporterError("--limit applies to locomo and longmemeval; a transcripts import reads every session")
            import_transcripts(Path(args.file), Path(args.out), force=args.force, redact=tuple(args.redact or ()),
                               echo=say)
        elif getattr(args, "redact", None):
            raise ImporterError("--redact applies to transcripts (benchmark files hold no user data)")
        else:
            run_import(args.format, Path(args.file), Path(args.out), force=args.force, limit=args.limit,
                       jobs=getattr(args, "jobs", None) or available_cpus(), echo=say)  # wrapped to the terminal
    except ImporterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
