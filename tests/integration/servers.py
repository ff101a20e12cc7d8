"""Fake OpenAI-compatible servers in their own processes, behind one litellm Router model group.

Each server is ``python -m tests.integration.fake_openai_server MODE DELAY LOG``
on 127.0.0.1; it logs one JSON line per request (arrival time, status) to LOG,
so a test measures rates on the servers' side and can kill one mid-run.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG_SECRET = "sk-router-config-literal-0123456789abcdef"
GROUP = "agent"


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    base_url: str
    log: Path

    def arrivals(self) -> list[dict[str, float]]:
        """Every request the server logged, oldest first."""
        if not self.log.is_file():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@contextlib.contextmanager
def server_processes(folder: Path, count: int = 2, *, delay_s: float = 0.0) -> Iterator[list[ServerProcess]]:
    """Start ``count`` fake servers, each in its own process; all are killed on exit."""
    servers: list[ServerProcess] = []
    try:
        for index in range(count):
            log = folder / f"server{index}.jsonl"
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.integration.fake_openai_server", "recall", str(delay_s), str(log)],
                cwd=REPO, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
            )
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:"), base_url
            servers.append(ServerProcess(process, base_url, log))
        yield servers
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.kill()


def write_router_config(path: Path, servers: list[ServerProcess], **settings: object) -> Path:
    """A Router config with one model group over ``servers``; the first deployment is named, the rest get derived ids."""
    deployments = []
    for index, server in enumerate(servers):
        entry: dict[str, object] = {
            "model_name": GROUP,
            "litellm_params": {"model": "openai/fake", "api_base": server.base_url, "api_key": CONFIG_SECRET},
        }
        if index == 0:
            entry["model_info"] = {"id": "fake-a"}
        deployments.append(entry)
    path.write_text(json.dumps({"model_list": deployments, "router_settings": settings}, indent=2), encoding="utf-8")
    return path


def wait_for(condition: object, timeout_s: float = 60.0) -> bool:
    """Poll ``condition()`` every 20 ms until it holds or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False
