"""``--max-cost-usd X``: stop a run before its recorded cost would pass X.

Before each model call the call's worst case is reserved: its prompt tokens
(litellm's counter) and ``--max-tokens`` of completion at litellm's prices,
scaled up by the largest ratio of a recorded cost to its estimate seen so far
for that model (a provider that counts more tokens than litellm does). If
what the run has recorded, plus the reservations of calls in flight, plus this
one would pass X, the call is not made: :class:`BudgetExceeded` is raised, the
budget is marked exhausted and no further call or sample starts. The sample
it stopped is recorded as an error (with the calls it did make), so
``--resume`` runs it again; the run ends ``interrupted``.

With ``--workers N`` each worker holds ``1/N`` of what is left.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class BudgetExceeded(Exception):
    """A model call was not made because its worst case would pass ``--max-cost-usd``."""


@dataclass(frozen=True)
class Price:
    """USD per token of one model (litellm's price map)."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.input + completion_tokens * self.output


@dataclass
class Budget:
    """What a process may still record, and what its calls in flight have reserved.

    Attributes:
        limit_usd: The cost this process may record (``--max-cost-usd`` minus what the run
            recorded before, or this worker's share of it).
        prices: Price per model of the run.
    """

    limit_usd: float
    prices: Mapping[str, Price]
    recorded_usd: float = 0.0
    reserved_usd: float = 0.0
    exhausted: bool = False
    _scale: dict[str, float] = field(default_factory=dict)

    def reserve(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        """Reserve one call's worst case; the amount reserved (give it back to :meth:`settle`).

        Raises:
            BudgetExceeded: the call would take the recorded cost past the limit, or the budget
                was already exhausted by another call.
        """
        price = self.prices[model]
        estimate = price.cost(prompt_tokens, max_completion_tokens) * self._scale.get(model, 1.0)
        if self.exhausted or self.recorded_usd + self.reserved_usd + estimate > self.limit_usd:
            self.exhausted = True
            raise BudgetExceeded(
                f"--max-cost-usd reached: a call of {model} may cost up to ${estimate:.6f} and the run has "
                f"${self.recorded_usd + self.reserved_usd:.6f} of ${self.limit_usd:.6f} recorded or in flight"
            )
        self.reserved_usd += estimate
        return estimate

    def settle(self, model: str, reserved: float, cost_usd: float | None) -> None:
        """A reserved call finished (``cost_usd`` None: it failed and cost nothing).

        A cost that is negative or not a number (a provider's usage the client could not
        replace) is charged as the reservation: what a run has spent never goes down.
        """
        self.reserved_usd = max(0.0, self.reserved_usd - reserved)
        if cost_usd is None:
            return
        if not math.isfinite(cost_usd) or cost_usd < 0:
            cost_usd = reserved
        self.recorded_usd += cost_usd
        if reserved > 0 and cost_usd > reserved:
            self._scale[model] = max(self._scale.get(model, 1.0), cost_usd / reserved * self._scale.get(model, 1.0))


def recorded_cost(records: Iterable[Any]) -> float:
    """What ``records`` (:class:`harness.records.SampleRecord`) recorded for model calls made (cached answers cost nothing)."""
    return sum(max(0.0, call.cost_usd or 0.0) for record in records for call in record.model_calls if not call.cached)


def budget_stop(run_dir: Path, limit_usd: float) -> str | None:
    """Why a run stopped at ``--max-cost-usd`` (its recorded cost and what is left to run), or None if it did not."""
    from harness.records import RESULTS_FILE, scan_results

    records = scan_results(Path(run_dir) / RESULTS_FILE).records
    stopped = sum(1 for r in records if r.error is not None and r.error.type == BudgetExceeded.__name__)
    if not stopped:
        return None
    return (f"stopped: --max-cost-usd ${limit_usd:,.4f} reached before the next model call (recorded cost "
            f"${recorded_cost(records):,.4f}); finished samples are saved, {stopped} sample(s) stopped midway are "
            "recorded as errors and run again on resume")
