"""The field types scenario files share: identifiers, category names and times.

Times are UTC milliseconds; YAML timestamps (``2026-03-02T10:00:00Z``) and ISO strings are accepted and
converted, and the JSON Schema says both forms are allowed.
"""

from __future__ import annotations

import datetime as _dt
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"


SCENARIO_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*(/[A-Za-z0-9][A-Za-z0-9._:-]*)?$"
"""A scenario id: an identifier, or ``<conversation id>/<probe id>`` for a probe of a conversation file."""


CATEGORY_PATTERN = r"^[a-z][a-z0-9_]*$"
"""A category name: a lowercase identifier, so it is safe in CSV cells, file names and CSS classes."""


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


_MILLI = _dt.timedelta(milliseconds=1)


def to_millis(value: Any) -> Any:
    """Accept int milliseconds, a datetime/date, or an ISO 8601 string.

    A naive datetime or a bare date is taken as UTC. Anything else is passed
    through for pydantic to reject, except booleans and unparseable strings,
    which get a message saying what a time looks like.
    """
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if value.__class__ is str:  # exact str only (a subclass may compare equal yet differ): remembered once parsed
        held = _PARSED.get(value)
        if held is None:
            held = _parse_millis(value)
            if len(_PARSED) >= _PARSED_SIZE:
                _PARSED.clear()  # bounded: a suite of distinct times never grows it past the size
            _PARSED[value] = held
        return held
    return _parse_millis(value)


#: ISO strings already converted: a LongMemEval S file writes ~650 times, most of them its ~50 sessions' starts.
_PARSED: dict[str, int] = {}
_PARSED_SIZE = 65_536


def _parse_millis(value: Any) -> Any:
    """:func:`to_millis` of a value that is not None or an int, computed afresh (raises for what is not a time)."""
    if isinstance(value, bool):
        raise ValueError("a time must be UTC milliseconds or an ISO 8601 timestamp, not a boolean")
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            value = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                "not a time: use UTC milliseconds or an ISO 8601 timestamp such as 2026-03-02T10:00:00Z"
            ) from None
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        value = _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return (value - _EPOCH) // _MILLI
    return value


_MILLIS_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0, "description": "UTC milliseconds since the epoch"},
        {"type": "string", "description": "ISO 8601 timestamp, e.g. 2026-03-02T10:00:00Z (UTC when no offset)"},
    ]
}


Millis = Annotated[
    int,
    BeforeValidator(to_millis),
    Field(ge=0, description="UTC milliseconds or an ISO 8601 timestamp"),
    WithJsonSchema(_MILLIS_SCHEMA),
]


Identifier = Annotated[str, Field(min_length=1, max_length=512, pattern=ID_PATTERN)]


ScenarioId = Annotated[str, Field(min_length=1, max_length=1025, pattern=SCENARIO_ID_PATTERN)]


CategoryName = Annotated[str, Field(min_length=1, max_length=64, pattern=CATEGORY_PATTERN)]
