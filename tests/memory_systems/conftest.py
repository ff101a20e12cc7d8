"""Fixtures of the memory-system tests: the instruction set a test pins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.memory_systems import configure_instructions


@pytest.fixture
def legacy_instructions() -> Iterator[None]:
    """``--instructions legacy`` for one test: each arm's own text, byte for byte as before the shared block."""
    configure_instructions("legacy")
    try:
        yield
    finally:
        configure_instructions(None)
