"""The tree keeps ruff's rules (pyproject.toml ``[tool.ruff.lint]``): pyflakes, pycodestyle, import order, bugbear, pyupgrade.

It runs inside the README's test command, so a fresh clone and CI check it the same way. An undefined name is a
crash waiting on the path that reaches it: a merge once left ``type=_usd`` after the flag helpers were renamed,
and only the one test that built that parser noticed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        pytest.fail("ruff is not installed: install the test extra (pip install -e '.[test]')")
    return subprocess.run([find_ruff_bin(), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_tree_has_no_finding_under_the_projects_ruff_rules() -> None:
    done = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_rules_catch_an_undefined_name_an_unused_import_and_the_style_rules(tmp_path: Path) -> None:
    """The same configuration on a module with planted faults: each is reported (the rules are not a no-op):
    pyflakes' undefined name and unused import, import order, bugbear's mutable default, a line past 150."""
    bad = tmp_path / "harness" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import sys\nimport json\n\n\ndef f(seen=[]):\n    return _usd(1), sys.argv\n\n\n"
                   f"LONG = {'x' * 160!r}\n", encoding="utf-8")
    done = _ruff("check", "--no-cache", "--output-format", "concise", "--config", str(ROOT / "pyproject.toml"),
                 str(bad), cwd=tmp_path)
    assert done.returncode == 1
    for rule in ("F401", "F821", "I001", "B006", "E501"):
        assert rule in done.stdout, rule + ": " + done.stdout + done.stderr


def test_ruff_is_the_test_extras_own() -> None:
    """CI installs only the test extra: ruff must be in it for the first test to run there."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    test_extra = next(line for line in text.splitlines() if line.startswith("test = ["))
    assert '"ruff' in test_extra
    assert sys.version_info >= (3, 11)
