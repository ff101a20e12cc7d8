"""The run stage's errors: flags that cannot be used, a plan stopped (their own module, so every helper can raise them)."""

from __future__ import annotations


class RunOptionsError(Exception):
    """Run flags that cannot be used; the message names the flag or file and the fix."""


class PlanInterrupted(Exception):
    """The run was asked to stop (SIGTERM) while its plan was built; no sample was run (``run --resume`` starts it)."""
