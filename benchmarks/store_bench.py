"""Benchmark of the SQLite memory item store: seeding and key-search latency.

Seeds a fresh store with 10,000 items (the harness seeds a fresh store per
sample, so this is the hot path), then another with 100,000 items (about
500,000 keys over several workspaces), and times exact and prefix searches with
1 and 5 terms, with and without a workspace key.

Key vocabulary (deterministic, seed 0): each item has 3..7 keys; one or two
come from a head vocabulary of ~400 common words (English and CJK, Zipf
distributed, so a few of them sit on tens of thousands of items); the rest
come from a tail of ~150,000 specific keys (English-like phrases over ~6,000
words drawn Zipf-like, CJK compounds over ~4,000 two-character words,
snake_case and dotted CamelCase identifiers, ticket ids, names).

Query terms are drawn uniformly from the distinct stored keys (prefix terms
are their first 1..2 CJK or 3..8 other characters). A separate "head" row
queries the 20 most frequent keys. One-term prefix searches are also reported
per term length, with the median number of matching keys, because the cost
follows the matches: 1-3 character Latin prefixes match thousands of keys and
are not what a model sends (the tool description asks for whole words), but
the Host passes them through, so they are measured.

Several prefix terms whose ranges hold thousands of rows are counted on the
store's in-memory key index (``memory_tools._key_index``), built by the first
such search: its build time is printed after the search rows.

"per sample" is what the harness pays for every sample: open a fresh
``:memory:`` store (schema included) and ``bulk_create`` 10 items.

Usage::

    python benchmarks/store_bench.py                 # :memory:, 100,000 items
    python benchmarks/store_bench.py --path /tmp/m.db --items 50000 --queries 500
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable

from memory_tools import (
    ItemInput,
    KeyInput,
    KeyOrigin,
    KeyType,
    Kind,
    MemoryItemSource,
    MemoryItemStore,
    ScopeType,
    normalize_search_term,
)
from memory_tools.store import prefix_upper_bound

_EN = (
    "preference editor python rust typescript deadline meeting project budget release review design test deploy "
    "database schema memory search index cache latency token prompt model agent tool policy privacy workspace "
    "session user team manager customer invoice travel flight hotel diet allergy coffee tea music language "
    "timezone calendar reminder birthday family doctor gym running reading book movie podcast style format "
    "indentation tabs spaces linting commit branch merge ci pipeline docker kubernetes cloud aws gcp azure "
    "security password backup migration api endpoint graphql rest grpc queue kafka redis postgres sqlite "
    "frontend backend mobile android ios web design-system color font theme dark-mode accessibility i18n "
    "pricing contract legal hiring interview onboarding roadmap okr metric dashboard report incident outage"
).split()
_ZH = (
    "偏好 项目 截止日期 会议 预算 发布 评审 设计 测试 部署 数据库 记忆 搜索 索引 缓存 延迟 模型 工具 策略 隐私 "
    "工作区 会话 用户 团队 经理 客户 发票 旅行 航班 酒店 饮食 过敏 咖啡 茶 音乐 语言 时区 日历 提醒 生日 家庭 "
    "医生 健身 跑步 阅读 电影 风格 格式 缩进 分支 合并 流水线 安全 密码 备份 迁移 接口 前端 后端 移动端 颜色 字体 "
    "主题 定价 合同 招聘 面试 入职 路线图 指标 报表 事故 用户偏好 代码风格 写作风格 周报 日报 需求 缺陷"
).split()
_JA = "設定 好み 締め切り 会議 予算 旅行 食事 音楽 言語 日本語 東京 大阪".split()
_NAMES = "alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter".split()
_VERBS = "get set search read write find load save build parse render fetch update delete create list".split()


_HANZI = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后"
    "多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还"
    "因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结"
)
_SYLLABLES = "ka ri to mo na shi ve lo pra gen tor mi sal quin bar del fen gor hal jin ku lem nor pel rus sta tin ul vor wex yam zel".split()


def _vocabulary(rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    """English-like words (real plus ~6,000 pseudo-words), CJK words and Japanese words."""
    pseudo = {"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 3))) for _ in range(8000)}
    words = list(dict.fromkeys(_EN + sorted(pseudo)))
    cjk = list(dict.fromkeys(_ZH + [rng.choice(_HANZI) + rng.choice(_HANZI) for _ in range(4000)]))
    return words, cjk, _JA


def _head_vocabulary() -> list[str]:
    words = _EN + _ZH + _JA + [n.capitalize() for n in _NAMES]
    return list(dict.fromkeys(words))


def _tail_key(rng: random.Random, words: list[str], cum_weights: list[float], cjk: list[str]) -> str:
    def word() -> str:
        return rng.choices(words, cum_weights=cum_weights)[0]

    pick = rng.random()
    if pick < 0.30:
        return f"{word()} {word()} {word()}"
    if pick < 0.50:
        return rng.choice(cjk) + rng.choice(cjk) + rng.choice(_ZH)
    if pick < 0.65:
        return f"{word()}_{word()}_{rng.choice(_VERBS)}"
    if pick < 0.78:
        a, b, v, n = word(), word(), rng.choice(_VERBS), word()
        return f"{a.capitalize()}{b.capitalize()}.{v}{n.capitalize()}".replace("-", "")
    if pick < 0.88:
        return f"{word().upper()}-{rng.randrange(10_000)}"
    if pick < 0.95:
        return f"{rng.choice(_NAMES).capitalize()} {rng.choice(_NAMES).capitalize()}son {word()}"
    return f"{rng.choice(_JA)}{rng.choice(_JA)}{rng.choice(cjk)}"


def _make_items(count: int, seed: int = 0) -> list[ItemInput]:
    rng = random.Random(seed)
    head = _head_vocabulary()
    head_weights = [1 / (rank + 1) for rank in range(len(head))]
    words, cjk, _ = _vocabulary(rng)
    cum_weights = list(itertools.accumulate(1 / (rank + 1) ** 0.8 for rank in range(len(words))))
    tail = sorted({_tail_key(rng, words, cum_weights, cjk) for _ in range(160_000)})
    rng.shuffle(tail)
    workspaces = [None, *(f"ws-{n}" for n in range(8))]
    workspace_weights = [30, 20, 12, 10, 8, 7, 5, 4, 4]
    kinds, key_types, origins = list(Kind), list(KeyType), list(KeyOrigin)
    items = []
    for n in range(count):
        keys = rng.choices(head, head_weights, k=rng.randint(1, 2)) + rng.choices(tail, k=rng.randint(2, 5))
        workspace = rng.choices(workspaces, workspace_weights)[0]
        items.append(ItemInput(
            content=f"Item {n}: remembered fact about {keys[0]} and {keys[-1]}.",
            kind=rng.choice(kinds),
            keys=tuple(KeyInput(k, rng.choice(key_types), rng.choice(origins)) for k in keys),
            sources=(MemoryItemSource(f"session-{n // 50}", f"run-{n // 10}", f"turn-{n}", f"event-{n}"),),
            scope_type=ScopeType.GLOBAL if workspace is None else ScopeType.WORKSPACE,
            scope_key=workspace,
            item_id=f"item-{n:07d}",
            now=1_700_000_000_000 + rng.randrange(10_000_000_000),
        ))  # fmt: skip
    return items


def _seed(path: str, items: list[ItemInput]) -> tuple[MemoryItemStore, float, float]:
    """Seed a fresh store; return it with wall and CPU seconds."""
    store = MemoryItemStore(path)
    wall, cpu = time.perf_counter(), time.process_time()
    store.bulk_create(items)
    return store, time.perf_counter() - wall, time.process_time() - cpu


def _prefix_of(key: str, rng: random.Random) -> str:
    cjk = any(ord(ch) > 0x2E80 for ch in key[:2])
    cut = rng.randint(1, 2) if cjk else rng.randint(3, 8)
    return key[:cut].strip() or key


def _time(calls: list[Callable[[], object]]) -> tuple[float, float, float, float]:
    """Milliseconds per call: wall p50 and p95, CPU p50 and p95.

    CPU time (this process only) is reported next to wall time because a busy
    machine inflates wall-clock percentiles with scheduler preemption.
    """
    wall, cpu = [], []
    for call in calls:
        w, c = time.perf_counter_ns(), time.process_time_ns()
        call()
        cpu.append((time.process_time_ns() - c) / 1e6)
        wall.append((time.perf_counter_ns() - w) / 1e6)
    wall.sort()
    cpu.sort()
    n = len(wall)
    return wall[n // 2], wall[int(n * 0.95)], cpu[n // 2], cpu[int(n * 0.95)]


def _search_rows(store: MemoryItemStore, items: list[ItemInput], queries: int) -> list[tuple[str, float, float, float, float]]:
    rng = random.Random(1)
    counts = Counter(key.key for item in items for key in item.keys)
    distinct = sorted(counts)
    head = [key for key, _ in counts.most_common(20)]
    rows = []
    for match in ("exact", "prefix"):
        for n_terms in (1, 5):
            for workspace in (None, "ws-1"):
                calls = []
                for _ in range(queries):
                    terms = rng.sample(distinct, n_terms)
                    if match == "prefix":
                        terms = [_prefix_of(t, rng) for t in terms]
                    calls.append(lambda t=terms, m=match, w=workspace: store.search_by_keys(t, m, workspace_key=w))
                label = f"{match:<6} {n_terms} term{'s' if n_terms > 1 else ' '} {'ws-1' if workspace else 'global'}"
                rows.append((label, *_time(calls)))
    for workspace in (None, "ws-1"):
        calls = [lambda t=t, w=workspace: store.search_by_keys([t], workspace_key=w) for t in head] * 5
        rows.append((f"exact  1 head term {'ws-1' if workspace else 'global'}", *_time(calls)))
    return rows


def _per_sample(items: list[ItemInput], repeats: int = 2000) -> tuple[float, float, float, float]:
    """Microseconds (wall, CPU) to open a fresh :memory: store, then to open it and seed 10 items."""
    batch = items[:10]

    def open_only() -> None:
        MemoryItemStore(":memory:").close()

    def open_and_seed() -> None:
        store = MemoryItemStore(":memory:")
        store.bulk_create(batch)
        store.close()

    figures = []
    for call in (open_only, open_and_seed):
        call()
        w, c = time.perf_counter(), time.process_time()
        for _ in range(repeats):
            call()
        figures += [(time.perf_counter() - w) / repeats * 1e6, (time.process_time() - c) / repeats * 1e6]
    return figures[0], figures[1], figures[2], figures[3]


def _prefix_rows(store: MemoryItemStore, items: list[ItemInput], per_length: int) -> list[tuple[str, float, float, float, float]]:
    """One-term prefix searches by term length (global scope), labelled with the median matching keys."""
    rng = random.Random(2)
    keys = sorted({normalize_search_term(key.key) for item in items for key in item.keys})
    latin = [k for k in keys if k[0].isascii()]
    rows = []
    for length in (1, 2, 3, 4, 6, 8):
        terms = [k[:length] for k in rng.sample([k for k in latin if len(k) >= length], per_length)]
        matches = sorted(bisect.bisect_left(keys, prefix_upper_bound(t)) - bisect.bisect_left(keys, t) for t in terms)
        calls = [lambda t=t: store.search_by_keys([t], "prefix") for t in terms]
        rows.append((f"prefix len {length} (~{matches[len(matches) // 2]:,} keys)", *_time(calls)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", default=":memory:", help="':memory:' (default) or a file path (a temp file is used for 'file')")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000, help="queries per search row")
    args = parser.parse_args(argv)
    scratch = tempfile.TemporaryDirectory(prefix="store_bench_")  # removed at exit

    def fresh_path(tag: str) -> str:
        if args.path != "file":
            return args.path if args.path == ":memory:" else f"{args.path}.{tag}"
        return os.path.join(scratch.name, f"{tag}.db")

    build = time.perf_counter()
    items = _make_items(args.items)
    build = time.perf_counter() - build
    keys = sum(len(item.keys) for item in items)
    print(f"store benchmark: {args.items:,} items, {keys:,} keys (input build {build:.1f} s), path {args.path}")

    small_store, small_wall, small_cpu = _seed(fresh_path("10k"), items[:10_000])
    small_store.close()
    store, big_wall, big_cpu = _seed(fresh_path("full"), items)
    print()
    print(f"{'seed (bulk_create, one transaction)':<40}{'wall s':>9}{'CPU s':>9}{'items/s (CPU)':>15}")
    print(f"{'10,000 items (target < 1 s)':<40}{small_wall:>9.2f}{small_cpu:>9.2f}{10_000 / small_cpu:>15,.0f}")
    print(f"{f'{args.items:,} items':<40}{big_wall:>9.2f}{big_cpu:>9.2f}{args.items / big_cpu:>15,.0f}")
    open_wall, open_cpu, sample_wall, sample_cpu = _per_sample(items)
    print(f"{'per sample (us)':<40}{'wall':>9}{'CPU':>9}")
    print(f"{'  open :memory: store with schema':<40}{open_wall:>9.0f}{open_cpu:>9.0f}")
    print(f"{'  open + bulk_create 10 items':<40}{sample_wall:>9.0f}{sample_cpu:>9.0f}")
    print()
    print(f"search at {args.items:,} items, {args.queries} queries a row, limit 20 (target p95 < 1 ms)")
    print(f"{'query':<30}{'wall p50':>10}{'wall p95':>10}{'CPU p50':>10}{'CPU p95':>10}   (ms)")
    for label, *figures in _search_rows(store, items, args.queries) + _prefix_rows(store, items, args.queries // 5):
        print(f"{label:<30}" + "".join(f"{value:>10.3f}" for value in figures))
    index = store._key_index  # built by the first multi-term prefix search over wide ranges (memory_tools._key_index)
    print(f"in-memory key index: built {index.builds} time(s), last build {index.build_seconds * 1e3:,.0f} ms wall "
          "(paid once by the first wide multi-term prefix search; any write drops it)")
    store.close()
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
