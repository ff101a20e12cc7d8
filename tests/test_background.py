"""The background jobs of tests/background.py: started once, niced, in their own group; read whole; never left running."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import background

_SCRIPT = ("import os, sys, time; print(os.getpgrp(), os.nice(0)); print('to err', file=sys.stderr); "
           "open(sys.argv[2] + '.pid', 'w').write(str(os.getpid())); time.sleep(float(sys.argv[1])); "
           "open(sys.argv[2], 'a').write('ran\\n'); sys.exit(int(sys.argv[3]))")


def _register(name: str, sleep_s: float, code: int = 0, timeout_s: float = 60.0) -> None:
    background._MADE.pop(name, None)  # registered by an earlier run in this process (mutation testing forks)

    @background.job(name)
    def _make(work: Path) -> background.Job:
        return background.Job([sys.executable, "-c", _SCRIPT, str(sleep_s), str(work / "runs.log"), str(code)], work,
                              timeout_s=timeout_s)


def _item(*names: str) -> SimpleNamespace:
    return SimpleNamespace(iter_markers=lambda marker: [SimpleNamespace(args=(n,)) for n in names] if marker == "background" else [])


@pytest.fixture()
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A job session of this test's own (its folder in the environment, as the controller leaves it for workers)."""
    monkeypatch.delenv(background.FOLDER_ENV, raising=False)
    monkeypatch.delenv(background.JOB_ENV, raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setattr(background.tempfile, "tempdir", str(tmp_path))
    background.open_session()
    yield Path(os.environ[background.FOLDER_ENV])
    background.close_session()


def test_a_selected_job_starts_once_niced_in_its_own_group_and_is_read_whole(session: Path, tmp_path: Path) -> None:
    _register("t-started", 0.3, code=3)
    background.start_selected([_item("t-started"), _item("t-started")])  # two tests read one job: started once
    background.start_selected([_item("t-started")])  # a second call (a re-collection) starts nothing more
    done = background.result("t-started", tmp_path / "unused")
    assert done is not None and done.returncode == 3
    group = int((session / "t-started" / "pid").read_text())  # the job's shell, its group's leader
    assert done.stdout == f"{group} 19\n" and done.stderr == "to err\n" and group != os.getpgrp()  # at nice 19
    assert (done.work / "runs.log").read_text() == "ran\n" and done.work.parent.parent == session
    assert not (tmp_path / "unused").exists()


def test_only_the_first_worker_starts_jobs_and_a_job_not_started_runs_in_the_test(
        session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _register("t-foreground", 0.0)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    background.start_selected([_item("t-foreground")])
    assert not (session / "t-foreground").exists()
    work = tmp_path / "work"
    work.mkdir()
    done = background.result("t-foreground", work)
    assert done is not None and done.returncode == 0 and done.work == work and (work / "runs.log").read_text() == "ran\n"
    assert done.stdout.split()[1] == str(os.nice(0))  # in the foreground: the test's own priority


def test_a_job_with_nothing_to_run_is_none_where_it_would_start_and_in_the_test(session: Path, tmp_path: Path) -> None:
    background._MADE.pop("t-none", None)
    background.job("t-none")(lambda work: None)
    background.start_selected([_item("t-none")])
    assert background.result("t-none", tmp_path) is None


def test_a_job_past_its_time_is_killed_with_its_group_and_the_test_is_told(session: Path, tmp_path: Path) -> None:
    _register("t-slow", 30.0, timeout_s=0.5)
    background.start_selected([_item("t-slow")])
    pids = _pids(session / "t-slow")
    with pytest.raises(TimeoutError, match="t-slow.*did not end within its time"):
        background.result("t-slow", tmp_path)
    _gone(pids)


def test_the_session_end_kills_a_job_still_running_and_removes_the_folders(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.delenv(background.FOLDER_ENV, raising=False)  # the suite's own session, given back at teardown
    monkeypatch.delenv(background.JOB_ENV, raising=False)
    monkeypatch.setattr(background.tempfile, "tempdir", str(tmp_path))
    background.open_session()
    root = Path(os.environ[background.FOLDER_ENV])
    _register("t-left", 30.0)
    background.start_selected([_item("t-left")])
    pids = _pids(root / "t-left")
    background.close_session()
    _gone(pids)
    assert not root.exists() and background.FOLDER_ENV not in os.environ


def test_a_session_inside_a_job_opens_no_job_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job that runs pytest (the scenario counts) must not start the job it is part of again."""
    monkeypatch.delenv(background.FOLDER_ENV, raising=False)
    monkeypatch.setenv(background.JOB_ENV, "scenario-counts")
    background.open_session()
    assert background.FOLDER_ENV not in os.environ


def test_two_jobs_cannot_share_a_name() -> None:
    background._MADE.pop("t-twice", None)
    background.job("t-twice")(lambda work: None)
    with pytest.raises(ValueError, match="t-twice"):
        background.job("t-twice")(lambda work: None)


def _pids(folder: Path) -> list[int]:
    """The job's shell (its group's leader) and its command, once the command has said its pid."""
    for _ in range(200):
        said = folder / "work" / "runs.log.pid"
        if said.is_file() and said.read_text():
            return [int((folder / "pid").read_text()), int(said.read_text())]
        time.sleep(0.05)
    raise AssertionError(f"the job in {folder} never started")


def _gone(pids: list[int]) -> None:
    """Each process ends within a few seconds (a zombie counts as ended: the shell is this process's child and is
    reaped here; the command is reparented when the shell dies first)."""
    for _ in range(100):
        for pid in pids:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        alive = [pid for pid in pids if _running(pid)]
        if not alive:
            return
        time.sleep(0.05)
    raise AssertionError(f"processes {alive} still running")


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
