"""The memory file of the earlier design: seed 001's Markdown format, written and read as the product does.

This is the earlier design of ``../shared/seeds/001_c0362ed0fed27e97.txt``
(``../shared/design/memory-semantics.md``, "The second design"): the user's
memory lives in one Markdown file under the workspace directory. Two pure
functions, the writer and the reader:

- :func:`render_memory_document`: store records -> the V0.2 disk format::

      # Maka Memory

      ## <title>
      <!-- maka-memory: id=<id> origin=<origin> createdAt=<ms> updatedAt=<ms> status=<active|archived> tags=<csv> -->
      <content>

  The title is the item's first content line, whitespace collapsed and cut
  at a word boundary to at most :data:`TITLE_MAX_CHARS` characters with "…"
  (a human names an entry after what it says; keys are sorted
  alphabetically in the store, so the "first key" would be arbitrary). The
  keys go into ``tags``. Metadata values are percent-encoded (a key like
  ``ci provider`` holds a space, which would split the ``key=value``
  tokens), and a content line that starts with ``#`` or the metadata marker
  is escaped with a backslash so that it cannot open an entry. Entries are
  ordered by ``updatedAt``, newest first (ties: item id), so the prompt cap
  drops the oldest.
- :func:`parse_memory_document`: the reader's observed behaviour (see its
  docstring): fail-open, 128 KiB safe mode, only active entries reach the
  prompt. ``decayTtlMs`` archives an entry at parse time
  (:func:`archive_decayed` writes that into the file).

The prompt section and the arm are :mod:`harness.memory_systems.document`;
the write path (``extract_memory``) is :mod:`harness.memory_systems.document_write`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote

from memory_tools import LifecycleState, MemoryItem, MemoryItemRecord, Origin

MAX_DOCUMENT_BYTES = 131_072
"""The reader's size limit (128 KiB of UTF-8); a larger file puts it in safe mode."""
TITLE_MAX_CHARS = 60
DOCUMENT_HEADING = "# Maka Memory"
METADATA_PREFIX = "<!-- maka-memory:"

_ORIGINS = {Origin.USER_REQUESTED: "manual", Origin.AGENT_EXTRACTED: "extracted"}
_KNOWN_ORIGINS = frozenset({"manual", "extracted", "imported", "unknown"})
_HEADING = re.compile(r"^## (.*)$")
_ESCAPE = re.compile(r"^(## |\s*<!-- maka-memory:)")


