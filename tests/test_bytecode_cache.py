"""The controller's one rewrite of the test modules for every xdist worker (tests/bytecode_cache.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from tests.bytecode_cache import rewrite_test_modules


def test_a_test_module_is_rewritten_once_into_the_pyc_pytest_reads(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    """Test modules and conftests get pytest's rewritten ``.pyc`` (its assertions explain themselves), other modules
    none; a second pass writes nothing, and an edited source is rewritten again."""
    source = tmp_path / "test_sample.py"
    source.write_text("def test_it():\n    x = 1\n    assert x == 2\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text("", encoding="utf-8")
    (tmp_path / "helper.py").write_text("X = 1\n", encoding="utf-8")

    assert rewrite_test_modules(pytestconfig, tmp_path) == 2
    assert rewrite_test_modules(pytestconfig, tmp_path) == 0
    code = _read_pyc(source, tmp_path / "__pycache__" / f"test_sample{PYC_TAIL}")
    assert code is not None
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match=r"assert 1 == 2"):
        namespace["test_it"]()  # type: ignore[operator]
    assert not list((tmp_path / "__pycache__").glob("helper*"))

    source.write_text("def test_it():\n    assert 3 == 4\n", encoding="utf-8")
    assert rewrite_test_modules(pytestconfig, tmp_path) == 1
