"""Running scores in the progress display: per arm, the samples answered right so far out of those scored."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli import main
from harness.run import RunProgress
from tests.integration.conftest import SMOKE


def _record(arm: str, right: bool | None, model: str = "m") -> SimpleNamespace:
    return SimpleNamespace(arm=arm, model=model, right=right)


def _progress(stream: io.StringIO, total: int, arms: tuple[str, ...] = ("history_only", "recall")) -> RunProgress:
    return RunProgress(total, live=False, stream=stream, every_n=total, scorer=lambda r: r.right, arms=arms)


def test_the_progress_line_shows_right_so_far_out_of_scored_per_arm_in_the_runs_arm_order() -> None:
    stream = io.StringIO()
    progress = _progress(stream, 5)
    for record, ok in ((_record("recall", True), True), (_record("history_only", False), True),
                       (_record("recall", True), True), (_record("history_only", True), True),
                       (_record("recall", None), False)):  # an error sample: not scored
        progress.advance(ok, record=record)
    line = " ".join(stream.getvalue().split("[recall-eval] ")[-1].split())  # the last update, wrapped at 80 columns
    line = "[recall-eval] " + line
    assert line.startswith("[recall-eval] 5/5 samples, 1 errors")
    assert line.endswith("; right so far: history_only 1/2, recall 2/2")


def test_running_scores_name_model_and_arm_when_a_run_has_several_models() -> None:
    progress = _progress(io.StringIO(), 2)
    progress.advance(True, record=_record("recall", True, "a"))
    progress.advance(True, record=_record("recall", False, "b"))
    assert progress.score_text() == "right so far: a · recall 1/1, b · recall 0/1"


def test_without_a_scorer_the_line_has_counts_only_and_needs_no_records() -> None:
    stream = io.StringIO()
    progress = RunProgress(1, live=False, stream=stream)
    progress.advance(True, record=_record("recall", True))
    assert not progress.wants_records and "right so far" not in stream.getvalue()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_last_progress_line_of_a_run_agrees_with_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               workers: str) -> None:
    run_dir = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--arms", "history_only", "recall", "--out", str(run_dir), "--no-cache",
                 "--no-progress", "--workers", workers, "--max-concurrency", "2"])
    assert code in (0, 1)
    last = " ".join(capsys.readouterr().err.split("[recall-eval] ")[-1].split("\n    ")).split("\n")[0]
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = {arm: sum(r["outcome"] in ("correct", "abstained_correctly") for r in rows if r["arm"] == arm)
                for arm in ("history_only", "recall")}
    assert expected == {"history_only": 2, "recall": 4}  # the offline model on the smoke suite
    assert last.endswith(f"right so far: history_only {expected['history_only']}/5, recall {expected['recall']}/5")


def test_the_terminal_bar_shows_the_running_scores_too() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = RunProgress(2, stream=stream, scorer=lambda r: r.right, arms=("recall",))
    progress.advance(True, record=_record("recall", True))
    progress.advance(True, record=_record("recall", False))
    progress.close()
    assert "right so far: recall 1/2" in stream.getvalue()


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so the progress draws its rich bar into it."""

    def isatty(self) -> bool:
        return True


def test_the_bar_at_80_columns_keeps_its_words_and_puts_the_scores_under_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setenv("COLUMNS", "80")
    stream = _Terminal()
    arms = ("history_only", "recall", "full_history")
    progress = RunProgress(15, stream=stream, scorer=lambda r: r.right, arms=arms)
    for i in range(15):
        progress.advance(True, cached=i % 2 == 0, record=_record(arms[i % 3], True))
    progress.close()
    frames = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue()).replace("\r", "\n")
    lines = [line for line in frames.split("\n") if line.strip()]
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    bar = next(line for line in reversed(lines) if "15/15" in line)
    assert bar.startswith("samples ") and "errors 0" in bar and "cached 8" in bar  # no "sa... err... cac..."
    assert lines[-1] == "right so far: history_only 5/5, recall 5/5, full_history 5/5"
