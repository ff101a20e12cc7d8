"""The wheel as a user installs it: the shipped suites come with it, so `recall-eval` works from any folder.

Slow (a wheel build, about 10-20 s): marked ``slow``; ``pytest -m 'not slow'`` leaves it out. The build is pip's
own (isolated: it fetches ``setuptools>=69`` and ``wheel`` from the package index, and skips, saying so, when the
index cannot be reached) and works on a copy of the sources, so it writes nothing into the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project's wheel built from a copy of its sources and installed (no dependencies) into a folder of its own."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    for name in ("harness", "memory_tools", "scenarios"):
        shutil.copytree(REPO / name, source / name, ignore=ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    built = subprocess.run([*pip, "wheel", "--no-deps", "--quiet", "-w", str(base / "dist"), str(source)],
                           capture_output=True, text=True, timeout=600)
    if built.returncode and "No matching distribution found for setuptools" in built.stderr:
        pytest.skip("pip could not fetch the build backend (setuptools>=69) from the package index: no network here?")
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((base / "dist").glob("recall_eval-*.whl"))
    site = base / "site"
    done = subprocess.run([*pip, "install", "--no-deps", "--quiet", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return wheel, site


def _recall_eval(site: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(site), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="80")
    return subprocess.run([sys.executable, "-m", "harness.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_wheel_carries_every_shipped_suite_the_license_and_the_python_floor(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    suites = [p.name for p in (REPO / "scenarios").iterdir() if p.is_dir()]
    assert {"starter", "smoke", "acceptance"} <= set(suites)
    for suite in suites:
        shipped = {p.name for p in (REPO / "scenarios" / suite).iterdir() if p.suffix in (".yaml", ".md")}
        assert shipped and shipped == {Path(n).name for n in names if n.startswith(f"harness/suites/{suite}/")}
    assert any(n.endswith("LICENSE") for n in names)
    assert "Requires-Python: >=3.11" in metadata and "License :: OSI Approved :: MIT License" in metadata


def test_run_from_a_folder_outside_the_checkout_uses_the_installed_starter_suite(
        installed: tuple[Path, Path], tmp_path: Path) -> None:
    """Outside the checkout `run` exited 2 ('scenario path .../scenarios/starter does not exist'); now it runs the wheel's copy."""
    _, site = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _recall_eval(site, elsewhere, "run", "--limit", "2", "--no-progress", "--out", "r")
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: the verdict's answer is no
    assert "Traceback" not in done.stderr and "verdict:" in done.stdout
    manifest = json.loads((elsewhere / "r" / "run.json").read_text(encoding="utf-8"))
    assert manifest["scenario_paths"] == [str((site / "harness" / "suites" / "starter").resolve())]
    listed = _recall_eval(site, elsewhere, "list", "scenarios/smoke")
    assert listed.returncode == 0 and "smoke-01-changelog-format" in listed.stdout, listed.stderr


def test_a_missing_path_that_names_no_shipped_suite_is_still_missing(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, site = installed
    done = _recall_eval(site, tmp_path, "list", "scenarios/nope")
    assert done.returncode == 2 and "scenarios/nope: no such file or folder" in done.stderr
