"""Ctrl-C on a real ``recall-eval run`` process against a slow server, then the printed ``--resume``."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE
from tests.integration.conftest import DUMMY_KEY, SMOKE
from tests.integration.fake_openai_server import FakeOpenAIServer

RECALL_EVAL = Path(sys.executable).with_name("recall-eval")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def _wait_for_lines(path: Path, count: int, proc: subprocess.Popen[str], limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while len(_lines(path)) < count:
        assert proc.poll() is None, f"run ended early with {proc.returncode}"
        assert time.monotonic() < deadline, "no samples finished in time"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigint_keeps_complete_lines_and_the_printed_resume_command_finishes_the_run(tmp_path: Path, server: FakeOpenAIServer) -> None:
    server.script.delay_s = 0.3
    run_dir, cache_dir = tmp_path / "run", tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"} | {"OPENAI_API_KEY": DUMMY_KEY}
    argv = [
        str(RECALL_EVAL), "run", "--model", "openai/fake", "--api-base", server.base_url, "--scenarios", str(SMOKE),
        "--filter", "smoke-0[123]*", "--max-concurrency", "1", "--out", str(run_dir), "--cache-dir", str(cache_dir), "--no-progress",
    ]
    # A background pytest (non-interactive shell, `&`) passes SIGINT on ignored; the child gets Ctrl-C back.
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for_lines(run_dir / RESULTS_FILE, 2, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = _lines(run_dir / RESULTS_FILE)
    assert 2 <= len(lines) < 9
    ids = [json.loads(line)["sample_id"] for line in lines]  # every line is complete JSON
    assert len(set(ids)) == len(ids)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    match = re.search(r"Continue with: (recall-eval run --resume \S+)", err)
    assert match, err

    server.script.delay_s = 0.0
    resume = shlex.split(match.group(1))
    done = subprocess.run([str(RECALL_EVAL), *resume[1:], "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "report:" in done.stdout
    for text in (err, done.stderr):  # litellm must not try to fetch its remote cost map, nor warn about offline prices
        assert "cost map" not in text and "WARNING" not in text
    final = [json.loads(line)["sample_id"] for line in _lines(run_dir / RESULTS_FILE)]
    assert len(final) == len(set(final)) == 9 and set(ids) <= set(final)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert (run_dir / "index.html").is_file()
    assert not (tmp_path / ".recall-eval-cache").exists()  # the resumed run kept the run's --cache-dir
