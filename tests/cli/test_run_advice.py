"""`run` warns and advises before it spends: a run with no baseline arm, a --model litellm cannot call."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.run import model_name_problems

SMOKE = Path(__file__).resolve().parents[2] / "scenarios" / "smoke"


def test_arms_without_a_baseline_warn_before_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--scenarios", str(SMOKE), "--arms", "recall", "--plan"]) == 0
    err = capsys.readouterr().err
    warning = ("warning: --arms recall has no history_only arm: the verdict compares recall with history_only, so "
               "it will be inconclusive (no paired difference); for a verdict run --arms history_only recall")
    assert warning in err


def test_arms_with_baseline_and_treatment_do_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--scenarios", str(SMOKE), "--arms", "recall", "history_only", "--plan"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_model_typo_stops_before_anything_is_written_and_names_the_right_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", "--scenarios", str(SMOKE), "--model", "ofline/reference", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "error: --model ofline/reference: litellm knows no provider for it; did you mean offline/reference?" in err
    assert "--resume" not in err.split("did you mean")[0] and "Provider List" not in err


def test_a_name_missing_from_litellms_map_is_a_warning_with_the_close_name() -> None:
    errors, warnings = model_name_problems(["openai/gpt-4o-mni", "offline/reference", "openai/gpt-4o-mini"])
    assert errors == []
    assert warnings == ["--model openai/gpt-4o-mni is not in litellm's model map; did you mean openai/gpt-4o-mini? "
                        "(a local or proxied server may serve any name)"]


def test_a_model_without_a_provider_gets_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    errors, _ = model_name_problems(["zzzz-qqqq"])
    assert errors == ["--model zzzz-qqqq: litellm knows no provider for it; litellm model strings are PROVIDER/NAME, "
                      "e.g. openai/gpt-4o-mini (a new run: --resume keeps a run's models)"]
