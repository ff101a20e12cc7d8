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


def test_a_refusal_names_the_model_its_worst_case_and_what_is_recorded_and_in_flight() -> None:
    """Every refusal (waiting or not, exhausted or not) says which model's call, what it might cost and what the run
    holds: recorded plus in flight, against the cap."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001), "judge": Price(input=0.0, output=0.001)})
    held = budget.reserve_now("m", 0, 300)
    budget.recorded_usd = 0.5
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve_now("judge", 0, 400)
    assert str(caught.value) == ("--max-cost-usd reached: a call of judge may cost up to $0.400000 and the run has "
                                 "$0.800000 of $1.000000 recorded or in flight")
    budget.settle("m", held, 0.0)
    budget.exhausted = False  # as after a resume: the next refusal is the one of nothing in flight

    async def refused() -> list[str]:
        messages = []
        for _ in range(2):  # nothing in flight, then exhausted
            try:
                await budget.reserve("judge", 0, 600)
            except BudgetExceeded as exc:
                messages.append(str(exc))
        return messages

    nothing_in_flight, exhausted = asyncio.run(refused())
    assert nothing_in_flight.startswith("--max-cost-usd reached: a call of judge may cost up to $0.600000 and the run has $0.500000")
    assert exhausted == nothing_in_flight


def test_calls_reserved_one_at_a_time_are_each_in_flight_until_settled() -> None:
    budget = Budget(1.0, {"judge": Price(input=0.0, output=0.001)})
    first, second = budget.reserve_now("judge", 0, 100), budget.reserve_now("judge", 0, 100)
    assert budget.in_flight == 2 and budget.reserved_usd == pytest.approx(0.2)
    budget.settle("judge", first, 0.01)
    assert budget.in_flight == 1 and budget.reserved_usd == pytest.approx(0.1)
    budget.settle("judge", second, 0.01)
    assert budget.in_flight == 0 and budget.reserved_usd == 0 and budget.recorded_usd == pytest.approx(0.02)


def test_a_free_call_records_nothing_and_a_call_with_no_reservation_is_recorded_as_it_cost() -> None:
    """A call that cost $0 is charged $0 (only a negative or non-number cost is charged its reservation); a call
    reserved at $0 (a model priced at zero) that then cost something is recorded, without dividing by zero."""
    budget = Budget(1.0, {"m": Price(input=0.0, output=0.001), "free": Price(input=0.0, output=0.0)})
    budget.settle("m", budget.reserve_now("m", 0, 100), 0.0)
    assert budget.recorded_usd == 0.0
    budget.settle("free", budget.reserve_now("free", 0, 100), 0.02)
    assert budget.recorded_usd == pytest.approx(0.02) and budget.reserve_now("free", 0, 100) == 0.0


def test_a_provider_that_costs_more_than_estimated_scales_the_next_worst_cases_by_the_ratio_compounded() -> None:
    """A call costing 1.5 times its reservation makes the next worst case 1.5 times larger; a scaled call costing
    twice its (scaled) reservation makes the next three times the unscaled estimate. A call at or under its
    reservation changes nothing."""
    budget = Budget(100.0, {"m": Price(input=0.0, output=0.001), "other": Price(input=0.0, output=0.001)})
    budget.settle("m", budget.reserve_now("m", 0, 100), 0.15)
    assert budget.reserve_now("m", 0, 100) == pytest.approx(0.15)
    budget.settle("m", 0.15, 0.30)
    assert budget.reserve_now("m", 0, 100) == pytest.approx(0.30)
    budget.settle("other", budget.reserve_now("other", 0, 100), 0.1)
    budget.settle("other", budget.reserve_now("other", 0, 100), 0.05)
    assert budget.reserve_now("other", 0, 100) == pytest.approx(0.1)


def test_records_from_before_write_phases_and_embeddings_count_their_model_calls() -> None:
    """A record without a ``write_phase`` or ``embedding`` attribute at all (an older record's shape) costs its calls."""
    from types import SimpleNamespace as NS

    from harness.run.budget import recorded_cost

    assert recorded_cost([NS(model_calls=[NS(cost_usd=0.25, cached=False)])]) == pytest.approx(0.25)


def test_a_run_stopped_by_the_cap_says_what_it_recorded_and_how_many_samples_resume_will_run(tmp_path) -> None:
    """Only samples stopped by the cap count as stopped (a provider error is another story); a run none of whose
    samples the cap stopped has no budget line."""
    from harness.records import RESULTS_FILE, SampleError
    from harness.records.writing import append_record
    from harness.run.budget import budget_stop
    from tests.score.scoring_factories import make_record

    def stopped(scenario: str):
        record = make_record(scenario, error=True, cost=0.5)
        return record.model_copy(update={"error": SampleError(type="BudgetExceeded", message="--max-cost-usd reached")})

    records = [make_record("fact-01", cost=0.25), make_record("fact-02", error=True, cost=0.125), stopped("fact-03"),
               stopped("fact-04")]
    with (tmp_path / RESULTS_FILE).open("w", encoding="utf-8") as handle:
        for record in records[:2]:
            append_record(handle, record)
    assert budget_stop(tmp_path, 2.0) is None
    with (tmp_path / RESULTS_FILE).open("a", encoding="utf-8") as handle:
        for record in records[2:]:
            append_record(handle, record)
    assert budget_stop(tmp_path, 2.0) == (
        "stopped: --max-cost-usd $2.0000 reached before the next model call (recorded cost $1.3750); finished samples "
        "are saved, 2 sample(s) stopped midway are recorded as errors and run again on resume")
