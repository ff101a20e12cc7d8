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
Python then writes its own.
"""

from __future__ import annotations

import compileall
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
        compileall.compile_dir(repo / package, quiet=2, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    return True
