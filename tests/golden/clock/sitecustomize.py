"""A deterministic clock for the golden-output tests (``tests/golden``), loaded through PYTHONPATH in a child process.

``time.perf_counter`` called from recall-eval's own packages advances one
millisecond per call, so every latency a run records is the same on every
machine; every other caller (litellm, asyncio) sees the real clock.
``datetime.now`` is fixed, so run and report timestamps are too. Never on
the path of a real run.
"""

import datetime as _dt
import sys
import time as _time

_real_perf_counter = _time.perf_counter
_ticks = [0]


def _perf_counter() -> float:
    if sys._getframe(1).f_globals.get("__name__", "").startswith(("harness", "memory_tools")):
        _ticks[0] += 1
        return 1000.0 + _ticks[0] * 0.001
    return _real_perf_counter()


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return cls(2026, 12, 1, 12, 0, 0, tzinfo=tz)

    @classmethod
    def utcnow(cls):  # type: ignore[override]
        return cls(2026, 12, 1, 12, 0, 0)


_time.perf_counter = _perf_counter
_dt.datetime = _FixedDatetime
