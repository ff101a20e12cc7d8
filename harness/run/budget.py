"""``--max-cost-usd X``: stop a run before its recorded cost would pass X.

Before each model call the call's worst case is reserved: its prompt tokens
(litellm's counter) and ``--max-tokens`` of completion at litellm's prices,
scaled up by the largest ratio of a recorded cost to its estimate seen so far
for that model (a provider that counts more tokens than litellm does). If
what the run has recorded, plus the reservations of calls in flight, plus this
one would pass X, the call waits while other calls are in flight: each that
finishes gives back its reservation and records what it really cost (usually
far less than its worst case), and the waiting calls try again. Only when no
call is in flight and the next call's worst case still does not fit is the
call not made: :class:`BudgetExceeded` is raised, the budget is marked
exhausted and no further call or sample starts. (Refusing at once instead
ended a run at ``--max-concurrency 8`` after two calls: eight worst cases in
flight filled the limit while almost nothing was spent.) The sample it
stopped is recorded as an error (with the calls it did make), so ``--resume``
runs it again; the run ends ``interrupted``.

Judge calls (:mod:`harness.score.judge`) are reserved with
:meth:`Budget.reserve_now`: they are made one at a time, so one that does not
fit stops at once. Embedding requests (:mod:`harness.run.embeddings`) come
from a sample's synchronous memory code and are reserved with
:meth:`Budget.reserve_blocking` (their worst case: one token per UTF-8 byte of
the inputs). From a thread other than the event loop's (a write phase's memory
code runs on its own threads) a request that does not fit waits, as a model
call does, on the loop the run's calls reserve on (:meth:`Budget.bind`), until
calls in flight settle or nothing is left in flight. On the loop's own thread
(a store built at the start of a sample, a search at the probe) nothing can
wait: the calls in flight are suspended until that code returns, so there a
request that does not fit stops the run at once. (A run at many calls in flight
with a cap nearly full of their reservations can therefore stop at such an
embedding a little before a model call would have; it never passes the cap.)
An embedding model litellm has no price for is refused under a cap unless
``--embedding-price`` gives one, as a chat model without a price is.

With ``--workers N`` each worker holds ``1/N`` of what is left.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.run.concurrency import wait_in_line


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
    #: Calls holding a reservation (made, or waiting for their turn at the server).
    in_flight: int = 0
    _scale: dict[str, float] = field(default_factory=dict)
    _waiters: list[asyncio.Future[None]] = field(default_factory=list, repr=False)
    #: The event loop the run's calls reserve on (:meth:`bind`); None until the run starts.
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the run's calls reserve and settle on, through which other threads' reservations wait."""
        self._loop = loop

    def _other_thread_loop(self) -> asyncio.AbstractEventLoop | None:
        """The bound loop when it runs and this is not its thread (so this thread may block on it), else None."""
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running() or _running_loop() is loop:
            return None
        return loop

    def reserve_blocking(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        """Reserve from synchronous code (an embedding request); the amount reserved.

        On another thread than the bound loop's it waits as :meth:`reserve` does (the reservation is made on the
        loop, so the budget is only ever changed there); on the loop's own thread, or before a loop is bound, it
        reserves as :meth:`reserve_now`.

        Raises:
            BudgetExceeded: as :meth:`reserve` (another thread) or :meth:`reserve_now` (the loop's).
        """
        loop = self._other_thread_loop()
        if loop is None:
            return self.reserve_now(model, prompt_tokens, max_completion_tokens)
        return asyncio.run_coroutine_threadsafe(self.reserve(model, prompt_tokens, max_completion_tokens), loop).result()

    def settle_blocking(self, model: str, reserved: float, cost_usd: float | None) -> None:
        """:meth:`settle` from synchronous code: on the bound loop when called from another thread (waiting for it)."""
        loop = self._other_thread_loop()
        if loop is None:
            self.settle(model, reserved, cost_usd)
            return

        async def settle() -> None:
            self.settle(model, reserved, cost_usd)

        asyncio.run_coroutine_threadsafe(settle(), loop).result()

    def _estimate(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        return self.prices[model].cost(prompt_tokens, max_completion_tokens) * self._scale.get(model, 1.0)

    def _refuse(self, model: str, estimate: float) -> BudgetExceeded:
        self.exhausted = True
        self._wake()  # the calls still waiting stop too
        return BudgetExceeded(
            f"--max-cost-usd reached: a call of {model} may cost up to ${estimate:.6f} and the run has "
            f"${self.recorded_usd + self.reserved_usd:.6f} of ${self.limit_usd:.6f} recorded or in flight"
        )

    def _fits(self, estimate: float) -> bool:
        return self.recorded_usd + self.reserved_usd + estimate <= self.limit_usd

    def reserve_now(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        """Reserve one call's worst case without waiting; the amount reserved (give it back to :meth:`settle`).

        For calls made one at a time (the judges): what is in flight cannot settle while the caller waits.

        Raises:
            BudgetExceeded: the call would take the recorded cost past the limit, or the budget was already exhausted.
        """
        estimate = self._estimate(model, prompt_tokens, max_completion_tokens)
        if self.exhausted or not self._fits(estimate):
            raise self._refuse(model, estimate)
        self.reserved_usd += estimate
        self.in_flight += 1
        return estimate

    async def reserve(self, model: str, prompt_tokens: int, max_completion_tokens: int) -> float:
        """Reserve one call's worst case, waiting while calls in flight may still free enough; the amount reserved.

        Raises:
            BudgetExceeded: nothing is in flight and the call would still take the recorded cost past the
                limit, or the budget was already exhausted by another call.
        """
        while True:
            estimate = self._estimate(model, prompt_tokens, max_completion_tokens)  # a settle may have raised the scale
            if self.exhausted:
                raise self._refuse(model, estimate)
            if self._fits(estimate):
                self.reserved_usd += estimate
                self.in_flight += 1
                return estimate
            if self.in_flight == 0:  # nothing in flight: nothing will be given back
                raise self._refuse(model, estimate)
            await wait_in_line(self._waiters)  # a settle wakes every waiter to try again

    def price(self, model: str, price: Price) -> None:
        """Add ``model``'s price (the embedding model's, which is not one of the run's models)."""
        self.prices = {**self.prices, model: price}

    @property
    def waiting(self) -> int:
        """Calls waiting for reservations in flight to settle."""
        return len(self._waiters)

    def _wake(self) -> None:
        """Wake every waiting call; from another thread (an embedding of a write phase) through its loop."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            loop = waiter.get_loop()
            if _running_loop() is loop:
                _resolve(waiter)
            else:
                loop.call_soon_threadsafe(_resolve, waiter)

    def settle(self, model: str, reserved: float, cost_usd: float | None) -> None:
        """A reserved call finished (``cost_usd`` None: it failed and cost nothing).

        A cost that is negative or not a number (a provider's usage the client could not
        replace) is charged as the reservation: what a run has spent never goes down.
        """
        self.reserved_usd = max(0.0, self.reserved_usd - reserved)
        self.in_flight = max(0, self.in_flight - 1)
        if self.in_flight == 0:
            self.reserved_usd = 0.0  # no float dust of many settles left behind
        self._wake()
        if cost_usd is None:
            return
        if not math.isfinite(cost_usd) or cost_usd < 0:
            cost_usd = reserved
        self.recorded_usd += cost_usd
        if reserved > 0 and cost_usd > reserved:
            self._scale[model] = max(self._scale.get(model, 1.0), cost_usd / reserved * self._scale.get(model, 1.0))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def recorded_cost(records: Iterable[Any]) -> float:
    """What ``records`` (:class:`harness.records.SampleRecord`) recorded for model calls made: the probe's, the write
    phase's and the embeddings' (cached answers cost nothing)."""
    total = 0.0
    for record in records:
        phase = getattr(record, "write_phase", None)
        calls = [*record.model_calls, *(phase.model_calls if phase is not None else ())]
        total += sum(max(0.0, call.cost_usd or 0.0) for call in calls if not call.cached)
        embedding = getattr(record, "embedding", None)
        if embedding is not None and isinstance(embedding.cost_usd, (int, float)) and math.isfinite(embedding.cost_usd):
            total += max(0.0, embedding.cost_usd)
    return total


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

