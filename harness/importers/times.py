"""Parsing the date formats the benchmarks publish into ISO 8601 UTC strings.

LoCoMo writes ``1:56 pm on 8 May, 2023``; LongMemEval ``2023/05/20 (Sat) 02:21``.
Neither gives a time zone: times are taken as UTC, which keeps their order
and their calendar dates.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any

from harness.importers.answers import MONTHS
from harness.importers.faults import ImporterError

#: A logged message's plausible times, 1990-01-01 to 2100-01-01 UTC in milliseconds: outside them a number is a
#: unit mistake or garbage (1e300, or 9e15 ms: the year 287,168), not a conversation.
EARLIEST_MS, LATEST_MS = 631_152_000_000, 4_102_444_800_000
_SECONDS_LIMIT = 100_000_000_000  # a number below this is epoch seconds (until 5138), above it milliseconds

_LOCOMO = re.compile(
    r"^\s*(\d{1,2})[:.](\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$", re.IGNORECASE
)
_LONGMEMEVAL = re.compile(r"^\s*(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$")


def _month(name: str) -> int | None:
    """``May``, ``Sept``, ``december`` -> the month number; None for anything else."""
    key = name.lower().rstrip(".")
    return next((n for n, full in enumerate(MONTHS, start=1) if len(key) >= 3 and full.startswith(key)), None)


def parse_time(text: object) -> _dt.datetime | None:
    """A benchmark date string as an aware UTC datetime, or None when it is not one of the known forms.

    Example:
        >>> parse_time("1:56 pm on 8 May, 2023").isoformat()
        '2023-05-08T13:56:00+00:00'
        >>> parse_time("2023/05/20 (Sat) 02:21").isoformat()
        '2023-05-20T02:21:00+00:00'
    """
    if not isinstance(text, str):
        return None
    try:
        match = _LOCOMO.match(text)
        if match:
            hour, minute = int(match[1]) % 12 + (12 if match[3].lower() == "p" else 0), int(match[2])
            month = _month(match[5])
            if month is None:
                return None
            return _dt.datetime(int(match[6]), month, int(match[4]), hour, minute, tzinfo=_dt.UTC)
        match = _LONGMEMEVAL.match(text)
        if match:
            return _dt.datetime(int(match[1]), int(match[2]), int(match[3]), int(match[4] or 0), int(match[5] or 0),
                                tzinfo=_dt.UTC)
        moment = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=_dt.UTC) if moment.tzinfo is None else moment.astimezone(_dt.UTC)


def iso(moment: _dt.datetime) -> str:
    """``2023-05-08T13:56:00Z``."""
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def message_millis(raw: Any, where: str, name: str) -> int:
    """A logged message's time as UTC milliseconds: ISO 8601, or a number of epoch seconds or milliseconds.

    Raises:
        ImporterError: a boolean, NaN, infinity, a negative number, text that is no time, or a time outside
            1990-2100 (:data:`EARLIEST_MS`, :data:`LATEST_MS`); the message names the place, field and value.
    """
    millis: int | None = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if not math.isfinite(raw) or raw < 0:
            raise ImporterError(f"{where}: field {name!r} {raw!r} is not a time; give ISO 8601 or epoch seconds")
        millis = int(raw * 1000) if raw < _SECONDS_LIMIT else int(min(raw, 1e18))
    elif isinstance(raw, str):
        text = raw.strip()
        try:
            moment = _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            moment = None
        if moment is not None:
            moment = moment.replace(tzinfo=_dt.UTC) if moment.tzinfo is None else moment
            millis = int(moment.timestamp() * 1000)
    if millis is None:
        raise ImporterError(f"{where}: field {name!r} {raw!r} is not a time; give ISO 8601 (2026-03-02T10:00:00Z) "
                            "or epoch seconds")
    if not EARLIEST_MS <= millis < LATEST_MS:
        raise ImporterError(f"{where}: field {name!r} {raw!r} is out of range: a logged message's time lies between "
                            f"1990-01-01 and 2100-01-01 (epoch seconds {EARLIEST_MS // 1000} to {LATEST_MS // 1000}, "
                            "or the same in milliseconds)")
    return millis
