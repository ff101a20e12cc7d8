"""Runs that hold real user data: which they are, and the scenarios they run, redacted.

A run is **sensitive** when a suite it runs says so (``"sensitive": true`` in
its ``_suite.json``: every ``recall-eval import transcripts``), when it reads a
team's store (``--store``), or when it is given ``--redact``. A sensitive run
redacts every text of its scenarios before any model sees it (turns, the probe,
item contents and keys, the logged reply) with the secret patterns of
:mod:`harness.redaction` plus its ``--redact`` patterns, and ``run.json``
records ``parameters.sensitive`` (the history and view indexes skip such
folders unless asked) and the patterns (never what they hid). The report loads
the scenarios through :func:`prepare_run_scenarios` with the same parameters,
so it scores exactly what ran.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.redaction import Redactor, recorded_patterns
from harness.scenarios.models import ItemSpec, Scenario, Session, Turn
from harness.scenarios.provenance import suite_files
from harness.scenarios.store_items import StoreItems, load_store, with_store


def sensitive_suites(paths: Sequence[str | Path]) -> list[str]:
    """The ``_suite.json`` files under ``paths`` (or beside a named file) that say ``"sensitive": true``."""
    found = []
    for file in suite_files(paths):
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("sensitive") is True:
            found.append(str(file))
    return found


class _Redacting:
    """Redacts scenarios, each shared list (a conversation's sessions, a store's items) once."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.count = 0
        self._lists: dict[int, tuple[list[Any], list[Any]]] = {}
        self._texts: dict[str, tuple[str, int]] = {}

    def text(self, value: str) -> str:
        known = self._texts.get(value)  # an imported suite repeats each earlier session in every later probe's file
        if known is None:
            out, n = self.redactor.redact(value)
            known = self._texts[value] = (out or "[REDACTED]", n)
        self.count += known[1]
        return known[0]

    def turns(self, turns: list[Turn]) -> list[Turn]:
        return [t.model_copy(update={"content": self.text(t.content)}) for t in turns]

    def shared(self, values: list[Any], one: Any) -> list[Any]:
        known = self._lists.get(id(values))
        if known is None or known[0] is not values:
            known = self._lists[id(values)] = (values, [one(v) for v in values])
        return known[1]

    def session(self, session: Session) -> Session:
        return session.model_copy(update={"turns": self.turns(session.turns)})

    def item(self, item: ItemSpec) -> ItemSpec:
        keys = [k.model_copy(update={"key": self.text(k.key)}) for k in item.keys]
        revisions = [r.model_copy(update={"content": self.text(r.content)}) for r in item.revisions]
        return item.model_copy(update={"content": self.text(item.content), "keys": keys, "revisions": revisions})

    def scenario(self, scenario: Scenario, *, items: bool = True) -> Scenario:
        probe = scenario.probe.model_copy(update={"message": self.text(scenario.probe.message),
                                                  "history": self.turns(scenario.probe.history)})
        expect = scenario.expect
        if expect.logged_reply is not None:
            expect = expect.model_copy(update={"logged_reply": self.text(expect.logged_reply)})
        update = {"sessions": self.shared(scenario.sessions, self.session), "probe": probe, "expect": expect,
                  "title": self.text(scenario.title), "description": self.text(scenario.description)}
        if items:
            update["items"] = self.shared(scenario.items, self.item)
        return scenario.model_copy(update=update)


def redact_scenarios(scenarios: Sequence[Scenario], redactor: Redactor,
                     store: StoreItems | None = None) -> tuple[list[Scenario], StoreItems | None, int]:
    """``scenarios`` with every text redacted, ``store`` with its items redacted, and how many matches were replaced.

    With a store, its items are redacted once and then given to each probe (:func:`with_store`): every probe
    has its own prefix of them, and redacting each prefix anew cost minutes on a LoCoMo-sized store.
    """
    redacting = _Redacting(redactor)
    if store is None:
        return [redacting.scenario(s) for s in scenarios], None, redacting.count
    store = dataclasses.replace(store, items=tuple(redacting.item(i) for i in store.items))
    out = [redacting.scenario(s, items=False) for s in with_store(scenarios, store)]
    return out, store, redacting.count


def prepare_run_scenarios(scenarios: Sequence[Scenario], parameters: Mapping[str, Any],
                          store: StoreItems | None = None) -> list[Scenario]:
    """The scenarios as a run with ``parameters`` (``run.json``'s) ran them: its store's items, then redacted.

    Raises:
        harness.scenarios.StoreError: the run's store file cannot be read any more.
        harness.redaction.RedactionError: run.json records ``--redact`` digests this process was not given.
    """
    recorded = parameters.get("store")
    if store is None and isinstance(recorded, Mapping) and recorded.get("path"):
        store = load_store(recorded["path"])
    if parameters.get("sensitive"):
        patterns = recorded_patterns((parameters.get("redact") or {}).get("patterns") or [])
        return redact_scenarios(scenarios, Redactor.build(patterns), store)[0]
    return with_store(scenarios, store) if store is not None else list(scenarios)
