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
