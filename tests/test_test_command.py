"""The README's test command (`python -m pytest`, options from pyproject.toml) says why each skipped test skipped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement  # pytest's own dependency

REPO = Path(__file__).resolve().parents[1]


def test_the_test_command_prints_each_skip_reason(tmp_path: Path) -> None:
    """`addopts = "-q"` alone printed "1 skipped" and no reason, though the README promises "skipped, saying so"."""
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\n\ndef test_needs_a_browser():\n    pytest.skip('no local Chromium and chromedriver')\n",
        encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-p", "no:cacheprovider", str(tmp_path / "test_one.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED [1] test_one.py:5: no local Chromium and chromedriver" in done.stdout


def _test_extra() -> list[str]:
    import tomllib

    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]["test"]


def test_every_package_of_the_test_extra_is_installed_so_no_test_skips_for_want_of_one() -> None:
    """The export tests once skipped in CI because inspect_ai was in no extra CI installs, and `-rs` only said so in
    a long log. The README's test command installs the test extra: any package of it missing or too old here means
    the tests that need it skipped, so this fails instead, naming them."""
    from importlib.metadata import PackageNotFoundError, version

    missing = []
    for requirement in map(Requirement, _test_extra()):
        try:
            found = version(requirement.name)
        except PackageNotFoundError:
            missing.append(f"{requirement} (not installed)")
            continue
        if not requirement.specifier.contains(found, prereleases=True):
            missing.append(f"{requirement} ({found} installed)")
    assert not missing, f"install the test extra (pip install -e '.[test]'): {', '.join(missing)}"


def test_the_test_extra_holds_inspect_ai_so_the_export_tests_run() -> None:
    assert {"inspect_ai", "pyarrow"} <= {Requirement(r).name for r in _test_extra()}


def readme_test_command(readme: str) -> str:
    """The command in the code block under "Install and run the tests"."""
    block = readme.split("Install and run the tests", 1)[1].split("```bash\n", 1)[1]
    return block.split("\n", 1)[0].strip()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """`.ci/run` says it runs the README's command; a flag added to one and not the other (`-n auto`) fails here."""
    command = readme_test_command((REPO / "README.md").read_text(encoding="utf-8"))
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert command.startswith("python3 -m venv .venv") and command in ci_lines
    assert command in (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
