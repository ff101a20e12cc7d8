"""A full-text layer over the same item store: SQLite FTS5, no new service, no schema migration.

Seed 000 says to "add lexical or vector indexing if exact/prefix key search
has inadequate measured coverage"; this layer is that measurement. It keeps
the Host's contract (same ``memory_search``/``memory_get`` arguments, wire
format, budgets, scope and policy gates, :class:`memory_tools.host.MemoryRun`
does the rest) and changes one thing: a ``memory_search`` term matches an
item when it matches one of its keys (exactly as the key search does) **or**
a word of its content.

The index is an FTS5 table in the store's own connection, in SQLite's
``temp`` schema: the store's file and schema are never touched, and
:meth:`FullTextIndex.refresh` rebuilds it from ``memory_item`` and
``memory_item_key`` (on the first search, so after the store was written and never for a run
the policy denies; call it again after later writes). Tokenizer ``unicode61`` with diacritics removed: words
split on anything that is not a letter or digit, case folded. A term matches
content when its words appear as a phrase (``prefix``: the last word as a
prefix). CJK text without spaces is one FTS token per run, so a two-character
CJK term matches content only as a prefix of such a run; keys still match as
they always did.

Ranking: distinct terms matched (in keys or content, descending), terms
matched by a key (descending), FTS5 ``bm25`` over the content matches
(better first), ``updated_at`` (newer first), item id. Scope (global plus the
run's workspace) and the active state are filtered in SQL before the limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memory_tools.host import Host, MemoryRun, _key_matches, _Outcome, _search_result
from memory_tools.model import MatchMode, MemoryItemRecord
from memory_tools.normalize import normalize_search_term
from memory_tools.policy import MAX_SEARCH_LIMIT, SearchArguments, item_visible
from memory_tools.tool_specs import limits_text, tool_specs_json

FTS_TABLE = "temp.memory_item_fts"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_CANDIDATES = 200
"""Content matches read per term before ranking (a bound on work, far above the model's limit of 10)."""

_FULLTEXT_SEARCH_DESCRIPTION = (
    "Search the user's long-term memory: durable preferences, facts about the user and their projects, and "
    "decisions saved from earlier conversations. A term matches an item when it equals one of the item's keys "
    "(short labels such as 'coffee', 'deploy target') or when its words appear in the item's text (full-text "
    "search; case and accents are ignored). match 'exact' (the default) needs whole words; match 'prefix' lets "
    "the last word of a term be the start of a word or key ('deploy' finds 'deployment'). Send several candidate "
    "terms in one call (synonyms, singular and plural, the user's language, code identifiers); items matching "
    "more terms rank first. Returns at most `limit` items (default {default}, at most {maximum}), each with "
    "itemId, content, "
    "kind, statementType, temporalType, event and observation times (UTC milliseconds), the keys that matched "
    "(matchedKeys, empty when only the text matched) and sourceCount. When truncated is true, omittedCount "
    "results did not fit the size budget. No results means nothing stored matches; do not invent an answer."
)


FULLTEXT_SEARCH_DESCRIPTION = limits_text(_FULLTEXT_SEARCH_DESCRIPTION, MAX_SEARCH_LIMIT)


def _fts_phrase(term: str, prefix: bool) -> str | None:
    """The FTS5 query of one normalized term: its words as a quoted phrase, or None when it has no word."""
    words = _WORD.findall(term)
    if not words:
        return None
    phrase = '"' + " ".join(words) + '"'
    return phrase + "*" if prefix else phrase


class FullTextIndex:
    """An FTS5 index of a ``MemoryItemStore``'s items (content and keys), kept in the store's connection."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._fresh = False
        with store._lock:
            store._conn().execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
                "item_id UNINDEXED, content, tokenize = 'unicode61 remove_diacritics 2')"
            )

    def refresh(self) -> int:
        """Rebuild the index from the store's current items; returns how many items it holds."""
        with self._store._transaction("BEGIN IMMEDIATE") as db:
            db.execute(f"DELETE FROM {FTS_TABLE}")
            db.execute(f"INSERT INTO {FTS_TABLE} (item_id, content) SELECT item_id, content FROM memory_item")
            count = int(db.execute(f"SELECT count(*) FROM {FTS_TABLE}").fetchone()[0])
        self._fresh = True
        return count

    def search(
        self, terms: Sequence[str], match: str = "exact", *, workspace_key: str | None = None, limit: int = 20
    ) -> list[tuple[MemoryItemRecord, tuple[str, ...]]]:
        """Active in-scope items matching any term in a key or in their content, best first.

        Returns:
            (record, matched normalized keys) pairs, at most ``limit``.
        """
        if not self._fresh:  # built on the first search: a run denied by policy never reads the store
            self.refresh()
        prefix = match == MatchMode.PREFIX.value
        normalized = sorted({normalize_search_term(term, "terms") for term in terms})
        key_hits = self._store.search_by_keys_with_matches(
            normalized, match, workspace_key=workspace_key, limit=100
        )
        records: dict[str, MemoryItemRecord] = {}
        by_key: dict[str, set[str]] = {}
        matched_keys: dict[str, tuple[str, ...]] = {}
        for record, keys in key_hits:
            item_id = record.item.item_id
            records[item_id] = record
            matched_keys[item_id] = keys
            by_key[item_id] = {t for t in normalized if any(k == t or (prefix and k.startswith(t)) for k in keys)}
        by_text: dict[str, set[str]] = {}
        bm25: dict[str, float] = {}
        scope = "m.scope_key IS NULL" if workspace_key is None else "(m.scope_key IS NULL OR m.scope_key = ?)"
        params_scope = [] if workspace_key is None else [workspace_key]
        with self._store._read() as db:
            for term in normalized:
                phrase = _fts_phrase(term, prefix)
                if phrase is None:
                    continue
                rows = db.execute(
                    f"SELECT memory_item_fts.item_id, bm25(memory_item_fts) FROM {FTS_TABLE} "
                    "JOIN memory_item AS m ON m.item_id = memory_item_fts.item_id "
                    f"WHERE memory_item_fts MATCH ? AND m.lifecycle_state = 'active' AND {scope} "
                    f"ORDER BY bm25(memory_item_fts) LIMIT {MAX_CANDIDATES}",
                    [phrase, *params_scope],
                ).fetchall()
                for item_id, score in rows:
                    by_text.setdefault(item_id, set()).add(term)
                    bm25[item_id] = bm25.get(item_id, 0.0) + float(score)
            missing = [i for i in by_text if i not in records]
            if missing:
                records.update(self._store._records(db, missing))
        ranked = sorted(
            records,
            key=lambda i: (
                -len(by_key.get(i, set()) | by_text.get(i, set())),
                -len(by_key.get(i, set())),
                bm25.get(i, 0.0),
                -records[i].item.updated_at,
                i,
            ),
        )
        return [(records[i], matched_keys.get(i, ())) for i in ranked[:limit]]


class FullTextRun(MemoryRun):
    """A :class:`MemoryRun` whose ``memory_search`` also matches item content (same gates and budgets)."""

    def __init__(self, index: FullTextIndex, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._index = index

    @classmethod
    def specs_json(cls, search_limit: int = MAX_SEARCH_LIMIT) -> str:
        return tool_specs_json(search_limit, _FULLTEXT_SEARCH_DESCRIPTION)

    def _search(self, args: SearchArguments) -> _Outcome:
        found = self._index.search(list(args.terms), args.match.value, workspace_key=self._workspace_key, limit=args.limit)
        terms = frozenset(args.normalized_terms)
        results: list[tuple[str, dict[str, Any]]] = []
        for record, _ in found:
            item = record.item
            if not item_visible(item, self._workspace_key):  # the SQL filtered already; never trust one layer
                continue
            matched = [k.key for k in record.keys if _key_matches(k.normalized_key, terms, args.match)]
            results.append((item.item_id, _search_result(record, matched)))
        return self._fitted(args, results)


class FullTextHost(Host):
    """A :class:`Host` whose runs search keys and content (FTS5 over the same store).

    Example:
        >>> host = FullTextHost(store, MemoryPolicy(agent_read_enabled=True))
        >>> run = host.open_run(RunContext(workspace_key="ws-1"))
        >>> run.call("memory_search", '{"terms": ["espresso"]}').status
        'ok'
    """

    def __init__(self, store: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(store, *args, **kwargs)
        self._index = FullTextIndex(store)

    @property
    def index(self) -> FullTextIndex:
        return self._index

    def open_run(self, context: Any) -> FullTextRun:
        from memory_tools.policy import admission

        denial = admission(self.policy, context)
        return FullTextRun(self._index, self._store, context, denial, self._search_budget, self._get_budget,
                           search_limit=self._search_limit, content_budget=self._content_budget, iso_times=self._iso_times)


__all__ = ["FULLTEXT_SEARCH_DESCRIPTION", "FullTextHost", "FullTextIndex", "FullTextRun"]
