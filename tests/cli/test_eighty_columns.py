"""Every line the CLI prints fits 80 columns, at ``COLUMNS=80`` and when piped (no ``COLUMNS``).

One walk of every command as a newcomer meets it: each ``--help``, then
``validate``, ``list``, ``audit``, ``run --plan``, real offline runs (the smoke
suite twice, a run of one arm that warns), ``report``, ``compare`` (refused,
forced, and a model pairing), ``history``, ``export inspect``, ``new`` and
``schema --out``, each in its own process so the output is piped as in a CI
log. A line may pass 80 only for a path or URL that cannot wrap, standing
alone or after a short label or command (at most :data:`LABEL` characters).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WIDTH = 80
#: What may stand before an unbreakable path or URL on a line longer than :data:`WIDTH`.
LABEL = 32
COMMANDS = ("validate", "list", "schema", "new", "view", "export", "run", "merge", "report", "compare", "import",
            "audit", "history")


def _unbreakable(line: str) -> bool:
    """A path or URL longer than what is left of the line, after at most a short label or command."""
    words = line.split()
    if not words:
        return False
    token = max(words, key=len)
    path_like = "/" in token or "\\" in token or "://" in token
    return path_like and len(line) - len(token) <= LABEL


def too_long(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH and not _unbreakable(line)]


def _walk(root: Path, env: dict[str, str]) -> dict[str, str]:
    """Each command line -> what it printed (standard output and error), in separate processes."""
    smoke, starter = str(REPO / "scenarios" / "smoke"), str(REPO / "scenarios" / "starter")
    cache = ["--cache-dir", str(root / "cache")]
    lines: list[list[str]] = [["--help"], *([command, "--help"] for command in COMMANDS),
                              ["validate", starter], ["list", starter], ["audit", starter],
                              ["run", "--scenarios", starter, "--plan", "--model", "offline/reference",
                               "--model", "openai/gpt-4o-mini"],
                              ["run", "--scenarios", smoke, "--out", str(root / "runs" / "a"), *cache],
                              ["run", "--scenarios", smoke, "--out", str(root / "runs" / "b"), "--max-tool-rounds", "1",
                               *cache],
                              ["run", "--scenarios", smoke, "--arms", "recall", "--model", "offline/abstain",
                               "--out", str(root / "runs" / "c"), *cache],
                              ["report", str(root / "runs" / "a")],
                              ["compare", str(root / "runs" / "a"), str(root / "runs" / "b")],
                              ["compare", str(root / "runs" / "a"), str(root / "runs" / "b"), "--force"],
                              ["compare", str(root / "runs" / "a"), str(root / "runs" / "b"), "--pair",
                               "offline/reference=offline/reference"],
                              ["history", str(root / "runs"), "--out", str(root / "history.html")],
                              ["export", "inspect", str(root / "runs" / "a"), str(root / "logs")],
                              ["new", "scenario", str(root / "new" / "my-scenario.yaml")],
                              ["schema", "--out", str(root / "schema.json")]]
    out = {}
    for args in lines:
        done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        out[" ".join(args)] = done.stdout + done.stderr
    return out


@pytest.mark.parametrize("columns", ["80", None], ids=["COLUMNS=80", "piped"])
def test_every_command_prints_lines_of_at_most_80_columns(tmp_path: Path, columns: str | None) -> None:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env.update({"PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **({"COLUMNS": columns} if columns else {})})
    printed = _walk(tmp_path, env)
    assert "right so far" in printed[next(k for k in printed if k.startswith("run") and "runs/a" in k)]
    long = {command: found for command, text in printed.items() if (found := too_long(text))}
    assert not long, "\n".join(f"{command}:\n" + "\n".join(f"  {len(line)}: {line}" for line in found)
                               for command, found in long.items())


def test_the_check_sees_a_long_line_and_lets_a_lone_path_pass() -> None:
    assert too_long("x " * 41) == ["x " * 41]
    assert too_long("wrote /" + "d" * 90) == []  # a path after a short label: it cannot wrap
    assert too_long("a sentence that goes on and on " * 3 + "/a/path") != []  # prose before a path still wraps
