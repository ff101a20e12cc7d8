"""Memoizing a pure function of one frozen object (a scenario, or the item list it shares) by identity.

A report scores every sample of a scenario (each arm, model and epoch)
against the same :class:`~harness.scenarios.models.Scenario` object, and the
probes of a benchmark conversation share one list of hundreds of items. What
scoring derives from those alone (the item ids, the items the probe's scope
may see, the strings stored memory must hold) is the same for all of their
samples, so it is computed once per object.

The key is the object's identity, not its content: scenarios are frozen
models (their lists are never changed after loading), and hashing content
would cost more than the work saved. An object that takes weak references (a
scenario) is held weakly: its entry goes when it does, so a run or a report
that unpacks scenarios a few at a time (:mod:`harness.scenarios.shelf`) does
not keep every one alive here (a LongMemEval S suite's 500 haystacks were
held by these caches alone). Other keys (an item list) are held strongly, so
an id is never reused while its entry lives, until :func:`forget` drops them
(the shelf does, for the lists of the scenarios it lets go) or the least
recently used go past ``maxsize`` (:data:`STRONG_ENTRIES` of them). The wrapper keeps ``cache_clear`` (the
test session clears every cache of the package at its start: see
``tests/conftest.py``).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Entries kept per memoized function: more scenarios than a report scores at once, so every repeat is a hit.
ENTRIES = 16_384
#: Of them, entries whose key is held strongly (an item list: it takes no weak reference), each keeping its list
#: (a LongMemEval question's items, ~2.4 MB) alive: the scenarios in flight, a few files' worth; the run and the
#: report go scenario by scenario, and a conversation's probes share one list.
STRONG_ENTRIES = 32

_ALL: weakref.WeakSet[ByIdentity[Any, Any]] = weakref.WeakSet()


def _note_dead(dead: list[int], key: int, _ref: object) -> None:
    """Weak-reference callback: the object under ``key`` died; its entry is purged under the lock later."""
    dead.append(key)


class ByIdentity(Generic[T, R]):
    """``fn(obj)`` computed once per object (least recently used entries dropped past ``maxsize``)."""

    def __init__(self, fn: Callable[[T], R], maxsize: int = ENTRIES) -> None:
        self.fn = fn
        self.maxsize = maxsize
        # id(obj) -> (obj, or a weak reference to it; the value). A dead weak reference's id waits in _dead.
        self._entries: OrderedDict[int, tuple[Any, R]] = OrderedDict()
        self._dead: list[int] = []  # appended by weak-reference callbacks (any thread, any time), purged under the lock
        self._strong: OrderedDict[int, None] = OrderedDict()  # keys of the strongly held entries, oldest first
        self._lock = threading.Lock()
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        _ALL.add(self)

    def _purge(self) -> None:
        while self._dead:
            key = self._dead.pop()
            held = self._entries.get(key)
            if held is not None and isinstance(held[0], weakref.ref) and held[0]() is None:
                del self._entries[key]

    def __call__(self, obj: T) -> R:
        key = id(obj)
        with self._lock:
            self._purge()
            held = self._entries.get(key)
            if held is not None:
                target = held[0]() if isinstance(held[0], weakref.ref) else held[0]
                if target is obj:
                    self._entries.move_to_end(key)
                    if key in self._strong:
                        self._strong.move_to_end(key)
                    return held[1]
        value = self.fn(obj)
        try:
            dead = self._dead
            ref: Any = weakref.ref(obj, partial(_note_dead, dead, key))
        except TypeError:  # a list takes no weak reference: held until forgotten or pushed out
            ref = obj
        with self._lock:
            self._entries[key] = (ref, value)
            self._entries.move_to_end(key)
            if ref is obj:
                self._strong[key] = None
                self._strong.move_to_end(key)
                while len(self._strong) > STRONG_ENTRIES:
                    old = self._strong.popitem(last=False)[0]
                    held = self._entries.get(old)
                    if held is not None and not isinstance(held[0], weakref.ref):
                        del self._entries[old]
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return value

    def forget(self, objs: list[Any]) -> None:
        """Drop the entries of these objects (held strongly: a released scenario's lists)."""
        with self._lock:
            self._purge()
            for obj in objs:
                held = self._entries.get(id(obj))
                if held is not None and held[0] is obj:
                    del self._entries[id(obj)]
                    self._strong.pop(id(obj), None)

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._entries)

    def cache_clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._strong.clear()
            self._dead.clear()


def forget(*objs: Any) -> None:
    """Drop these objects' entries from every memoized function: their owner was let go, so must they be."""
    for memo in list(_ALL):
        memo.forget(list(objs))


def by_identity(fn: Callable[[T], R]) -> ByIdentity[T, R]:
    """Wrap ``fn`` (a pure function of one object that is never changed) to run once per object.

    Use it as ``name = by_identity(_compute_name)``, not as a decorator: the
    mutation tests leave decorated functions unmutated, and the computation
    must stay under them.
    """
    return ByIdentity(fn)
