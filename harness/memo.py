"""Memoizing a pure function of one frozen object (a scenario, or the item list it shares) by identity.

A report scores every sample of a scenario (each arm, model and epoch)
against the same :class:`~harness.scenarios.models.Scenario` object, and the
probes of a benchmark conversation share one list of hundreds of items. What
scoring derives from those alone (the item ids, the items the probe's scope
may see, the strings stored memory must hold) is the same for all of their
samples, so it is computed once per object.

The key is the object's identity, not its content: scenarios are frozen
models (their lists are never changed after loading), and hashing content
would cost more than the work saved. The cache holds a strong reference to
each key's object, so an id is never reused while its entry lives. The
wrapper keeps ``cache_clear`` (the test session clears every cache of the
package at its start: see ``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Entries kept per memoized function: more scenarios than a report scores at once, so every repeat is a hit.
ENTRIES = 16_384


class _Same(Generic[T]):
    """``obj`` as a dictionary key compared by identity."""

    __slots__ = ("obj",)

    def __init__(self, obj: T) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


class ByIdentity(Generic[T, R]):
    """``fn(obj)`` computed once per object (least recently used entries dropped past ``maxsize``)."""

    def __init__(self, fn: Callable[[T], R], maxsize: int = ENTRIES) -> None:
        self.fn = fn
        self._cached = lru_cache(maxsize=maxsize)(self._compute)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__

    def _compute(self, key: _Same[T]) -> R:
        return self.fn(key.obj)

    def __call__(self, obj: T) -> R:
        return self._cached(_Same(obj))

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def by_identity(fn: Callable[[T], R]) -> ByIdentity[T, R]:
    """Wrap ``fn`` (a pure function of one object that is never changed) to run once per object.

    Use it as ``name = by_identity(_compute_name)``, not as a decorator: the
    mutation tests leave decorated functions unmutated, and the computation
    must stay under them.
    """
    return ByIdentity(fn)
