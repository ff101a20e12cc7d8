"""The memory document's write path (seed 001, V0.2): the ``extract_memory`` agent tool.

The tool appends one entry to the Markdown memory file of
:mod:`harness.memory_systems.document`::

    ## <title>
    <!-- maka-memory: id=<sha256(content + createdAt)[:16]> origin=extracted createdAt=<ms> updatedAt=<ms>
    status=active tags=<csv> [decayTtlMs=<ms>] -->
    <content>

Rules the seed sets, each enforced here:

- registration (:func:`extract_tool_registered`): only with ``extract_tool_enabled``
  **and** ``agent_read_enabled`` (you cannot extract what the agent may not
  read), memory on, and not incognito; a run that is not registered answers
  any call with ``policy_denied`` and writes nothing;
- secrets are redacted on write (:func:`redact_secrets`): no API key, token,
  password assignment or private key block reaches the file, title and tags
  included (a tag that is a piece of a secret of the content is dropped);
- the model chooses only title, content and tags: id, origin, times, status
  and decay are the Host's (``default_decay_days`` of the settings);
- an append that would push the file over the reader's 128 KiB limit is
  refused (the reader would fall into safe mode and show no memory at all);
- the same content as an active entry already in the file is not appended twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.memory_systems.document import DocumentSettings
from harness.memory_systems.document_format import (
    DOCUMENT_HEADING,
    MAX_DOCUMENT_BYTES,
    METADATA_PREFIX,
    entry_title,
    escape_content,
    parse_memory_document,
)
from harness.redaction import REDACTED, contains_secret, redact_secrets  # noqa: F401 (re-exported)
from memory_tools import (
    ToolArgumentError,
    ToolCallRecord,
    decode_arguments,
    join_errors,
    json_type,
    show_value,
    unknown_properties,
)

EXTRACT_TOOL = "extract_memory"
MAX_CONTENT_CHARS = 2_000
MAX_TAGS = 16
MAX_TAG_CHARS = 64
DAY_MS = 86_400_000



def extract_tool_registered(settings: DocumentSettings, *, incognito: bool) -> bool:
    """Whether ``extract_memory`` is offered: extraction on, agent reads on, memory on, not incognito (fail closed)."""
    return (
        incognito is False
        and settings.enabled is True
        and settings.agent_read_enabled is True
        and settings.extract_tool_enabled is True
    )


EXTRACT_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": EXTRACT_TOOL,
        "description": (
            "Append one entry to the user's memory file, which you will be shown in later conversations. Write one "
            "durable, specific fact, preference or decision with its exact values (names, numbers, commands), not "
            "general advice. Never include passwords, API keys or tokens: they are removed."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS, "description": "The entry."},
                "title": {"type": "string", "maxLength": 120, "description": "Optional short heading; default: the first line."},
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_TAG_CHARS},
                    "maxItems": MAX_TAGS,
                    "description": "Optional short labels (topics, project names).",
                },
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    },
}


@dataclass(frozen=True, slots=True)
class ExtractArguments:
    """Validated ``extract_memory`` arguments, not yet redacted."""

    content: str
    title: str | None
    tags: tuple[str, ...]


def parse_extract_arguments(arguments: dict[str, Any]) -> ExtractArguments:
    """Validate ``content`` (required), ``title`` and ``tags``; nothing else is accepted.

    Raises:
        ToolArgumentError: naming every argument at fault (up to five).
    """
    errors = unknown_properties(arguments, ("content", "title", "tags"))
    content = arguments.get("content")
    if content is None:
        errors.append("content is required: the fact to remember, with its exact values")
    elif not isinstance(content, str) or not content.strip():
        errors.append(f"content must be non-empty text, got {json_type(content) if not isinstance(content, str) else 'blank text'}")
    elif len(content.strip()) > MAX_CONTENT_CHARS:
        errors.append(f"content has {len(content.strip())} characters; at most {MAX_CONTENT_CHARS} are allowed")
    title = arguments.get("title")
    if title is not None and not isinstance(title, str):
        errors.append(f"title must be a string, got {json_type(title)}")
    tags = arguments.get("tags")
    if tags is None:
        tags = []
    elif not isinstance(tags, list):
        errors.append(f'tags must be an array of strings, e.g. ["deploy"], got {json_type(tags)}')
        tags = []
    elif len(tags) > MAX_TAGS:
        errors.append(f"tags has {len(tags)} entries; at most {MAX_TAGS} are allowed")
    for index, tag in enumerate(tags if isinstance(tags, list) else []):
        if not isinstance(tag, str) or not tag.strip() or len(tag.strip()) > MAX_TAG_CHARS:
            errors.append(f"tags[{index}] must be text of 1 to {MAX_TAG_CHARS} characters, got {show_value(tag)}")
    if errors:
        raise ToolArgumentError(join_errors(errors))
    clean_tags = tuple(dict.fromkeys(" ".join(tag.split()) for tag in tags))
    return ExtractArguments(content.strip(), title.strip() or None if isinstance(title, str) else None, clean_tags)  # type: ignore[union-attr]


def entry_id(content: str, created_at: int) -> str:
    """The V0.2 stable id: ``sha256(content + createdAt)[:16]``, the same for the same entry whatever its title."""
    return hashlib.sha256(f"{content}{created_at}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _encode(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def render_entry(args: ExtractArguments, *, now_ms: int, settings: DocumentSettings) -> tuple[str, str]:
    """The redacted entry text (heading, metadata, escaped content) and its id."""
    content = redact_secrets(args.content)
    leaky = args.title is not None and any(_piece_of_secret(word, args.content, content) for word in args.title.split())
    title = entry_title(redact_secrets(args.title) if args.title and not leaky else content)
    title = " ".join(title.split())  # a line break in a title would end the heading
    tags = [redact_secrets(tag) for tag in args.tags if not _piece_of_secret(tag, args.content, content)]
    identifier = entry_id(content, now_ms)
    fields = {
        "id": identifier,
        "origin": "extracted",
        "createdAt": str(now_ms),
        "updatedAt": str(now_ms),
        "status": "active",
        "tags": ",".join(_encode(tag) for tag in tags),
    }
    days = settings.default_decay_days
    if type(days) is int and days > 0:
        fields["decayTtlMs"] = str(days * DAY_MS)
    metadata = f"{METADATA_PREFIX} " + " ".join(f"{key}={value}" for key, value in fields.items()) + " -->"
    return f"## {title}\n{metadata}\n{escape_content(content)}", identifier


def _piece_of_secret(tag: str, original: str, redacted: str) -> bool:
    """Whether ``tag`` is a piece of a secret the content held: in the original content, gone from the redacted one
    (``sk-proj-Zq8...`` split into the tags ``proj`` and ``zq8...`` would otherwise carry the key past redaction)."""
    word = " ".join(tag.split()).lower()
    return bool(word) and word in original.lower() and word not in redacted.lower()


def append_entry(document: str, args: ExtractArguments, *, now_ms: int, settings: DocumentSettings) -> tuple[str, str, str]:
    """Append ``args`` to ``document``; returns ``(new document, event, entry id)``.

    ``event`` is ``appended``, or ``unchanged`` when an active entry already
    holds the same (redacted) content (the document is returned as it was).

    Raises:
        ToolArgumentError: the file would grow past :data:`MAX_DOCUMENT_BYTES`.
    """
    block, identifier = render_entry(args, now_ms=now_ms, settings=settings)
    new_content = parse_memory_document(block).entries[0].content
    state = parse_memory_document(document, now_ms=now_ms)
    for entry in state.active_entries:
        if entry.content == new_content:
            return document, "unchanged", entry.id
    base = document.rstrip("\n") if document.strip() else DOCUMENT_HEADING
    updated = f"{base}\n\n{block}\n"
    if len(updated.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise ToolArgumentError(
            f"the memory file would exceed {MAX_DOCUMENT_BYTES:,} bytes; the entry was not saved (save less, or only what matters most)"
        )
    return updated, "appended", identifier


def write_document_file(path: Path, text: str) -> None:
    """Write the memory file atomically with the seed's permissions: directory 0700, file 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, text, mode=0o600)


