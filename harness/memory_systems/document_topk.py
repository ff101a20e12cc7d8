"""Top-K retrieval over the memory document (seed 001, "V0.3 — open questions": vector vs FTS5 vs LLM-judge).

V0.1 and V0.2 put the whole memory file into the prompt; a long file is cut by
the prompt cap, oldest entries first. V0.3 may instead "emit only top-K
relevant entries based on a query". These arms measure the three candidate
algorithms on equal terms, each a pure function of the entries and the probe's
query (the user's probe message):

- ``fts`` (:func:`fts_select`): SQLite FTS5 over each entry's title and content
  (tokenizer ``unicode61``, diacritics removed), the query's content words and
  word pairs OR-ed as phrases (:func:`harness.memory_systems.shadow.shadow_terms`),
  ranked by ``bm25`` (ties: file order); an entry matching no query word is not chosen;
- ``vector`` (:func:`vector_select`): the run's embedder (``--embedding-model``)
  embeds each entry (``passage``) and the query (``query``); the K most cosine-similar
  entries above 0 (ties: file order);
- ``judge`` (:func:`judge_request`, :func:`judge_choice`): the run's model is shown
  the query and each entry's id, title and first content line, and answers JSON
  naming at most K ids; ids it was not shown are ignored, a reply that is not the
  JSON asked for chooses nothing. Its calls are the probe's model calls (the
  harness runs them through the same client, cache, retries and spend budget).

Every lane takes the same K (the run's retrieval budget ``top_k``) and the
same character cap as the whole-file arm (:data:`harness.memory_systems.document.PROMPT_CAP_CHARS`);
the chosen entries keep the file's order (newest first, as the section's preamble
says) and go through :func:`harness.memory_systems.document.memory_prompt_section`
unchanged: the document's contract (status, safe mode, incognito, agent reads,
decay, the cap, the wrapper) is the whole-file arm's, because the candidates are
exactly the entries that arm would show (:func:`probe_entries`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.memory_systems.document import PROMPT_CAP_CHARS, memory_prompt_section, scenario_document
from harness.memory_systems.document_format import DocumentEntry, DocumentState, parse_memory_document
from harness.memory_systems.shadow import shadow_terms
from harness.scenarios import Scenario

LANES: tuple[str, ...] = ("fts", "vector", "judge")
"""The retrieval algorithms the seed names, in the order the arms are listed."""
TOPK_ARMS: dict[str, str] = {lane: f"memory_document_topk_{lane}" for lane in LANES}
"""Lane -> arm name."""
JUDGE_FIRST_LINE_CHARS = 160
"""How much of an entry's first content line the judge is shown (beside its title)."""
JUDGE_SYSTEM = (
    "You choose which saved memory entries are relevant to the user's message. Answer only with the JSON asked "
    "for: the ids of at most {k} entries that help answer the message, most relevant first; an empty list when "
    "none does."
)


@dataclass(frozen=True)
class Selection:
    """What one probe's top-K retrieval chose (for tests and the record of the judge's work).

    Attributes:
        lane: ``fts``, ``vector`` or ``judge``.
        k: The most entries it could choose (the run's ``top_k``).
        candidates: Active entries the document offered.
        chosen: Indices into the candidates, best first, at most ``k``.
    """

    lane: str
    k: int
    candidates: int
    chosen: tuple[int, ...]


def probe_entries(scenario: Scenario) -> tuple[DocumentEntry, ...] | None:
    """The active entries the whole-file arm would show, in file order; None when the policy denies reads
    (incognito, memory disabled, agent reads off: no storage read, no selection, no judge call)."""
    document = scenario_document(scenario)
    if document is None:
        return None
    state = parse_memory_document(document, now_ms=scenario.probe.started_at)
    return state.active_entries if state.status == "ok" else ()


def entry_text(entry: DocumentEntry) -> str:
    """What a lane matches for an entry: its title and content, tags appended."""
    return "\n".join(part for part in (entry.title, entry.content, " ".join(entry.tags)) if part)


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_select(entries: Sequence[DocumentEntry], query: str, k: int) -> list[int]:
    """The indices of at most ``k`` entries matching ``query`` best by FTS5 ``bm25`` (ties: file order)."""
    terms, _ = shadow_terms(query)
    if k <= 0 or not entries or not terms:
        return []
    match = " OR ".join(_phrase(term) for term in terms)
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE VIRTUAL TABLE doc USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
        db.executemany("INSERT INTO doc(rowid, body) VALUES (?, ?)",
                       [(index + 1, entry_text(entry)) for index, entry in enumerate(entries)])
        try:
            rows = db.execute("SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc), rowid LIMIT ?",
                              (match, k)).fetchall()
        except sqlite3.OperationalError:  # a query FTS5 cannot parse chooses nothing rather than failing the probe
            rows = []
    db.close()
    return [int(rowid) - 1 for (rowid,) in rows]


