"""Finished runs of the offline model for tests that need one to read."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import SMOKE


def offline_run(tmp_path: Path) -> Path:
    """A finished run of the offline model on two smoke scenarios (one answerable, one not), both arms."""
    from harness.cli import main

    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--filter", "smoke-03*",
                 "--arms", "history_only", "recall", "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress"])
    assert code in (0, 1) and (run_dir / "results.jsonl").is_file()
    return run_dir
