"""``recall-eval run``: records, manifest, resume, cache, secrets, early stop, interrupts, gate."""

from __future__ import annotations

import io
import json
import os
import signal
import types
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

from harness.cli import main  # noqa: E402
from harness.records import RESULTS_FILE, iter_records, read_manifest, scan_results, write_manifest  # noqa: E402
from harness.run.progress import RunProgress  # noqa: E402
from harness.run.runner import redact
from harness.run.samples import sample_seed  # noqa: E402
from tests.memory_systems.prompt_factories import write_small_suite  # noqa: E402
from tests.run.scripted_model import install_scripted  # noqa: E402

ARMS = ["history_only", "recall", "full_history"]


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    return write_small_suite(tmp_path / "suite")


@pytest.fixture(autouse=True)
def _no_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep these tests about running; the report is faked (see the gate tests)."""
    monkeypatch.setattr(
        "harness.report.build_report",
        lambda run_dir, judge_model=None, exclude=(), **_: types.SimpleNamespace(
            verdict="pass", reasons=["fine"], index_html=Path(run_dir) / "index.html"
        ),
    )


def _run(tmp_path: Path, suite: Path, *extra: str, out: str = "run", model: str = "scripted/x") -> int:
    return main(
        [
            "run",
            "--scenarios",
            str(suite),
            "--model",
            model,
            "--out",
            str(tmp_path / out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-progress",
            "--retries",
            "0",
            *extra,
        ]
    )


def _records(run_dir: Path):
    """Every record as written (strict: a bad line fails the test; duplicates are kept)."""
    return list(iter_records(run_dir / RESULTS_FILE))


def _final(run_dir: Path):
    """The last record per sample id, as the report reads them after a resume."""
    return scan_results(run_dir / RESULTS_FILE)


def test_run_writes_every_sample_once_and_completes_the_manifest(tmp_path: Path, suite: Path) -> None:
    assert _run(tmp_path, suite, model="offline/reference") == 0
    records = _records(tmp_path / "run")
    assert sorted(r.sample_id for r in records) == sorted(f"{s}|{a}|offline/reference|0" for s in ("alpha", "beta") for a in ARMS)
    manifest = read_manifest(tmp_path / "run")
    assert manifest.status == "complete" and manifest.sample_count == 6 and manifest.finished_at
    assert manifest.scenario_ids == ["alpha", "beta"] and manifest.arms == ARMS
    recall = next(r for r in records if r.arm == "recall")
    assert recall.tools_offered == ["memory_search", "memory_get"] and "5174" in (recall.final_answer or "")


def test_sample_seed_is_deterministic_and_shared_by_arms(tmp_path: Path, suite: Path) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--epochs", "2") == 0
    records = _records(tmp_path / "run")
    seeds: dict[tuple[str, int], set[int]] = {}
    for record in records:
        seeds.setdefault((record.scenario_id, record.epoch), set()).add(record.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert seeds[("alpha", 0)] == {sample_seed(0, "alpha", 0)} != seeds[("alpha", 1)]


def test_resume_after_a_crash_completes_and_keeps_the_torn_line(tmp_path: Path, suite: Path) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite) == 0
    run_dir = tmp_path / "run"
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    torn = "\n".join(lines[:2]) + "\n" + lines[2][:40]
    (run_dir / RESULTS_FILE).write_text(torn, encoding="utf-8")
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"status": "interrupted"}))
    assert main(["run", "--resume", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    scan = _final(run_dir)
    assert len(scan.records) == 6 and scan.duplicates == 0 and {r.status for r in scan.records} == {"ok"}
    assert (run_dir / RESULTS_FILE).read_text(encoding="utf-8").startswith(torn + "\n")  # nothing deleted
    assert [p.split(": ")[0] for p in scan.problems] == [f"{run_dir / RESULTS_FILE}:3"]
    assert read_manifest(run_dir).status == "complete"


def test_resume_works_from_another_working_directory(tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--scenarios", "suite", "--model", "scripted/x", "--out", "run", "--no-progress", "--retries", "0", "--no-cache"]) == 0
    assert read_manifest(tmp_path / "run").scenario_paths == [str(suite.resolve())]
    run_dir = tmp_path / "run"
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    (run_dir / RESULTS_FILE).write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["run", "--resume", str(run_dir), "--no-progress", "--no-cache"]) == 0
    assert len({r.sample_id for r in _records(run_dir)}) == len(_records(run_dir)) == 6


def test_resume_finds_relative_scenario_paths_of_older_runs_from_the_run_folder(tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--scenarios", "suite", "--model", "scripted/x", "--out", "reports/r1", "--no-progress", "--no-cache"]) == 0
    run_dir = tmp_path / "reports" / "r1"
    write_manifest(run_dir, read_manifest(run_dir).model_copy(update={"scenario_paths": ["suite"], "status": "interrupted"}))
    (run_dir / RESULTS_FILE).write_text("", encoding="utf-8")
    monkeypatch.chdir(run_dir)
    assert main(["run", "--resume", ".", "--no-progress", "--no-cache"]) == 0
    assert len(_records(run_dir)) == 6


def test_resume_reruns_error_samples(tmp_path: Path, suite: Path) -> None:
    install_scripted(lambda m, t: litellm.RateLimitError("busy", "scripted", "x") if t else {"content": "ok"})
    assert _run(tmp_path, suite, "--max-concurrency", "1") == 0
    assert sorted((r.arm, r.status) for r in _records(tmp_path / "run") if r.status == "error") == [("recall", "error")] * 2
    install_scripted(lambda m, t: {"content": "ok"})
    assert main(["run", "--resume", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    records = _final(tmp_path / "run").records
    assert len(records) == 6 and {r.status for r in records} == {"ok"}
    assert [r.status for r in _records(tmp_path / "run")].count("error") == 2  # the failed attempts stay in the file


def test_resume_refuses_conflicting_flags(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite) == 0
    assert main(["run", "--resume", str(tmp_path / "run"), "--epochs", "3"]) == 2
    assert "--epochs 3 (the run has 1)" in capsys.readouterr().err


def test_resume_refuses_changed_scenarios(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite) == 0
    data = json.loads((suite / "alpha.yaml").read_text(encoding="utf-8"))
    data["title"] = "Edited"
    (suite / "alpha.yaml").write_text(json.dumps(data), encoding="utf-8")
    assert main(["run", "--resume", str(tmp_path / "run")]) == 2
    assert "scenarios changed" in capsys.readouterr().err


def test_second_run_is_served_from_the_cache(tmp_path: Path, suite: Path) -> None:
    model = install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, out="first") == 0
    calls = model.calls
    assert _run(tmp_path, suite, out="second") == 0
    assert model.calls == calls
    assert all(c.cached for r in _records(tmp_path / "second") for c in r.model_calls)


def test_cached_samples_are_counted_in_the_terminal_and_run_json(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, out="first") == 0
    assert read_manifest(tmp_path / "first").cached_samples == 0
    assert "from the cache" not in capsys.readouterr().err
    assert _run(tmp_path, suite, out="second") == 0
    assert read_manifest(tmp_path / "second").cached_samples == 6
    assert "6 samples from the cache (no model call)" in capsys.readouterr().err


def test_cached_samples_of_an_earlier_attempt_still_count_after_a_resume(tmp_path: Path, suite: Path) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, out="first") == 0
    assert _run(tmp_path, suite, out="second") == 0  # all 6 from the cache
    run_dir = tmp_path / "second"
    lines = (run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    (run_dir / RESULTS_FILE).write_text("\n".join(lines[:4]) + "\n", encoding="utf-8")
    assert main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"]) == 0
    assert read_manifest(run_dir).cached_samples == 4


def test_cached_samples_are_counted_with_workers(tmp_path: Path) -> None:
    flags = [
        "--scenarios",
        str(SMOKE),
        "--filter",
        "smoke-0[12]*",
        "--workers",
        "2",
        "--max-concurrency",
        "2",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-progress",
    ]
    assert main(["run", *flags, "--out", str(tmp_path / "a")]) == 0
    assert main(["run", *flags, "--out", str(tmp_path / "b")]) == 0
    assert read_manifest(tmp_path / "a").cached_samples == 0 and read_manifest(tmp_path / "b").cached_samples == 6


def test_resume_refuses_another_max_tokens(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--max-tokens", "512") == 0
    assert read_manifest(tmp_path / "run").parameters["max_tokens"] == 512
    assert main(["run", "--resume", str(tmp_path / "run"), "--max-tokens", "1024"]) == 2
    assert "--max-tokens 1024 (the run has 512)" in capsys.readouterr().err


def test_resume_accepts_scenarios_that_moved_when_they_hash_the_same(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--no-cache") == 0
    run_dir = tmp_path / "run"
    (run_dir / RESULTS_FILE).write_text("".join((run_dir / RESULTS_FILE).read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    moved = suite.rename(tmp_path / "moved")
    assert main(["run", "--resume", str(run_dir), "--no-cache", "--no-progress"]) == 2
    assert "pass --scenarios PATH" in capsys.readouterr().err
    assert main(["run", "--resume", str(run_dir), "--scenarios", str(moved), "--no-cache", "--no-progress"]) == 0
    assert read_manifest(run_dir).scenario_paths == [str(moved)]
    assert len(_final(run_dir).records) == 6


def test_resume_refuses_moved_scenarios_that_changed(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--no-cache") == 0
    moved = suite.rename(tmp_path / "moved")
    data = json.loads((moved / "alpha.yaml").read_text(encoding="utf-8"))
    data["title"] = "Edited"
    (moved / "alpha.yaml").write_text(json.dumps(data), encoding="utf-8")
    assert main(["run", "--resume", str(tmp_path / "run"), "--scenarios", str(moved), "--no-cache", "--no-progress"]) == 2
    assert f"--scenarios {moved}: these are not the scenarios of {tmp_path / 'run'}" in capsys.readouterr().err


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, suite: Path) -> None:
    model = install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--no-cache", out="first") == 0
    assert _run(tmp_path, suite, "--no-cache", out="second") == 0
    assert model.calls == 12 and not (tmp_path / "cache").exists()


def test_api_keys_are_never_written(tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, out="good") == 0
    install_scripted(lambda m, t: litellm.AuthenticationError("Incorrect API key provided: sk-test-SECRET123", "scripted", "x"))
    _run(tmp_path, suite, "--no-cache", out="bad")
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    assert any("[REDACTED]" in p.read_text(encoding="utf-8") for p in written)
    assert not [p for p in written if "SECRET123" in p.read_text(encoding="utf-8")]


def test_run_stops_a_model_whose_every_sample_fails_with_one_config_error(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = install_scripted(lambda m, t: litellm.AuthenticationError("no key", "scripted", "x"))
    assert _run(tmp_path, suite, "--epochs", "4", "--max-concurrency", "1") == 2
    assert model.calls == 3 and len(_records(tmp_path / "run")) == 3
    assert read_manifest(tmp_path / "run").status == "interrupted"
    err = capsys.readouterr().err
    assert "AuthenticationError" in err and "--resume" in err


def test_interrupt_keeps_finished_lines_and_marks_the_manifest(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    # pytest started as a background job of a non-interactive shell inherits SIGINT ignored: give Ctrl-C back.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    model = install_scripted(lambda m, t: {"content": "ok"})

    def script(messages, tools):
        if model.calls == 3:
            signal.raise_signal(signal.SIGINT)
        return {"content": "ok"}

    install_scripted(script)
    assert _run(tmp_path, suite, "--max-concurrency", "1") == 130
    run_dir = tmp_path / "run"
    assert read_manifest(run_dir).status == "interrupted"
    assert 0 < len(_records(run_dir)) < 6
    assert f"recall-eval run --resume {run_dir}" in capsys.readouterr().err
    install_scripted(lambda m, t: {"content": "ok"})
    assert main(["run", "--resume", str(run_dir), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    assert len({r.sample_id for r in _records(run_dir)}) == len(_records(run_dir)) == 6


def test_gate_fails_when_the_verdict_is_not_pass(
    tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        "harness.report.build_report",
        lambda run_dir, judge_model=None, exclude=(), **_: types.SimpleNamespace(
            verdict="inconclusive", reasons=["too few"], index_html=Path(run_dir) / "index.html"
        ),
    )
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, out="a") == 0
    assert _run(tmp_path, suite, "--gate", out="b") == 1
    out = capsys.readouterr().out
    assert "verdict: INCONCLUSIVE" in out and "too few" in out and "index.html" in out


def test_missing_scenarios_folder_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--scenarios", str(tmp_path / "nope"), "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unknown_arm_is_a_clear_error(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, suite, "--arms", "recall", "bogus") == 2
    assert "known arms" in capsys.readouterr().err


def test_existing_run_folder_is_not_overwritten(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite) == 0
    assert _run(tmp_path, suite) == 2
    assert "--resume" in capsys.readouterr().err


def test_redact_replaces_secret_values() -> None:
    assert redact("key sk-abc123456 bad", ["sk-abc123456"]) == "key [REDACTED] bad"


def test_plain_progress_prints_lines_without_a_terminal() -> None:
    stream = io.StringIO()
    progress = RunProgress(4, live=True, stream=stream, every_n=2)
    for ok in (True, False, True, True):
        progress.advance(ok)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("[recall-eval] 4/4 samples, 1 errors")


def test_run_builds_the_real_report_and_prints_the_verdict(
    tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Put the real build_report back in place of the autouse fake.
    from harness.report.build import build_report

    monkeypatch.setattr("harness.report.build_report", build_report)
    assert _run(tmp_path, suite, model="offline/reference") == 0
    out = capsys.readouterr().out
    assert "verdict: " in out and (tmp_path / "run" / "index.html").is_file()
    assert f"report: {tmp_path / 'run' / 'index.html'}" in out


def test_an_unreachable_server_fails_samples_but_never_stops_the_run_early(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A connection error is not a configuration error: a local server restarting looks the same.
    model = install_scripted(lambda m, t: litellm.APIConnectionError("Connection refused", "scripted", "x"))
    assert _run(tmp_path, suite, "--epochs", "3", "--max-concurrency", "1") == 2
    assert model.calls == 18 and {r.status for r in _records(tmp_path / "run")} == {"error"}
    assert read_manifest(tmp_path / "run").status == "complete"
    err = capsys.readouterr().err
    assert "stopped model" not in err
    assert "every sample failed, the last with APIConnectionError" in err and f"recall-eval run --resume {tmp_path / 'run'}" in err


def test_api_base_credentials_never_reach_the_manifest(tmp_path: Path, suite: Path) -> None:
    install_scripted(lambda m, t: {"content": "ok"})
    assert _run(tmp_path, suite, "--api-base", "http://me:hunter22@127.0.0.1:8000/v1") == 0
    manifest = read_manifest(tmp_path / "run")
    assert manifest.parameters["api_base"] == "http://127.0.0.1:8000/v1"
    assert "hunter22" not in (tmp_path / "run" / "run.json").read_text(encoding="utf-8")


SMOKE = Path(__file__).resolve().parents[2] / "scenarios" / "smoke"


def test_two_workers_give_the_same_samples_and_answers_as_one(tmp_path: Path) -> None:
    answers = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        code = main(
            [
                "run",
                "--scenarios",
                str(SMOKE),
                "--out",
                str(out),
                "--workers",
                workers,
                "--max-concurrency",
                "4",
                "--no-cache",
                "--no-progress",
            ]
        )
        assert code == 0
        records = _records(out)
        assert len({r.sample_id for r in records}) == len(records) > 0
        answers[workers] = {r.sample_id: (r.status, r.final_answer) for r in records}
    assert answers["1"] == answers["2"]
    assert read_manifest(tmp_path / "w2").parameters["workers"] == 2


def test_workers_above_the_concurrency_are_a_clear_error(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, suite, "--workers", "4", "--max-concurrency", "2") == 2
    assert "--workers 4 exceeds --max-concurrency 2" in capsys.readouterr().err


def test_frozen_heap_keeps_objects_out_of_collections_only_during_the_run() -> None:
    import gc

    from harness.run.runner import frozen_heap

    before = gc.get_freeze_count()
    with frozen_heap():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0


def test_a_run_over_more_stores_than_the_template_cache_seeds_each_store_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 stories x 2 epochs, run epoch by epoch: the plan and both epochs open 40 distinct stores, each seeded once."""
    from harness.scenarios import seeding
    from tests.scenarios.test_seeding import _distinct_stories

    folder = tmp_path / "suite"
    folder.mkdir()
    for story in _distinct_stories(40):
        (folder / f"{story.id}.yaml").write_text(json.dumps(story.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    import harness.cli.run as cli_run

    monkeypatch.setattr(seeding, "_SHARED_TEMPLATES", seeding.StoreTemplates(capacity=32))
    seeded: list[int] = []  # read as the run lets go of its templates, its samples done

    def release() -> int:
        seeded.append(seeding._SHARED_TEMPLATES.seeded)
        return seeding.release_store_templates()

    monkeypatch.setattr(cli_run, "release_store_templates", release)
    assert _run(tmp_path, folder, "--arms", "recall", "--epochs", "2", model="offline/reference") == 0
    assert len(_records(tmp_path / "run")) == 80
    assert seeded == [40]
