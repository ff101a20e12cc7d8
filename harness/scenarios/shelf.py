"""A suite held compressed, a few scenarios unpacked at a time: what a run and its report keep of the scenarios.

A LongMemEval S question is its own scenario with its own haystack (~50
sessions and ~480 extracted items: ~4.6 MB once loaded, 500 of them); a run
that held the suite as objects needed 2.3 GB before its first sample. A
:class:`ScenarioShelf` keeps each loaded file's scenarios as one compressed
pickle (~0.4 MB for a LongMemEval question; the probes of a LoCoMo
conversation share their sessions and items, and one pickle keeps them
shared) and unpacks a file's scenarios when one of them is asked for.

Unpacking costs ~18 ms a LongMemEval question (pickle and zlib), so it must
happen once per pass over the suite, not once per sample: the run's samples
are scenario-major (:func:`harness.run.plan_samples`), the last
:data:`UNPACKED` files stay unpacked, and a scenario still in use anywhere is
handed out again as the same object (a weak reference), so caches keyed by
its identity (seed plans, scoring memos) still hit. What the run needs of every
scenario without its haystack (id, category, tags, retrieval budget, hash, the
store it seeds) is kept beside the pickles, so planning the order of work or
filtering unpacks nothing. Unpacking gives equal scenarios (the same fields and
hash), so outputs are unchanged.
"""

from __future__ import annotations

import pickle
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from harness.bulk_allocation import bulk_allocation
from harness.memo import forget
from harness.scenarios.hashing import scenario_hash
from harness.scenarios.models import Scenario

#: Files kept unpacked (least recently asked for goes first): the run's samples in flight span a few scenarios.
UNPACKED = 4
#: zlib level: 1 packs a LongMemEval question to a third in ~10 ms; higher levels cost more CPU for little.
ZLIB_LEVEL = 1


@dataclass(frozen=True, slots=True)
class ScenarioFacts:
    """What is known of a shelved scenario without unpacking it."""

    id: str
    category: str
    tags: list[str]
    retrieval_budget: Any
    hash: str
    store_key: tuple[int, int]
    """(file pack, which distinct item/session lists in it): scenarios with one key seed one store."""


class _Packs:
    """The compressed packs and the unpacked ones still alive; shared by a shelf and its subsets."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.lock = threading.RLock()
        self.alive: weakref.WeakValueDictionary[str, Scenario] = weakref.WeakValueDictionary()
        self.recent: OrderedDict[int, list[Scenario]] = OrderedDict()  # pack index -> its scenarios, strongly held
        self.unpacked = 0  # how many packs were unpacked (tests: a pass over the suite unpacks each once)

    def add(self, scenarios: list[Scenario]) -> int:
        self.blobs.append(zlib.compress(pickle.dumps(scenarios, protocol=pickle.HIGHEST_PROTOCOL), ZLIB_LEVEL))
        return len(self.blobs) - 1

    def get(self, scenario_id: str, pack: int) -> Scenario:
        with self.lock:
            found = self.alive.get(scenario_id)
            if found is not None:
                if pack in self.recent:
                    self.recent.move_to_end(pack)
                return found
            with bulk_allocation():  # a file's models, unpickled: with the usual collections, two thirds of the time
                scenarios: list[Scenario] = pickle.loads(zlib.decompress(self.blobs[pack]))
            self.unpacked += 1
            for scenario in scenarios:
                self.alive.setdefault(scenario.id, scenario)
            self.recent[pack] = scenarios
            while len(self.recent) > UNPACKED:
                _, gone = self.recent.popitem(last=False)
                # their item and session lists are memo keys held strongly (harness.memo): let them go too
                forget(*[lst for s in gone for lst in (s.items, s.sessions)])
            return self.alive[scenario_id]

    def __getstate__(self) -> dict[str, Any]:  # a worker process gets the packs, not the live objects or the lock
        return {"blobs": self.blobs}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        self.blobs = state["blobs"]


class ScenarioShelf(Sequence[Scenario]):
    """Scenarios sorted by id, held compressed; indexing or iterating unpacks them (see the module docstring).

    Build one with :meth:`add` (a file's scenarios at a time) and :meth:`seal`, or :func:`shelve`.
    """

    def __init__(self, packs: _Packs | None = None, facts: dict[str, tuple[ScenarioFacts, int]] | None = None,
                 ids: list[str] | None = None) -> None:
        self._packs = packs or _Packs()
        self._facts: dict[str, tuple[ScenarioFacts, int]] = facts if facts is not None else {}
        self._ids: list[str] = ids if ids is not None else []

    def add(self, scenarios: list[Scenario]) -> None:
        """Shelve one file's scenarios (packed together, so the lists they share stay shared)."""
        if not scenarios:
            return
        pack = len(self._packs.blobs)
        groups: dict[tuple[int, int], int] = {}
        for scenario in scenarios:
            group = groups.setdefault((id(scenario.items), id(scenario.sessions)), len(groups))
            facts = ScenarioFacts(scenario.id, scenario.category, list(scenario.tags), scenario.retrieval_budget,
                                  scenario_hash(scenario), (pack, group))
            self._facts[scenario.id] = (facts, pack)
            self._ids.append(scenario.id)
        self._packs.add(scenarios)

    def seal(self) -> ScenarioShelf:
        """Sort by id (as :func:`harness.scenarios.load_scenarios` does); returns the shelf."""
        self._ids.sort()
        return self

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    @property
    def unpacked(self) -> int:
        """Packs unpacked so far, by this shelf and every subset of it."""
        return self._packs.unpacked

    def facts(self, scenario_id: str) -> ScenarioFacts:
        return self._facts[scenario_id][0]

    def all_facts(self) -> list[ScenarioFacts]:
        """Every scenario's :class:`ScenarioFacts`, in order: for work that needs no haystack."""
        return [self._facts[sid][0] for sid in self._ids]

    @property
    def hashes(self) -> dict[str, str]:
        return {sid: self._facts[sid][0].hash for sid in self._ids}

    def get(self, scenario_id: str) -> Scenario | None:
        held = self._facts.get(scenario_id)
        return None if held is None else self._packs.get(scenario_id, held[1])

    def subset(self, ids: Iterable[str]) -> ScenarioShelf:
        """The scenarios with these ids (in this shelf's order), sharing its packs: nothing is unpacked."""
        keep = set(ids)
        chosen = [sid for sid in self._ids if sid in keep]
        return ScenarioShelf(self._packs, {sid: self._facts[sid] for sid in chosen}, chosen)

    @property
    def by_id(self) -> ShelfView:
        return ShelfView(self)

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> Scenario: ...
    @overload
    def __getitem__(self, index: slice) -> ScenarioShelf: ...
    def __getitem__(self, index: int | slice) -> Scenario | ScenarioShelf:
        if isinstance(index, slice):
            return self.subset(self._ids[index])
        sid = self._ids[index]
        return self._packs.get(sid, self._facts[sid][1])

    def __iter__(self) -> Iterator[Scenario]:
        for sid in self._ids:
            yield self._packs.get(sid, self._facts[sid][1])

    def __contains__(self, item: object) -> bool:
        return isinstance(item, Scenario) and item.id in self._facts

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScenarioShelf):
            return self._ids == other._ids and self.hashes == other.hashes
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScenarioShelf({len(self)} scenarios, {len(self._packs.blobs)} packs)"


