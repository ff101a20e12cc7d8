"""A whole run (plan, samples, report) holds a few scenarios unpacked at a time, never the suite (issue 22).

A LongMemEval S question is its own scenario with a ~4.6 MB haystack; a run
that held all 500 of them (its list, the plan's, the report's, the caches
keyed by them) peaked near 5 GB. These tests count live scenario objects and
unpacks on a suite of many small ones, never time or memory figures.

Counting live objects walks the whole heap (``gc.get_objects``) at every sample and scored record: in a
process that has run the rest of the suite that took minutes a count. So the counting tests run in a
fresh interpreter (:func:`test_the_scenario_counts_hold_in_a_fresh_process`), and are skipped in the
suite's own process.
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.scenarios import Scenario
from tests.memory_systems.prompt_factories import make_scenario

COUNT = 30
ROOT = Path(__file__).resolve().parents[2]
_FRESH = "RECALL_EVAL_COUNT_SCENARIOS"
in_a_fresh_process = pytest.mark.skipif(
    os.environ.get(_FRESH) != "1", reason="run in a fresh interpreter by test_the_scenario_counts_hold_in_a_fresh_process")


def test_the_scenario_counts_hold_in_a_fresh_process() -> None:
    """The counting tests below, in their own interpreter (a small heap to walk); every one of them must pass."""
    if os.environ.get(_FRESH) == "1":
        pytest.skip("this is the fresh process")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(Path(__file__).relative_to(ROOT))],
        cwd=ROOT, env={**os.environ, _FRESH: "1"}, capture_output=True, text=True, timeout=900, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed and int(passed.group(1)) == 3, result.stdout[-2000:]  # the three counting tests ran, none skipped


def _write_suite(folder: Path) -> Path:
    folder.mkdir()
    data = make_scenario().model_dump(mode="json", exclude_none=True)
    for n in range(COUNT):
        (folder / f"q-{n:02d}.yaml").write_text(json.dumps({**data, "id": f"q-{n:02d}"}), encoding="utf-8")
    return folder


def _listed_with_sessions() -> int:
    return sum(isinstance(o, Scenario) and bool(o.sessions) for o in gc.get_objects())


#: The lowest bound the counting tests assert (a report's scored scenarios).
LOWEST_BOUND = 6


def _haystacks_alive() -> int:
    """Scenario objects alive with their sessions (the report's husks have none): exact above :data:`LOWEST_BOUND`,
    at or below it an upper bound, which every bound asserted here reads as it would the exact count.

    A count over the bound collects the garbage and counts again (unreachable scenarios only add to a count, and a
    full collection at each of ~360 counts was 9 of the 14 CPU-s these tests took). The run freezes its heap
    (``harness.run.runner.frozen_heap``): frozen objects are not listed, so they are unfrozen for the count and frozen
    again.
    """
    frozen = gc.get_freeze_count() > 0
    gc.unfreeze()
    try:
        count = _listed_with_sessions()
        if count > LOWEST_BOUND:
            gc.collect()
            count = _listed_with_sessions()
        return count
    finally:
        if frozen:
            gc.freeze()


@pytest.fixture
def counted(monkeypatch):
    """Live scenarios at every sample and every scored record; file unpacks of the shelf."""
    return _counting(monkeypatch)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Count, while ``monkeypatch`` holds: live scenarios at every sample and every scored record; shelf unpacks."""
    import harness.run.sample as sample
    import harness.scenarios.shelf as shelf
    import harness.score as score

    seen = {"sample": [], "score": [], "unpacks": 0}
    run_memory_sample, score_sample, decompress = sample.run_memory_sample, score.score_sample, shelf.zlib.decompress

    async def counting_sample(*args, **kwargs):
        seen["sample"].append(_haystacks_alive())
        return await run_memory_sample(*args, **kwargs)

    def counting_score(*args, **kwargs):
        seen["score"].append(_haystacks_alive())
        return score_sample(*args, **kwargs)

    class _Zlib:
        compress = staticmethod(shelf.zlib.compress)

        @staticmethod
        def decompress(data):
            seen["unpacks"] += 1
            return decompress(data)

    monkeypatch.setattr(sample, "run_memory_sample", counting_sample)
    monkeypatch.setattr(score, "score_sample", counting_score)
    monkeypatch.setattr(shelf, "zlib", _Zlib)
    return seen


@pytest.fixture(scope="module")
def counted_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One run of the suite in three arms, counted while it ran: (its folder, the counts). Shared read-only by the
    tests that read its counts (a run walks the heap at each of its 180 samples and scores); a report copies it."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("counted")
    suite = _write_suite(root / "suite")
    with pytest.MonkeyPatch.context() as patch:
        counts = _counting(patch)
        code = main(["run", "--scenarios", str(suite), "--model", "offline/reference", "--arms", "history_only",
                     "recall", "full_history", "--out", str(root / "run"), "--no-progress", "--no-cache"])
    assert code in (0, 1) and (root / "run" / "summary.json").is_file()
    return root / "run", counts


@in_a_fresh_process
def test_a_whole_run_holds_a_few_scenarios_at_a_time_not_the_suite(counted_run) -> None:
    """Bug planted: the run's context held ``{s.id: s for s in scenarios}`` (every scenario alive during the samples).

    Also planted: the plan's store templates keeping every scenario's lists (8 x capacity plans); the memo
    holding each scored scenario strongly (the report kept all 30 alive).
    """
    _, counted = counted_run
    assert len(counted["sample"]) == 3 * COUNT and len(counted["score"]) >= 3 * COUNT
    # the samples in flight (8 at once over 3 arms) and the few files kept unpacked; never the 30 of the suite
    assert max(counted["sample"]) <= 10 < COUNT
    assert max(counted["score"]) <= 10 < COUNT


@in_a_fresh_process
def test_each_pass_of_a_run_unpacks_each_file_once(counted_run) -> None:
    """Plan, samples and report each go through the suite once: at most 3 unpacks a file.

    Bug planted: the report's passes after scoring (titles, categories, protocol, layers) read the shelf
    instead of husks: each of them unpacked the suite again (~10 unpacks a file, the CPU an earlier attempt lost).
    """
    _, counted = counted_run
    assert COUNT <= counted["unpacks"] <= 3 * COUNT


@in_a_fresh_process
def test_a_report_of_a_finished_run_unpacks_each_file_once(tmp_path, counted_run, counted) -> None:
    """``recall-eval report`` loads the named scenarios onto a shelf and scores them file by file."""
    import shutil

    from harness.cli import main

    run = Path(shutil.copytree(counted_run[0], tmp_path / "run"))  # the report rewrites the run's outputs
    counted["unpacks"], counted["score"] = 0, []
    assert main(["report", str(run)]) in (0, 1)
    assert counted["unpacks"] == COUNT and max(counted["score"]) <= LOWEST_BOUND
