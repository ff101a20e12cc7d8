"""The daily loop of ``run``: ``--limit N`` scenarios, ``--sample-id`` samples, ``--rerun-failing RUN``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.rerun import failing_scenarios
from harness.run import plan_samples
from harness.scenarios import load_scenarios
from tests.integration.conftest import SMOKE
from tests.memory_systems.prompt_factories import write_small_suite

SMOKE_01 = "smoke-01-changelog-format"


def _run(tmp_path: Path, out: str, *flags: str) -> int:
    return main(["run", "--no-progress", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / out), *flags])


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


def _sample_ids(run_dir: Path) -> list[str]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted(json.loads(line)["sample_id"] for line in lines if line.strip())


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline model on the smoke suite, history_only and recall: recall gets smoke-01 wrong, history_only three."""
    tmp = tmp_path_factory.mktemp("smoke")
    assert _run(tmp, "run", "--scenarios", str(SMOKE), "--arms", "history_only", "recall") in (0, 1)
    return tmp / "run"


def test_limit_runs_the_first_n_scenarios_after_the_filters_in_suite_order_and_records_it(tmp_path: Path) -> None:
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), "--filter", "smoke-0[2-5]*", "--limit", "2", "--arms", "recall") in (0, 1)
    manifest = _manifest(tmp_path / "run")
    in_order = [s.id for s in load_scenarios([SMOKE], ids=["smoke-0[2-5]*"])]
    assert manifest["scenario_ids"] == sorted(in_order[:2]) and in_order[0] != SMOKE_01
    assert manifest["parameters"]["limit"] == 2 and manifest["sample_count"] == 2
    assert _sample_ids(tmp_path / "run") == sorted(f"{sid}|recall|offline/reference|0" for sid in in_order[:2])


def test_a_run_without_limit_records_none_so_older_runs_compare_unchanged(tmp_path: Path) -> None:
    suite = write_small_suite(tmp_path / "suite")
    assert _run(tmp_path, "run", "--scenarios", str(suite), "--arms", "recall") in (0, 1)
    parameters = _manifest(tmp_path / "run")["parameters"]
    assert not {"limit", "sample_ids", "rerun_of"} & parameters.keys()


def test_a_limit_below_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), "--limit", "0") == 2
    assert "--limit 0: must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_resume_keeps_the_limit_and_refuses_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), "--limit", "1", "--arms", "recall") in (0, 1)
    assert main(["run", "--resume", str(tmp_path / "run"), "--limit", "3", "--no-progress"]) == 2
    assert "--limit 3 (the run has 1)" in capsys.readouterr().err


def test_sample_id_runs_exactly_that_sample_with_the_seed_it_has_in_the_whole_run(smoke_run: Path, tmp_path: Path) -> None:
    wanted = f"{SMOKE_01}|recall|offline/reference|0"
    assert _run(tmp_path, "one", "--scenarios", str(SMOKE), "--sample-id", wanted) in (0, 1)
    manifest = _manifest(tmp_path / "one")
    assert _sample_ids(tmp_path / "one") == [wanted]
    assert manifest["arms"] == ["recall"] and manifest["models"] == ["offline/reference"] and manifest["epochs"] == 1
    assert manifest["sample_count"] == 1 and manifest["parameters"]["sample_ids"] == [wanted]
    assert manifest["status"] == "complete"

    def seed(run_dir: Path) -> int:
        lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
        return next(json.loads(line)["seed"] for line in lines if json.loads(line)["sample_id"] == wanted)

    assert seed(tmp_path / "one") == seed(smoke_run)


def test_sample_ids_of_a_later_epoch_set_the_epochs_and_run_that_epoch_only(tmp_path: Path) -> None:
    wanted = f"{SMOKE_01}|history_only|offline/reference|2"
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), "--sample-id", wanted) in (0, 1)
    assert _sample_ids(tmp_path / "run") == [wanted] and _manifest(tmp_path / "run")["epochs"] == 3


@pytest.mark.parametrize(("flags", "message"), [
    (["--sample-id", "smoke-01-changelog-format|recall"], "not a sample id; sample ids read SCENARIO|ARM|MODEL|EPOCH"),
    (["--sample-id", "smoke-01-changelog-format|recall|offline/reference|x"], "not a sample id"),
    (["--sample-id", "smoke-01-changelog-format|recall|offline/reference|0", "--arms", "history_only"],
     "--sample-id names arm 'recall', which --arms history_only leaves out"),
    (["--sample-id", "smoke-01-changelog-format|recall|offline/reference|1", "--epochs", "1"],
     "--sample-id names epoch 1, beyond --epochs 1"),
    (["--sample-id", "nope|recall|offline/reference|0"], "--sample-id: scenario 'nope' is not among the 5 scenario(s)"),
])
def test_a_sample_id_that_cannot_be_planned_is_refused_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  flags: list[str], message: str) -> None:
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), *flags) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_plan_samples_with_only_keeps_those_samples_in_plan_order() -> None:
    scenarios = load_scenarios([SMOKE])
    every = plan_samples(scenarios, ["history_only", "recall"], ["m"], 2, 7)
    chosen = {every[5].sample_id, every[1].sample_id}
    assert plan_samples(scenarios, ["history_only", "recall"], ["m"], 2, 7, chosen) == [every[1], every[5]]


