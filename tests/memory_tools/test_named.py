"""Named memories (seed 004): stable ids, upsert, no-op, forget, bounded recall, scope before limit, cold control."""

from __future__ import annotations

import doctest
import functools
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import memory_tools.named as named_module
import memory_tools.named_model as named_model
from memory_tools.model import MemoryStoreError, MemoryValidationError
from memory_tools.named import NamedMemoryStore
from memory_tools.named_model import (
    MAX_RECALL_LIMIT,
    MAX_TEXT_CHARS,
    NamedIdentity,
    named_memory_id,
    overlap_score,
    words,
)

APP = "recall-eval"
WS_A = NamedIdentity(APP, "ws-a")
WS_B = NamedIdentity(APP, "ws-b")
NO_WS = NamedIdentity(APP, None)


@pytest.fixture()
def store() -> NamedMemoryStore:
    with NamedMemoryStore() as s:
        yield s


def test_doctests_of_the_named_module_hold() -> None:
    outcome = doctest.testmod(named_module)
    assert outcome.attempted > 0 and outcome.failed == 0  # an example reflowed into prose is not run


# --- identity -----------------------------------------------------------------------------------------------------


def test_id_derives_from_name_scope_and_application_not_the_conversation() -> None:
    same = named_memory_id("Deploy  Route", "project", WS_A)
    assert same == named_memory_id(" deploy route ", "project", NamedIdentity(APP, "ws-a", recall_enabled=False))
    assert len({
        same,
        named_memory_id("deploy route", "user", WS_A),
        named_memory_id("deploy route", "project", WS_B),
        named_memory_id("deploy route", "project", NamedIdentity("other-app", "ws-a")),
        named_memory_id("deploy route", "project", NamedIdentity(APP, "ws-a", namespace="team")),
        named_memory_id("deploy routes", "project", WS_A),
    }) == 6


def test_user_scope_ignores_the_workspace_so_every_project_reaches_it() -> None:
    assert named_memory_id("editor", "user", WS_A) == named_memory_id("editor", "user", WS_B)
    assert named_memory_id("editor", "user", NO_WS) == named_memory_id("editor", "user", WS_A)


def test_a_fresh_session_reaches_the_same_record(tmp_path: Path) -> None:
    path = str(tmp_path / "named.sqlite")
    with NamedMemoryStore(path) as first:
        first.remember("port", "dev server on 5174", "project", WS_A, now=1)
    with NamedMemoryStore(path) as second:  # a new process/session: same identity, same record
        assert second.remember("Port", "dev server on 5174", "project", WS_A, now=2).event == "unchanged"
        assert [m.text for m in second.recall(WS_A, name="port")] == ["dev server on 5174"]


def test_project_scope_without_a_workspace_is_a_clear_error(store: NamedMemoryStore) -> None:
    with pytest.raises(MemoryValidationError, match='scope "project" is unavailable'):
        store.remember("port", "5174", "project", NO_WS, now=1)


# --- upsert -------------------------------------------------------------------------------------------------------


def test_remember_creates_then_identical_text_is_a_no_op(store: NamedMemoryStore) -> None:
    created = store.remember("port", "dev server on 5174", "project", WS_A, now=10)
    again = store.remember("port", "  dev server on 5174 ", "project", WS_A, now=20)
    assert (created.event, again.event) == ("created", "unchanged")
    assert again.memory == created.memory  # version, times untouched
    assert [e[0] for e in store.events()] == ["created"]  # no event for the no-op


def test_replacement_keeps_creation_time_and_reports_updated(store: NamedMemoryStore) -> None:
    store.remember("Deploy Route", "make deploy", "project", WS_A, now=10)
    updated = store.remember("deploy route", "make deploy ENV=prod", "project", WS_A, now=30)
    assert updated.event == "updated"
    m = updated.memory
    assert (m.name, m.text, m.version, m.created_at, m.updated_at) == ("Deploy Route", "make deploy ENV=prod", 2, 10, 30)
    assert len(store.all_memories()) == 1  # replaced, not appended
    assert [e[0] for e in store.events()] == ["created", "updated"]


