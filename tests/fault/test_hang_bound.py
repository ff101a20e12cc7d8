"""A fault test that hangs fails on its own instead of stopping the suite: every test of ``tests/fault`` has a
pytest-timeout bound, and on a timeout the pending asyncio tasks of an idle event loop are printed with the threads'
stacks (an in-process run once hung twice under load with its loop idle, and nothing said where)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fault.conftest import FAULT_TEST_TIMEOUT_S, REPO

pytest.importorskip("pytest_timeout")


def test_every_fault_test_has_a_timeout(request: pytest.FixtureRequest) -> None:
    """The collection hook gives each test of this folder a bound (this one included)."""
    marker = request.node.get_closest_marker("timeout")
    assert marker is not None and marker.args[0] == FAULT_TEST_TIMEOUT_S


def test_a_test_hung_on_an_idle_event_loop_fails_naming_what_its_tasks_wait_for(tmp_path: Path) -> None:
    """A test whose event loop waits forever on a future nobody sets, run by a real pytest with a 2 s bound and this
    folder's conftest: it fails as a timeout within seconds, and the output names the waiting task and where it waits."""
    hung = tmp_path / "test_hung.py"
    hung.write_text(
        "import asyncio\n\n"
        "async def waits_for_a_place():\n"
        "    await asyncio.get_running_loop().create_future()\n\n"
        "def test_hangs():\n"
        "    asyncio.run(waits_for_a_place())\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.fault.conftest", "--timeout", "2", "-q",
                           "-p", "no:cacheprovider", str(hung)], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Timeout" in output and "asyncio task" in output and "waits_for_a_place" in output, output