def vector_select(entries: Sequence[DocumentEntry], query: str, k: int,
                  embed: Callable[[list[str], Literal["query", "passage"]], list[list[float]]]) -> list[int]:
    """The indices of the ``k`` entries most cosine-similar to ``query`` (above 0; ties: file order).

    ``embed(texts, kind)`` returns L2-normalised vectors (the run's embedder, counted in the sample's usage).
    """
    if k <= 0 or not entries or not query.strip():
        return []
    passages = embed([entry_text(entry) for entry in entries], "passage")
    (question,) = embed([query], "query")
    scores = [sum(a * b for a, b in zip(row, question)) for row in passages]
    ranked = sorted((index for index, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    return ranked[:k]


def judge_labels(entries: Sequence[DocumentEntry]) -> list[str]:
    """The ids the judge names entries by: ``e1``, ``e2`` ... in file order (never the file's own ids)."""
    return [f"e{index + 1}" for index in range(len(entries))]


def _first_line(content: str) -> str:
    line = next((part.strip() for part in content.splitlines() if part.strip()), "")
    return line if len(line) <= JUDGE_FIRST_LINE_CHARS else line[: JUDGE_FIRST_LINE_CHARS - 1] + "…"


def _judge_line(entry: DocumentEntry) -> str:
    """``<title> — <first content line>``, or the first line alone when the title is its beginning (the renderer's
    default title), so the judge is not shown the same words twice."""
    title, first = " ".join(entry.title.split()), _first_line(entry.content)
    return first if first.startswith(title.rstrip("…").rstrip()) else f"{title} — {first}"


def judge_request(entries: Sequence[DocumentEntry], query: str, k: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The judge's messages and JSON-schema ``response_format``: the query, then one line per entry,
    ``[<id>] <title> — <first content line>`` (:func:`_judge_line`); the answer is ``{"selected": [<id>, ...]}`` (at most ``k``)."""
    labels = judge_labels(entries)
    lines = [f"[{label}] {_judge_line(entry)}" for label, entry in zip(labels, entries)]
    user = f"Message: {query}\n\nEntries:\n" + "\n".join(lines)
    schema = {"type": "object", "additionalProperties": False, "required": ["selected"],
              "properties": {"selected": {"type": "array", "maxItems": k, "items": {"type": "string", "enum": labels}}}}
    messages = [{"role": "system", "content": JUDGE_SYSTEM.format(k=k)}, {"role": "user", "content": user}]
    return messages, {"type": "json_schema", "json_schema": {"name": "memory_selection", "schema": schema, "strict": True}}


def judge_choice(reply: str, entries: Sequence[DocumentEntry], k: int) -> list[int]:
    """The indices the judge's ``reply`` names, in its order, without repeats, at most ``k``; ids it was not
    shown and a reply that is not ``{"selected": [...]}`` choose nothing."""
    try:
        value = json.loads(reply)
    except (json.JSONDecodeError, TypeError, ValueError):
        return []
    named = value.get("selected") if isinstance(value, dict) else None
    if not isinstance(named, list):
        return []
    index_of = {label: index for index, label in enumerate(judge_labels(entries))}
    chosen: list[int] = []
    for label in named:
        index = index_of.get(label) if isinstance(label, str) else None
        if index is not None and index not in chosen:
            chosen.append(index)
    return chosen[: max(k, 0)]


def topk_section(entries: Sequence[DocumentEntry], chosen: Sequence[int], k: int) -> str:
    """The ``memory_document`` section of the chosen entries (at most ``k``, in file order, under the
    whole-file arm's cap); "" when none was chosen."""
    keep = sorted({index for index in list(chosen)[: max(k, 0)] if 0 <= index < len(entries)})
    if not keep:
        return ""
    return memory_prompt_section(DocumentState("ok", tuple(entries[i] for i in keep), 0), cap_chars=PROMPT_CAP_CHARS)
