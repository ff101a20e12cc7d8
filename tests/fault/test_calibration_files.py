"""Judge calibration files (the bundled ones or a user's) read with the scenario files' refusing YAML loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.score import grounding, judge
from harness.score.judge import JudgeError


def _billion_laughs(levels: int = 9) -> str:
    lines = ['lol0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels + 1)]
    return "items: []\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize("load", [judge.load_calibration, grounding.load_calibration], ids=["rubric", "grounding"])
def test_billion_laughs_calibration_file_is_refused_in_one_line(tmp_path: Path, load) -> None:
    """A billion-laughs calibration file is refused at its first alias with one JudgeError line naming the file and line."""
    path = tmp_path / "calibration.yaml"
    path.write_text(_billion_laughs(), encoding="utf-8")
    with pytest.raises(JudgeError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}:3: YAML alias *a0 (anchor &a0 on line 2) refused")


def test_calibration_file_nested_too_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    """A calibration file nested deeper than MAX_DEPTH is refused with one JudgeError line naming the file, not a RecursionError."""
    path = tmp_path / "deep.yaml"
    path.write_text("items: " + "[" * 200 + "]" * 200 + "\n", encoding="utf-8")
    with pytest.raises(JudgeError) as caught:
        judge.load_calibration(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}:1: nested more than")


def test_bundled_calibration_files_pass_the_refusing_loader() -> None:
    """The shipped calibration sets use no alias, deep nesting or duplicate key, so the refusing loader reads them whole."""
    for load, path in ((judge.load_calibration, judge.CALIBRATION_FILE), (grounding.load_calibration, grounding.CALIBRATION_FILE)):
        assert len(load()) == path.read_text(encoding="utf-8").count("\n  - id: ") > 10
