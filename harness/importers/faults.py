"""What an importer repaired and what it dropped, counted by kind with the first examples.

Published benchmark files carry known faults (malformed evidence ids, ids
pointing at no turn, dates without sessions). An importer never fixes one
silently: every repair and every drop is logged here, printed at the end of
the import and recorded in the suite's ``_suite.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_EXAMPLES = 3
"""Examples kept (and printed) per kind of fault; the count is always exact."""


class ImporterError(Exception):
    """The source cannot be imported or the output folder cannot be written; the message says why and what to do."""


@dataclass
class FaultLog:
    """Counts and first examples of repairs and drops, by kind.

    A kind is a short phrase ("evidence id with a stray colon"); an example
    names where the fault is and what was done ("conv-26 q017: 'D:11:26' -> 'D11:26'").
    """

    repairs: dict[str, int] = field(default_factory=dict)
    drops: dict[str, int] = field(default_factory=dict)
    reports: dict[str, int] = field(default_factory=dict)
    """Faults kept as they are and only reported (a glued word in a gold no safe rule can split)."""
    examples: dict[str, list[str]] = field(default_factory=dict)

    def repair(self, kind: str, example: str) -> None:
        """Record one repair of ``kind``."""
        self._add(self.repairs, kind, example)

    def drop(self, kind: str, example: str) -> None:
        """Record one drop of ``kind``."""
        self._add(self.drops, kind, example)

    def report(self, kind: str, example: str) -> None:
        """Record one fault of ``kind`` that is neither repaired nor dropped, only reported."""
        self._add(self.reports, kind, example)

    def _add(self, counts: dict[str, int], kind: str, example: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        kept = self.examples.setdefault(kind, [])
        if len(kept) < MAX_EXAMPLES:
            kept.append(example)

    def lines(self) -> list[str]:
        """Human lines: one per kind with its count and first examples, repairs first, kinds sorted."""
        out: list[str] = []
        for label, counts in (("repaired", self.repairs), ("dropped", self.drops), ("reported", self.reports)):
            total = sum(counts.values())
            if label == "reported" and not total:
                continue
            out.append(f"{label}: {total}" + ("" if total else " (nothing)"))
            for kind in sorted(counts):
                out.append(f"  {counts[kind]:>6}  {kind}, e.g. " + "; ".join(self.examples.get(kind, [])))
        return out

    def as_json(self) -> dict[str, dict[str, dict[str, object]]]:
        """The log for ``_suite.json``: ``{"repairs": {kind: {"count": n, "examples": [...]}}, "drops": {...}}``.

        ``reports`` (kept, only reported) is there when there is one.
        """
        def block(counts: dict[str, int]) -> dict[str, dict[str, object]]:
            return {kind: {"count": counts[kind], "examples": self.examples.get(kind, [])} for kind in sorted(counts)}

        out = {"repairs": block(self.repairs), "drops": block(self.drops)}
        if self.reports:
            out["reports"] = block(self.reports)
        return out
