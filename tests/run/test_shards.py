"""``run --shard I/N``: a deterministic split by scenario, balanced by samples, recorded in run.json."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.cli import main  # noqa: E402
from harness.records import RESULTS_FILE, read_manifest, scan_results  # noqa: E402
from harness.run.options import suite_hash  # noqa: E402
from harness.run.shards import Shard, ShardError, parse_shard, partition, shard_ids  # noqa: E402

STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


def test_parse_shard_reads_i_of_n_counting_from_one() -> None:
    assert parse_shard("2/4") == Shard(2, 4) and parse_shard(" 1 / 1 ") == Shard(1, 1)
    for bad in ("0/4", "5/4", "2", "a/b", "1/0", ""):
        with pytest.raises(ShardError, match="--shard"):
            parse_shard(bad)


def test_partition_is_a_deterministic_cover_without_overlap_whatever_the_input_order() -> None:
    weights = {f"s{i:03}": 3 for i in range(61)}
    shuffled = dict(random.Random(7).sample(list(weights.items()), len(weights)))
    parts = partition(weights, 4)
    assert parts == partition(shuffled, 4)  # the order scenarios were loaded in does not matter
    flat = [sid for part in parts for sid in part]
    assert sorted(flat) == sorted(weights) and len(flat) == len(set(flat))


def test_partition_balances_samples_even_when_scenarios_weigh_differently() -> None:
    weights = {"a": 5, "b": 4, "c": 3, "d": 3, "e": 2, "f": 1}  # dealt round-robin by id: 8, 6, 4
    loads = [sum(weights[s] for s in part) for part in partition(weights, 3)]
    assert loads == [6, 6, 6]


def test_partition_with_more_shards_than_scenarios_leaves_empty_shards() -> None:
    assert partition({"a": 3, "b": 3}, 3) == [["a"], ["b"], []]


@pytest.mark.parametrize(("text", "example"), [("2/1", "e.g. 1/1"), ("1/0", "e.g. 1/1"), ("5/4", "e.g. 1/4")])
def test_an_index_outside_the_count_suggests_the_first_shard_of_that_count(text: str, example: str) -> None:
    with pytest.raises(ShardError) as raised:
        parse_shard(text)
    assert str(raised.value).endswith(example)


def test_partition_places_the_heaviest_scenarios_first_whatever_their_ids() -> None:
    """Taken by id, "a" and "b" would share a shard with "c" and leave the other one light (5 and 1)."""
    assert partition({"a": 1, "b": 1, "c": 4}, 2) == [["c"], ["a", "b"]]
    weights = {"z": 9, "y": 5, "x": 4, "b": 3, "a": 1}  # ids sort opposite to weight
    loads = [sum(weights[s] for s in part) for part in partition(weights, 2)]
    assert loads == [12, 10]  # by id: 14 and 8


def test_shard_i_is_the_ith_part_counting_from_one() -> None:
    weights = {"a": 5, "b": 4, "c": 3, "d": 3, "e": 2, "f": 1}
    parts = partition(weights, 3)
    assert [shard_ids(weights, Shard(index, 3)) for index in (1, 2, 3)] == parts
    assert shard_ids(weights, Shard(1, 1)) == sorted(weights)


def _run(tmp_path: Path, *flags: str, out: str) -> int:
    return main(["run", "--scenarios", str(STARTER), "--filter", "pref-*", "--out", str(tmp_path / out), "--no-cache",
                 "--no-progress", "--epochs", "2", *flags])


@pytest.fixture()
def _no_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.cli.run._build_report", lambda options, scenarios=None: 0)


@pytest.mark.usefixtures("_no_report")
def test_a_shard_runs_whole_scenarios_and_records_the_shard_and_the_whole_suite_hash(tmp_path: Path) -> None:
    assert _run(tmp_path, out="whole") == 0
    whole = read_manifest(tmp_path / "whole")
    manifests, seen = [], []
    for index in (1, 2, 3):
        assert _run(tmp_path, "--shard", f"{index}/3", out=f"s{index}") == 0
        manifest = read_manifest(tmp_path / f"s{index}")
        manifests.append(manifest)
        assert manifest.shard is not None and (manifest.shard.index, manifest.shard.count) == (index, 3)
        assert manifest.shard.suite_hash == whole.suite_hash and manifest.shard.sample_count == whole.sample_count
        records = scan_results(tmp_path / f"s{index}" / RESULTS_FILE).records
        by_scenario: dict[str, set[tuple[str, int]]] = {}
        for record in records:
            by_scenario.setdefault(record.scenario_id, set()).add((record.arm, record.epoch))
        assert set(by_scenario) == set(manifest.scenario_ids)
        assert all(len(pairs) == 3 * 2 for pairs in by_scenario.values())  # every arm and epoch of a scenario: pairs whole
        seen += manifest.scenario_ids
    assert sorted(seen) == whole.scenario_ids  # a cover, no overlap
    counts = [m.sample_count for m in manifests]
    assert sum(counts) == whole.sample_count and max(counts) - min(counts) <= 3 * 2
    hashes = json.loads((tmp_path / "s1" / "run.json").read_text())["suite_hash"]
    assert hashes != whole.suite_hash  # the shard's own hash covers its own scenarios


@pytest.mark.usefixtures("_no_report")
def test_a_resumed_shard_keeps_its_shard_and_refuses_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "--shard", "2/3", out="s2") == 0
    run_dir = tmp_path / "s2"
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    (run_dir / RESULTS_FILE).write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    assert main(["run", "--resume", str(run_dir), "--shard", "1/3", "--no-progress", "--no-cache"]) == 2
    assert "conflicts with the run being resumed (shard 2/3)" in capsys.readouterr().err
    assert main(["run", "--resume", str(run_dir), "--no-progress", "--no-cache"]) == 0
    manifest = read_manifest(run_dir)
    assert manifest.shard is not None and manifest.shard.index == 2
    assert sorted({r.scenario_id for r in scan_results(run_dir / RESULTS_FILE).records}) == manifest.scenario_ids


def test_shard_suite_hash_is_the_unsharded_suite_hash(tmp_path: Path) -> None:
    assert suite_hash({"b": "2", "a": "1"}) == suite_hash({"a": "1", "b": "2"})