@dataclass(frozen=True, slots=True)
class DocumentEntry:
    """One ``## `` section of the memory file, as the reader sees it.

    Attributes:
        title: The heading text.
        content: The section's lines without metadata comments, blank edges trimmed.
        id: ``id`` of the metadata comment; "" when there is none.
        origin: ``manual``/``extracted``/``imported``; ``unknown`` when missing or not one of these.
        created_at: ``createdAt`` in ms; None when missing or not an integer.
        updated_at: ``updatedAt`` in ms; None when missing or not an integer.
        status: ``status`` as written, or ``archived`` when the decay timer ran out at
            parse time; None when missing (which means active).
        tags: ``tags`` split on commas, each percent-decoded once.
        decay_ttl_ms: ``decayTtlMs``: the entry is archived once ``now > createdAt + decayTtlMs``;
            None when missing or not a non-negative integer.
        decayed: True when this parse archived the entry because its decay timer ran out.
    """

    title: str
    content: str
    id: str = ""
    origin: str = "unknown"
    created_at: int | None = None
    updated_at: int | None = None
    status: str | None = None
    tags: tuple[str, ...] = ()
    decay_ttl_ms: int | None = None
    decayed: bool = False

    @property
    def active(self) -> bool:
        """Only ``status=active`` or no status reaches the prompt; any other value keeps it back."""
        return self.status is None or self.status == "active"


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What the reader made of a memory file.

    Attributes:
        status: ``ok``; ``safe_mode`` when the file is over :data:`MAX_DOCUMENT_BYTES`;
            ``disabled`` (memory off) or ``incognito_blocked`` (privacy context) when
            :func:`read_memory_state` did not read the file at all.
        entries: Every entry in file order (archived ones included); empty unless ``ok``.
        size_bytes: The file's UTF-8 size (0 when the file was not read).
        reason: Why the reader is not ``ok``; None when ``ok``.
    """

    status: Literal["ok", "safe_mode", "disabled", "incognito_blocked"]
    entries: tuple[DocumentEntry, ...]
    size_bytes: int
    reason: str | None = None

    @property
    def active_entries(self) -> tuple[DocumentEntry, ...]:
        return tuple(entry for entry in self.entries if entry.active)


# --- writing ---------------------------------------------------------------------------------------------------


def entry_title(content: str) -> str:
    """A heading for ``content``: its first line, whitespace collapsed, cut at a word boundary with "…"."""
    first = next((line for line in content.splitlines() if line.strip()), "")
    text = " ".join(first.split()).lstrip("#").strip() or "Untitled"
    if len(text) <= TITLE_MAX_CHARS:
        return text
    cut = text[: TITLE_MAX_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:.") + "…"


def _encode(value: str) -> str:
    return quote(value, safe="")


def _metadata(item: MemoryItem, tags: Iterable[str]) -> str:
    status = "archived" if item.lifecycle_state == LifecycleState.ARCHIVED else "active"
    fields = {
        "id": _encode(item.item_id),
        "origin": _ORIGINS.get(item.origin, "unknown"),
        "createdAt": str(item.created_at),
        "updatedAt": str(item.updated_at),
        "status": status,
        "tags": ",".join(_encode(tag) for tag in tags),
    }
    return f"{METADATA_PREFIX} " + " ".join(f"{key}={value}" for key, value in fields.items()) + " -->"


def escape_content(content: str) -> str:
    """``content`` with every line that would open an entry (``## ``) or add metadata escaped by a backslash."""
    return "\n".join("\\" + line if _ESCAPE.match(line) else line for line in content.splitlines())


def render_memory_document(records: Iterable[MemoryItemRecord], *, now_ms: int) -> str:
    """Render store records as the memory file, as it stands at ``now_ms``.

    Records created after ``now_ms`` did not exist yet and are left out.
    Entries are ordered by ``updated_at`` descending, then item id.

    Example:
        >>> render_memory_document([], now_ms=0)
        '# Maka Memory\\n'
    """
    chosen = [r for r in records if r.item.created_at <= now_ms]
    chosen.sort(key=lambda r: r.item.item_id)
    chosen.sort(key=lambda r: r.item.updated_at, reverse=True)
    parts = [DOCUMENT_HEADING]
    for record in chosen:
        item = record.item
        tags = [key.key for key in record.keys]
        parts.append(f"## {entry_title(item.content)}\n{_metadata(item, tags)}\n{escape_content(item.content)}")
    return "\n\n".join(parts) + "\n"


# --- reading ---------------------------------------------------------------------------------------------------


def _integer(value: str | None) -> int | None:
    return int(value) if value is not None and re.fullmatch(r"-?\d{1,19}", value) else None


def _parse_metadata(line: str) -> dict[str, str]:
    """``key=value`` tokens of a well-formed comment, values still percent-encoded.

    Each field is decoded exactly once where it is read (a tag list is split on
    its raw commas first), so ``a%2Cb`` stays the one tag ``a,b`` and ``%2541``
    the tag ``%41``. A comment without ``-->`` yields nothing.
    """
    body = line.strip()
    if not body.endswith("-->"):
        return {}
    fields: dict[str, str] = {}
    for token in body[len(METADATA_PREFIX) : -3].split():
        key, sep, value = token.partition("=")
        if sep and key and key not in fields:
            fields[key] = value
    return fields


def _decoded(fields: dict[str, str], key: str) -> str | None:
    return unquote(fields[key]) if key in fields else None


def _decays(created_at: int | None, ttl: int | None, now_ms: int | None) -> bool:
    """True when the decay timer ran out: ``now > createdAt + decayTtlMs`` (all three known)."""
    return created_at is not None and ttl is not None and now_ms is not None and now_ms > created_at + ttl


def _entry(title: str, lines: list[str], now_ms: int | None = None) -> DocumentEntry:
    meta_line: str | None = None
    body: list[str] = []
    for line in lines:
        if line.lstrip().startswith(METADATA_PREFIX):
            meta_line = line if meta_line is None else meta_line  # only the first comment counts
        else:
            body.append(line)
    content = "\n".join(body).strip("\n")
    fields = _parse_metadata(meta_line) if meta_line is not None else {}
    origin = _decoded(fields, "origin") or "unknown"
    tags = tuple(unquote(tag) for tag in fields["tags"].split(",") if tag) if "tags" in fields else ()
    created_at = _integer(_decoded(fields, "createdAt"))
    ttl = _integer(_decoded(fields, "decayTtlMs"))
    ttl = ttl if ttl is not None and ttl >= 0 else None
    status = _decoded(fields, "status")
    decayed = (status is None or status == "active") and _decays(created_at, ttl, now_ms)
    return DocumentEntry(
        title=title.strip(),
        content=content,
        id=_decoded(fields, "id") or "",
        origin=origin if origin in _KNOWN_ORIGINS else "unknown",
        created_at=created_at,
        updated_at=_integer(_decoded(fields, "updatedAt")),
        status="archived" if decayed else status,
        tags=tags,
        decay_ttl_ms=ttl,
        decayed=decayed,
    )


def parse_memory_document(text: str, *, now_ms: int | None = None) -> DocumentState:
    """Read a memory file the way the product's reader does; never raises.

    - An entry is a line ``## <title>`` and the lines up to the next one;
      text before the first entry (the ``# Maka Memory`` heading) is ignored.
    - The first ``<!-- maka-memory: ... -->`` line of an entry is its
      metadata; later ones are ignored. Unknown keys, tokens without ``=``
      and non-numeric times are ignored (fail-open). A comment that does not
      close with ``-->`` is malformed: its metadata is ignored and the entry's
      content still renders.
    - A missing ``status`` means active; a value other than ``active``
      (``archived`` or unknown) keeps the entry out of the prompt.
    - V0.2 decay: with ``now_ms`` given, an active entry whose
      ``createdAt + decayTtlMs`` lies before ``now_ms`` is read as archived
      (``decayed``); :func:`archive_decayed` writes that into the file.
    - A file over :data:`MAX_DOCUMENT_BYTES` bytes of UTF-8 puts the reader in
      safe mode: no entries at all.

    Example:
        >>> state = parse_memory_document("## Port\\n<!-- maka-memory: id=a color=blue -->\\nPort 5174.")
        >>> [(e.id, e.content, e.active) for e in state.entries]
        [('a', 'Port 5174.', True)]
    """
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:
        reason = f"memory document is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit"
        return DocumentState("safe_mode", (), size, reason)
    entries: list[DocumentEntry] = []
    title: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            if title is not None:
                entries.append(_entry(title, lines, now_ms))
            title, lines = heading.group(1), []
        elif title is not None:
            lines.append(line)
    if title is not None:
        entries.append(_entry(title, lines, now_ms))
    return DocumentState("ok", tuple(entries), size)


def archive_decayed(text: str, *, now_ms: int) -> tuple[str, tuple[str, ...]]:
    """The file with every entry whose decay timer ran out marked ``status=archived`` in its metadata line.

    The seed's rule: the parse that finds an expired entry rewrites the file
    in-line, a write the user can see, not a hidden mutation. Every other byte
    stays as it was. Returns the new text and the ids (title when no id) of
    the entries archived now; a file in safe mode is returned unchanged.
    """
    state = parse_memory_document(text, now_ms=now_ms)
    if state.status != "ok" or not any(entry.decayed for entry in state.entries):
        return text, ()
    lines = text.splitlines(keepends=True)
    entries = iter(state.entries)
    entry: DocumentEntry | None = None
    meta_seen = False
    archived: list[str] = []
    for index, line in enumerate(lines):
        if line.startswith("## "):  # what ``_HEADING`` matches on a line of ``splitlines``
            entry, meta_seen = next(entries), False
        elif entry is not None and not meta_seen and line.lstrip().startswith(METADATA_PREFIX):
            meta_seen = True
            if entry.decayed:
                lines[index] = _with_status(line, "archived")
                archived.append(entry.id or entry.title)
    return "".join(lines), tuple(archived)


def _with_status(line: str, status: str) -> str:
    """``line`` (a well-formed metadata comment) with its first ``status=`` replaced or added before ``-->``."""
    ending = line[len(line.rstrip("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")) :]
    body = line[: len(line) - len(ending)]
    tokens = body.rstrip()[: -len("-->")].split(" ")
    for position, token in enumerate(tokens):
        if token.startswith("status="):
            tokens[position] = f"status={status}"
            return " ".join(tokens).rstrip() + " -->" + ending
    return " ".join(tokens).rstrip() + f" status={status} -->" + ending
