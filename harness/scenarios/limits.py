"""The limits a scenario file is held to before it is trusted.

A scenario file is input from anyone, so its size and shape are bounded
before the expensive steps: the file's size before it is read, YAML syntax
(whose node tree costs about 50 bytes of memory per byte of text) before it
is parsed, and the item count before anything is validated. Each limit has
a default with headroom over the largest files the importers write (a
LongMemEval M question, the largest: about 20 MB of JSON syntax and 6,000 to
8,000 items; an S question about 2 MB and 600 items) and an environment
variable that raises or lowers it (``scenarios/README.md``, "Limits").
"""

from __future__ import annotations

import os

MAX_DEPTH = 32
"""Deepest nesting of mappings and lists a scenario file may use (a scenario needs about 8)."""

MAX_FILE_MB_ENV = "RECALL_EVAL_MAX_SCENARIO_MB"
MAX_FILE_MB = 64
"""Largest scenario file read at all, in MiB (checked with ``stat``, before reading)."""

MAX_YAML_MB_ENV = "RECALL_EVAL_MAX_YAML_MB"
MAX_YAML_MB = 8
"""Largest file parsed as YAML, in MiB; larger ones must be in JSON syntax, as the importers write them."""

MAX_ITEMS_ENV = "RECALL_EVAL_MAX_ITEMS"
MAX_ITEMS = 25_000
"""Most memory items one scenario or conversation file may hold (checked after parsing, before validation)."""


class LimitSettingError(ValueError):
    """An environment variable sets a limit to something that is not a positive number."""


def _setting(env: str, default: float) -> float:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise LimitSettingError(f"{env}={raw!r}: not a positive number (default {default:g})")
    return value


def max_file_bytes() -> int:
    """:data:`MAX_FILE_MB` (or ``RECALL_EVAL_MAX_SCENARIO_MB``) in bytes."""
    return int(_setting(MAX_FILE_MB_ENV, MAX_FILE_MB) * 1024 * 1024)


def max_yaml_chars() -> int:
    """:data:`MAX_YAML_MB` (or ``RECALL_EVAL_MAX_YAML_MB``) in characters of text."""
    return int(_setting(MAX_YAML_MB_ENV, MAX_YAML_MB) * 1024 * 1024)


def max_items() -> int:
    """:data:`MAX_ITEMS` (or ``RECALL_EVAL_MAX_ITEMS``)."""
    return int(_setting(MAX_ITEMS_ENV, MAX_ITEMS))
