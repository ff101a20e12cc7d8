"""``run --shard I/N``: one of N deterministic parts of a run, split by scenario.

A scenario's samples (every arm, model and epoch) stay in one shard, so the
paired comparisons of a scenario never straddle two CI jobs. Shards are
balanced by sample count: scenarios are taken heaviest first (ties by id) and
each goes to the lightest shard so far (ties to the lowest index), a greedy
split whose shards differ by at most one scenario's samples. It depends only
on the scenario ids and their sample counts, never on file order, so every
job of a CI matrix computes the same split from the same suite.

``run.json`` of a shard keeps its own scenario ids and suite hash (so the
shard reports and resumes like any run) and a :class:`ShardInfo` naming the
shard and the full suite (:mod:`harness.runs.merge` checks the shards against it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A ``--shard`` value that cannot be used; the message says why and the form expected."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``; I counts from 1, as CI matrix indexes such as GitLab's ``CI_NODE_INDEX`` do.

    Raises:
        ShardError: not ``I/N`` with ``1 <= I <= N``.

    Example:
        >>> parse_shard("2/4")
        Shard(index=2, count=4)
    """
    match = _SHARD.match(text or "")
    if not match:
        raise ShardError(f"--shard {text!r}: expected I/N, e.g. 2/4 (shard 2 of 4, counting from 1)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {text}: I must be between 1 and N (N >= 1), e.g. 1/{max(count, 1)}")
    return Shard(index, count)


def partition(weights: Mapping[str, int], count: int) -> list[list[str]]:
    """Scenario ids split into ``count`` lists (each sorted), balanced by weight (samples per scenario).

    Example:
        >>> partition({"a": 3, "b": 3, "c": 3, "d": 1}, 2)
        [['a', 'c'], ['b', 'd']]
    """
    loads = [0] * count
    parts: list[list[str]] = [[] for _ in range(count)]
    for sid in sorted(weights, key=lambda s: (-weights[s], s)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        parts[lightest].append(sid)
        loads[lightest] += weights[sid]
    return [sorted(part) for part in parts]


def shard_ids(weights: Mapping[str, int], shard: Shard) -> list[str]:
    """The scenario ids of ``shard`` (sorted)."""
    return partition(weights, shard.count)[shard.index - 1]
