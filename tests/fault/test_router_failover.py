"""A Router deployment that dies mid-run: its calls move to the other deployment and no sample is lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.records import RESULTS_FILE, read_manifest, scan_results
from tests.fault.conftest import RECALL_EVAL, cli_env
from tests.integration.conftest import SMOKE
from tests.integration.servers import GROUP, server_processes, wait_for, write_router_config


def test_one_router_server_killed_mid_run_loses_no_sample(tmp_path: Path) -> None:
    """One of two servers behind a Router model is killed (SIGKILL) mid-run: the run completes, every sample ok, the rest answered by the survivor."""
    with server_processes(tmp_path, delay_s=0.05) as servers:
        config = write_router_config(tmp_path / "router.yaml", servers, num_retries=2, allowed_fails=1, cooldown_time=120)
        argv = [str(RECALL_EVAL), "run", "--router-config", str(config), "--model", GROUP, "--scenarios", str(SMOKE),
                "--epochs", "6", "--out", str(tmp_path / "run"), "--no-cache", "--no-progress", "--retry-delay", "0.05",
                "--max-concurrency", "4"]
        run = subprocess.Popen(argv, cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        doomed, survivor = servers
        try:
            assert wait_for(lambda: len(doomed.arrivals()) >= 5, timeout_s=120), "the first server got no traffic"
            doomed.kill()
            killed_after = len(doomed.arrivals())
            out, err = run.communicate(timeout=300)
        finally:
            if run.poll() is None:
                run.kill()
        served_after = len(survivor.arrivals())
    assert run.returncode in (0, 1), err
    records = scan_results(tmp_path / "run" / RESULTS_FILE).records
    assert len(records) == 5 * 3 * 6 and [r.sample_id for r in records if r.status != "ok"] == []
    assert read_manifest(tmp_path / "run").status == "complete"
    answered = [call.deployment for r in records for call in r.model_calls]
    assert answered.count("fake-a") <= killed_after  # nothing claims an answer from the dead server after its death
    assert answered.count(f"openai/fake @ {survivor.base_url}") == served_after - sum(
        1 for a in survivor.arrivals() if a["status"] != 200)
    assert len(answered) - answered.count("fake-a") > killed_after  # most calls came after the kill, all from the survivor
