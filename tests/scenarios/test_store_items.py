"""``--store``: a real memory-item store read without writing, checked, and given to each probe as the Host would."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.scenarios import (
    EXPORT_FORMAT,
    Scenario,
    StoreError,
    export_document,
    load_store,
    visible_counts,
    with_store,
)
from memory_tools import SCHEMA_VERSION
from tests.memory_systems.prompt_factories import make_scenario
from tests.scenarios.store_factories import DAY, T0, digest, side_files, write_store


def _probe_at(millis: int, workspace: str | None = "acme") -> Scenario:
    scenario = make_scenario()
    return scenario.model_copy(update={"probe": scenario.probe.model_copy(update={"started_at": millis,
                                                                                   "workspace": workspace})})


def test_a_store_file_is_read_without_changing_a_byte_or_adding_a_file(tmp_path: Path) -> None:
    path = write_store(tmp_path / "team.sqlite")
    before, files = digest(path), side_files(path)
    store = load_store(path)
    assert digest(path) == before and side_files(path) == files
    assert {i.id for i in store.items} == {"acme-port", "beta-port", "style", "acme-late"}
    assert store.sha256 == before and store.schema_version == SCHEMA_VERSION


def test_a_store_in_rollback_journal_mode_is_not_switched_to_wal_by_reading_it(tmp_path: Path) -> None:
    path = write_store(tmp_path / "team.sqlite")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")  # a store another tool copied or vacuumed: no WAL
    db.close()
    before, stat = digest(path), path.stat()
    load_store(path)
    assert digest(path) == before and path.stat().st_mtime_ns == stat.st_mtime_ns and side_files(path) == []


def test_a_store_in_use_is_read_with_its_last_commits(tmp_path: Path) -> None:
    path = write_store(tmp_path / "team.sqlite")
    db = sqlite3.connect(path)  # an application holding the store open, a commit still in its WAL
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("UPDATE memory_item SET content = 'The staging database port is 5434.' WHERE item_id = 'acme-port'")
    db.commit()
    try:
        assert (tmp_path / "team.sqlite-wal").stat().st_size > 0
        main_before = digest(path)
        store = load_store(path)
        assert next(i for i in store.items if i.id == "acme-port").content.endswith("5434.")
        assert digest(path) == main_before
    finally:
        db.close()


def test_items_keep_their_scope_lifecycle_keys_and_times(tmp_path: Path) -> None:
    store = load_store(write_store(tmp_path / "team.sqlite"))
    by_id = {i.id: i for i in store.items}
    assert by_id["acme-port"].workspace == "acme" and by_id["style"].workspace is None
    assert {k.key for k in by_id["acme-port"].keys} == {"staging", "port", "database"}
    assert by_id["acme-late"].observed_at == T0 + 10 * DAY
    assert by_id["acme-port"].sources[0].session == "run-acme-port"  # provenance ids made identifiers
    assert store.created == tuple(sorted(store.created))


def test_a_store_of_another_schema_version_is_refused_with_both_versions(tmp_path: Path) -> None:
    path = write_store(tmp_path / "old.sqlite")
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=rf"schema version 1, and this harness reads version {SCHEMA_VERSION}"):
        load_store(path)


def test_a_json_export_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"format": EXPORT_FORMAT, "schema_version": 99, "items": []}), encoding="utf-8")
    with pytest.raises(StoreError, match="schema version 99"):
        load_store(path)


def test_the_json_export_loads_the_same_items_as_the_sqlite_file(tmp_path: Path) -> None:
    path = write_store(tmp_path / "team.sqlite")
    exported = tmp_path / "items.json"
    exported.write_text(json.dumps(export_document(path)), encoding="utf-8")
    from_sqlite, from_json = load_store(path), load_store(exported)
    assert from_json.items == from_sqlite.items and from_json.created == from_sqlite.created


def test_the_documented_minimal_json_item_loads(tmp_path: Path) -> None:
    item = {"item_id": "pref-1", "content": "The user prefers metric units.", "kind": "preference",
            "scope_key": None, "observed_at": "2026-03-01T10:00:00Z",
            "keys": [{"key": "units"}], "sources": [{"session_id": "s-17", "turn_id": "t3"}]}
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "items": [item]}),
                    encoding="utf-8")
    (spec,) = load_store(path).items
    assert spec.workspace is None and spec.state.value == "active" and spec.statement_type.value == "fact"


def test_an_item_that_breaks_the_format_is_named_with_its_field(tmp_path: Path) -> None:
    item = {"item_id": "bad id/1", "content": "x", "kind": "context", "observed_at": T0,
            "keys": [{"key": "k"}], "sources": [{"session_id": "s", "turn_id": "t"}]}
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "items": [item]}),
                    encoding="utf-8")
    with pytest.raises(StoreError, match=r"item 'bad id/1': field 'item_id' 'bad id/1'"):
        load_store(path)


def test_a_file_that_is_no_store_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a memory store"):
        load_store(other)
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(StoreError, match="neither a memory-item SQLite file nor a JSON export"):
        load_store(tmp_path / "notes.txt")


def test_a_probe_gets_only_the_items_the_store_held_before_it(tmp_path: Path) -> None:
    store = load_store(write_store(tmp_path / "team.sqlite"))
    early, late = with_store([_probe_at(T0 + DAY), _probe_at(T0 + 20 * DAY)], store)
    assert {i.id for i in early.items} == {"acme-port", "beta-port", "style"}
    assert {i.id for i in late.items} == {"acme-port", "beta-port", "style", "acme-late"}
    same_time = with_store([_probe_at(T0)], store)[0]
    assert same_time.items == []  # created at the probe's own moment: not yet in the store


def test_probes_seeing_the_same_items_share_one_list(tmp_path: Path) -> None:
    store = load_store(write_store(tmp_path / "team.sqlite"))
    a, b = with_store([_probe_at(T0 + DAY), _probe_at(T0 + 2 * DAY, "beta")], store)
    assert a.items is b.items  # one seed plan, one store template


def test_every_scope_is_seeded_and_the_host_rule_decides_what_a_probe_sees(tmp_path: Path) -> None:
    store = load_store(write_store(tmp_path / "team.sqlite"))
    scenarios = with_store([_probe_at(T0 + DAY, "acme"), _probe_at(T0 + DAY, "beta"), _probe_at(T0 + DAY, None)],
                           store)
    assert [(n, v) for _, n, v in visible_counts(scenarios)] == [(3, 2), (3, 2), (3, 1)]


def test_probes_given_store_items_hash_as_the_plain_definition(tmp_path: Path) -> None:
    from harness.scenarios import scenario_hash
    from tests.scenarios.test_conversations import _reference_hash

    store = load_store(write_store(tmp_path / "team.sqlite"))
    scenarios = with_store([_probe_at(T0 + DAY), _probe_at(T0 + 20 * DAY), _probe_at(T0 + 20 * DAY, "beta")], store)
    for scenario in scenarios:  # per-item JSON served from the cache for the later probes' longer lists
        assert scenario_hash(scenario) == _reference_hash(scenario)
    assert len({scenario_hash(s) for s in scenarios}) == 3
