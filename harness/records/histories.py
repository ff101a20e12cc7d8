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
``messages``) read as before, and every kind of line may share a file (a run
resumed by a newer version).

Histories schema 3: what a record adds (its new shared messages, then its
history, as schema 2 lines) is one line, compressed:
``{"digest", "schema_version": 3, "holds": [message digests], "zlib"}``,
``zlib`` the base64 of the zlib-compressed schema 2 lines. The text of a
LongMemEval S run's histories is ~205 MB distinct (few sessions repeat);
compressed at :data:`ZLIB_LEVEL` it is under half of that. ``holds`` lists the
digests the line adds, so a resumed writer still reads them without
decompressing anything; a torn or damaged line is skipped as before.

Readers splice the span back, so every stage above sees whole messages
(scoring, the report, its transcripts, resume); records resolved from one
history, or histories sharing a message, share those message objects
(read-only: nothing above changes a record's messages). A history's lines
(its new messages, then itself) are written in one append before the first
record that points at it, so a crash never leaves a reference to nothing.
Records of schema 1 (inline histories) read as before.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import zlib
from pathlib import Path
from typing import Any

from harness.records.jsontext import json_text, model_json
from harness.records.models import HISTORIES_FILE, PastedHistory, SampleRecord

MARKER_ROLE = "pasted_history"
HISTORIES_SCHEMA_VERSION = 3
#: The schema of the lines inside a schema 3 line's ``zlib``.
_INNER_SCHEMA_VERSION = 2
#: zlib's level for a schema 3 line. On LongMemEval S-shaped histories (base64 included): level 1 2.3x smaller,
#: 3 2.6x, 6 3.0x, at 0.28, 0.43 and 1.12 s CPU per 26 MB; 3 keeps a whole S run's cost to a few seconds.
ZLIB_LEVEL = 3
#: A pasted message whose canonical JSON is at least this long is stored once per run and named by digest.
SHARED_MESSAGE_CHARS = 512
#: Hex digits of a shared message's name (the first of its SHA-256): 128 bits, and half the bytes of each reference.
MESSAGE_DIGEST_HEX = 32
_DIGEST_AT_START = re.compile(rb'^\{"digest":\s*"([0-9a-f]{64}|[0-9a-f]{32})"')
_HELD = re.compile(rb'"holds":\s*\[([^\]]*)\]')
_HELD_DIGEST = re.compile(rb"[0-9a-f]{32}")


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
    """The ``histories.jsonl`` line of ``record``'s pasted span, and the digests it writes (``record.pasted`` must be set).

    The line (schema 3) compresses a schema 2 line for each long message not
    in ``written`` (nor earlier in this span), then the history's line naming
    its parts.
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
            lines.append(json_text({"digest": digest, "schema_version": _INNER_SCHEMA_VERSION, "message": message}))
            added.append(digest)
    lines.append(json_text({"digest": pasted.digest, "schema_version": _INNER_SCHEMA_VERSION, "parts": parts}))
    packed = zlib.compress("".join(f"{line}\n" for line in lines).encode("utf-8", "surrogatepass"), ZLIB_LEVEL)
    line = json_text({"digest": pasted.digest, "schema_version": HISTORIES_SCHEMA_VERSION, "holds": added,
                      "zlib": base64.b64encode(packed).decode("ascii")})
    return f"{line}\n", [*added, pasted.digest]


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
                zipped = line.find(b'"zlib"')
                held = _HELD.search(line, 0, zipped) if zipped > 0 else None  # schema 3: the messages it adds
                if held is not None:
                    found.update(d.decode("ascii") for d in _HELD_DIGEST.findall(held.group(1)))
    return found


def _unpacked(data: dict[str, Any]) -> list[bytes]:
    """The schema 2 lines inside a schema 3 line (none when its ``zlib`` does not decompress: a damaged line)."""
    packed = data.get("zlib")
    if not isinstance(packed, str):
        return []
    try:
        return zlib.decompress(base64.b64decode(packed, validate=True)).split(b"\n")
    except (binascii.Error, ValueError, zlib.error):
        return []


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
            lines = self.path.read_bytes().split(b"\n")
            while lines:
                raw = lines.pop()  # order does not matter: each history is put together once all lines are read
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue  # a torn line: a record that needs it is reported, nothing else
                if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
                    continue
                if data.get("schema_version") == 3:
                    lines += _unpacked(data)
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
            whole = [m for m in span if isinstance(m, dict)]
            if digest not in spans and len(whole) == len(span) and history_digest(whole) == digest:
                spans[digest] = whole  # a lost or edited part leaves the history out: a record needing it is reported
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
