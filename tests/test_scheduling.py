"""The README's test command hands the slowest files to the workers first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.scheduling import SLOWEST_FILES, slowest_first

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


def test_the_session_collects_the_slowest_files_first(request: pytest.FixtureRequest) -> None:
    """The hook is wired: in this very session, the items of a listed file come before every unlisted file's."""
    order = [item.nodeid.split("::", 1)[0] for item in request.session.items]
    listed = [i for i, path in enumerate(order) if path in SLOWEST_FILES]
    unlisted = [i for i, path in enumerate(order) if path not in SLOWEST_FILES]
    if listed and unlisted:
        assert max(listed) < min(unlisted)
