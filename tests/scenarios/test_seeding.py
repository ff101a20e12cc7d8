"""Seeding a memory store from a scenario: ids, scope, sources, times, revisions, archived items."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenarios import item_input, load_scenarios, seed_store
from harness.scenarios.models import Scenario
from memory_tools import KeyInput, KeyOrigin, KeyType, LifecycleState, MemoryItemSource, MemoryItemStore, ScopeType

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "scenarios"
JAN_02, JAN_20, FEB_01, FEB_10 = 1767344400000, 1768899600000, 1769936400000, 1770714000000


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    [loaded] = load_scenarios([FIXTURES / "seeding"])
    return loaded


@pytest.fixture
def store(scenario: Scenario) -> MemoryItemStore:
    fresh = MemoryItemStore()
    seed_store(fresh, scenario)
    return fresh


def test_item_input_maps_ids_scope_keys_and_sources(scenario: Scenario) -> None:
    spec = scenario.items[0]
    built = item_input(spec, scenario)
    assert built.item_id == "it-rate-limit"
    assert (built.scope_type, built.scope_key) == (ScopeType.WORKSPACE, "ws-api")
    assert built.keys == (KeyInput("rate limit", KeyType.CONCEPT, KeyOrigin.LLM), KeyInput("API", KeyType.EXACT, KeyOrigin.USER))
    assert built.sources == (MemoryItemSource(session_id="s2", run_id="s2/run", turn_id="t1", event_id="s2/t1"),)
    assert built.observed_at == built.now == FEB_10


def test_item_input_global_item_and_observed_at_defaults_to_first_source_session(scenario: Scenario) -> None:
    built = item_input(scenario.items[2], scenario)
    assert (built.scope_type, built.scope_key) == (ScopeType.GLOBAL, None)
    assert built.observed_at == built.now == FEB_01


def test_revisions_give_one_version_each_and_the_final_content(store: MemoryItemStore) -> None:
    record = store.read_item("it-rate-limit")
    assert record is not None
    assert record.item.version == 3
    assert record.item.content == "The public API allows 600 requests per minute."
    assert record.item.created_at == JAN_02
    assert record.item.updated_at == FEB_10
    assert record.item.observed_at == FEB_10


def test_archived_item_is_stored_archived_after_creation(store: MemoryItemStore) -> None:
    record = store.read_item("it-old-limit-note")
    assert record is not None
    assert record.item.lifecycle_state is LifecycleState.ARCHIVED
    assert record.item.version == 2


def test_plain_items_are_version_1_with_reproducible_times(store: MemoryItemStore) -> None:
    record = store.read_item("it-short-answers")
    assert record is not None
    assert (record.item.version, record.item.created_at, record.item.updated_at) == (1, FEB_01, FEB_01)
    assert record.sources == (MemoryItemSource("s3", "s3/run", "t1", "s3/t1"),)


def test_workspace_items_stay_in_their_workspace(store: MemoryItemStore) -> None:
    found = {r.item.item_id for r in store.search_by_keys(["rate limit"], workspace_key="ws-api")}
    assert found == {"it-rate-limit"}  # archived note excluded, other workspace excluded
    other = {r.item.item_id for r in store.search_by_keys(["rate limit"], workspace_key="ws-internal")}
    assert other == {"it-other-ws"}


def test_seeding_twice_gives_identical_stores(scenario: Scenario, store: MemoryItemStore) -> None:
    again = MemoryItemStore()
    seed_store(again, scenario)
    for spec in scenario.items:
        assert again.read_item(spec.id) == store.read_item(spec.id)


def test_every_shipped_scenario_seeds_a_fresh_store() -> None:
    for shipped in load_scenarios([ROOT / "scenarios"]):
        fresh = MemoryItemStore()
        seed_store(fresh, shipped)
        for spec in shipped.items:
            record = fresh.read_item(spec.id)
            assert record is not None, (shipped.id, spec.id)
            assert record.item.lifecycle_state is spec.state
            assert record.item.version == 1 + len(spec.revisions) + (spec.state is LifecycleState.ARCHIVED)


# -- templates --------------------------------------------------------------------------------------------
def _dump(store: MemoryItemStore) -> list[str]:
    return list(store._conn().iterdump())  # every table, row by row: the whole store


def test_template_seeding_gives_the_same_store_as_direct_seeding(scenario: Scenario, store: MemoryItemStore) -> None:
    """Revisions, archived, global and workspace items: a copy of the template holds exactly what seeding writes."""
    from harness.scenarios.seeding import StoreTemplates

    templates = StoreTemplates()
    with templates.open(scenario) as copy:
        assert _dump(copy) == _dump(store)
    with templates.open(scenario) as again:
        assert _dump(again) == _dump(store)
    assert templates.seeded == 1


def test_template_copies_are_independent(scenario: Scenario) -> None:
    from harness.scenarios.seeding import StoreTemplates

    templates = StoreTemplates()
    with templates.open(scenario) as first:
        first.archive("it-rate-limit", now=FEB_10 + 1)
        with templates.open(scenario) as second:
            assert second.read_item("it-rate-limit").item.lifecycle_state is LifecycleState.ACTIVE


def test_a_conversation_seeds_one_template_for_all_its_probes(tmp_path: Path) -> None:
    from harness.scenarios.seeding import StoreTemplates
    from tests.scenarios.conversation_factories import write_conversation

    path = write_conversation(tmp_path, probes=5)
    path.write_text(path.read_text(encoding="utf-8").replace("  - id: q2\n", "  - id: q2\n    item_roles: {it-move: answer}\n"), encoding="utf-8")
    probes = load_scenarios([tmp_path])
    templates = StoreTemplates()
    for probe in probes:
        templates.open(probe).close()
    assert templates.seeded == 1  # roles never reach the store
    assert templates.plan(probes[0]) is templates.plan(probes[2])  # planned once per conversation, not per probe
    stories = load_scenarios([FIXTURES / "seeding", FIXTURES / "good"])
    for story in stories:
        templates.open(story).close()
    assert templates.seeded == 3


def test_probes_that_mark_their_own_answer_items_convert_only_those_items_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every LoCoMo probe marks its answer items, so each has its own item list; the items it shares are converted once."""
    from harness.scenarios import seeding
    from tests.scenarios.conversation_factories import write_conversation

    path = write_conversation(tmp_path, probes=4)
    text = path.read_text(encoding="utf-8")
    for n in range(1, 5):
        text = text.replace(f"  - id: q{n}\n", f"  - id: q{n}\n    item_roles: {{it-move: answer}}\n")
    path.write_text(text, encoding="utf-8")
    probes = load_scenarios([tmp_path])
    assert len({id(p.items) for p in probes}) == 4  # each probe its own list
    converted: list[str] = []
    real = seeding.item_input
    monkeypatch.setattr(seeding, "item_input", lambda spec, scenario, starts=None: converted.append(spec.id) or real(spec, scenario, starts))
    templates = seeding.StoreTemplates()
    for probe in probes:
        templates.open(probe).close()
    items = len(probes[0].items)
    assert templates.seeded == 1 and len(converted) == items + 3  # the marked item once per probe, the rest once
    assert converted.count("it-move") == 4


