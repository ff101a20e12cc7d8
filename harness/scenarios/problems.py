"""What is wrong with a scenario file: :class:`Finding` (by field path, no file yet) and :class:`Problem` (at a file and line).

Every check returns findings; the loader places them at a file and line
(:mod:`harness.scenarios.locating`) and gathers the problems of a suite into
one :class:`ScenarioError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]
Loc = tuple[str | int, ...]
_VALUE_WIDTH = 80


def format_loc(loc: Loc) -> str:
    """``("items", 2, "keys", 0, "type")`` -> ``items[2].keys[0].type``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def format_value(value: Any) -> str:
    """A short ``repr`` of an offending value, cut to one readable line."""
    text = repr(value)
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 3] + "..."


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a scenario file or suite.

    Attributes:
        file: The file at fault (a ``_defaults.yaml`` when the bad value came from there).
        line: 1-based line of the field, or None when it cannot be placed.
        field: Dotted field path such as ``items[2].keys[0].type``; empty for the whole file.
        message: What is wrong and, where it helps, how to fix it.
        value: ``repr`` of the offending value, or None.
        severity: ``error`` fails validation; ``warning`` is reported but passes.
    """

    file: str
    line: int | None
    field: str
    message: str
    value: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        head = f"{where}: {self.field}: " if self.field else f"{where}: "
        label = "warning: " if self.severity == "warning" else ""
        tail = f" (value: {self.value})" if self.value is not None else ""
        return f"{head}{label}{self.message}{tail}"

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file, self.line or 0, self.field, self.message)


class ScenarioError(Exception):
    """Scenario files or a suite have errors; ``problems`` lists every one of them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=Problem.sort_key)
        errors = [p for p in self.problems if p.severity == "error"] or self.problems
        shown = "\n".join(str(p) for p in errors[:10])
        more = f"\n... and {len(errors) - 10} more" if len(errors) > 10 else ""
        super().__init__(f"{len(errors)} scenario error(s):\n{shown}{more}")


NO_VALUE = object()


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem located inside one scenario by field path (no file yet)."""

    loc: Loc
    message: str
    value: Any = NO_VALUE
    severity: Severity = "error"

    @property
    def has_value(self) -> bool:
        return self.value is not NO_VALUE
