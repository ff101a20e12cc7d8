"""``--max-cost-usd``'s budget: calls wait for reservations in flight to settle; the cap stops only what would pass it."""

from __future__ import annotations

import asyncio

import pytest

from harness.run.budget import Budget, BudgetExceeded, Price


def test_a_call_that_does_not_fit_waits_for_the_calls_in_flight_and_goes_when_their_real_cost_frees_room() -> None:
    """Three worst cases of $0.40 under a $1.00 cap: the third waits while two are in flight; once one settles at its
    real $0.01 the third is reserved (stopping it then was how a concurrent run ended after two calls)."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})

    async def scenario() -> tuple[float, float, bool]:
        first = await budget.reserve("m", 0, 400)
        second = await budget.reserve("m", 0, 400)
        third = asyncio.create_task(budget.reserve("m", 0, 400))
        await asyncio.sleep(0)
        waited = not third.done() and budget.waiting == 1
        budget.settle("m", first, 0.01)
        got = await asyncio.wait_for(third, 5)
        budget.settle("m", second, 0.01)
        budget.settle("m", got, 0.01)
        return got, budget.recorded_usd, waited

    got, recorded, waited = asyncio.run(scenario())
    assert waited and got == pytest.approx(0.4) and recorded == pytest.approx(0.03)
    assert not budget.exhausted and budget.in_flight == 0


def test_a_call_that_does_not_fit_with_nothing_in_flight_stops_the_budget_and_every_waiting_call() -> None:
    """Recorded $0.70 of $1.00 and nothing in flight: a $0.40 worst case cannot be freed by anyone, so it is refused
    at once; a waiting call is refused with it (the run stops, nothing passes the cap)."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})

    async def scenario() -> list[BaseException | float]:
        first = await budget.reserve("m", 0, 400)
        waiting = asyncio.create_task(budget.reserve("m", 0, 400))
        second = await budget.reserve("m", 0, 400)
        budget.settle("m", first, 0.35)  # 0.35 recorded + 0.40 in flight: the waiter still does not fit
        await asyncio.sleep(0)
        budget.settle("m", second, 0.35)  # 0.70 recorded, nothing in flight: the waiter can never fit
        return await asyncio.gather(waiting, return_exceptions=True)

    (outcome,) = asyncio.run(scenario())
    assert isinstance(outcome, BudgetExceeded) and budget.exhausted
    assert budget.recorded_usd == pytest.approx(0.70)
    with pytest.raises(BudgetExceeded):
        budget.reserve_now("m", 0, 1)


def test_the_recorded_cost_counts_the_write_phase_and_the_embeddings_and_never_a_cached_call() -> None:
    """A resumed run's cost before counts every call the records made: the probe's, the write phase's (the
    agent writing memory) and the embeddings'; cached answers and negative costs add nothing."""
    from types import SimpleNamespace as NS

    from harness.run.budget import recorded_cost

    call = lambda cost, cached=False: NS(cost_usd=cost, cached=cached)  # noqa: E731
    records = [
        NS(model_calls=[call(0.01), call(0.5, cached=True)], write_phase=NS(model_calls=[call(0.02), call(-1.0)]),
           embedding=NS(cost_usd=0.003)),
        NS(model_calls=[call(None)], write_phase=None, embedding=None),
    ]
    assert recorded_cost(records) == pytest.approx(0.033)


def test_an_embedding_models_price_is_added_and_its_reservation_counts_against_the_next_call() -> None:
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})
    budget.price("embed", Price(input=0.001, output=0.0))
    reserved = budget.reserve_now("embed", 700, 0)
    with pytest.raises(BudgetExceeded):
        budget.reserve_now("m", 0, 400)  # 0.7 reserved + 0.4 > 1.0
    budget.exhausted = False
    budget.settle("embed", reserved, float("nan"))  # a cost not a number: charged as its reservation
    assert budget.recorded_usd == pytest.approx(0.7) and budget.reserved_usd == 0


def test_a_settle_from_another_thread_wakes_a_waiting_call_through_its_loop() -> None:
    """An embedding of a write phase settles on a worker thread: the waiting call is woken on its own loop."""
    async def scenario() -> float:
        budget = Budget(1.0, {"m": Price(input=0.0, output=0.001)})
        first = await budget.reserve("m", 0, 800)
        waiting = asyncio.create_task(budget.reserve("m", 0, 800))
        await asyncio.sleep(0)
        assert budget.waiting == 1
        await asyncio.to_thread(budget.settle, "m", first, 0.1)
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(scenario()) == pytest.approx(0.8)


def test_an_embedding_from_a_write_thread_waits_for_the_calls_in_flight_instead_of_stopping_the_run() -> None:
    """A model call's $0.80 worst case in flight under a $1.00 cap, and a write phase's embedding (its own thread) whose
    $0.40 does not fit beside it: the embedding waits on the run's loop until the call settles at its real $0.05, then
    goes; the budget is not exhausted (refusing at once stopped the run while almost nothing was spent). Bug planted:
    reserve_blocking reserving as reserve_now from every thread."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001), "e": Price(input=0.001, output=0.0)})

    async def scenario() -> tuple[float, bool]:
        budget.bind(asyncio.get_running_loop())
        call = await budget.reserve("m", 0, 800)
        embedding = asyncio.get_running_loop().run_in_executor(None, budget.reserve_blocking, "e", 400, 0)
        for _ in range(200):
            if budget.waiting:
                break
            await asyncio.sleep(0.01)
        waited = budget.waiting == 1 and not embedding.done()
        budget.settle("m", call, 0.05)
        got = await asyncio.wait_for(embedding, 5)
        await asyncio.to_thread(budget.settle_blocking, "e", got, 0.01)
        return got, waited

    got, waited = asyncio.run(scenario())
    assert waited and got == pytest.approx(0.4)
    assert not budget.exhausted and budget.in_flight == 0 and budget.recorded_usd == pytest.approx(0.06)


def test_an_embedding_on_the_loops_own_thread_that_does_not_fit_stops_at_once() -> None:
    """On the loop's thread nothing can wait (the calls in flight are suspended until the memory code returns): an
    embedding that does not fit is refused there, never a deadlock."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001), "e": Price(input=0.001, output=0.0)})

    async def scenario() -> None:
        budget.bind(asyncio.get_running_loop())
        await budget.reserve("m", 0, 800)
        budget.reserve_blocking("e", 400, 0)

    with pytest.raises(BudgetExceeded):
        asyncio.run(scenario())
    assert budget.exhausted