def test_templates_keep_at_most_their_capacity(scenario: Scenario, tmp_path: Path) -> None:
    from harness.scenarios.seeding import StoreTemplates

    templates = StoreTemplates(capacity=1)
    good = load_scenarios([FIXTURES / "good"])[0]
    for story in (scenario, good, scenario):
        templates.open(story).close()
    assert templates.seeded == 3  # the first image was dropped for the second, then seeded again


# -- sizing the templates from the order of work ----------------------------------------------------
def _lru_misses(order: list[int], capacity: int) -> int:
    """Plain LRU simulation: how many uses find their key evicted (first uses excluded)."""
    from collections import OrderedDict

    cache: OrderedDict[int, None] = OrderedDict()
    seen: set[int] = set()
    misses = 0
    for key in order:
        if key in cache:
            cache.move_to_end(key)
            continue
        misses += key in seen
        seen.add(key)
        cache[key] = None
        while len(cache) > capacity:
            cache.popitem(last=False)
    return misses


@settings(max_examples=200, deadline=None)
@given(order=st.lists(st.integers(0, 9), max_size=40))
def test_reuse_capacity_is_the_smallest_lru_size_without_a_repeat_miss(order: list[int]) -> None:
    from harness.scenarios.seeding import reuse_capacity

    capacity = reuse_capacity(order)
    assert _lru_misses(order, capacity) == 0
    assert capacity == 1 or _lru_misses(order, capacity - 1) > 0, "not the smallest"


