"""Pasted histories stored once per run: ``histories.jsonl`` beside ``results.jsonl``.

``full_history`` pastes every earlier session into the prompt: on LoCoMo a
~25k-token history shared by a conversation's ~200 probes. Copied into every
record it made ``results.jsonl`` 248 MB; here each distinct history is one
line of ``histories.jsonl`` (``{"digest", "schema_version", "messages"}``,
digest first so a resumed writer reads the digests without parsing the
messages), and a record (schema 2) holds, in place of the span, one marker
message ``{"role": "pasted_history", "digest": ..., "count": ...}`` plus its
:class:`~harness.records.models.PastedHistory`.

Histories schema 2: a session shared by several histories (LongMemEval S
pastes one filler session into many questions' histories) is stored once.
Each pasted message whose JSON is at least :data:`SHARED_MESSAGE_CHARS`
long is a line of its own (``{"digest", "schema_version", "message"}``,
named by the SHA-256 of its canonical JSON), written the first time any
history holds it; the history's line lists its messages as ``parts``, each
that digest or, for a short message, the message itself. A history's digest
is still the SHA-256 of its whole span, checked after the parts are put
together. Histories files of schema 1 (each history's messages inline,
``messages``) read as before, and both kinds of line may share a file (a run
resumed by a newer version).

Readers splice the span back, so every stage above sees whole messages
(scoring, the report, its transcripts, resume); records resolved from one
history, or histories sharing a message, share those message objects
(read-only: nothing above changes a record's messages). A history's lines
(its new messages, then itself) are written in one append before the first
record that points at it, so a crash never leaves a reference to nothing.
Records of schema 1 (inline histories) read as before.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from harness.records.jsontext import json_text, model_json
from harness.records.models import HISTORIES_FILE, PastedHistory, SampleRecord

MARKER_ROLE = "pasted_history"
HISTORIES_SCHEMA_VERSION = 2
#: A pasted message whose canonical JSON is at least this long is stored once per run and named by digest.
SHARED_MESSAGE_CHARS = 512
#: Hex digits of a shared message's name (the first of its SHA-256): 128 bits, and half the bytes of each reference.
MESSAGE_DIGEST_HEX = 32
_DIGEST_AT_START = re.compile(rb'^\{"digest":\s*"([0-9a-f]{64}|[0-9a-f]{32})"')


def history_digest(span: list[dict[str, Any]]) -> str:
    """SHA-256 of ``span``'s canonical JSON (sorted keys, no spaces): the same messages, the same name."""
    text = json_text(span, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pasted_span(messages: list[dict[str, Any]], at: int, count: int) -> PastedHistory | None:
    """The :class:`PastedHistory` of ``messages[at:at + count]`` (None when the span is empty or out of range)."""
    if count < 1 or at < 0 or at + count > len(messages):
        return None
    return PastedHistory(at=at, count=count, digest=history_digest(messages[at:at + count]))


def _canonical(value: Any) -> str:
    return json_text(value, sort_keys=True, separators=(",", ":"))


def history_lines(record: SampleRecord, written: set[str]) -> tuple[str, list[str]]:
    """The ``histories.jsonl`` text of ``record``'s pasted span, and the digests it writes (``record.pasted`` must be set).

    The text is a line for each long message not in ``written`` (nor earlier
    in this span), then the history's line naming its parts.
    """
    pasted = record.pasted
    assert pasted is not None
    parts: list[str | dict[str, Any]] = []
    lines: list[str] = []
    added: list[str] = []
    for message in record.messages[pasted.at:pasted.at + pasted.count]:
        canonical = _canonical(message)
        if len(canonical) < SHARED_MESSAGE_CHARS:
            parts.append(message)
            continue
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:MESSAGE_DIGEST_HEX]
        parts.append(digest)
        if digest not in written and digest not in added:
            lines.append(json_text({"digest": digest, "schema_version": HISTORIES_SCHEMA_VERSION, "message": message}))
            added.append(digest)
    lines.append(json_text({"digest": pasted.digest, "schema_version": HISTORIES_SCHEMA_VERSION, "parts": parts}))
    return "".join(f"{line}\n" for line in lines), [*added, pasted.digest]


