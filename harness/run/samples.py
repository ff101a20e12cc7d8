"""The samples of a run: every scenario x arm x model x epoch, each with its own seed.

The plan, the runner, the worker processes and shards all take the same list
from :func:`plan_samples`, so what is planned, run, resumed and merged
cannot drift apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from harness.records import sample_id
from harness.scenarios import Scenario, scenario_ids


@dataclass(frozen=True)
class SampleSpec:
    """One planned sample."""

    scenario_id: str
    arm: str
    model: str
    epoch: int
    seed: int

    @property
    def sample_id(self) -> str:
        return sample_id(self.scenario_id, self.arm, self.model, self.epoch)


def sample_seed(base_seed: int, scenario_id: str, epoch: int) -> int:
    """Deterministic per-sample seed, shared by every arm and model (paired comparisons)."""
    digest = hashlib.sha256(f"{base_seed}|{scenario_id}|{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def plan_samples(scenarios: Sequence[Scenario], arms: list[str], models: list[str], epochs: int, seed: int,
                 only: Collection[str] = ()) -> list[SampleSpec]:
    """Every scenario x arm x model x epoch, in a stable order; with ``only`` (``run --sample-id``), just those sample ids.

    A selected sample keeps the seed it has in the whole run, so re-running
    one sample reproduces it.
    """
    wanted = frozenset(only)
    ids = scenario_ids(scenarios)  # a shelf's, without unpacking
    return [
        SampleSpec(sid, arm, model, epoch, sample_seed(seed, sid, epoch))
        for epoch in range(epochs)
        for sid in ids
        for model in models
        for arm in arms
        if not wanted or sample_id(sid, arm, model, epoch) in wanted
    ]
