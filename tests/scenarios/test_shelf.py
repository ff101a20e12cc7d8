"""A ScenarioShelf gives back the scenarios it packed, equal and hashed alike, a few unpacked at a time."""

from __future__ import annotations

import contextlib
import gc
import pickle
from collections.abc import Iterator

from harness.scenarios import Scenario, load_scenario_shelf, load_scenarios, scenario_hash, scenarios_by_id, shelve
from harness.scenarios.shelf import UNPACKED
from tests.memory_systems.prompt_factories import make_scenario
from tests.scenarios.conversation_factories import write_conversation


def _suite(count: int) -> list[Scenario]:
    base = make_scenario()
    return [base.model_copy(update={"id": f"s-{n:02d}", "sessions": list(base.sessions), "items": list(base.items)})
            for n in range(count)]


def _live() -> int:
    """Scenario objects alive that the collector tracks, frozen ones (:func:`_frozen_heap`) left out."""
    gc.collect()
    return sum(isinstance(o, Scenario) for o in gc.get_objects())


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """Everything alive now moved out of the collector's sight (``gc.freeze``) for the duration: each :func:`_live`
    then walks only what was made since, not the whole worker's heap (litellm and all; ~13 CPU-s a test in the
    suite's run). A count taken inside against a baseline taken inside is the same difference as before."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_an_unpacked_scenario_equals_the_one_packed_and_has_its_hash() -> None:
    """Bug planted: the facts' hash taken after packing from a copy without its items (a different digest)."""
    scenarios = _suite(3)
    shelf = shelve(scenarios)
    assert list(shelf) == scenarios
    assert shelf.hashes == {s.id: scenario_hash(s) for s in scenarios}
    assert [scenario_hash(s) for s in shelf] == list(shelf.hashes.values())


def test_a_shelf_holds_few_scenarios_unpacked_while_it_is_walked() -> None:
    """Bug planted: every unpacked file kept in the recent list (no eviction): all 12 stayed alive."""
    shelf = shelve(_suite(12))
    with _frozen_heap():
        before = _live()
        most = 0
        for scenario in shelf:
            assert scenario.id
            most = max(most, _live() - before)
    assert most <= UNPACKED + 1
    assert shelf.unpacked == 12  # one pass, each file unpacked once


def test_a_scenario_still_in_use_is_handed_out_again_as_the_same_object() -> None:
    """Bug planted: no weak table of live scenarios: a sample holding its scenario got a second copy (memos missed)."""
    shelf = shelve(_suite(UNPACKED + 3))
    held = shelf.by_id["s-00"]
    for scenario in shelf:  # pushes s-00's file out of the recent list
        del scenario
    assert shelf.by_id["s-00"] is held


def test_probes_of_one_conversation_keep_sharing_their_sessions_and_items(tmp_path) -> None:
    """Bug planted: each probe pickled on its own: every probe got its own copy of the conversation (memory x probes)."""
    write_conversation(tmp_path, probes=4)
    shelf = load_scenario_shelf([tmp_path])
    first, *rest = list(shelf)
    assert all(s.sessions is first.sessions and s.items is first.items for s in rest)
    assert list(shelf) == load_scenarios([tmp_path]) and len({f.store_key for f in shelf.all_facts()}) == 1


def test_a_subset_and_a_pickled_shelf_give_the_same_scenarios(tmp_path) -> None:
    """A worker process gets the packs (pickled), never the live objects; a subset unpacks nothing until asked."""
    scenarios = _suite(5)
    shelf = shelve(scenarios)
    part = shelf.subset(["s-03", "s-01", "nope"])
    assert part.ids == ["s-01", "s-03"] and shelf.unpacked == 0
    copy = pickle.loads(pickle.dumps(shelf))
    assert list(copy) == scenarios and dict(scenarios_by_id(part)) == {s.id: s for s in scenarios if s.id in ("s-01", "s-03")}


def test_a_filtered_shelf_holds_what_load_scenarios_selects(tmp_path) -> None:
    write_conversation(tmp_path, probes=4)
    ids = [s.id for s in load_scenarios([tmp_path], ids=["*2"])]
    assert load_scenario_shelf([tmp_path], ids=["*2"]).ids == ids and ids
