"""The README's test command spreads the files over workers slowest first, with one worker more than the cores."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.scheduling import SLOWEST_FILES, WORKERS_ENV, auto_workers, slowest_first

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_listed_as_slowest_exists_once() -> None:
    """A renamed or removed file would silently start last again; the list names files as pytest's node ids do."""
    assert [path for path in SLOWEST_FILES if not (ROOT / path).is_file()] == []
    assert len(set(SLOWEST_FILES)) == len(SLOWEST_FILES)


def test_the_listed_files_come_first_in_the_lists_order_and_the_rest_keep_the_collection_order() -> None:
    slow, slower = SLOWEST_FILES[1], SLOWEST_FILES[0]
    collected = ["tests/a/test_x.py::test_1", f"{slow}::test_2", "tests/a/test_y.py::test_3", f"{slower}::test_4",
                 "tests/a/test_x.py::test_5", f"{slow}::test_6"]
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in collected]
    slowest_first(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        f"{slower}::test_4", f"{slow}::test_2", f"{slow}::test_6",
        "tests/a/test_x.py::test_1", "tests/a/test_y.py::test_3", "tests/a/test_x.py::test_5"]


def test_auto_starts_one_worker_more_than_the_cores_unless_the_environment_says_how_many() -> None:
    assert auto_workers(2, {}) == 3
    assert auto_workers(8, {}) == 9
    assert auto_workers(2, {WORKERS_ENV: "5"}) == 5
