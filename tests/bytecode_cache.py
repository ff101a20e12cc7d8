"""Compiled sources for the test session's child processes where the environment forbids writing bytecode.

With ``PYTHONDONTWRITEBYTECODE`` set, every ``recall-eval`` process a test starts
(hundreds in a session: the fault tests, the piped walks, the fresh-interpreter
checks) compiled ``harness`` and ``memory_tools`` from source again, about a
third of a small command's CPU. Compiling them once per session fixes that.

The ``.pyc`` files are checked-hash ones (PEP 552): an import hashes the source
and recompiles when it changed, so a test or a developer editing a module within
the second its old ``.pyc`` was written (same size, same timestamp) is never
served stale code, as timestamp ``.pyc`` files could be. They go where Python
puts them, in ``__pycache__`` beside the sources (git-ignored, left out of the
wheel test's copy); nothing is written when the variable is not set, since
Python then writes its own. A ``.pyc`` whose header already holds its source's
hash is left as it is: rewriting all of them cost each session seconds of disk
writes, and mutation testing (docs/mutation-testing.md) starts a session per
mutant.
"""

from __future__ import annotations

import importlib.util
import py_compile
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The packages a ``recall-eval`` child process imports from the checkout.
PACKAGES = ("harness", "memory_tools")


def compile_checkout_sources(repo: Path = REPO) -> bool:
    """Compile :data:`PACKAGES` under ``repo`` to checked-hash ``.pyc`` files if bytecode is not written by imports.

    Returns whether it compiled (False when the environment lets Python write bytecode itself).
    """
    if not sys.dont_write_bytecode:
        return False
    for package in PACKAGES:
        for source in sorted((repo / package).rglob("*.py")):
            _compile_if_stale(source)
    return True


def _compile_if_stale(source: Path) -> None:
    """Write ``source``'s checked-hash ``.pyc`` unless the one there is of this very source (PEP 552 header)."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        header = importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
        with cached.open("rb") as pyc:
            if pyc.read(len(header)) == header:
                return
    except OSError:
        pass  # no .pyc yet (or an unreadable one): compile
    try:
        py_compile.compile(str(source), str(cached), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    except (py_compile.PyCompileError, OSError):
        pass  # a source that does not compile: its import says why, as without this cache


def rewrite_test_modules(config: pytest.Config, root: Path = REPO / "tests") -> int:
    """Write pytest's assertion-rewritten ``.pyc`` of every test module and conftest under ``root`` that lacks one.

    Each xdist worker collects the whole suite: in a fresh checkout the three workers all rewrote and compiled the
    same ~330 modules at once (about 9 CPU-s each on the two-core machine). The controller does it once here, before
    the workers start, with pytest's own functions, so each worker reads the very ``.pyc`` it would have written
    (pytest checks it against the source's hash). pytest's rewriting functions are not public API: any change to
    them only costs this shortcut (nothing is written and the workers rewrite as before). Returns how many it wrote.
    """
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
        from _pytest.pathlib import fnmatch_ex

        state = config.stash[assertstate_key]
        patterns = list(config.getini("python_files"))
    except (ImportError, AttributeError, KeyError, ValueError):
        return 0
    written = 0
    for source in sorted(root.rglob("*.py")):
        if source.name != "conftest.py" and not any(fnmatch_ex(pattern, source) for pattern in patterns):
            continue
        pyc = get_cache_dir(source) / (source.name[:-3] + PYC_TAIL)
        try:
            if _read_pyc(source, pyc) is not None:
                continue
            pyc.parent.mkdir(parents=True, exist_ok=True)
            source_hash, code = _rewrite_test(source, config)
            written += bool(_write_pyc(state, code, source_hash, pyc))
        except (OSError, SyntaxError, TypeError, ValueError):
            continue  # a module that does not compile: its collection says why, as without this
    return written
