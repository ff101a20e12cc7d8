"""A full disk under the run folder: the first failed write stops the run (no more model calls), marks it failed, and the resume finishes it."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from harness.cli import main
from harness.records import RESULTS_FILE, ResultsError, iter_records, read_manifest, scan_results, write_manifest
from harness.records import writing as results_module
from tests.fault.conftest import remount, tmpfs
from tests.run.scripted_model import install_scripted

BIG_ANSWER = "lorem ipsum " * 2000  # ~24 KB per record: a 200 KB disk fills after a handful


def _run(suite: Path, run_dir: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--scenarios",
            str(suite),
            "--model",
            "scripted/x",
            "--out",
            str(run_dir),
            "--no-cache",
            "--no-progress",
            "--retries",
            "0",
            *extra,
        ]
    )


def _assert_stopped_cleanly(run_dir: Path, err: str, calls: int) -> int:
    """The shared expectations after a failed write; returns the number of records written."""
    assert "Traceback" not in err
    assert "No space left on device" in err and "no further model calls" in err
    assert f"recall-eval run --resume {run_dir}" in err
    written = list(iter_records(run_dir / RESULTS_FILE))  # strict: every line whole
    assert calls == len(written) + 1  # the sample whose record failed, and not one call more
    assert not list(run_dir.glob("*.tmp"))
    return len(written)


def test_a_full_tmpfs_stops_the_run_at_the_first_failed_write_and_resume_finishes_it(
    tmp_path: Path, suite: Path, fake_report: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real 200 KB tmpfs fills mid-run: no model call after the failed write, only whole lines, run.json 'failed',
    exit 2 with the resume command; resume completes once there is room."""
    model = install_scripted(lambda m, t: {"content": BIG_ANSWER})
    with tmpfs(tmp_path / "disk", "200k") as disk:
        run_dir = disk / "run"

        code = _run(suite, run_dir, "--epochs", "4", "--max-concurrency", "1")

        err = capsys.readouterr().err
        assert code == 2, err
        written = _assert_stopped_cleanly(run_dir, err, model.calls)
        assert 0 < written < 24
        assert read_manifest(run_dir).status == "failed"

        remount(disk, "size=4m")
        model = install_scripted(lambda m, t: {"content": BIG_ANSWER})
        assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 0
        assert model.calls == 24 - written
        scan = scan_results(run_dir / RESULTS_FILE)
        assert len(scan.records) == 24 and not scan.problems
        assert read_manifest(run_dir).status == "complete"


@pytest.fixture()
def disk_full_after(monkeypatch: pytest.MonkeyPatch):
    """``disk_full_after(n)``: results writes succeed n times, then fail with ENOSPC after writing part of the line."""

    def arm(allowed: int) -> None:
        state = {"left": allowed}
        real = results_module._write_fd

        def write(fd: int, data: bytes) -> int:
            if state["left"] <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            state["left"] -= 1
            if state["left"] == 0 and len(data) > 10:
                real(fd, bytes(data[:10]))  # a short write: part of the next line reached the disk
                return 10
            return real(fd, data)

        monkeypatch.setattr(results_module, "_write_fd", write)

    return arm


def test_an_injected_enospc_stops_the_run_with_only_whole_lines(
    tmp_path: Path, suite: Path, fake_report: None, disk_full_after, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write that fails with ENOSPC after a short write: the partial line is cut back, no further model call, status failed, exit 2."""
    model = install_scripted(lambda m, t: {"content": "ok"})
    disk_full_after(3)  # two whole records, then 10 bytes of the third and ENOSPC

    code = _run(suite, tmp_path / "run", "--epochs", "4", "--max-concurrency", "1")

    err = capsys.readouterr().err
    assert code == 2
    assert _assert_stopped_cleanly(tmp_path / "run", err, model.calls) == 2
    assert (tmp_path / "run" / RESULTS_FILE).read_bytes().endswith(b"}\n")
    assert read_manifest(tmp_path / "run").status == "failed"


def test_a_failed_write_with_concurrent_samples_starts_no_new_model_call(
    tmp_path: Path, suite: Path, fake_report: None, disk_full_after, capsys: pytest.CaptureFixture[str]
) -> None:
    """With 4 samples in flight, a failed write cancels the others: at most the in-flight calls, never the rest of the plan."""
    model = install_scripted(lambda m, t: 0.05)  # each call takes a moment, so others are in flight
    disk_full_after(1)

    assert _run(suite, tmp_path / "run", "--epochs", "8", "--max-concurrency", "4") == 2

    assert model.calls <= 1 + 4 < 48
    assert "Traceback" not in capsys.readouterr().err
    assert read_manifest(tmp_path / "run").status == "failed"


def test_a_failed_write_in_workers_mode_stops_every_worker(
    tmp_path: Path, fake_report: None, disk_full_after, capsys: pytest.CaptureFixture[str]
) -> None:
    """--workers 2: the parent cannot write a record; the workers are stopped, status failed, exit 2, no traceback."""
    from tests.fault.conftest import SMOKE

    disk_full_after(2)
    run_dir = tmp_path / "run"

    code = main(
        [
            "run",
            "--scenarios",
            str(SMOKE),
            "--out",
            str(run_dir),
            "--workers",
            "2",
            "--max-concurrency",
            "2",
            "--epochs",
            "3",
            "--no-cache",
            "--no-progress",
        ]
    )

    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "No space left on device" in err
    assert len(list(iter_records(run_dir / RESULTS_FILE))) == 1
    assert read_manifest(run_dir).status == "failed"


def test_a_manifest_that_cannot_be_written_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run.json cannot be replaced (disk full, and no room in place either): a ResultsError naming the file, the old
    run.json intact, no run.json.tmp."""
    from tests.score.scoring_factories import RunManifest  # a valid manifest to start from

    manifest = RunManifest(run_id="r", harness_version="0", status="running", started_at="t", models=["m"], arms=["a"], epochs=1, seed=0,
                           scenario_paths=[], scenario_ids=[], suite_hash="h")
    write_manifest(tmp_path, manifest)
    before = (tmp_path / "run.json").read_bytes()

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("harness.atomic._write", full)
    monkeypatch.setattr(results_module, "_pwrite_all", lambda fd, data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(ResultsError, match="run.json: cannot write the run manifest: No space left on device"):
        write_manifest(tmp_path, manifest.model_copy(update={"status": "failed"}))

    assert (tmp_path / "run.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]