def by_reference_line(record: SampleRecord) -> str:
    """``record`` as a ``results.jsonl`` line with its pasted span replaced by the marker message."""
    pasted = record.pasted
    if pasted is None:
        return model_json(record)
    marker = {"role": MARKER_ROLE, "digest": pasted.digest, "count": pasted.count}
    messages = [*record.messages[:pasted.at], marker, *record.messages[pasted.at + pasted.count:]]
    return model_json(record.model_copy(update={"messages": messages}))


def written_digests(path: Path) -> set[str]:
    """The digests of the complete lines of a ``histories.jsonl`` (read from each line's start only)."""
    found: set[str] = set()
    if not path.is_file():
        return found
    with path.open("rb") as handle:
        for line in handle:
            match = _DIGEST_AT_START.match(line)
            if match is not None and line.endswith(b"\n"):
                found.add(match.group(1).decode("ascii"))
    return found


class HistoryBook:
    """The histories of one run folder, read once on first use; resolves a record's marker into its span."""

    def __init__(self, results_path: Path) -> None:
        self.path = Path(results_path).parent / HISTORIES_FILE
        self._spans: dict[str, list[dict[str, Any]]] | None = None

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        spans: dict[str, list[dict[str, Any]]] = {}
        shared: dict[str, dict[str, Any]] = {}  # schema 2: a long message's digest -> the message
        assembled: list[tuple[str, list[Any]]] = []  # schema 2: (history digest, its parts), put together at the end
        if self.path.is_file():
            for raw in self.path.read_bytes().split(b"\n"):
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue  # a torn line: a record that needs it is reported, nothing else
                if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
                    continue
                if isinstance(data.get("message"), dict):  # an edited one fails its histories' digests below
                    shared.setdefault(data["digest"], data["message"])
                elif isinstance(data.get("parts"), list):
                    assembled.append((data["digest"], data["parts"]))
                elif isinstance(data.get("messages"), list):  # schema 1: the history's messages inline
                    if history_digest(data["messages"]) == data["digest"]:  # else edited: a record needing it is reported
                        spans.setdefault(data["digest"], data["messages"])
        for digest, parts in assembled:
            span = [shared.get(part) if isinstance(part, str) else part for part in parts]
            if digest not in spans and all(isinstance(m, dict) for m in span) and history_digest(span) == digest:
                spans[digest] = span  # a lost or edited part leaves the history out: a record needing it is reported
        return spans

    def resolve(self, record: SampleRecord) -> str | None:
        """Splice the span into ``record.messages`` in place; the problem (one line) when it cannot be."""
        pasted = record.pasted
        if pasted is None:
            return None
        messages = record.messages
        marker = messages[pasted.at] if pasted.at < len(messages) else None
        if not isinstance(marker, dict) or marker.get("role") != MARKER_ROLE:
            # Written inline by a plain dump (a worker, a copy): whole already, if the span is the one named.
            if history_digest(messages[pasted.at:pasted.at + pasted.count]) == pasted.digest:
                return None
            return f"pasted.at {pasted.at} is neither a {MARKER_ROLE} message nor the start of the history pasted.digest names"
        if marker.get("digest") != pasted.digest:
            return f"the {MARKER_ROLE} message names {str(marker.get('digest'))[:12]}..., pasted.digest {pasted.digest[:12]}..."
        if self._spans is None:
            self._spans = self._load()
        span = self._spans.get(pasted.digest)
        if span is None:
            return f"pasted history {pasted.digest[:12]}... is not in {self.path}"
        if len(span) != pasted.count:
            return f"pasted history {pasted.digest[:12]}... holds {len(span)} messages, pasted.count says {pasted.count}"
        record.messages = [*messages[:pasted.at], *span, *messages[pasted.at + 1:]]
        return None
