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


def test_a_waiter_cancelled_just_after_being_woken_passes_its_place_to_the_next_in_line() -> None:
    """At limit 1: b and c wait; a's release wakes b, and b is cancelled before it runs (its sample stopped). The place
    b was woken for goes to c: without the hand-on, nothing is in flight, nobody releases, and c waits forever."""
    async def go() -> int:
        gate = AdaptiveLimit(1)
        first = await gate.acquire()
        b, c = asyncio.create_task(gate.acquire()), asyncio.create_task(gate.acquire())
        await asyncio.sleep(0)  # both in line
        gate.release(first, timed_out=False)  # wakes b (its future done, b not yet run)
        b.cancel()
        return await asyncio.wait_for(c, 2)

    assert asyncio.run(go()) == 0


def test_each_change_is_printed_as_one_line_and_recorded_with_its_reason(capsys) -> None:
    async def go() -> AdaptiveLimit:
        gate = AdaptiveLimit(4)
        generations = [await gate.acquire() for _ in range(4)]
        gate.release(generations[0], timed_out=True)  # 4 -> 2
        for generation in generations[1:]:
            gate.release(generation, timed_out=False)  # an answer after a timeout starts a new window
        return gate

    gate = asyncio.run(go())
    assert capsys.readouterr().err == ("note: model calls in flight 4 -> 2 (a call timed out; --max-concurrency 4)\n"
                                       "note: model calls in flight 2 -> 3 (2 calls answered in time; --max-concurrency 4)\n")
    assert [{k: v for k, v in c.items() if k != "after_s"} for c in gate.changes] == [
        {"from": 4, "to": 2, "why": "a call timed out"}, {"from": 2, "to": 3, "why": "2 calls answered in time"}]
    assert all(isinstance(c["after_s"], float) and 0 <= c["after_s"] < 3600 for c in gate.changes)


def test_the_summary_is_none_until_the_limit_changes_then_names_the_final_and_lowest_limits() -> None:
    gate = AdaptiveLimit(8)
    assert gate.summary() is None
    gate.release(0, timed_out=True)  # 8 -> 4
    gate.release(1, timed_out=True)  # 4 -> 2
    for _ in range(2):
        gate.release(2, timed_out=False)  # 2 -> 3
    summary = gate.summary()
    assert summary is not None and summary["changes"] == gate.changes
    assert {k: v for k, v in summary.items() if k != "changes"} == {"max_concurrency": 8, "final": 3, "lowest": 2}


def test_the_summary_keeps_the_first_fifty_changes() -> None:
    gate = AdaptiveLimit(2)
    for generation in range(60):  # 2 -> 1 on a timeout, 1 -> 2 on an answer, sixty times over
        gate.release(gate._generation, timed_out=generation % 2 == 0)
    assert len(gate.changes) == 60 and gate.summary()["changes"] == gate.changes[:50]


def test_the_limit_halves_rounding_down_and_never_below_one() -> None:
    gate = AdaptiveLimit(3)
    gate.release(0, timed_out=True)
    assert gate.limit == 1
    gate.release(1, timed_out=True)  # alone at 1: nothing left to lower
    assert gate.limit == 1 and [c["to"] for c in gate.changes] == [1]


def test_the_maximum_is_a_whole_number_of_at_least_one_and_the_limit_starts_there() -> None:
    assert (AdaptiveLimit(0).maximum, AdaptiveLimit(0).limit) == (1, 1)
    assert (AdaptiveLimit(-3).maximum, AdaptiveLimit(2.9).maximum) == (1, 2)  # type: ignore[arg-type]
    assert (AdaptiveLimit(6).limit, AdaptiveLimit(6, limit=2).limit) == (6, 2)


def test_a_release_without_a_call_in_flight_never_counts_below_zero_and_waiting_counts_the_line() -> None:
    async def go() -> tuple[int, int, int]:
        gate = AdaptiveLimit(1)
        gate.release(await gate.acquire(), timed_out=False)
        gate.release(0, timed_out=False)  # one release too many
        held = await gate.acquire()
        waiters = [asyncio.create_task(gate.acquire()) for _ in range(2)]
        await asyncio.sleep(0)
        waiting = gate.waiting
        gate.release(held, timed_out=False)
        await asyncio.sleep(0)
        in_flight = gate.in_flight
        for task in waiters:
            task.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        return waiting, in_flight, gate.waiting

    assert asyncio.run(go()) == (2, 1, 0)


