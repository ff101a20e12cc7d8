"""``harness/bulk_allocation.py``: fewer garbage collections while a file's models are built, and the setting restored."""

from __future__ import annotations

import gc

import pytest

from harness.bulk_allocation import YOUNG_THRESHOLD, bulk_allocation


@pytest.fixture(autouse=True)
def _threshold_kept():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_collections_are_rarer_inside_and_the_threshold_is_restored_after_even_when_the_body_raises() -> None:
    gc.set_threshold(700, 10, 10)
    with bulk_allocation():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 50, 100)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(RuntimeError), bulk_allocation():
        raise RuntimeError("a file that fails to load")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_collector_switched_off_or_already_rarer_is_left_as_it_is_also_when_nested() -> None:
    gc.set_threshold(0)
    with bulk_allocation():
        assert gc.get_threshold()[0] == 0
    gc.set_threshold(700, 10, 10)
    with bulk_allocation(), bulk_allocation():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 50, 100)
    assert gc.get_threshold() == (700, 10, 10)


def test_cyclic_garbage_made_inside_is_still_collected() -> None:
    import weakref

    class Node:
        pass

    with bulk_allocation():
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        gone = weakref.ref(a)
        del a, b
    gc.collect()
    assert gone() is None
