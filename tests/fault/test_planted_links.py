"""Symlinks planted in a run folder, and two writers of one folder: nothing is written outside it, nobody fails.

Every file the harness replaces goes through :func:`harness.atomic.write_atomic`
(a unique temp name, created exclusively without following links, renamed
inside the folder). The folders come from a real offline run; the faults are
planted by hand the way an attacker with write access to a shared results
folder would; the commands go through ``main`` in the test's process (the fault is the folder), except the two
concurrent ``report`` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.atomic import write_atomic
from harness.records import MANIFEST_FILE, read_manifest, write_manifest
from tests.fault.conftest import cli_in_process, offline_smoke_run

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"
#: The fixed temp names the writers used to open (``<name>.tmp`` beside each output, ``run.json.tmp``).
OLD_TEMP_NAMES = ("summary.json.tmp", "index.html.tmp", "metrics.csv.tmp", "scores.jsonl.tmp", "junit.xml.tmp",
                  "run.json.tmp")



@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished offline run: 2 smoke scenarios x history_only, recall = 4 samples."""
    base = tmp_path_factory.mktemp("fault-links")
    return offline_smoke_run(base, "--filter", "smoke-0[12]*")


@pytest.fixture()
def run_dir(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(pristine, copy)
    return copy


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "outside" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("do not overwrite\n", encoding="utf-8")
    return victim


def _no_temp_left(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()]


def test_report_never_writes_through_a_link_planted_under_a_temp_name(run_dir: Path, tmp_path: Path) -> None:
    """A symlink to a file outside the folder planted under every old temp name: `report` succeeds and the outside file is untouched."""
    victim = _victim(tmp_path)
    for name in OLD_TEMP_NAMES:
        (run_dir / name).symlink_to(victim)
    done = cli_in_process("report", run_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"
    assert json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["verdict"]["status"]
    _no_temp_left(run_dir)


def test_report_replaces_a_link_planted_as_an_output_instead_of_writing_through_it(run_dir: Path, tmp_path: Path) -> None:
    """`summary.json` and `index.html` replaced by links to an outside file: the rename replaces the links, the file stays as it was."""
    victim = _victim(tmp_path)
    for name in ("summary.json", "index.html"):
        (run_dir / name).unlink()
        (run_dir / name).symlink_to(victim)
    done = cli_in_process("report", run_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"
    assert not (run_dir / "summary.json").is_symlink() and not (run_dir / "index.html").is_symlink()


def test_resume_never_writes_run_json_through_a_planted_link(run_dir: Path, tmp_path: Path) -> None:
    """`run --resume` with a link planted under `run.json.tmp`: run.json is rewritten in the folder, the outside file is untouched."""
    victim = _victim(tmp_path)
    (run_dir / "run.json.tmp").symlink_to(victim)
    done = cli_in_process("run", "--resume", run_dir, "--no-progress", "--cache-dir", tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"
    assert read_manifest(run_dir).status == "complete"


def test_a_link_planted_as_the_lock_file_is_refused_not_truncated(run_dir: Path, tmp_path: Path) -> None:
    """`.lock` replaced by a link to an outside file: `run --resume` exits 2 with one line, and the outside file keeps its bytes."""
    victim = _victim(tmp_path)
    (run_dir / ".lock").unlink()
    (run_dir / ".lock").symlink_to(victim)
    done = cli_in_process("run", "--resume", run_dir, "--no-progress", "--cache-dir", tmp_path / "cache")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cannot write the run folder" in done.stderr
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"


def test_a_link_planted_as_results_jsonl_is_refused_not_appended_to(run_dir: Path, tmp_path: Path) -> None:
    """`results.jsonl` replaced by a link to an outside file: the resume stops with a message, the outside file keeps its bytes."""
    victim = _victim(tmp_path)
    (run_dir / "results.jsonl").unlink()
    (run_dir / "results.jsonl").symlink_to(victim)
    done = cli_in_process("run", "--resume", run_dir, "--no-progress", "--cache-dir", tmp_path / "cache")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"


def test_two_reports_on_one_folder_both_succeed(run_dir: Path) -> None:
    """Two `report` processes on one folder at once: both exit 0 (no "make the folder writable"), and the outputs are whole."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [sys.executable, "-m", "harness.cli", "report", str(run_dir)]
    procs = [subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    for code, out, err in results:
        assert code == 0, out + err
        assert "writable" not in err
    json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    _no_temp_left(run_dir)


def test_two_writers_of_one_file_meeting_at_the_rename_both_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers of `summary.json` that have both written their temp file before either renames (the race of two reports): both succeed."""
    from harness.report import outputs

    barrier = threading.Barrier(2, timeout=10)
    real_replace = os.replace

    def meet_then_replace(src: object, dst: object, *args: object, **kwargs: object) -> None:
        barrier.wait()  # both temp files are written: the interleaving two processes hit by chance
        real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", meet_then_replace)
    errors: list[BaseException] = []

    def write(text: str) -> None:
        try:
            outputs.write_output(tmp_path / "summary.json", text)
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f'{{"writer": {i}}}\n',)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))["writer"] in (0, 1)
    _no_temp_left(tmp_path)


def test_manifest_write_skips_a_temp_name_taken_by_a_planted_link(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link planted under the very temp name the writer draws first: the writer draws another, never writes through the link."""
    import harness.atomic as atomic

    victim = _victim(tmp_path)
    names = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(atomic.secrets, "token_hex", lambda n: next(names))
    (run_dir / f".{MANIFEST_FILE}.aaaaaaaaaaaa.tmp").symlink_to(victim)
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"seed": 99}))
    assert victim.read_text(encoding="utf-8") == "do not overwrite\n"
    assert read_manifest(run_dir).seed == 99


def test_private_files_get_exactly_owner_only_permissions(tmp_path: Path) -> None:
    """`write_atomic(mode=0o600)` (the memory document) leaves a file only its owner can read, whatever the umask."""
    old = os.umask(0)
    try:
        write_atomic(tmp_path / "memory.md", "secret\n", mode=0o600)
    finally:
        os.umask(old)
    assert (tmp_path / "memory.md").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("data", ["", "plain ascii", "é—中文 " * 9, ["<html>", "", "é" * 20, "—中" * 5, "</html>\n"]])
def test_text_is_written_as_utf8_a_slice_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: Any) -> None:
    """A text, or a page in pieces, becomes exactly its UTF-8 bytes though never encoded whole (slices of 7 here).

    Planted: the last slice dropped (fails here).
    """
    import harness.atomic as atomic

    monkeypatch.setattr(atomic, "TEXT_SLICE", 7)
    target = write_atomic(tmp_path / "index.html", data)
    assert target.read_bytes() == "".join(data).encode("utf-8")
