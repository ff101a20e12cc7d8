"""Times in scenario files: the converted ISO strings are remembered, and give what a fresh conversion gives."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from harness.scenarios import field_types
from harness.scenarios.field_types import to_millis


class _Text(str):
    """A str subclass: equal to its text, never remembered in its place."""


_TIMES: list[Any] = [
    "2023-05-18T11:09:00Z", "2023-05-18T11:09:00z", " 2023-05-18T11:09:00Z ", "2023-05-18T11:09:00+02:00", "2023-05-18",
    "2023-05-18T11:09:00.123Z", "1969-12-31T23:59:59Z", _Text("2023-05-18T11:09:00Z"), dt.date(2023, 5, 18),
    dt.datetime(2023, 5, 18, 11, 9), 1684408140000, None,
]
_NOT_TIMES: list[Any] = ["yesterday", "", "2023-13-01", True, _Text("soon")]


def _fresh(value: Any) -> Any:
    field_types._PARSED.clear()
    return to_millis(value)


@pytest.mark.parametrize("value", _TIMES)
def test_a_remembered_time_is_what_a_fresh_conversion_gives(value: Any) -> None:
    """Each time after every other was remembered, twice: the same milliseconds."""
    expected = _fresh(value)
    for other in _TIMES:
        to_millis(other)
    assert to_millis(value) == expected
    assert to_millis(value) == expected
    assert to_millis("2023-05-18T11:09:00Z") == 1684408140000


@pytest.mark.parametrize("value", _NOT_TIMES)
def test_what_is_not_a_time_is_refused_every_time_and_never_remembered(value: Any) -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="not a time|not a boolean"):
            to_millis(value)
    assert all(key.__class__ is str for key in field_types._PARSED)
    assert not any(key == value for key in field_types._PARSED)


def test_the_remembered_times_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(field_types, "_PARSED_SIZE", 3)
    for day in range(1, 20):
        assert to_millis(f"2023-05-{day:02d}") == to_millis(dt.date(2023, 5, day))
        assert len(field_types._PARSED) <= 3
