"""Fixtures for the integration tests: a fake OpenAI-compatible server and a run helper."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, SampleRecord, iter_records
from tests.integration.fake_openai_server import FakeOpenAIServer, Script

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"
DUMMY_KEY = "sk-recall-eval-dummy-0123456789abcdef"


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    """A fake server in ``recall`` mode; tests change ``server.script`` fields as needed."""
    with FakeOpenAIServer(Script()) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)


@dataclass
class RunResult:
    code: int
    run_dir: Path
    cache_dir: Path
    out: str
    err: str

    def records(self) -> list[SampleRecord]:
        return list(iter_records(self.run_dir / RESULTS_FILE))

    def record(self, arm: str) -> SampleRecord:
        (match,) = [r for r in self.records() if r.arm == arm]
        return match


@pytest.fixture()
def run_cli(tmp_path: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]):
    """``run_cli(*flags)``: ``recall-eval run`` in-process against the fake server."""
    from harness.cli import main

    counter = iter(range(1000))

    def _run(*flags: str, scenario: str = "smoke-01-changelog-format", arms: tuple[str, ...] = ("recall",)) -> RunResult:
        n = next(counter)
        run_dir, cache_dir = tmp_path / f"run{n}", tmp_path / f"cache{n}"
        argv = [
            "run", "--model", "openai/fake", "--api-base", server.base_url, "--scenarios", str(SMOKE),
            "--filter", scenario, "--arms", *arms, "--out", str(run_dir), "--cache-dir", str(cache_dir), "--no-progress", *flags,
        ]
        code = main(argv)
        captured = capsys.readouterr()
        return RunResult(code, run_dir, cache_dir, captured.out, captured.err)

    return _run