def test_updated_at_never_moves_backwards(store: NamedMemoryStore) -> None:
    store.remember("port", "5174", "project", WS_A, now=50)
    assert store.remember("port", "5175", "project", WS_A, now=40).memory.updated_at == 50


def test_same_name_in_two_scopes_is_two_records(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    store.remember("editor", "vscode for this repo", "project", WS_A, now=2)
    assert {m.scope: m.text for m in store.all_memories()} == {"user": "vim", "project": "vscode for this repo"}


def test_text_rules_keep_newlines_and_reject_empty_or_oversized(store: NamedMemoryStore) -> None:
    route = store.remember("route", "cd api\r\nmake test\u200b\x07", "project", WS_A, now=1).memory
    assert route.text == "cd api\nmake test"
    with pytest.raises(MemoryValidationError, match="empty"):
        store.remember("route", " \u200b ", "project", WS_A, now=1)
    with pytest.raises(MemoryValidationError, match=str(MAX_TEXT_CHARS)):
        store.remember("route", "x" * (MAX_TEXT_CHARS + 1), "project", WS_A, now=1)
    with pytest.raises(MemoryValidationError, match="name"):
        store.remember("a\tb", "x", "project", WS_A, now=1)
    with pytest.raises(MemoryValidationError, match="scope"):
        store.remember("a", "x", "team", WS_A, now=1)  # type: ignore[arg-type]


def test_an_update_reports_the_record_exactly_as_stored(store: NamedMemoryStore) -> None:
    team = NamedIdentity(APP, "ws-a", namespace="team")
    store.remember("port", "5174", "project", team, now=1)
    updated = store.remember("port", "5175", "project", team, now=2).memory
    assert updated == store.get("port", "project", team) == store.all_memories()[0]
    stored_as = (updated.application, updated.namespace, updated.scope, updated.scope_key)
    assert stored_as == (APP, "team", "project", "ws-a")


def test_a_write_time_must_be_a_non_negative_integer(store: NamedMemoryStore) -> None:
    says_what = r"^now must be a non-negative integer \(UTC milliseconds\), got "
    for bad in (-1, 1.5, True, "5", None):
        with pytest.raises(MemoryValidationError, match=says_what):
            store.remember("port", "5174", "project", WS_A, now=bad)  # type: ignore[arg-type]
        with pytest.raises(MemoryValidationError, match="now must be a non-negative integer"):
            store.forget("port", "project", WS_A, now=bad)  # type: ignore[arg-type]
    assert store.all_memories() == [] and store.events() == []
    assert store.remember("port", "5174", "project", WS_A, now=0).memory.created_at == 0


# --- forget -------------------------------------------------------------------------------------------------------


def test_forget_deletes_only_the_named_record_of_that_scope(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    store.remember("editor", "vscode", "project", WS_A, now=1)
    forgotten = store.forget("Editor", "project", WS_A, now=5)
    assert forgotten is not None and forgotten.event == "forgotten" and forgotten.memory.text == "vscode"
    assert [m.text for m in store.recall(WS_A, name="editor")] == ["vim"]
    assert store.forget("editor", "project", WS_A, now=6) is None
    assert [e[0] for e in store.events()] == ["created", "created", "forgotten"]


def test_remember_after_forget_creates_a_new_record(store: NamedMemoryStore) -> None:
    store.remember("port", "5174", "project", WS_A, now=1)
    store.forget("port", "project", WS_A, now=2)
    again = store.remember("port", "5174", "project", WS_A, now=3)
    assert (again.event, again.memory.created_at, again.memory.version) == ("created", 3, 1)


# --- recall -------------------------------------------------------------------------------------------------------


def test_recall_by_exact_name_reads_project_then_user(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    store.remember("editor", "vscode", "project", WS_A, now=1)
    store.remember("editor settings", "tabs", "project", WS_A, now=1)
    assert [m.text for m in store.recall(WS_A, name=" EDITOR ")] == ["vscode", "vim"]
    assert [m.text for m in store.recall(WS_A, name="editor", scope="user")] == ["vim"]
    assert store.recall(WS_A, name="edit") == []  # a point read, not a prefix search


def test_get_reads_one_scopes_record_and_ignores_the_recall_disable(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    store.remember("editor", "vscode", "project", WS_A, now=2)
    project = store.get(" Editor ", "project", WS_A)
    assert project is not None and (project.text, project.scope_key) == ("vscode", "ws-a")
    user = store.get("editor", "user", WS_B)  # user scope: the same record from every project
    assert user is not None and user.text == "vim"
    assert store.get("editor", "project", WS_B) is None
    cold = store.get("editor", "project", NamedIdentity(APP, "ws-a", recall_enabled=False))
    assert cold == project


def test_recall_by_name_never_crosses_workspaces(store: NamedMemoryStore) -> None:
    store.remember("customer", "CANARY Northwind", "project", WS_B, now=1)
    assert store.recall(WS_A, name="customer") == []
    assert store.recall(NO_WS, name="customer") == []


def test_topic_search_ranks_name_overlap_above_text_overlap(store: NamedMemoryStore) -> None:
    store.remember("notes", "the deploy script lives in ops", "project", WS_A, now=3)
    store.remember("deploy route", "make release", "project", WS_A, now=1)
    store.remember("lunch", "pizza", "project", WS_A, now=5)
    ranked = store.recall(WS_A, query="how to deploy?")
    assert [m.name for m in ranked] == ["deploy route", "notes"]  # name match 2 > text match 1; no overlap: absent


def test_topic_search_ties_go_to_the_most_recent(store: NamedMemoryStore) -> None:
    store.remember("a", "deploy with make", "project", WS_A, now=1)
    store.remember("b", "deploy with argo", "project", WS_A, now=9)
    assert [m.name for m in store.recall(WS_A, query="deploy")] == ["b", "a"]


def test_topic_search_default_limit_is_5_and_the_maximum_is_50(store: NamedMemoryStore) -> None:
    for n in range(60):
        store.remember(f"deploy note {n}", "deploy", "project", WS_A, now=n)
    assert len(store.recall(WS_A, query="deploy")) == 5
    assert len(store.recall(WS_A, query="deploy", limit=MAX_RECALL_LIMIT)) == 50
    for bad in (0, 51, -1, True, 2.0):
        with pytest.raises(MemoryValidationError, match="limit"):
            store.recall(WS_A, query="deploy", limit=bad)  # type: ignore[arg-type]


def test_scope_is_filtered_before_the_limit(store: NamedMemoryStore) -> None:
    """Other workspaces' better matches must not fill the limit and push the run's own record out."""
    for n in range(10):
        store.remember(f"deploy route {n}", "deploy route deploy route", "project", WS_B, now=100 + n)
    store.remember("ops", "to deploy: make ship", "project", WS_A, now=1)
    assert [m.name for m in store.recall(WS_A, query="deploy route", limit=1)] == ["ops"]
    assert all(m.scope_key == "ws-b" for m in store.recall(WS_B, query="deploy route", limit=50))


def test_topic_search_sees_user_memories_from_every_project_and_none_without_overlap(store: NamedMemoryStore) -> None:
    store.remember("answer style", "short answers", "user", WS_B, now=1)
    assert [m.name for m in store.recall(WS_A, query="answers style")] == ["answer style"]
    assert store.recall(WS_A, query="?!") == []
    assert store.recall(WS_A, query="unrelated") == []


def test_topic_search_matches_cjk_by_two_character_pieces(store: NamedMemoryStore) -> None:
    store.remember("部署流程", "先运行 make ship", "project", WS_A, now=1)
    assert [m.name for m in store.recall(WS_A, query="部署")] == ["部署流程"]
    assert "部署" in words("如何部署") and overlap_score(words("部署"), store.all_memories()[0]) == 2


def test_recall_needs_exactly_one_of_name_and_query(store: NamedMemoryStore) -> None:
    says_how = r"^recall needs exactly one of name \(point read\) and query \(topic search\)$"
    with pytest.raises(MemoryValidationError, match=says_how):
        store.recall(WS_A)
    with pytest.raises(MemoryValidationError, match=says_how):
        store.recall(WS_A, name="a", query="b")


def test_an_empty_query_finds_nothing_even_among_placeholder_notes(store: NamedMemoryStore) -> None:
    store.remember("api token", "XXXX-XXXX (redacted)", "project", WS_A, now=1)
    store.remember("notes", "todo: fill in", "user", WS_A, now=1)
    assert store.recall(WS_A, query="") == []
    assert store.recall(WS_A, query="   ") == []


# --- recall: the scope filter alone (the Host adds no second filter of its own) ----------------------------------


def test_a_user_scope_search_finds_no_project_memory_of_the_same_workspace(store: NamedMemoryStore) -> None:
    store.remember("deploy route", "make ship", "project", WS_A, now=1)
    store.remember("deploy style", "small steps", "user", WS_A, now=1)
    assert [m.name for m in store.recall(WS_A, query="deploy", scope="user")] == ["deploy style"]
    assert [m.name for m in store.recall(WS_A, query="deploy", scope="project")] == ["deploy route"]
    assert [m.name for m in store.recall(WS_A, query="deploy")] == ["deploy route", "deploy style"]


def test_a_run_without_a_project_recalls_its_user_memories_by_scope(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    store.remember("editor", "vscode", "project", WS_A, now=1)
    assert [m.text for m in store.recall(NO_WS, name="editor", scope="user")] == ["vim"]
    assert [m.text for m in store.recall(NO_WS, query="editor", scope="user")] == ["vim"]
    assert [m.text for m in store.recall(NO_WS, query="editor")] == ["vim"]  # the workspace unknown: user scope only


def test_a_project_scope_recall_without_a_workspace_is_an_error_not_an_empty_result(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    for who in (NO_WS, NamedIdentity(APP, None, recall_enabled=False)):
        for by in ({"name": "editor"}, {"query": "editor"}):
            with pytest.raises(MemoryValidationError, match='scope "project" is unavailable'):
                store.recall(who, scope="project", **by)  # type: ignore[arg-type]


def test_recall_refuses_a_scope_outside_user_and_project(store: NamedMemoryStore) -> None:
    store.remember("editor", "vim", "user", WS_A, now=1)
    for bad in ("team", "global", "User", ""):
        with pytest.raises(MemoryValidationError, match='scope must be "user" or "project"'):
            store.recall(WS_A, query="editor", scope=bad)  # type: ignore[arg-type]


# --- the cold control ---------------------------------------------------------------------------------------------


def test_recall_disable_finds_nothing_without_reading_or_deleting(
    store: NamedMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.remember("port", "5174", "project", WS_A, now=1)
    cold = NamedIdentity(APP, "ws-a", recall_enabled=False)
    with monkeypatch.context() as patch:
        patch.setattr(store, "_transaction", lambda: pytest.fail("recall read storage with recall disabled"))
        assert store.recall(cold, name="port") == [] and store.recall(cold, query="port") == []
    assert [m.text for m in store.recall(WS_A, name="port")] == ["5174"]  # nothing was deleted


def test_recall_disable_keeps_data_and_upserts(store: NamedMemoryStore) -> None:
    cold = NamedIdentity(APP, "ws-a", recall_enabled=False)
    store.remember("port", "5174", "project", WS_A, now=1)
    assert store.remember("port", "5175", "project", cold, now=2).event == "updated"  # the point read still works
    assert store.remember("port", "5175", "project", cold, now=3).event == "unchanged"
    assert [(m.text, m.created_at) for m in store.recall(WS_A, name="port")] == [("5175", 1)]


# --- the file -----------------------------------------------------------------------------------------------------


def test_a_foreign_sqlite_file_is_refused_with_a_named_error(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(MemoryStoreError, match="not a named memory store"):
        NamedMemoryStore(str(path))


def test_a_file_that_is_not_sqlite_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("deploy route: make ship\n")
    names_it = r"^cannot open named memory store '.*notes\.txt': file is not a database"
    with pytest.raises(MemoryStoreError, match=names_it):
        NamedMemoryStore(str(path))


def test_a_named_store_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "named.sqlite"
    NamedMemoryStore(str(path)).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 2")  # the named_memory table is there, the schema is not this one
    db.close()
    with pytest.raises(MemoryStoreError, match=r"schema version 1 \(user_version 2\); use a new file"):
        NamedMemoryStore(str(path))


def test_another_stores_file_at_the_same_user_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "items.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE memory_item (item_id TEXT PRIMARY KEY)")  # an item store of schema version 1
    db.execute("PRAGMA user_version = 1")
    db.close()
    with pytest.raises(MemoryStoreError, match=r"not a named memory store .*\(user_version 1\)"):
        NamedMemoryStore(str(path))


def test_a_store_serves_writes_and_reads_from_other_threads(store: NamedMemoryStore) -> None:
    def write(n: int) -> str:
        return store.remember(f"step {n}", f"deploy step {n}", "project", WS_A, now=n).event

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(write, range(8))) == ["created"] * 8
        found = pool.submit(store.recall, WS_A, query="deploy", limit=MAX_RECALL_LIMIT).result()
    assert sorted(m.name for m in found) == [f"step {n}" for n in range(8)]
    assert len(store.events()) == 8


def test_a_write_that_cannot_commit_is_rolled_back_and_the_store_stays_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "named.sqlite")
    monkeypatch.setattr(sqlite3, "connect", functools.partial(sqlite3.connect, timeout=0.05))  # wait 50 ms, not 5 s
    with NamedMemoryStore(path) as store:
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT * FROM named_memory").fetchall()  # another process mid-read: COMMIT finds it busy
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            store.remember("port", "5174", "project", WS_A, now=1)
        reader.execute("COMMIT")
        reader.close()
        assert store.all_memories() == [] and store.events() == []  # the failed write left nothing behind
        assert store.remember("port", "5174", "project", WS_A, now=2).event == "created"
        assert [e[0] for e in store.events()] == ["created"]


def test_a_closed_store_says_so(store: NamedMemoryStore) -> None:
    store.close()
    store.close()
    with pytest.raises(MemoryStoreError, match="closed"):
        store.all_memories()


def test_events_are_json_friendly_tuples(store: NamedMemoryStore) -> None:
    store.remember("port", "5174", "project", WS_A, now=7)
    (event,) = store.events()
    assert json.loads(json.dumps(event))[0::2] == ["created", "port"] and event[3] == 7


def test_the_write_log_names_each_records_id(store: NamedMemoryStore) -> None:
    port = store.remember("Port", "5174", "project", WS_A, now=1).memory
    editor = store.remember("editor", "vim", "user", WS_A, now=2).memory
    store.forget("port", "project", WS_A, now=3)
    assert store.events() == [
        ("created", port.memory_id, "Port", 1),
        ("created", editor.memory_id, "editor", 2),
        ("forgotten", port.memory_id, "Port", 3),
    ]


def test_scopes_user_and_project_map_to_global_and_workspace(store: NamedMemoryStore) -> None:
    assert {k: v.value for k, v in named_model.SCOPE_TYPES.items()} == {"user": "global", "project": "workspace"}
    user = store.remember("editor", "vim", "user", WS_A, now=1).memory
    project = store.remember("editor", "vscode", "project", WS_A, now=1).memory
    assert (user.scope_key, project.scope_key) == (None, "ws-a")
