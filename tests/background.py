"""Child processes whose output a test only reads, started early at low priority so they fill the idle cores.

The README's test command runs two xdist workers on two cores, and for about a fifth of the run one of them is
waiting (a one-slot model server, a heartbeat, a server's start: docs/test-suite-speed.md), leaving its core idle.
A few tests spend nearly all their CPU in one child process whose result they only read: mypy over the packages,
the piped 80-column walk of every command, the scenario counts in a fresh interpreter, the runs against a real
basic-memory server. Each is a *job*: the test is marked ``@pytest.mark.background(NAME)`` and its module
registers how to start it (:func:`job`). Once collected, the first worker (``gw0``, or the only process) starts
the job of every selected test at once, under ``nice -n 19``, in its own folder and process group; the test
then reads the finished job (:func:`result`), waiting for it when it is still running, and asserts on its
output as before. A job that was not started (its test run on its own, say) runs in the test, in the
foreground. The controller kills any job still running at the end of the session and removes the folders.

A niced job takes a core only when no test wants it, and a worker waiting for its job leaves a core to it, so
no test waits on a starved job for long. Nothing a test asserts changes: the same command, in a folder of its
own, read whole after it ended.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: The session's job folders (set by the controller, inherited by the xdist workers).
FOLDER_ENV = "RECALL_EVAL_TEST_JOBS"
#: Set in a job's environment: a test session inside a job (the scenario counts' pytest) starts no jobs of its own.
JOB_ENV = "RECALL_EVAL_TEST_JOB"
MARKER = "background"


@dataclass(frozen=True)
class Job:
    """A command line to start: where, with what environment (None: the test session's), within what time."""

    argv: list[str]
    cwd: Path
    env: dict[str, str] | None = None
    timeout_s: float = 900.0


@dataclass(frozen=True)
class Done:
    """A finished job: its exit code and output, and the folder its function was given (``work``)."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    work: Path = field(compare=False)


#: name -> a function of the job's work folder giving the job (None: nothing to run here, e.g. a server not installed).
_MADE: dict[str, Callable[[Path], Job | None]] = {}


def job(name: str) -> Callable[[Callable[[Path], Job | None]], Callable[[Path], Job | None]]:
    """Register how to start the job ``name`` (decorator on a function of its work folder)."""

    def register(make: Callable[[Path], Job | None]) -> Callable[[Path], Job | None]:
        if _MADE.get(name, make) is not make:
            raise ValueError(f"two background jobs are named {name!r}")
        _MADE[name] = make
        return make

    return register


def _folder(name: str) -> Path | None:
    root = os.environ.get(FOLDER_ENV)
    return Path(root) / name if root else None


def _start(name: str, folder: Path) -> None:
    """Start ``name`` in ``folder`` (work/, out, err, pid; rc written last, atomically), detached and niced."""
    (folder / "work").mkdir(parents=True)
    made = _MADE[name](folder / "work")
    if made is None:
        (folder / "none").touch()
        return
    (folder / "argv").write_text(shlex.join(made.argv), encoding="utf-8")
    (folder / "deadline").write_text(str(time.time() + made.timeout_s), encoding="utf-8")
    # sh writes the exit code once the command has ended (rc.tmp, then renamed: a reader sees it whole or not at all)
    script = '"$@" >"$0/out" 2>"$0/err"; echo $? >"$0/rc.tmp"; mv "$0/rc.tmp" "$0/rc"'
    proc = subprocess.Popen(["nice", "-n", "19", "sh", "-c", script, str(folder), *made.argv], cwd=made.cwd,
                            env=_environment(made, name), stdin=subprocess.DEVNULL, start_new_session=True)
    (folder / "pid").write_text(str(proc.pid), encoding="utf-8")  # last: a reader that sees it finds the rest


def _environment(made: Job, name: str) -> dict[str, str]:
    """The job's environment, marked as a job's (:data:`JOB_ENV`), without the session's job folder."""
    env = {key: value for key, value in (os.environ if made.env is None else made.env).items() if key != FOLDER_ENV}
    return {**env, JOB_ENV: name}


def start_selected(items: list[pytest.Item]) -> None:
    """In the first worker (or the only process): start the job of every selected test marked ``background``."""
    root = os.environ.get(FOLDER_ENV)
    if not root or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    names = {m.args[0] for item in items for m in item.iter_markers(MARKER)}
    for name in sorted(names):
        if name in _MADE and not (Path(root) / name).exists():
            _start(name, Path(root) / name)


def result(name: str, work: Path) -> Done | None:
    """The job ``name`` finished: started early by :func:`start_selected` and waited for here, or else run now in
    ``work`` (the test's own folder). None when there is nothing to run (its function returned None)."""
    folder = _folder(name)
    if folder is not None and (folder / "pid").is_file():
        return _wait(folder)
    if folder is not None and (folder / "none").is_file():
        return None
    made = _MADE[name](work)
    if made is None:
        return None
    done = subprocess.run(made.argv, cwd=made.cwd, env=_environment(made, name), capture_output=True, text=True,
                          timeout=made.timeout_s, check=False, stdin=subprocess.DEVNULL)
    return Done(made.argv, done.returncode, done.stdout, done.stderr, work)


def _wait(folder: Path) -> Done:
    deadline = float((folder / "deadline").read_text(encoding="utf-8"))
    pause = 0.02
    while not (folder / "rc").is_file():
        if time.time() > deadline:
            _kill(folder)
            raise TimeoutError(f"background job {folder.name} ({(folder / 'argv').read_text(encoding='utf-8')}) "
                               f"did not end within its time; its output so far is in {folder}")
        time.sleep(pause)
        pause = min(0.25, pause * 2)
    read = lambda name: (folder / name).read_text(encoding="utf-8", errors="replace")  # noqa: E731
    return Done(shlex.split(read("argv")), int(read("rc")), read("out"), read("err"), folder / "work")


def _kill(folder: Path) -> None:
    """Kill a job still running (its whole process group: the command and what it started)."""
    if (folder / "rc").is_file() or not (folder / "pid").is_file():
        return
    try:
        os.killpg(int((folder / "pid").read_text(encoding="utf-8")), signal.SIGKILL)
    except (ProcessLookupError, PermissionError, ValueError):
        pass


def open_session() -> None:
    """In the controller (or the only process): a fresh folder for the session's jobs, named in the environment;
    none inside a job (its tests run in the foreground)."""
    if os.environ.get(JOB_ENV):
        return
    os.environ[FOLDER_ENV] = tempfile.mkdtemp(prefix="recall-eval-test-jobs-")


def close_session() -> None:
    """In the controller, after every worker ended: kill what still runs, remove the folders."""
    root = os.environ.pop(FOLDER_ENV, None)
    if not root:
        return
    for folder in Path(root).iterdir():
        _kill(folder)
    shutil.rmtree(root, ignore_errors=True)
