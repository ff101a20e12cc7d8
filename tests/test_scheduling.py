"""The order test files go to xdist's workers in: files holding a slow test first (tests/scheduling.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.scheduling import slow_files_first


@dataclass
class Item:
    nodeid: str
    markers: tuple[str, ...] = field(default=())

    def get_closest_marker(self, name: str) -> object:
        return name if name in self.markers else None


def test_files_holding_a_slow_test_go_first_then_the_most_tests_first_each_file_whole() -> None:
    items = [Item("a.py::t1"), Item("a.py::t2"), Item("a.py::t3"),
             Item("b.py::t1", ("slow",)),
             Item("c.py::t1"), Item("c.py::t2"), Item("c.py::t3"), Item("c.py::t4"), Item("c.py::t5"),
             Item("d.py::t1"), Item("d.py::t2", ("slow",)),
             Item("e.py::t1"), Item("e.py::t2"), Item("e.py::t3")]
    ordered = [item.nodeid for item in slow_files_first(items)]
    assert ordered == ["b.py::t1", "d.py::t1", "d.py::t2",
                       "c.py::t1", "c.py::t2", "c.py::t3", "c.py::t4", "c.py::t5",
                       "a.py::t1", "a.py::t2", "a.py::t3", "e.py::t1", "e.py::t2", "e.py::t3"]


def test_an_order_with_no_slow_test_is_xdists_most_tests_first() -> None:
    items = [Item("x.py::t1"), Item("y.py::t1"), Item("y.py::t2"), Item("z.py::t1[p]"), Item("z.py::t1[q]")]
    assert [item.nodeid for item in slow_files_first(items)] == ["y.py::t1", "y.py::t2", "z.py::t1[p]", "z.py::t1[q]",
                                                                  "x.py::t1"]