def test_rerun_failing_reruns_every_arm_of_the_scenarios_a_memory_arm_got_wrong_as_a_new_run(
        smoke_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "again", "--rerun-failing", str(smoke_run)) in (0, 1)
    err = capsys.readouterr().err
    assert "1 of 5 scenario(s) were wrong" in err and SMOKE_01 in err
    manifest = _manifest(tmp_path / "again")
    # history_only got smoke-02 and smoke-04 wrong too: the baseline's wrong answers do not select a scenario
    assert manifest["scenario_ids"] == [SMOKE_01]
    assert _sample_ids(tmp_path / "again") == [f"{SMOKE_01}|history_only|offline/reference|0", f"{SMOKE_01}|recall|offline/reference|0"]
    rerun_of = manifest["parameters"]["rerun_of"]
    assert rerun_of["run"] == smoke_run.name and rerun_of["scenarios"] == [SMOKE_01] and "memory arm" in rerun_of["wrong"]
    assert manifest["seed"] == _manifest(smoke_run)["seed"] and manifest["arms"] == ["history_only", "recall"]
    assert (smoke_run / "results.jsonl").read_text(encoding="utf-8").count("\n") == 10  # the old run is untouched


def test_failing_scenarios_count_any_arms_errors_and_only_the_memory_arms_wrong_answers() -> None:
    rows = [
        {"scenario_id": "a", "arm": "history_only", "status": "ok", "outcome": "wrong"},
        {"scenario_id": "a", "arm": "recall", "status": "ok", "outcome": "correct"},
        {"scenario_id": "b", "arm": "full_history", "status": "error", "outcome": None},
        {"scenario_id": "c", "arm": "recall", "status": "ok", "outcome": "abstained_wrongly"},
        {"scenario_id": "d", "arm": "recall", "status": "ok", "outcome": "abstained_correctly"},
    ]
    assert failing_scenarios(rows, ["history_only", "recall", "full_history"]) == ["b", "c"]
    # a run of reference arms only: their wrong answers are all there is to re-run
    assert failing_scenarios(rows[:1], ["history_only"]) == ["a"]


def test_rerun_failing_with_nothing_wrong_runs_nothing(smoke_run: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "passed", "--scenarios", str(SMOKE), "--filter", "smoke-02*", "--arms", "recall") in (0, 1)
    assert _run(tmp_path, "again", "--rerun-failing", str(tmp_path / "passed")) == 0
    assert "nothing to re-run" in capsys.readouterr().err and not (tmp_path / "again").exists()


@pytest.mark.parametrize("make", ["missing", "not_a_run"])
def test_rerun_failing_refuses_a_folder_that_is_not_a_run_with_exit_2(tmp_path: Path, make: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "target"
    if make == "not_a_run":
        target.mkdir()
        (target / "notes.txt").write_text("hello", encoding="utf-8")
    assert _run(tmp_path, "again", "--rerun-failing", str(target)) == 2
    err = capsys.readouterr().err
    assert ("no such folder" if make == "missing" else "not a run folder (no run.json)") in err and "Traceback" not in err


def test_rerun_failing_refuses_resume(smoke_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--rerun-failing", str(smoke_run), "--resume", str(smoke_run), "--no-progress"]) == 2
    assert "conflicts with --resume" in capsys.readouterr().err


def test_a_run_lets_go_of_its_store_images_before_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring and the report open no store: the images (up to 64 MB) are released when the samples are done.

    Planted: the release call removed from ``run``; the report then runs with the images held.
    """
    import harness.report
    from harness.scenarios import seeding

    held_at_report: list[object] = []
    real = harness.report.build_report

    def watching(*args: object, **kwargs: object) -> object:
        held_at_report.append(seeding._SHARED_TEMPLATES)
        return real(*args, **kwargs)

    monkeypatch.setattr(harness.report, "build_report", watching)
    assert _run(tmp_path, "run", "--scenarios", str(SMOKE), "--filter", f"{SMOKE_01}*", "--arms", "recall", "--no-cache") in (0, 1)
    assert held_at_report == [None]
