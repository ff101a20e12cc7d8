"""The run stage's error for flags that cannot be used (its own module, so every options helper can raise it)."""

from __future__ import annotations


class RunOptionsError(Exception):
    """Run flags that cannot be used; the message names the flag or file and the fix."""
