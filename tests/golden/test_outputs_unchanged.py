"""Every file a run folder ends with is byte-for-byte what the code before the layout wrote.

The runs are the ones :mod:`tests.golden.digests` describes (the starter suite
in the four original arms, the smoke suite in every built-in arm, two epochs,
offline model, deterministic clock). A failure names the files that changed;
if the change is intended, regenerate the digests as that module says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden.digests import GOLDEN_RUNS, OUTPUTS_GOLDEN, REPO, file_digests, golden_run


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_every_output_file_is_byte_identical_to_the_golden_run(name: str, tmp_path: Path) -> None:
    suite, arms = GOLDEN_RUNS[name]
    expected = json.loads(OUTPUTS_GOLDEN.read_text())[name]
    found = golden_run(REPO, suite, arms, tmp_path / "golden-run")
    changed = sorted(file for file in expected if found.get(file) != expected[file])
    assert not changed, f"{name}: {', '.join(changed)} changed (regenerate only for an intended change: tests/golden/digests.py)"


def test_the_digests_see_one_changed_byte_and_ignore_where_the_run_folder_lies(tmp_path: Path) -> None:
    """The check itself: a byte of any output changes its digest; the run folder's and checkout's paths do not."""
    runs = {}
    for where in ("a", "b"):
        run = tmp_path / where / "golden-run"
        run.mkdir(parents=True)
        for file in ("results.jsonl", "run.json", "summary.json", "scores.jsonl", "metrics.csv", "junit.xml", "index.html"):
            (run / file).write_text(f"{file} of {run.parent} from {REPO}/scenarios\n")
        runs[where] = run
    assert file_digests(runs["a"], REPO) == file_digests(runs["b"], REPO)
    (runs["b"] / "summary.json").write_text((runs["b"] / "summary.json").read_text() + " ")
    changed = {f for f, d in file_digests(runs["b"], REPO).items() if file_digests(runs["a"], REPO)[f] != d}
    assert changed == {"summary.json"}
