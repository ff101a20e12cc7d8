"""Shards of a CI matrix through one litellm proxy: its rpm limit holds across every client, and the merge is whole.

``--rpm`` holds over the workers of one machine; a CI matrix's shard jobs each
bring their own. A litellm proxy in front of the provider is the engine that
already limits all of them together: every shard sends ``--model openai/GROUP
--api-base PROXY``, and the proxy's per-deployment ``rpm`` (with
``routing_strategy: usage-based-routing-v2``, counted in the proxy's memory per
UTC calendar minute: no database, no Redis) turns away what would pass it.

The test starts a real proxy process on 127.0.0.1 in front of two fake
OpenAI-compatible servers (their own processes, each logging the arrival time
of every request) and runs three ``recall-eval run`` processes through it at
once: shard 1/2, shard 2/2 and the unsharded run. Each of them alone fits in one
minute's limit; together they do not, so the proxy must turn some away, and the
servers must never see more than the limit in any minute. It skips when the
proxy's dependencies (the ``proxy`` extra) are absent. Nothing asserts on wall
time: requests are counted per minute window at the servers.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.records import RESULTS_FILE, scan_results
from tests.fault.conftest import RECALL_EVAL
from tests.integration.conftest import SMOKE
from tests.integration.servers import ServerProcess, server_processes, wait_for
from tests.runs.run_equality import comparable_summary, scores_by_id, without_clock

LITELLM = Path(sys.executable).with_name("litellm")
GROUP = "shared"
#: Per deployment and UTC minute. Two deployments serve at most 2 * RPM a minute (litellm serves RPM - 1 each);
#: the smoke suite is 19 calls: each run alone fits, the three at once (38 calls) do not, and fit in two minutes.
RPM = 12
SUITE_CALLS = 19
#: The modules the proxy imports beyond litellm's own dependencies (the ``proxy`` extra of pyproject.toml).
PROXY_MODULES = ("fastapi", "uvicorn", "uvloop", "orjson", "apscheduler", "backoff", "jwt", "multipart", "cryptography",
                 "email_validator", "websockets", "semver", "expression", "fastapi_sso", "mcp", "soundfile", "rq", "yaml")
_MISSING = [name for name in PROXY_MODULES if importlib.util.find_spec(name) is None]

pytestmark = pytest.mark.skipif(
    bool(_MISSING) or not LITELLM.is_file(),
    reason=f"the litellm proxy's dependencies are not installed (pip install -e '.[proxy]'): missing {', '.join(_MISSING) or 'the litellm command'}",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _live(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def write_proxy_config(path: Path, servers: list[ServerProcess], rpm: int) -> Path:
    """The proxy's config.yaml (JSON is YAML): one model group over ``servers``, each deployment limited to ``rpm``."""
    deployments = [
        {"model_name": GROUP, "litellm_params": {"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-upstream-fake", "rpm": rpm},
         "model_info": {"id": f"fake-{index}"}}
        for index, server in enumerate(servers, start=1)
    ]
    config = {"model_list": deployments, "router_settings": {"routing_strategy": "usage-based-routing-v2"}}
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