def _distinct_stories(count: int) -> list[Scenario]:
    """``count`` scenarios with different items, so each has its own store."""
    from tests.memory_systems.prompt_factories import make_scenario

    base = make_scenario().model_dump(mode="json", exclude_none=True)
    stories = []
    for n in range(count):
        data = {**base, "id": f"story-{n:02}"}
        data["items"] = [{**base["items"][0], "content": f"The dev server runs on port {5000 + n}."}]
        stories.append(Scenario.model_validate(data))
    return stories


def test_a_suite_larger_than_the_cache_seeds_each_store_once_when_reserved_epoch_by_epoch() -> None:
    from harness.scenarios.seeding import StoreTemplates

    stories = _distinct_stories(40)
    order = [story for _epoch in range(3) for story in stories for _arm in range(2)]
    thrashing = StoreTemplates(capacity=32)
    for story in order:
        thrashing.open(story).close()
    assert thrashing.seeded == 120  # what a fixed capacity of 32 does: every store again in every epoch
    templates = StoreTemplates(capacity=32)
    assert templates.reserve(order) == 40
    for story in order:
        templates.open(story).close()
    assert templates.seeded == 40


def test_reserving_with_slack_and_grow_only_never_shrinks_below_the_need() -> None:
    from harness.scenarios.seeding import StoreTemplates

    stories = _distinct_stories(3)
    templates = StoreTemplates(capacity=2)
    assert templates.reserve(stories * 2) == 3
    assert templates.reserve(stories * 2, slack=4) == 7
    assert templates.reserve(stories[:1], grow_only=True) == 7
    assert templates.reserve(stories[:1]) == 2  # the default is the floor


def test_the_byte_bound_drops_images_within_the_capacity() -> None:
    from harness.scenarios.seeding import StoreTemplates

    stories = _distinct_stories(3)
    with StoreTemplates().open(stories[0]) as probe:
        size = len(probe.snapshot())
    templates = StoreTemplates(capacity=10, max_bytes=2 * size)
    for story in (*stories, stories[0]):
        templates.open(story).close()
    assert templates.seeded == 4  # the first image was dropped for the third (bytes), then seeded again


def test_released_templates_are_gone_and_the_next_store_is_seeded_again() -> None:
    """A run lets go of its store images once its samples are done (they were held through the report).

    Planted: the release keeping the templates. The next store must still be the same store.
    """
    from harness.scenarios import open_seeded_store, release_store_templates, seeding

    story = _distinct_stories(1)[0]
    release_store_templates()
    with open_seeded_store(story) as first:
        want = first.snapshot()
    held = seeding._SHARED_TEMPLATES
    assert held is not None and held.seeded == 1
    assert release_store_templates() == 1
    assert release_store_templates() == 0
    with open_seeded_store(story) as again:
        assert again.snapshot() == want
    assert seeding._SHARED_TEMPLATES is not held and seeding._SHARED_TEMPLATES.seeded == 1


@pytest.mark.parametrize("kind", ["longmemeval", "locomo"])
def test_item_inputs_found_by_session_start_are_those_the_scan_finds(tmp_path: Path, kind: str) -> None:
    """Issue 42's fast path: ``starts`` (one mapping per scenario) gives every item of the published-shape fixtures
    the input the scan of the sessions gives; the imported items take their time from their session."""
    from harness.scenarios.seeding import session_starts
    from tests.importers.importer_fixtures import imported

    suite, _ = imported(kind, tmp_path)
    items = 0
    for loaded in load_scenarios([suite]):
        starts = session_starts(loaded)
        for spec in loaded.items:
            items += 1
            assert item_input(spec, loaded, starts) == item_input(spec, loaded)
    assert items > 20


def test_the_first_session_of_a_repeated_id_dates_its_items_and_a_missing_one_is_refused(scenario: Scenario) -> None:
    """Two sessions with one id (validation reports it): the first one's start, as the scan; no such session: ValueError."""
    from harness.scenarios.seeding import session_starts

    spec = scenario.items[2].model_copy(update={"observed_at": None})
    first = next(s for s in scenario.sessions if s.id == spec.sources[0].session)
    twin = first.model_copy(update={"started_at": first.started_at + 1})
    doubled = scenario.model_copy(update={"sessions": [*scenario.sessions, twin]})
    assert item_input(spec, doubled, session_starts(doubled)).observed_at == first.started_at == item_input(spec, doubled).observed_at
    lost = scenario.model_copy(update={"sessions": [s for s in scenario.sessions if s.id != first.id]})
    with pytest.raises(ValueError, match="source session"):
        item_input(spec, lost, session_starts(lost))