class ShelfView(Mapping[str, Scenario]):
    """A shelf by scenario id, unpacking on lookup (what a ``{s.id: s for s in scenarios}`` was)."""

    def __init__(self, shelf: ScenarioShelf) -> None:
        self.shelf = shelf

    def __getitem__(self, scenario_id: str) -> Scenario:
        found = self.shelf.get(scenario_id)
        if found is None:
            raise KeyError(scenario_id)
        return found

    def __contains__(self, scenario_id: object) -> bool:
        return isinstance(scenario_id, str) and scenario_id in self.shelf._facts

    def __iter__(self) -> Iterator[str]:
        return iter(self.shelf._ids)

    def __len__(self) -> int:
        return len(self.shelf)

    def keys(self) -> Any:  # a set-like view, so ``records - view.keys()`` works as on a dict
        return self.shelf._facts.keys()


def shelve(scenarios: Iterable[Scenario]) -> ScenarioShelf:
    """``scenarios`` on a shelf, in their order; consecutive ones sharing their sessions are packed together."""
    if isinstance(scenarios, ScenarioShelf):
        return scenarios
    shelf = ScenarioShelf()
    group: list[Scenario] = []
    for scenario in scenarios:
        if group and group[-1].sessions is not scenario.sessions:
            shelf.add(group)
            group = []
        group.append(scenario)
    shelf.add(group)
    return shelf


def scenario_ids(scenarios: Iterable[Scenario]) -> list[str]:
    """The ids of ``scenarios``, in order; a shelf's without unpacking."""
    if isinstance(scenarios, ScenarioShelf):
        return scenarios.ids
    return [s.id for s in scenarios]


def only(scenarios: Sequence[Scenario], ids: Iterable[str]) -> Sequence[Scenario]:
    """The scenarios with these ids, in order; a shelf's subset without unpacking."""
    if isinstance(scenarios, ScenarioShelf):
        return scenarios.subset(ids)
    keep = set(ids)
    return [s for s in scenarios if s.id in keep]


def scenarios_by_id(scenarios: Iterable[Scenario]) -> Mapping[str, Scenario]:
    """``{id: scenario}``; a shelf's :class:`ShelfView` (unpacked on lookup)."""
    if isinstance(scenarios, ScenarioShelf):
        return scenarios.by_id
    if isinstance(scenarios, ShelfView):
        return scenarios
    return {s.id: s for s in scenarios}


def scenario_facts(scenarios: Iterable[Scenario]) -> Iterable[Any]:
    """What needs only ids, categories, tags and budgets iterates these: a shelf's facts, never its haystacks."""
    if isinstance(scenarios, ScenarioShelf):
        return scenarios.all_facts()
    return scenarios


def known_hash(scenarios: Mapping[str, Scenario], scenario_id: str) -> str | None:
    """The hash a shelf computed when it packed the scenario (None: not a shelf, compute it)."""
    if isinstance(scenarios, ShelfView) and scenario_id in scenarios:
        return scenarios.shelf.facts(scenario_id).hash
    return None


def work_order(scenarios: Iterable[Scenario], ids: Iterable[str]) -> list[Any]:
    """The scenarios of ``ids`` in that order, for sizing store templates (:func:`harness.scenarios.reserve_store_templates`).

    A shelf gives each one's :class:`ScenarioFacts` (its store key), so sizing unpacks nothing; a list its scenarios.
    """
    if isinstance(scenarios, ScenarioShelf):
        return [scenarios.facts(sid) for sid in ids]
    by_id = scenarios_by_id(scenarios)
    return [by_id[sid] for sid in ids]
