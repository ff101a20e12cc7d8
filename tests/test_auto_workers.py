"""``-n auto`` (the README's test command) starts one worker more than the cores: tests/conftest.py."""

from __future__ import annotations

import pytest

pytest.importorskip("xdist", reason="pytest-xdist is not installed (pip install -e '.[test]')")

from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count  # noqa: E402


def test_auto_is_one_worker_more_than_xdists_count_of_cores(pytestconfig: pytest.Config,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == xdist_count(pytestconfig) + 1


def test_the_environments_number_is_taken_as_given(pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 5
