"""Scoring derives per-scenario data once per scenario object, and never serves one object's data for another."""

from __future__ import annotations

from harness.memo import by_identity
from harness.score.scoring import score_sample
from harness.score.writes import memory_check
from tests.score.scoring_factories import make_record, make_scenario, tool_call


def test_a_memoized_function_runs_once_per_object_and_again_for_an_equal_copy() -> None:
    """Bug planted: keying by value (``==``) served a copy the first object's result; by ``id`` after it died."""
    calls: list[object] = []
    length = by_identity(lambda items: calls.append(items) or len(items))
    first, copy = [1, 2], [1, 2]
    assert (length(first), length(first), length(copy)) == (2, 2, 2)
    assert calls == [first, copy] and calls[0] is first and calls[1] is copy
    length.cache_clear()
    assert length(first) == 2 and len(calls) == 3


def test_two_scenarios_with_one_id_but_different_items_are_scored_each_against_its_own_items() -> None:
    """Bug planted: per-scenario data keyed by the scenario id served the first scenario's item ids to the second."""
    before = make_scenario("fact-01")
    added = before.model_copy(update={"items": [*before.items, before.items[0].model_copy(update={"id": "it-new"})]})
    answer = "Postgres 15 per it-new."
    assert [c.kind for c in score_sample(make_record(before, answer), before).unsupported_claims] == ["unknown_item_id"]
    assert [c.kind for c in score_sample(make_record(added, answer), added).unsupported_claims] == ["undisclosed_item_id"]
    moved = before.model_copy(update={"items": [i.model_copy(update={"workspace": "ws-a"}) for i in before.items]})
    leak = make_record(moved, "Postgres 15.", calls=[tool_call(["it-other-ws"])])
    assert [x.kind for x in score_sample(make_record(before, "Postgres 15.", calls=[tool_call(["it-other-ws"])]),
                                         before).tool_leaks] == ["out_of_scope_item"]
    assert score_sample(leak, moved).tool_leaks == []


def test_the_memory_check_follows_each_scenario_object() -> None:
    """Bug planted: the memory check cached by scenario id kept the first scenario's expected strings."""
    for needed in (["Postgres 15"], ["runs Postgres"]):
        scenario = make_scenario(expect={"must_contain_any": [], "must_contain_all": needed})
        assert memory_check(scenario).must_contain_all == needed


def test_a_memoized_scenario_is_held_weakly_and_a_forgotten_list_lets_go() -> None:
    """Bug planted: the memo held every scenario it saw (strong keys): a report of 500 LongMemEval questions kept
    all their haystacks alive; and ``forget`` that matched by value dropped another list's entry."""
    import gc
    import weakref

    from harness.memo import forget

    calls: list[int] = []
    size = by_identity(lambda obj: calls.append(1) or len(obj.items))
    scenario = make_scenario("fact-01")
    gone = weakref.ref(scenario)
    assert size(scenario) == size(scenario) == len(scenario.items) and len(calls) == 1
    del scenario
    gc.collect()
    assert gone() is None and len(size) == 0
    lengths = by_identity(lambda items: len(items))
    first, equal = [1], [1]
    lengths(first), lengths(equal)
    forget(first)
    assert len(lengths) == 1
