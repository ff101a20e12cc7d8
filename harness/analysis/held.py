"""Results of a pure function held by a digest of their inputs' content.

A report decides the same paired difference again and again: the verdict's
checks, the layer ladder, the category rows and the recomputations that
check ``summary.json`` against ``results.jsonl`` each call
:func:`harness.analysis.decision.paired_evidence`, and in the test suite's
reports 6,643 calls had 767 distinct inputs. Each call enumerates up to 2^16
sign assignments and bisects the interval, so the repeats are worth
holding. The inputs can be long (a LoCoMo suite's 1,986 differences), so
an entry is keyed by a 16-byte BLAKE2b digest of their bytes, not the bytes
themselves: :data:`ENTRIES` entries take a few hundred kilobytes whatever the
suite. The function must be pure: same content, same result (a frozen
result, shared by every caller).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")

#: Entries held per function, the least recently used dropped first.
ENTRIES = 4_096


def digest(*parts: bytes) -> bytes:
    """A 16-byte BLAKE2b digest of ``parts``, each length-prefixed (so ``(b"ab", b"c")`` differs from ``(b"a", b"bc")``)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


class ByDigest(Generic[R]):
    """``fn(*args)`` held under a key the caller computes from the arguments' content (a digest and the scalars)."""

    def __init__(self, fn: Callable[..., R], maxsize: int = ENTRIES) -> None:
        self.fn, self.maxsize = fn, maxsize
        self._held: OrderedDict[object, R] = OrderedDict()
        self._lock = threading.Lock()
        self.__module__ = fn.__module__  # the test session clears the caches of each module it finds them in

    def __call__(self, key: object, *args: object) -> R:
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                return self._held[key]
        value = self.fn(*args)  # an exception is raised to the caller and holds nothing
        with self._lock:
            self._held[key] = value
            self._held.move_to_end(key)
            while len(self._held) > self.maxsize:
                self._held.popitem(last=False)
        return value

    def cache_clear(self) -> None:
        with self._lock:
            self._held.clear()
