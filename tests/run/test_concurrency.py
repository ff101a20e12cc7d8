"""The adaptive in-flight limit of model calls: halved once per timeout wave, raised by one per window in time."""

from __future__ import annotations

import asyncio

from harness.run.concurrency import AdaptiveLimit


def test_timeouts_of_calls_started_under_one_limit_halve_it_once() -> None:
    """Eight calls in flight all time out: the limit goes 8 -> 4 once, not down to 1 (they were one wave)."""
    async def go() -> AdaptiveLimit:
        gate = AdaptiveLimit(8)
        generations = [await gate.acquire() for _ in range(8)]
        for generation in generations:
            gate.release(generation, timed_out=True)
        return gate

    gate = asyncio.run(go())
    assert gate.limit == 4 and [c["to"] for c in gate.changes] == [4]


def test_a_window_of_answers_in_time_raises_the_limit_by_one_up_to_the_maximum() -> None:
    """At limit 2, two calls answered in time raise it to 3; it never passes --max-concurrency."""
    async def go() -> AdaptiveLimit:
        gate = AdaptiveLimit(3, limit=2)
        for _ in range(20):
            gate.release(await gate.acquire(), timed_out=False)
        return gate

    gate = asyncio.run(go())
    assert gate.limit == 3 and [c["to"] for c in gate.changes] == [3]


def test_calls_over_the_limit_wait_for_a_place() -> None:
    """With limit 1 a second call waits until the first is released."""
    async def go() -> list[str]:
        gate, order = AdaptiveLimit(1), []

        async def call(name: str) -> None:
            generation = await gate.acquire()
            order.append(f"{name} in")
            await asyncio.sleep(0)
            order.append(f"{name} out")
            gate.release(generation, timed_out=False)

        await asyncio.gather(call("a"), call("b"))
        return order

    assert asyncio.run(go()) == ["a in", "a out", "b in", "b out"]


def test_three_calls_in_a_row_timing_out_alone_call_on_stall_once_and_an_answer_resets_the_count() -> None:
    """At limit 1: two timeouts alone, then an answer in time (the count starts again; the limit goes back to 2), then
    four timeouts: the first at limit 2 (not alone, the limit falls to 1) does not count, the next three do: on_stall
    once. Timeouts of calls started while the limit was above 1 never count."""
    async def go() -> tuple[AdaptiveLimit, list[int]]:
        gate, stalls = AdaptiveLimit(2), []
        gate.on_stall = lambda: stalls.append(gate.timeouts)
        first, second = await gate.acquire(), await gate.acquire()
        gate.release(first, timed_out=True)  # at 2 in flight: 2 -> 1, not alone
        gate.release(second, timed_out=True)  # an older wave: not alone either
        for timed_out in (True, True, False, True, True, True, True):  # T T answer T(at 2) T T T
            gate.release(await gate.acquire(), timed_out=timed_out)
        return gate, stalls

    gate, stalls = asyncio.run(go())
    assert gate.limit == 1 and gate.timeouts == 8 and gate.solo_timeouts == 3
    assert stalls == [8]  # the third timeout alone in a row after the answer
    assert gate.last_timeout_at is not None
