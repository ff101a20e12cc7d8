"""Shared pieces of the fault tests: the fake OpenAI server, real ``recall-eval`` processes, small filesystems."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import DUMMY_KEY, SMOKE, _dummy_key, run_cli, server  # noqa: F401 - fixtures re-exported

REPO = Path(__file__).resolve().parents[2]
RECALL_EVAL = Path(sys.executable).with_name("recall-eval")


#: The longest a fault test may run before it fails as hung (pytest-timeout's signal method: the test fails, the suite
#: goes on). Generous: under a loaded machine real runs take minutes; a hang takes forever.
FAULT_TEST_TIMEOUT_S = 900


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test of this folder without its own ``timeout`` marker gets :data:`FAULT_TEST_TIMEOUT_S`."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(FAULT_TEST_TIMEOUT_S, method="signal"))


def _dump_asyncio_tasks_too() -> None:
    """On a timeout, pytest-timeout prints every other thread's stack; an in-process run hangs with its event loop
    idle in the main thread, so also print each pending task's stack (what it is waiting on) of the loop running there."""
    try:
        import pytest_timeout
    except ImportError:  # the test extra is not installed: no bound, as before
        return
    plain = pytest_timeout.dump_stacks

    def dump_stacks(terminal: Any) -> None:
        import asyncio

        plain(terminal)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for task in asyncio.all_tasks(loop):
            terminal.write(f"asyncio task {task.get_name()}: {task!r}\n")
            task.print_stack(file=sys.stderr)

    pytest_timeout.dump_stacks = dump_stacks


_dump_asyncio_tasks_too()


def cli_env() -> dict[str, str]:
    """The environment of a ``recall-eval`` child process (the dummy key; litellm's cost map left to the harness)."""
    return {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"} | {"OPENAI_API_KEY": DUMMY_KEY}


def fake_run_argv(base_url: str, *flags: str, out: Path | None = None, resume: Path | None = None, cache: Path | None = None) -> list[str]:
    """``recall-eval run`` against the fake server on the smoke suite's first three scenarios (9 samples)."""
    argv = [str(RECALL_EVAL), "run", "--no-progress"]
    if resume is not None:
        argv += ["--resume", str(resume), "--api-base", base_url]
    else:
        argv += ["--model", "openai/fake", "--api-base", base_url, "--scenarios", str(SMOKE), "--filter", "smoke-0[123]*", "--out", str(out)]
    if cache is not None:
        argv += ["--cache-dir", str(cache)]
    return argv + list(flags)


def start(argv: list[str], cwd: Path, *, new_session: bool = False) -> subprocess.Popen[str]:
    """Start a real process; SIGINT is given back its default (a background pytest passes it on ignored)."""
    return subprocess.Popen(
        argv, cwd=cwd, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), start_new_session=new_session,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    """Wait for ``proc``; returns (code, stdout, stderr); kills it if it hangs."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise
    return proc.returncode, out, err


def wait_until(condition: Callable[[], bool], proc: subprocess.Popen[str] | None = None, limit_s: float = 60.0) -> None:
    """Poll ``condition`` until true; fails if ``proc`` ends first or the limit passes (a hang, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"process ended early with {proc.returncode}: {err}")
        if time.monotonic() > deadline:
            pytest.fail("condition not reached in time")
        time.sleep(0.05)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def lock_holder(run_dir: Path) -> int | None:
    """The pid written in a run folder's lock file, if any."""
    try:
        return int(json.loads((run_dir / ".lock").read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def tmpfs(where: Path, size: str, *, read_only: bool = False) -> Iterator[Path]:
    """A small tmpfs mounted at ``where`` for the test's duration; skips the test where mounting is not allowed."""
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True, capture_output=True)


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    """Two small scenarios (6 samples over the default arms) for in-process runs on the scripted model."""
    from tests.memory_systems.prompt_factories import write_small_suite

    return write_small_suite(tmp_path / "suite")


@pytest.fixture()
def fake_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep in-process runs about running: the report step is a stub that always passes."""
    import types

    monkeypatch.setattr(
        "harness.report.build_report",
        lambda run_dir, judge_model=None, exclude=(), **_: types.SimpleNamespace(
            verdict="pass", reasons=[], index_html=Path(run_dir) / "index.html"
        ),
    )


def harness_cli(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m harness.cli ARGV`` as a real process from the checkout, its output captured."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "harness.cli", *map(str, argv)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def cli_in_process(*argv: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``recall-eval ARGV`` through ``main`` in the test's process, in ``cwd`` with ``env`` added; what :func:`harness_cli`
    returns (code, stdout, stderr), lines whole (``COLUMNS=1000``).

    For tests whose fault is a file, a flag or a server's reply rather than the process: a fresh interpreter costs ~0.9
    CPU-s before the command does anything (~4.5 more where it imports litellm). An exception fails the test, where a
    real process would have printed a traceback and exited 1."""
    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.chdir(cwd)
        for key, value in {"COLUMNS": "1000", **(env or {})}.items():
            patch.setenv(key, value)
        try:
            code = main([str(arg) for arg in argv])
        except SystemExit as exc:  # argparse's own exits
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess([str(arg) for arg in argv], code, out.getvalue(), err.getvalue())


def offline_smoke_run(base: Path, *flags: str | Path) -> Path:
    """A finished offline run of the smoke suite in history_only and recall (``flags`` narrow it), under ``base``."""
    done = harness_cli("run", "--scenarios", SMOKE, "--arms", "history_only", "recall", *flags, "--out", base / "run",
                       "--cache-dir", base / "cache", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "run"
