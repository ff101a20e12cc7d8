"""``recall-eval export inspect RUN OUT``: inspect_ai eval logs that inspect_ai's own reader and dataframes open."""

from __future__ import annotations

import builtins
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.integration.offline_runs import offline_run
from tests.runs.inspect_logs import doctored, exported, log_path, read_records, run_dir  # noqa: F401 (fixtures)

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (the test extra installs it: pip install -e '.[test]'; "
                         "tests/test_test_command.py fails without it)")


def test_one_log_per_model_and_arm_reads_back_with_inspect_ais_reader(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    paths = [log_path(logs, arm) for arm in ("history_only", "recall")]
    assert sorted(logs.glob("*.eval")) == sorted(paths)
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    for path, arm in zip(paths, ["history_only", "recall"], strict=True):
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.task == f"recall-eval/{arm}" and log.eval.model == "offline/reference"
        assert log.eval.run_id == manifest["run_id"] and log.eval.config.epochs == manifest["epochs"]
        assert log.eval.model_generate_config.max_tokens == manifest["parameters"]["max_tokens"]
        assert log.eval.metadata["recall_eval"]["parameters"] == manifest["parameters"]
        assert sorted(s.id for s in log.samples) == sorted(manifest["scenario_ids"])


def test_the_eval_results_are_the_reports_metrics(exported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    run_dir, logs = exported
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    expected = next(r["value"] for r in summary["metrics"] if r["model"] == "offline/reference" and r["arm"] == "recall"
                    and r.get("category", "all") == "all" and r["metric"] == "continuity_accuracy")
    log = read_eval_log(str(log_path(logs, "recall")))
    assert log.results.scores[0].metrics["continuity_accuracy"].value == expected


def test_inspect_ais_dataframes_open_the_logs(exported: tuple[Path, Path]) -> None:
    pytest.importorskip("pyarrow", reason="inspect_ai's dataframes need pyarrow (in the test and inspect extras)")
    from inspect_ai.analysis import evals_df, messages_df, samples_df

    run_dir, logs = exported
    # (evals_df names a task without its package prefix: recall-eval/recall -> recall)
    assert sorted(evals_df(str(logs))["task_name"]) == ["history_only", "recall"]
    samples = samples_df(str(logs))
    assert len(samples) == len(read_records(run_dir)) and "score_continuity" in samples.columns
    messages = messages_df(str(logs))
    assert len(messages) == sum(len(r["messages"]) for r in read_records(run_dir).values())


def test_export_of_a_folder_that_is_not_a_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "inspect", str(tmp_path), str(tmp_path / "out")]) == 2
    assert "not a run folder (no run.json)" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_without_inspect_ai_export_says_how_to_install_it(run_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    real_import = builtins.__import__

    def no_inspect(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("inspect_ai"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    assert main(["export", "inspect", str(run_dir), str(tmp_path / "out")]) == 2
    assert "inspect_ai is missing: pip install 'recall-eval[inspect]'" in capsys.readouterr().err


def test_two_runs_exported_to_one_folder_are_distinct_evals_to_inspect_ais_listing(tmp_path: Path) -> None:
    """inspect_ai's viewer keeps the newest log of each (folder, task_id) and hides the rest as retried: two runs
    (even of one folder name) exported to one folder must give every log its own task_id, in the listing (which
    parses the file name) and in the header alike."""
    import shutil

    from inspect_ai.log import list_eval_logs, read_eval_log

    first = offline_run(tmp_path / "first")
    second = tmp_path / "second" / "run"  # the same folder name, another run (another start time)
    shutil.copytree(first, second)
    manifest = json.loads((second / "run.json").read_text(encoding="utf-8"))
    manifest["started_at"] = "2026-01-02T03:04:05Z"
    (second / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    other = offline_run(tmp_path / "other")
    logs = tmp_path / "logs"
    for folder in (first, second, other):
        assert main(["export", "inspect", str(folder), str(logs)]) == 0
    listed = list_eval_logs(str(logs))
    assert len(listed) == 6 and len(list(logs.glob("*.eval"))) == 6  # nothing overwritten
    groups = {(Path(info.name).parent, info.task_id) for info in listed}  # the viewer's retry groups
    assert len(groups) == 6 and all(info.task_id for info in listed)
    for info in listed:
        header = read_eval_log(info.name, header_only=True)
        assert header.eval.task_id == info.task_id  # the name and the header agree
    assert len({read_eval_log(i.name, header_only=True).eval.eval_id for i in listed}) == 6


def test_a_logs_results_are_its_own_model_and_arms_overall_metrics_only() -> None:
    """Another model's row, another arm's, and the same metric per category must not stand in for the overall one."""
    from harness.runs.inspect_export import _results

    def row(model: str, arm: str, value: float, category: str = "all", metric: str = "continuity_accuracy") -> dict:
        return {"model": model, "arm": arm, "category": category, "metric": metric, "value": value, "n": 4}

    summary = {"verdict": {"status": "pass"}, "metrics": [
        row("m-a", "recall", 0.75), row("m-a", "recall", 0.1, "temporal"), row("m-b", "recall", 0.2),
        row("m-a", "history_only", 0.3), row("m-a", "recall", True, metric="flag"), row("m-a", "recall", 2, metric="n"),
        {"model": "m-a", "arm": "recall", "metric": "abstention_rate", "value": 0.5, "ci_low": 0.1, "ci_high": 0.9}]}
    results = _results(summary, "m-a", "recall", 4, 3)
    metrics = results.scores[0].metrics  # a row without a category is an overall one
    assert {k: (m.name, m.value, m.metadata) for k, m in metrics.items()} == {
        "continuity_accuracy": ("continuity_accuracy", 0.75, {"ci_low": None, "ci_high": None, "n": 4}),
        "n": ("n", 2.0, {"ci_low": None, "ci_high": None, "n": 4}),
        "abstention_rate": ("abstention_rate", 0.5, {"ci_low": 0.1, "ci_high": 0.9, "n": None})}
    assert (results.total_samples, results.completed_samples, results.scores[0].scored_samples) == (4, 3, 3)
    assert (results.scores[0].name, results.scores[0].scorer, results.metadata) == ("continuity", "recall-eval", {"verdict": "pass"})
    empty = _results({"metrics": None}, "m-a", "recall", 0, 0)
    assert (empty.scores[0].metrics, empty.metadata) == ({}, {"verdict": None})


def test_a_log_counts_only_finished_samples_as_completed(run_dir: Path, tmp_path: Path) -> None:
    """A sample that failed (its model call errored) is in the log but not among the completed ones, as inspect_ai
    counts a sample that raised: a run with failures must not read as complete in inspect's viewer."""
    import shutil

    from inspect_ai.log import read_eval_log

    failing = tmp_path / "run"
    shutil.copytree(run_dir, failing)
    lines = (failing / "results.jsonl").read_text(encoding="utf-8").splitlines()
    failed = next(i for i, line in enumerate(lines) if json.loads(line).get("arm") == "recall")
    record = json.loads(lines[failed])
    record.update(status="error", stop_reason="error", error={"type": "APIError", "message": "server error", "attempts": 3})
    lines[failed] = json.dumps(record)
    (failing / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["export", "inspect", str(failing), str(tmp_path / "logs")]) == 0
    recall = read_eval_log(str(log_path(tmp_path / "logs", "recall")), header_only=True).results
    history = read_eval_log(str(log_path(tmp_path / "logs", "history_only")), header_only=True).results
    assert recall.completed_samples == recall.total_samples - 1 and recall.scores[0].scored_samples == recall.completed_samples
    assert history.completed_samples == history.total_samples > 0


def test_a_logs_ids_and_file_name_are_unique_per_run_folder_model_and_arm_and_stable_for_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect_ai's viewer shows only the newest log of each ``task_id``: every part of a log's identity (run id,
    start time, suite hash, folder, model, arm) must change the ids, the same run must keep them (a folder named
    relatively or absolutely), and the file name must be inspect_ai's ``<timestamp>_<task>_<task_id>.eval``."""
    from types import SimpleNamespace

    from harness.runs.inspect_export import log_identity

    def run(**changes: str) -> SimpleNamespace:
        return SimpleNamespace(**{"run_id": "nightly", "started_at": "2026-12-04T20:35:01Z", "suite_hash": "ab" * 32,
                                  **changes})

    monkeypatch.chdir(tmp_path)
    task_id, eval_id, name = log_identity(run(), "offline/reference", "history_only", Path("runs/a"))
    assert len(task_id) == len(eval_id) == 22 and task_id != eval_id and int(task_id, 16) >= 0 and int(eval_id, 16) >= 0
    assert name == f"2026-12-04T20-35-01_nightly-offline-reference-history-only_{task_id}.eval"
    assert log_identity(run(), "offline/reference", "history_only", tmp_path / "runs" / "a") == (task_id, eval_id, name)
    others = [log_identity(run(run_id="other"), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(started_at="2026-12-04T20:35:02Z"), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(suite_hash="cd" * 32), "offline/reference", "history_only", Path("runs/a")),
              log_identity(run(), "offline/reference", "history_only", Path("runs/b")),
              log_identity(run(), "offline/reference", "history_only"),
              log_identity(run(), "offline/other", "history_only", Path("runs/a")),
              log_identity(run(), "offline/reference", "recall", Path("runs/a"))]
    assert len({i[0] for i in others} | {task_id}) == len({i[1] for i in others} | {eval_id}) == 8
    odd_id, _, odd = log_identity(run(run_id="x\ud800 y", started_at="not a time"), "m", "a_b")
    assert odd == f"1970-01-01T00-00-00_x-y-m-a-b_{odd_id}.eval"


def test_a_slug_keeps_letters_digits_dots_and_dashes_and_is_never_empty() -> None:
    from harness.runs.inspect_export import _slug

    assert _slug("--run 7/v1.2_b--") == "run-7-v1.2_b" and _slug("a  //  b") == "a-b" and _slug("!!") == "x"
    assert _slug("-Xray Run 2X-") == "Xray-Run-2X"  # capitals kept, only dashes trimmed


def test_a_logs_header_is_the_runs_suite_settings_plan_and_state(run_dir: Path, tmp_path: Path) -> None:
    """What inspect_ai's viewer shows of an eval: the suite as its dataset, the run's settings as its generate config
    and eval config (each from its own parameter), the whole parameters and the run's facts in the metadata, the arm
    as the solver and plan, and the run's state (an interrupted run is a cancelled eval, not a finished one)."""
    from types import SimpleNamespace

    from inspect_ai.log import read_eval_log

    from harness import __version__
    from harness.runs.inspect_export import log_identity

    settings = {"limit": 3, "sample_ids": ["smoke-02-ci-provider"], "api_base": "http://localhost:9/v1", "timeout_s": 30.5,
                "retries": 2, "max_concurrency": 3, "max_tool_rounds": 5, "temperature": 0.25, "max_tokens": 512}

    def doctor(manifest: dict[str, Any]) -> None:
        manifest["parameters"].update(settings)
        (suite,) = manifest["scenario_paths"]  # the same scenarios, named file by file
        manifest["scenario_paths"] = [str(Path(suite) / f"{name}.yaml") for name in manifest["scenario_ids"]]
        manifest.update(status="interrupted", finished_at=None)

    run = doctored(run_dir, tmp_path, manifest=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for arm in ("history_only", "recall"):
        log = read_eval_log(str(log_path(tmp_path / "logs", arm)), header_only=True)
        spec = log.eval
        started = dt.datetime.fromisoformat(manifest["started_at"])
        assert (log.status, dt.datetime.fromisoformat(log.stats.started_at), log.stats.completed_at) == (
            "cancelled", started, "")
        assert (dt.datetime.fromisoformat(spec.created), spec.task_version, spec.task_args, spec.solver) == (
            started, manifest["harness_version"], {"arm": arm}, arm)
        assert (spec.dataset.name, spec.dataset.location, spec.dataset.samples, spec.dataset.sample_ids) == (
            "smoke-02-ci-provider.yaml, smoke-03-abstain-freeze-window.yaml", ", ".join(manifest["scenario_paths"]), 2,
            manifest["scenario_ids"])
        ids = log_identity(SimpleNamespace(**manifest), "offline/reference", arm, run)
        assert (spec.task_id, spec.eval_id) == ids[:2]
        generate = spec.model_generate_config
        assert (spec.model_base_url, generate.temperature, generate.max_tokens, generate.timeout, generate.max_retries) == (
            "http://localhost:9/v1", 0.25, 512, 30, 2)
        assert (spec.config.epochs, spec.config.limit, spec.config.sample_id, spec.config.max_samples) == (
            1, 3, ["smoke-02-ci-provider"], 3)
        assert spec.packages == {"recall-eval": __version__}
        assert spec.metadata == {"recall_eval": {
            "run_id": manifest["run_id"], "harness_version": manifest["harness_version"], "suite_hash": manifest["suite_hash"],
            "seed": manifest["seed"], "arms": ["history_only", "recall"], "models": ["offline/reference"],
            "status": "interrupted", "parameters": manifest["parameters"], "run_dir": str(run.resolve())}}
        assert log.plan.name == "recall-eval"
        assert [(s.solver, s.params) for s in log.plan.steps] == [(arm, {"max_tool_rounds": 5})]


def test_a_run_without_a_timeout_exports_none_and_a_finished_run_is_a_successful_eval(run_dir: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    def doctor(manifest: dict[str, Any]) -> None:
        del manifest["parameters"]["timeout_s"]  # a run made before the setting was recorded

    run = doctored(run_dir, tmp_path, manifest=doctor)
    assert main(["export", "inspect", str(run), str(tmp_path / "logs")]) == 0
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    log = read_eval_log(str(log_path(tmp_path / "logs", "recall")), header_only=True)
    assert (log.status, dt.datetime.fromisoformat(log.stats.completed_at)) == (
        "success", dt.datetime.fromisoformat(manifest["finished_at"]))
    assert log.eval.model_generate_config.timeout is None


def test_an_export_that_cannot_create_its_folder_or_write_a_log_or_read_the_run_exits_2_naming_which(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each failure is one line naming the path and the reason (no traceback): an output folder under a file, a log's
    file name taken by a folder, a run.json that is not JSON."""
    import errno
    import os
    from types import SimpleNamespace

    from harness.runs.inspect_export import log_identity

    blocked = tmp_path / "a-file"
    blocked.write_text("x", encoding="utf-8")
    assert main(["export", "inspect", str(run_dir), str(blocked / "logs")]) == 2
    assert capsys.readouterr().err == (
        f"recall-eval export: {blocked / 'logs'}: cannot create the folder ({os.strerror(errno.ENOTDIR)})\n")
    manifest = SimpleNamespace(**json.loads((run_dir / "run.json").read_text(encoding="utf-8")))
    name = log_identity(manifest, "offline/reference", "history_only", run_dir)[2]
    (tmp_path / "logs" / name).mkdir(parents=True)
    assert main(["export", "inspect", str(run_dir), str(tmp_path / "logs")]) == 2
    assert capsys.readouterr().err.replace("\n  ", " ").startswith(  # (the terminal's width may wrap it)
        f"recall-eval export: {tmp_path / 'logs' / name}: cannot write the log ({os.strerror(errno.EISDIR)})")
    broken = doctored(run_dir, tmp_path)
    (broken / "run.json").write_text("{", encoding="utf-8")
    assert main(["export", "inspect", str(broken), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recall-eval export: ") and "run.json" in err and err.count("\n") == 1


def test_a_lone_surrogate_is_written_as_u_fffd_and_counted_in_the_sample_the_eval_and_a_note(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record holding a lone surrogate (a model sent one) exports with U+FFFD in its place, counted in the sample's
    and the eval's metadata and told on stderr, log by log; the other log says nothing of it. stdout names each log
    written and how to open them."""
    from inspect_ai.log import read_eval_log

    answered = "smoke-02-ci-provider|recall|offline/reference|0"

    def doctor(record: dict[str, Any]) -> None:
        if record["sample_id"] == answered:
            record["final_answer"] = "Buildkite\ud800 and \udfff"

    run = doctored(run_dir, tmp_path, record=doctor)
    out = tmp_path / "exports" / "logs"  # its parent made too
    assert main(["export", "inspect", str(run), str(out)]) == 0
    recall, history = log_path(out, "recall"), log_path(out, "history_only")
    captured = capsys.readouterr()
    assert captured.err == (f"note: {recall.name}: 2 lone surrogate(s) (\\ud800-\\udfff, no character) written as U+FFFD; "
                            "the log's metadata counts them (replaced_surrogates)\n")
    assert captured.out.replace("wrote\n  ", "wrote ").splitlines() == [  # (a long path goes on a line of its own)
        f"wrote {history}", f"wrote {recall}", "open them with:", f"  inspect view --log-dir {out}"]
    log = read_eval_log(str(recall))
    sample = next(s for s in log.samples if s.metadata["sample_id"] == answered)
    assert (sample.output.completion, sample.metadata["replaced_surrogates"]) == ("Buildkite\ufffd and \ufffd", 2)
    assert log.eval.metadata["recall_eval"]["replaced_surrogates"] == 2
    assert all("replaced_surrogates" not in s.metadata for s in log.samples if s is not sample)
    assert "replaced_surrogates" not in read_eval_log(str(history)).eval.metadata["recall_eval"]
