"""Named memories' records and rules (seed 004): names, texts and scopes normalized, ids derived, topic overlap scored.

The store (:mod:`memory_tools.named`) and the model tools
(:mod:`memory_tools.named_tools`) share these; nothing here touches storage.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from memory_tools.model import MemoryValidationError, ScopeType
from memory_tools.normalize import normalize_identifier, normalize_search_term

NamedScope = Literal["user", "project"]
SCOPES: tuple[NamedScope, ...] = ("user", "project")
SCOPE_TYPES: dict[str, ScopeType] = {"user": ScopeType.GLOBAL, "project": ScopeType.WORKSPACE}
"""How the seed's scopes map to the product store's."""
NAMED_SCHEMA_VERSION = 1
MAX_NAME_CHARS = 120
"""A name is a short handle ("deploy route"), not a sentence."""
MAX_TEXT_CHARS = 4_000
"""Room for an executable route (commands, paths, flags), several times an item's 2,000."""
DEFAULT_RECALL_LIMIT = 5
MAX_RECALL_LIMIT = 50
NAME_WEIGHT = 2
"""A query word found in a name counts this many times a word found in the text."""
WriteKind = Literal["created", "updated", "unchanged", "forgotten"]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\ufeff]")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class NamedIdentity:
    """Who is remembering, derived by the Host from the run, never by the model.

    Attributes:
        application: The application's stable identity, part of every id.
        workspace_key: The run's workspace; None means ``project`` scope is unavailable.
        namespace: An optional extra partition an application may add ("" for none).
        recall_enabled: False is the cold control: recall finds nothing, storage untouched.
    """

    application: str
    workspace_key: str | None = None
    namespace: str = ""
    recall_enabled: bool = True


@dataclass(frozen=True, slots=True)
class NamedMemory:
    """One stored named memory.

    Attributes:
        memory_id: Stable id (hex), see :func:`named_memory_id`.
        name: The name as first written (display form); matching uses its normalized form.
        scope: ``user`` (global) or ``project`` (workspace).
        scope_key: The workspace key for ``project``; None for ``user``.
        version: 1 at creation, +1 per replacement of the text.
    """

    memory_id: str
    application: str
    namespace: str
    scope: NamedScope
    scope_key: str | None
    name: str
    text: str
    version: int
    created_at: int
    updated_at: int


@dataclass(frozen=True, slots=True)
class WriteEvent:
    """What one ``remember`` or ``forget`` did.

    Attributes:
        event: ``created``, ``updated`` (text replaced, creation time kept),
            ``unchanged`` (identical text: nothing written) or ``forgotten``.
        memory: The record after the write (before it, for ``forgotten``).
    """

    event: WriteKind
    memory: NamedMemory


def normalize_name(name: object, field: str = "name") -> str:
    """The matching form of a name: the item store's key normalization, at most :data:`MAX_NAME_CHARS`.

    ``" Deploy  Route "`` and ``"deploy route"`` are one name.

    Raises:
        MemoryValidationError: naming ``field`` and the rule broken.
    """
    normalized = normalize_search_term(name, field)
    if len(normalized) > MAX_NAME_CHARS:
        raise MemoryValidationError(f"{field} has {len(normalized)} characters; a name holds at most {MAX_NAME_CHARS}")
    return normalized


def normalize_text(text: object, field: str = "text") -> str:
    """NFC, zero-width characters removed, controls other than newline and tab turned to spaces, trimmed.

    Newlines stay: a route is often several commands.

    Raises:
        MemoryValidationError: not a string, empty, or over :data:`MAX_TEXT_CHARS` code points.
    """
    if not isinstance(text, str):
        raise MemoryValidationError(f"{field} must be a string (got {type(text).__name__})")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise MemoryValidationError(f"{field} contains a lone surrogate")
    value = _CONTROL.sub(" ", _ZERO_WIDTH.sub("", unicodedata.normalize("NFC", text).replace("\r\n", "\n"))).strip()
    if not value:
        raise MemoryValidationError(f"{field} is empty; write the fact itself")
    if len(value) > MAX_TEXT_CHARS:
        raise MemoryValidationError(f"{field} has {len(value)} characters; at most {MAX_TEXT_CHARS} are allowed")
    return value


def check_scope(scope: object, field: str = "scope") -> NamedScope:
    """``user`` or ``project``, exactly.

    Raises:
        MemoryValidationError: any other value.
    """
    if scope not in SCOPES:
        raise MemoryValidationError(f'{field} must be "user" or "project" (got {scope!r})')
    return scope


def scope_key_of(scope: NamedScope, identity: NamedIdentity) -> str | None:
    if scope == "user":
        return None
    if identity.workspace_key is None:
        raise MemoryValidationError('scope "project" is unavailable: this conversation has no project; use "user"')
    return normalize_identifier(identity.workspace_key, "workspace_key")


def named_memory_id(name: str, scope: NamedScope, identity: NamedIdentity) -> str:
    """The stable id: SHA-256 over application, namespace, scope, scope key and normalized name.

    No conversation, session or run id takes part, so a later session reaches the same record.

    Raises:
        MemoryValidationError: a bad name or scope, or ``project`` without a workspace.
    """
    parts = [identity.application, identity.namespace, check_scope(scope), scope_key_of(scope, identity), normalize_name(name)]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def words(text: str) -> frozenset[str]:
    """The lowercase words of ``text`` for lexical overlap; CJK runs add their two-character pieces.

    Example:
        >>> sorted(words("Deploy route: 部署流程"))
        ['deploy', 'route', '流程', '署流', '部署', '部署流程']
    """
    lowered = unicodedata.normalize("NFC", text).lower()
    found = set(_WORD.findall(lowered))
    for run in _CJK.findall(lowered):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(found)


def overlap_score(query: frozenset[str], memory: NamedMemory) -> int:
    """:data:`NAME_WEIGHT` per query word in the name plus 1 per query word in the text."""
    return NAME_WEIGHT * len(query & words(memory.name)) + len(query & words(memory.text))
