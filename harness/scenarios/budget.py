"""The retrieval budget every memory system of a run gets: top-k and characters of memory text.

Published comparisons of memory products ran one vendor at top-k 30 and
another at 10; a neutral harness gives every system the same budget, records
it, and refuses to compare runs whose budgets differ. The budget is data:

- ``top_k``: the most stored records one retrieval may return (the Host's
  ceiling on ``memory_search``'s ``limit``; a system without a model-chosen
  limit returns up to ``top_k``);
- ``chars``: the most characters (code points) of memory text one retrieval
  shows the model: each item's own text, not the JSON around it
  (:mod:`memory_tools.disclosure`; the Host drops whole results from the end
  to fit, and says so; ``memory_get`` shows at most this much content).

A suite declares it in its ``_defaults.yaml`` (merged into every scenario like
``protocol``)::

    retrieval_budget: {top_k: 10, chars: 4000}

and ``recall-eval run --retrieval-budget top_k=10,chars=4000`` overrides it for
one run. Without either, :data:`DEFAULT_RETRIEVAL_BUDGET` (the Host's limits
before budgets existed, so older runs read as having used it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MIN_TOP_K, MAX_TOP_K = 1, 100
"""``top_k`` bounds: at least one result, at most the store's own ceiling of 100."""
MIN_CHARS, MAX_CHARS = 256, 1_000_000
"""``chars`` bounds: room for an empty search envelope, and far beyond any context window's share."""


class RetrievalBudgetError(ValueError):
    """A retrieval budget that cannot be used; the message names where it came from, the field and the value."""


class RetrievalBudget(BaseModel):
    """What one retrieval may give the model, the same for every system of a run.

    Example:
        >>> RetrievalBudget(top_k=10, chars=4000).label()
        'top_k=10,chars=4000'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: int = Field(10, ge=MIN_TOP_K, le=MAX_TOP_K, description="Most records one retrieval may return")
    chars: int = Field(4000, ge=MIN_CHARS, le=MAX_CHARS, description="Most characters of memory text one retrieval shows (item text, not JSON)")

    def label(self) -> str:
        """The budget as ``--retrieval-budget`` takes it (what messages and reports print)."""
        return f"top_k={self.top_k},chars={self.chars}"

    def record(self) -> dict[str, int]:
        """The budget as ``run.json`` and the arm fingerprints keep it."""
        return {"top_k": self.top_k, "chars": self.chars}


DEFAULT_RETRIEVAL_BUDGET = RetrievalBudget()
"""Top-k 10, 4,000 characters: the Host's limits before budgets were recorded."""

_KEYS = ("top_k", "chars")


def parse_retrieval_budget(text: str, where: str = "--retrieval-budget") -> RetrievalBudget:
    """``top_k=10,chars=4000`` -> a budget; a key left out keeps its default.

    Raises:
        RetrievalBudgetError: an unknown or repeated key, a value that is not a whole number, or one out of bounds;
            the message names ``where``, the key and the value.

    Example:
        >>> parse_retrieval_budget("top_k=30").label()
        'top_k=30,chars=4000'
    """
    if not isinstance(text, str) or not text.strip():
        raise RetrievalBudgetError(f"{where}: empty; give e.g. top_k=10,chars=4000")
    values: dict[str, int] = {}
    for part in text.split(","):
        key, sep, raw = (p.strip() for p in part.partition("="))
        if not sep or not key:
            raise RetrievalBudgetError(f"{where}: {part.strip()!r} is not key=value; give e.g. top_k=10,chars=4000")
        if key not in _KEYS:
            raise RetrievalBudgetError(f"{where}: unknown key {key!r}; the keys are top_k and chars")
        if key in values:
            raise RetrievalBudgetError(f"{where}: {key} given twice")
        if not raw.isdigit():
            raise RetrievalBudgetError(f"{where}: {key}={raw!r} is not a whole number")
        values[key] = int(raw)
    return budget_from_mapping(values, where)


def budget_from_mapping(values: Any, where: str) -> RetrievalBudget:
    """A budget from a mapping (a suite's ``retrieval_budget:``, a ``run.json`` record), checked with bounds named."""
    if not isinstance(values, dict):
        raise RetrievalBudgetError(f"{where}: expected a mapping of top_k and chars, got {values!r}")
    unknown = sorted(set(values) - set(_KEYS))
    if unknown:
        raise RetrievalBudgetError(f"{where}: unknown key {unknown[0]!r}; the keys are top_k and chars")
    bounds = {"top_k": (MIN_TOP_K, MAX_TOP_K), "chars": (MIN_CHARS, MAX_CHARS)}
    for key, value in values.items():
        low, high = bounds[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RetrievalBudgetError(f"{where}: {key}={value!r} must be a whole number from {low} to {high}")
    return RetrievalBudget(**values)


def suite_budget(scenarios: Iterable[Any]) -> RetrievalBudget | None:
    """The one budget the scenarios' suites declare (None: none declares one).

    Raises:
        RetrievalBudgetError: two scenarios declare different budgets (a run has one budget); names one of each.
    """
    found: dict[RetrievalBudget, str] = {}
    undeclared: str | None = None
    for scenario in scenarios:
        budget = getattr(scenario, "retrieval_budget", None)
        if budget is None:
            undeclared = undeclared or scenario.id
        else:
            found.setdefault(budget, scenario.id)
    if len(found) > 1:
        (a, sa), (b, sb) = list(found.items())[:2]
        raise RetrievalBudgetError(
            f"the scenarios declare different retrieval budgets: {a.label()} ({sa}) and {b.label()} ({sb}); a run has "
            "one budget: run the suites apart, or give --retrieval-budget for all of them")
    if found and undeclared is not None:
        (a, sa), = found.items()
        raise RetrievalBudgetError(
            f"scenario {sa} declares retrieval budget {a.label()} but {undeclared} declares none (the default "
            f"{DEFAULT_RETRIEVAL_BUDGET.label()}); a run has one budget: give --retrieval-budget for all of them")
    return next(iter(found), None)