def test_a_timeout_clears_the_window_of_answers_so_the_raise_needs_a_whole_window_after_it() -> None:
    gate = AdaptiveLimit(4, limit=3)
    gate.release(0, timed_out=False)
    gate.release(0, timed_out=False)
    gate.release(0, timed_out=True)  # 3 -> 1, the two answers forgotten
    gate.release(1, timed_out=False)  # a window of 1 at limit 1: 1 -> 2
    gate.release(2, timed_out=False)  # one answer of the next window of 2: no change yet
    assert [c["to"] for c in gate.changes] == [1, 2] and gate.limit == 2


def test_every_call_in_flight_is_counted_so_the_limit_holds_the_next_one_back() -> None:
    async def go() -> tuple[int, bool]:
        gate = AdaptiveLimit(3)
        for _ in range(3):
            await gate.acquire()
        fourth = asyncio.create_task(gate.acquire())
        await asyncio.sleep(0)
        held = not fourth.done()
        fourth.cancel()
        await asyncio.gather(fourth, return_exceptions=True)
        return gate.in_flight, held

    assert asyncio.run(go()) == (3, True)


def test_a_release_gives_back_exactly_one_place() -> None:
    async def go() -> int:
        gate = AdaptiveLimit(4)
        first = await gate.acquire()
        await gate.acquire()
        gate.release(first, timed_out=False)
        return gate.in_flight

    assert asyncio.run(go()) == 1


def test_a_timeout_that_lowers_nothing_still_restarts_the_window_of_answers() -> None:
    gate = AdaptiveLimit(4, limit=2)
    gate.release(-1, timed_out=True)  # a call of an older wave: no change, but the window starts again
    gate.release(gate._generation, timed_out=False)
    assert gate.limit == 2 and gate.changes == []
    gate.release(gate._generation, timed_out=False)
    assert gate.limit == 3


def test_calls_started_before_a_raise_do_not_halve_the_raised_limit() -> None:
    """8 -> 4 on a timeout, 4 -> 5 after four answers: a call started before the raise (at 4) that times out now
    belongs to an older wave and lowers nothing."""
    gate = AdaptiveLimit(8)
    gate.release(gate._generation, timed_out=True)
    before_raise = gate._generation
    for _ in range(4):
        gate.release(gate._generation, timed_out=False)
    assert gate.limit == 5
    gate.release(before_raise, timed_out=True)
    assert gate.limit == 5 and [c["to"] for c in gate.changes] == [4, 5]


def test_a_change_is_timed_from_the_start_to_the_millisecond_and_flushed_at_once(monkeypatch) -> None:
    import sys
    import types

    from harness.run import concurrency

    class Stderr:
        def __init__(self) -> None:
            self.text, self.flushed = "", ""

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            self.flushed = self.text

    monkeypatch.setattr(concurrency, "time", types.SimpleNamespace(monotonic=lambda: 101.23456))
    monkeypatch.setattr(sys, "stderr", Stderr())
    gate = AdaptiveLimit(4, _started=100.0)
    gate.release(0, timed_out=True)
    assert gate.changes[0]["after_s"] == 1.235 and gate.last_timeout_at == 101.23456
    assert sys.stderr.flushed.startswith("note: model calls in flight 4 -> 2")  # a log file redirect sees it now


def test_waiting_calls_get_their_places_in_the_order_they_asked() -> None:
    async def go() -> list[str]:
        gate, order = AdaptiveLimit(1), []
        held = await gate.acquire()

        async def call(name: str) -> None:
            generation = await gate.acquire()
            order.append(name)
            await asyncio.sleep(0)
            gate.release(generation, timed_out=True)  # timeouts: the limit stays at 1

        tasks = [asyncio.create_task(call(name)) for name in "abc"]
        await asyncio.sleep(0)
        gate.release(held, timed_out=True)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(go()) == ["a", "b", "c"]


def test_a_raise_wakes_as_many_waiting_calls_as_there_are_new_places() -> None:
    async def go() -> int:
        gate = AdaptiveLimit(2, limit=1)
        held = await gate.acquire()
        waiters = [asyncio.create_task(gate.acquire()) for _ in range(2)]
        await asyncio.sleep(0)
        gate.release(held, timed_out=False)  # 1 -> 2, nothing in flight: two free places
        for _ in range(3):
            await asyncio.sleep(0)
        in_flight = gate.in_flight
        for task in waiters:
            task.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        return in_flight

    assert asyncio.run(go()) == 2
