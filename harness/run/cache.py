"""On-disk cache of model responses, so a rerun is free and reproducible.

The key is the SHA-256 of the canonical JSON of everything that shapes a
response (model, messages, tools, sampling parameters) plus the epoch. The
messages hold the system prompt, a scenario's own ``system_prompt`` and the
speaker names included, so changing either never replays an old answer. Repeats
(epochs) stay real repeats, a rerun of the same epoch is served from disk.
Entries live at ``<dir>/<first 2 hex chars>/<key>.json`` and are written
atomically (temp file, then rename). A corrupt entry is logged, ignored and
overwritten by the next fresh response.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.atomic import write_atomic
from harness.records import load_model, model_json

DEFAULT_CACHE_DIR = ".recall-eval-cache"
CACHE_FORMAT_VERSION = 1

_log = logging.getLogger(__name__)


class CachedResponse(BaseModel):
    """What a cache entry holds: enough to replay one completion."""

    model_config = ConfigDict(extra="ignore")

    format_version: int = CACHE_FORMAT_VERSION
    message: dict[str, Any]
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    #: ``ModelCallLog.provider_fault`` of the response (a malformed answer or rejected usage), kept on replay.
    fault: str | None = None


def cache_key(*, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], parameters: dict[str, Any], epoch: int) -> str:
    """SHA-256 hex of the canonical JSON of one request.

    Example:
        >>> cache_key(model="m", messages=[], tools=[], parameters={}, epoch=0)[:8]
        '5e9e3222'
    """
    payload = {"model": model, "messages": messages, "tools": tools, "parameters": parameters, "epoch": epoch}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # a lone surrogate a model sent is hashed too


class ResponseCache:
    """A folder of cached responses; ``enabled=False`` neither reads nor writes."""

    def __init__(self, directory: Path | str, *, enabled: bool = True) -> None:
        self.directory = Path(directory)
        self.enabled = enabled

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        """The entry for ``key``, or None when missing, disabled or unreadable."""
        if not self.enabled:
            return None
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            _log.warning("response cache: cannot read %s (%s); ignoring it", path, exc)
            return None
        try:
            entry = load_model(CachedResponse, text)
        except ValueError as exc:
            _log.warning("response cache: corrupt entry %s (%s); ignoring and overwriting it", path, exc.__class__.__name__)
            return None
        if entry.format_version != CACHE_FORMAT_VERSION:
            return None
        return entry

    def put(self, key: str, entry: CachedResponse) -> None:
        """Store ``entry`` atomically; a write failure is logged, never raised."""
        if not self.enabled:
            return
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, model_json(entry))
        except OSError as exc:
            _log.warning("response cache: cannot write %s (%s)", path, exc)
