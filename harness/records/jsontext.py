"""JSON text of anything a provider can send, lone surrogates included, losslessly.

A provider's JSON may hold ``"\\ud800"``: a lone UTF-16 surrogate, which Python
decodes into a ``str`` but which UTF-8 cannot encode (pydantic's
``model_dump_json`` and ``str.encode("utf-8")`` both raise). Every writer of
the harness (records, response cache, judge cache, report files) goes through
these functions instead, and the rule is: a lone surrogate is written as its
JSON escape ``\\udXXX``, exactly as the provider sent it, so the file is valid
UTF-8 and ``json.loads`` gives the same text back. Text that holds no lone
surrogate is written byte for byte as before (the fast path is pydantic's own
dump). Where the text is not JSON (HTML, CSV, XML, the terminal) the page
shows U+FFFD or the terminal the escape (:mod:`harness.records.terminal`).

Readers: ``json.loads`` reads the escapes; pydantic's ``model_validate_json``
does not (it rejects them), so readers of these files use :func:`load_model`.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

_SURROGATE = re.compile("[\ud800-\udfff]")
_M = TypeVar("_M", bound=BaseModel)


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds a lone surrogate (which UTF-8 cannot encode)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def escape_surrogates(json_text: str) -> str:
    """``json_text`` (JSON written with ``ensure_ascii=False``) with each lone surrogate as its ``\\udXXX`` escape.

    Valid because a lone surrogate can only stand inside a JSON string.

    Example:
        >>> escape_surrogates('"a' + chr(0xD800) + 'b"') == '"a' + chr(92) + 'ud800b"'
        True
    """
    if not has_surrogates(json_text):
        return json_text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def json_text(value: Any, **dumps_options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **dumps_options)`` that never writes an unencodable character."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, **dumps_options))


def model_json(model: BaseModel, *, indent: int | None = None) -> str:
    """``model.model_dump_json(indent=...)``, or the same JSON with lone surrogates escaped where pydantic refuses them."""
    try:
        return model.model_dump_json(indent=indent)
    except PydanticSerializationError:
        # The slow path, only for text pydantic cannot encode: the JSON-mode dump keeps lone surrogates as they are
        # and writes every other value as the fast path does (a datetime in ISO 8601, not str()'s "2026-01-01 00:00:00").
        separators = (",", ":") if indent is None else None
        return json_text(model.model_dump(mode="json"), indent=indent, separators=separators)


def sendable(value: Any) -> Any:
    """``value`` (JSON-like) with every lone surrogate replaced by U+FFFD, for a request body (UTF-8 cannot carry them).

    A model may send a lone surrogate (in an answer, a tool call id, name or
    arguments); the transcript keeps it as sent and records write it as a
    JSON escape, but the next request (to the model, or to a judge) replays
    it as U+FFFD. Returns ``value`` itself when nothing needs replacing.

    Example:
        >>> sendable([{"content": "a" + chr(0xD800)}]) == [{"content": "a\\ufffd"}]
        True
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if has_surrogates(value) else value
    if isinstance(value, list):
        items = [sendable(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {sendable(k): sendable(v) for k, v in value.items()}
        same = len(pairs) == len(value) and all(k in value and value[k] is v for k, v in pairs.items())
        return value if same else pairs
    return value


def load_model(cls: type[_M], text: str) -> _M:
    """``cls.model_validate_json(text)``, also for text holding ``\\udXXX`` escapes of lone surrogates.

    Raises:
        ValueError: not JSON, or not a valid ``cls`` (pydantic's ``ValidationError`` is one).
    """
    try:
        return cls.model_validate_json(text)
    except ValueError:
        if "\\ud" not in text.lower():
            raise
    return cls.model_validate(json.loads(text))
