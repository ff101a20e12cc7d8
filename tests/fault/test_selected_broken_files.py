"""A file the ``--filter``/``--id``/``--category`` selection names but that cannot be loaded: an error, never a silent skip.

Real ``recall-eval`` processes on a small suite holding one good scenario and
one broken file whose id (or name) the selection matches. Files outside the
selection still only warn (``test_scenario_files.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "fixtures" / "scenarios" / "good" / "valid.yaml"


def _cli(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "harness.cli", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _suite(tmp_path: Path, broken_name: str, broken_text: str) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    good = GOOD.read_text(encoding="utf-8")
    (suite / "my-01-good.yaml").write_text(good.replace(_id(good), "my-01-good", 1), encoding="utf-8")
    (suite / broken_name).write_text(broken_text, encoding="utf-8")
    return suite


def _id(text: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("id:"))


YAML_ERROR = "id: my-01-broken\ntitle: [unclosed\n"


@pytest.mark.parametrize("text", [YAML_ERROR, "id: my-01-broken\n- a list after a mapping key\n", "- just\n- a list\n"])
def test_run_with_a_filter_naming_a_broken_file_stops_before_any_call(tmp_path: Path, text: str) -> None:
    """`run --filter 'my-01*'` where my-01-broken.yaml has a YAML error (or is not a mapping): exit 2 naming the file, no run folder."""
    suite = _suite(tmp_path, "my-01-broken.yaml", text)
    done = _cli("run", "--scenarios", suite, "--filter", "my-01*", "--out", tmp_path / "run", "--no-progress", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "my-01-broken.yaml:" in done.stderr and "skipped" not in done.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_list_with_an_id_naming_a_broken_file_is_an_error(tmp_path: Path) -> None:
    """`list --id 'my-01*'` where the matching file does not parse: the error is printed and the exit is not 0."""
    suite = _suite(tmp_path, "my-01-broken.yaml", YAML_ERROR)
    done = _cli("list", suite, "--id", "my-01*", cwd=tmp_path)
    assert done.returncode != 0
    assert "my-01-broken.yaml:" in done.stderr and "skipped" not in done.stderr


def test_a_broken_file_selected_by_its_id_line_under_another_name_is_an_error(tmp_path: Path) -> None:
    """The file name does not match but its top-level `id:` line does: still selected, still an error."""
    suite = _suite(tmp_path, "zz-other-name.yaml", YAML_ERROR)
    done = _cli("list", suite, "--id", "my-01-broken", cwd=tmp_path)
    assert done.returncode != 0 and "zz-other-name.yaml:" in done.stderr


def test_a_broken_file_of_the_selected_category_is_an_error(tmp_path: Path) -> None:
    """`--category project_fact` and a broken file whose `category:` line says project_fact: an error."""
    suite = _suite(tmp_path, "zz-other.yaml", "id: zz-other\ncategory: project_fact\ntitle: [unclosed\n")
    done = _cli("list", suite, "--category", "project_fact", cwd=tmp_path)
    assert done.returncode != 0 and "zz-other.yaml:" in done.stderr


def test_a_broken_file_outside_the_filter_still_only_warns(tmp_path: Path) -> None:
    """A broken file neither named nor identified by the glob: `list --id 'my-01*'` lists the good scenario and exits 0."""
    suite = _suite(tmp_path, "other.yaml", "id: other-7\ntitle: [unclosed\n")
    done = _cli("list", suite, "--id", "my-01*", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "my-01-good" in done.stdout and done.stdout.strip().endswith("1 scenario")
