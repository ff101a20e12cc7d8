"""``--router-config`` and ``--rpm`` with two fake OpenAI-compatible servers (own processes) behind one Router model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.records import RESULTS_FILE, read_manifest, scan_results
from tests.fault.conftest import RECALL_EVAL, cli_env
from tests.integration.conftest import SMOKE
from tests.integration.servers import CONFIG_SECRET, GROUP, server_processes, write_router_config


def _run(tmp_path: Path, config: Path, *flags: str, out: str = "run") -> subprocess.CompletedProcess[str]:
    argv = [str(RECALL_EVAL), "run", "--router-config", str(config), "--model", GROUP, "--scenarios", str(SMOKE),
            "--out", str(tmp_path / out), "--no-cache", "--no-progress", "--retry-delay", "0.05", *flags]
    return subprocess.run(argv, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300)


def test_router_calls_are_spread_over_both_servers_and_each_call_records_its_deployment(tmp_path: Path) -> None:
    with server_processes(tmp_path) as servers:
        config = write_router_config(tmp_path / "router.yaml", servers, num_retries=1)
        result = _run(tmp_path, config, "--epochs", "2")
        arrivals = [server.arrivals() for server in servers]
    assert result.returncode in (0, 1), result.stderr
    records = scan_results(tmp_path / "run" / RESULTS_FILE).records
    assert len(records) == 5 * 3 * 2 and all(r.status == "ok" for r in records)
    calls = [call for record in records for call in record.model_calls]
    by_deployment: dict[str | None, int] = {}
    for call in calls:
        by_deployment[call.deployment] = by_deployment.get(call.deployment, 0) + 1
    second = f"openai/fake @ {servers[1].base_url}"
    assert set(by_deployment) == {"fake-a", second}  # both answered; a given id, and a derived one without the key
    assert by_deployment["fake-a"] == len(arrivals[0]) and by_deployment[second] == len(arrivals[1])  # as the servers counted
    manifest = read_manifest(tmp_path / "run")
    assert len(manifest.parameters["router_config_hash"]) == 64
    written = [p for p in (tmp_path / "run").rglob("*") if p.is_file() and CONFIG_SECRET.encode() in p.read_bytes()]
    assert written == [] and CONFIG_SECRET not in result.stderr + result.stdout


@pytest.mark.slow
def test_an_rpm_limit_over_a_router_group_is_honoured_within_ten_percent_on_the_servers_side(tmp_path: Path) -> None:
    rpm = 600  # 10 requests per second over both servers: well below what the client can send, so the limiter sets the pace
    with server_processes(tmp_path) as servers:
        config = write_router_config(tmp_path / "router.yaml", servers)
        result = _run(tmp_path, config, "--rpm", str(rpm), "--arms", "history_only", "--epochs", "30", "--max-concurrency", "8")
        times = sorted(a["at"] for server in servers for a in server.arrivals())
    assert result.returncode in (0, 1), result.stderr
    assert len(times) == 5 * 30
    rate, burst = rpm / 60, rpm // 60  # the bucket may let one second's worth go at once (documented)
    # The first 2 s are left out: litellm's first calls are slow (lazy imports, connections), and a first request that
    # arrives late would shorten the window. After them the window is ~12 s, so a request delayed by the scheduler
    # by up to ~1 s cannot push the rate past 10%.
    steady = [t for t in times if t >= times[0] + 2.0]
    window = steady[-1] - steady[0]
    measured = (len(steady) - 1 - burst) / window
    assert measured <= rate * 1.10, f"{measured:.2f} requests/s against a limit of {rate:.2f}"
    # Not far below the limit: the exact rate is shown on a fake clock (tests/run/test_ratelimit.py); here a
    # loaded machine may lag, but a limiter that halved the rate would not pass.
    assert (len(steady) - 1) / window >= rate * 0.5, f"{(len(steady) - 1) / window:.2f} requests/s, far below {rate:.2f}"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["parameters"]["rpm"] == {GROUP: rpm}