class DocumentExtractRun:
    """One run's ``extract_memory`` tool over one memory file (kept in memory, optionally mirrored to ``path``).

    Duck-types ``memory_tools.MemoryRun`` for the agent loop. Registration is
    decided once, at construction, by :func:`extract_tool_registered`.
    """

    def __init__(
        self, document: str, settings: DocumentSettings, *, incognito: bool, now_ms: int, path: Path | None = None
    ) -> None:
        self.document = document
        self._settings = settings
        self._registered = extract_tool_registered(settings, incognito=incognito)
        self._now_ms = now_ms
        self._path = path

    @property
    def admitted(self) -> bool:
        return self._registered

    @property
    def tool_names(self) -> tuple[str, ...]:
        return (EXTRACT_TOOL,) if self._registered else ()

    def tool_specs(self) -> list[dict[str, Any]]:
        return json.loads(json.dumps([EXTRACT_SPEC])) if self._registered else []

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolCallRecord:
        """Execute one call; never raises because of the model's input."""
        started = time.perf_counter()
        written = False
        if not self._registered:
            status, text = _error("policy_denied", "the memory file cannot be written in this conversation")
        elif name != EXTRACT_TOOL:
            status, text = _error("unknown_tool", f"unknown tool {show_value(name)}; available: {EXTRACT_TOOL}")
        else:
            try:
                args = parse_extract_arguments(decode_arguments(arguments, name))
                self.document, event, identifier = append_entry(
                    self.document, args, now_ms=self._now_ms, settings=self._settings
                )
            except ToolArgumentError as exc:
                status, text = _error("invalid_arguments", str(exc))
            else:
                written = event == "appended"
                status, text = "ok", json.dumps({"event": event, "id": identifier}, separators=(",", ":"))
        if written and self._path is not None:
            write_document_file(self._path, self.document)
        return ToolCallRecord(
            name=name if isinstance(name, str) else repr(name),
            arguments=arguments
            if isinstance(arguments, str)
            else ""
            if arguments is None
            else json.dumps(arguments, ensure_ascii=False, default=repr),
            status=status,
            result_text=text,
            result_chars=len(text),
            disclosed_item_ids=(),
            storage_read=self._registered and name == EXTRACT_TOOL,
            elapsed_s=time.perf_counter() - started,
        )


def _error(code: str, message: str) -> tuple[str, str]:
    return code, json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False, separators=(",", ":"))