@contextlib.contextmanager
def proxy_process(folder: Path, config: Path, master_key: str) -> Iterator[str]:
    """``litellm --config CONFIG`` on 127.0.0.1 (offline: the local cost map, no telemetry); yields its base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DATABASE_URL", "REDIS_"))}
    env |= {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": master_key, "LITELLM_TELEMETRY": "False"}
    log = open(folder / "proxy.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below, after the process
    process = subprocess.Popen([str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port), "--telemetry", "False"],
                               cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        up = wait_for(lambda: process.poll() is not None or _live(f"{base}/health/liveliness"), timeout_s=180)
        if not up or process.poll() is not None:
            tail = (folder / "proxy.log").read_text(encoding="utf-8", errors="replace")[-3000:]
            pytest.fail(f"the litellm proxy did not start (exit {process.poll()}):\n{tail}")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _run_argv(base: str, out: Path, *flags: str) -> list[str]:
    # Every client the same flags (a merge requires it); retries enough to outwait a minute window the proxy has spent.
    return [str(RECALL_EVAL), "run", "--model", f"openai/{GROUP}", "--api-base", base, "--scenarios", str(SMOKE),
            "--out", str(out), "--no-cache", "--no-progress", "--seed", "7", "--retries", "12", "--retry-delay", "0.5", *flags]





@pytest.fixture(scope="module")
def through_proxy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two shards and the unsharded run, at once, through one proxy limited to RPM per deployment per minute."""
    root = tmp_path_factory.mktemp("proxy")
    master_key = "sk-" + secrets.token_hex(32)
    with server_processes(root) as servers:
        config = write_proxy_config(root / "config.yaml", servers, RPM)
        with proxy_process(root, config, master_key) as base:
            env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"} | {"OPENAI_API_KEY": master_key}
            runs = {"s1": ("--shard", "1/2"), "s2": ("--shard", "2/2"), "whole": ()}
            procs = {name: subprocess.Popen(_run_argv(base, root / name, *flags), cwd=root, env=env, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True) for name, flags in runs.items()}
            done = {name: (proc.communicate(timeout=600), proc.returncode) for name, proc in procs.items()}
        arrivals = [server.arrivals() for server in servers]
    for name, ((_out, err), code) in done.items():
        assert code in (0, 1), f"{name}: exit {code}\n{err}"
    records = {name: scan_results(root / name / RESULTS_FILE).records for name in runs}
    access = (root / "proxy.log").read_text(encoding="utf-8", errors="replace")  # uvicorn's access log: one line a request
    answered = {status: access.count(f'"POST /chat/completions HTTP/1.1" {status}') for status in (200, 429)}
    return {"root": root, "arrivals": arrivals, "records": records, "master_key": master_key, "answered": answered}


def test_the_proxys_rpm_limit_holds_over_both_shards_and_every_other_client(through_proxy: dict[str, Any]) -> None:
    records, arrivals = through_proxy["records"], through_proxy["arrivals"]
    calls = {name: [call for record in rows for call in record.model_calls] for name, rows in records.items()}
    assert all(record.status == "ok" for rows in records.values() for record in rows)
    assert len(calls["whole"]) == SUITE_CALLS and len(calls["s1"]) + len(calls["s2"]) == SUITE_CALLS
    # Each client alone fits in one minute of the proxy's limit (2 deployments x RPM), so any refusal came from
    # counting the clients together; and together they need more than one minute, so the limit had to refuse.
    assert max(len(c) for c in calls.values()) <= 2 * (RPM - 1) < sum(len(c) for c in calls.values())
    refused = sum(call.attempts - 1 for c in calls.values() for call in c)
    assert refused > 0, "the proxy turned nothing away: its limit was never reached"
    assert any(call.attempts > 1 for call in calls["s1"] + calls["s2"])
    answered = through_proxy["answered"]  # as the proxy logged it: 429 for each refusal, 200 for each call it passed on
    assert answered[429] > 0 and answered[200] == sum(len(c) for c in calls.values()), answered
    # On the servers' side: every answered call arrived once (a refusal never reached a server), and no deployment
    # got more than its rpm in any UTC minute, the proxy's window (RPM, one above what litellm serves: a request
    # counted in one minute by the proxy may arrive in the next).
    assert sum(len(a) for a in arrivals) == sum(len(c) for c in calls.values())
    for index, server in enumerate(arrivals, start=1):
        per_minute = Counter(int(a["at"] // 60) for a in server)
        assert max(per_minute.values()) <= RPM, f"fake-{index} got {dict(per_minute)} requests per minute, limit {RPM}"
        assert all(a["status"] == 200 for a in server)
    both = Counter(int(a["at"] // 60) for server in arrivals for a in server)
    assert len(both) >= 2 and max(both.values()) <= 2 * RPM, dict(both)


def test_the_merge_of_the_shards_through_the_proxy_equals_the_unsharded_run_through_it(through_proxy: dict[str, Any]) -> None:
    from harness.cli import main
    from harness.report import build_report

    root: Path = through_proxy["root"]
    for name in ("whole", "s1", "s2"):
        without_clock(root / name, attempts=True)
    merged = root / "merged"
    assert main(["merge", str(merged), str(root / "s2"), str(root / "s1")]) in (0, 1)
    build_report(root / "whole")  # rebuilt from the clock-free records, as the merge built its own
    whole_scores, merged_scores = scores_by_id(root / "whole"), scores_by_id(merged)
    assert len(whole_scores) == 5 * 3
    assert merged_scores == whole_scores
    assert comparable_summary(merged) == comparable_summary(root / "whole")
    key = through_proxy["master_key"]
    leaked = [p for p in root.rglob("*") if p.is_file() and p.name != "proxy.log" and key.encode() in p.read_bytes()]
    assert leaked == []
    shutil.rmtree(merged)
