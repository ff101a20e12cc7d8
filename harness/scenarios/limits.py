"""The limits a scenario file is held to before it is trusted.
"""

from __future__ import annotations

MAX_DEPTH = 32
"""Deepest nesting of mappings and lists a scenario file may use (a scenario needs about 8)."""
