"""The README quotes what the main command prints: its quoted block and figures are held to a real offline run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("### What the main command shows")
    return text[start:text.index("\n## ", start)]


def _quoted_block(section: str) -> list[str]:
    match = re.search(r"```text\n(.*?)```", section, re.S)
    assert match, "the README's main-command section quotes no ```text block"
    return match.group(1).rstrip("\n").splitlines()


@pytest.fixture(scope="module")
def main_command(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict]:
    """`recall-eval run` as the quick start runs it (the starter suite, offline, three arms), on a fresh cache."""
    tmp = tmp_path_factory.mktemp("readme")
    out = tmp / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)  # the default suite is scenarios/starter, relative, as on a fresh checkout
        import contextlib
        import io

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["run", "--out", str(out), "--cache-dir", str(tmp / "cache"), "--no-progress"])
    assert code == 0
    lines = printed.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model · arm"))
    end = next(i for i, line in enumerate(lines) if line.startswith("report: "))
    shown = [*lines[start:end], "report: reports/<UTC timestamp>/index.html"]
    assert lines[end] == f"report: {out / 'index.html'}"
    return shown, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_the_readmes_quoted_output_is_what_the_main_command_prints(main_command) -> None:
    shown, _ = main_command
    assert _quoted_block(_section()) == shown


def test_the_readmes_figures_are_the_main_commands(main_command) -> None:
    shown, summary = main_command
    prose = _section().split("```")[-1]
    printed = "\n".join(shown)
    for interval in re.findall(r"[+-]\d\.\d\d \[[+-]\d\.\d\d, [+-]\d\.\d\d\]", prose):
        assert interval in printed, f"the README quotes {interval}, the run printed no such interval"
    assert "+0.14 [+0.00, +0.27]" in prose and "−" not in prose.split("Continuity goes")[1].split("\n\n")[0]
    p = next(m["p_value"] for m in summary["mcnemar"] if m["model"] == "offline/reference")
    assert f"p = {p:.2f}" in prose
    flips = [f for f in summary["flips"] if (f["arm_a"], f["arm_b"]) == ("history_only", "recall")]
    fixed, broken = (sum(f["kind"] == kind for f in flips) for kind in ("fixed", "broken"))
    assert f"{fixed} scenarios fixed by recall, {broken} broken" in prose
    rows = {r["metric"]: r["value"] for r in summary["metrics"]
            if r["arm"] == "recall" and r["category"] == "all" and r["model"] == "offline/reference"}
    assert f"precision is {rows['retrieved_precision']:.2f} and recall {rows['retrieved_recall']:.2f}" in prose
