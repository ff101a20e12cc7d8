"""Every line the CLI prints fits 80 columns, at ``COLUMNS=80`` and when piped (no ``COLUMNS``).

One walk of every command as a newcomer meets it: each ``--help``, then
``validate``, ``list``, ``audit``, ``run --plan``, real offline runs (the smoke
suite twice, a run of one arm that warns), ``run --resume`` of a run cut short,
``run --rerun-failing``, two shards and their ``merge``, ``report``, ``compare``
(refused, forced, and a model pairing), ``history``, ``export inspect``,
``import`` of the LoCoMo, LongMemEval and transcript files, ``new``, ``schema
--out``, ``view``'s start lines, and each command's error for a wrong path or
input. Piped (no ``COLUMNS``), each command runs in its own process, its
output piped as in a CI log: the CLI must find 80 columns itself, and
whatever a process prints outside ``main`` (an import's warning) is seen. At
``COLUMNS=80`` the same walk runs through ``main`` in this process (output
captured, so still not a terminal) with ``COLUMNS`` set: what that walk adds
is a width source that misreads ``COLUMNS``, which needs no interpreter of
its own per command to show (about sixty fewer starts). A line may pass 80
only for a path or URL that cannot wrap, standing alone or after a short
label or command (at most :data:`LABEL` characters).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "importers"
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


def _runs(root: Path) -> list[list[str]]:
    """The commands that make or read real run folders, in order (each may need the ones before it)."""
    smoke, starter = str(REPO / "scenarios" / "smoke"), str(REPO / "scenarios" / "starter")
    runs, cache = root / "runs", ["--cache-dir", str(root / "cache")]
    a, b = str(runs / "a"), str(runs / "b")
    return [["validate", starter], ["list", starter], ["audit", starter],
            ["run", "--scenarios", starter, "--plan", "--model", "offline/reference", "--model", "openai/gpt-4o-mini"],
            ["run", "--scenarios", smoke, "--out", a, *cache],
            ["run", "--scenarios", smoke, "--out", b, "--max-tool-rounds", "1", *cache],
            ["run", "--scenarios", smoke, "--arms", "recall", "--model", "offline/abstain", "--out", str(runs / "c"),
             *cache],
            ["run", "--rerun-failing", b, "--out", str(runs / "d"), *cache],
            *(["run", "--scenarios", smoke, "--shard", f"{i}/2", "--out", str(root / "shards" / str(i)), *cache]
              for i in (1, 2)),
            ["merge", str(root / "merged"), str(root / "shards" / "1"), str(root / "shards" / "2")],
            ["report", a], ["compare", a, b], ["compare", a, b, "--force"], ["compare", a, b, "--force", "--full"],
            ["compare", a, b, "--pair", "offline/reference=offline/reference"],
            ["history", str(runs), "--out", str(root / "history.html")],
            ["export", "inspect", a, str(root / "logs")],
            ["import", "locomo", str(FIXTURES / "locomo_mini.json"), str(root / "imported" / "locomo")],
            ["import", "longmemeval", str(FIXTURES / "longmemeval_mini.json"), str(root / "imported" / "lme")],
            ["import", "transcripts", str(_transcripts(root)), str(root / "imported" / "transcripts")],
            ["new", "scenario", str(root / "new" / "my-scenario.yaml")],
            ["schema", "--out", str(root / "schema.json")]]


def _errors(root: Path) -> list[list[str]]:
    """A newcomer's mistakes, one per command: each prints its error (exit 2 or 1), nothing more."""
    missing, runs = str(root / "no-such-folder" / "nightly-2026-12-01"), root / "runs"
    return [["validate", missing], ["validate", str(REPO / "tests" / "fixtures" / "scenarios" / "broken")],
            ["list", missing], ["audit", missing], ["report", missing], ["history", missing], ["view", missing],
            ["compare", missing, str(runs / "a")], ["merge", str(root / "merged-2"), str(runs / "a"), str(runs / "b")],
            ["export", "inspect", missing, str(root / "logs-2")],
            ["import", "locomo", missing, str(root / "imported" / "x")],
            ["import", "longmemeval", str(FIXTURES / "locomo_mini.json"), str(root / "imported" / "y")],
            ["run", "--resume", missing], ["run", "--rerun-failing", missing], ["run", "--scenarios", missing],
            ["run", "--model", "offline/reference,offline/abstain", "--plan"], ["run", "--max-conc", "4"],
            ["new", "scenario", str(root / "new" / "my-scenario.yaml")],
            ["schema", "--out", str(root / "schema.json" / "x.json")]]


def _transcripts(root: Path) -> Path:
    """A team's logged conversations, two sessions, in the importer's JSONL shape."""
    from tests.importers.transcript_fixtures import two_sessions, write_jsonl

    return write_jsonl(root / "transcripts.jsonl", two_sessions())


def _resumable(root: Path) -> list[str]:
    """A copy of run a cut short after 7 of its samples (as Ctrl-C leaves it), and the command that resumes it."""
    cut = root / "runs" / "cut"
    shutil.copytree(root / "runs" / "a", cut)
    records = (cut / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (cut / "results.jsonl").write_text("".join(records[:7]), encoding="utf-8")
    return ["run", "--resume", str(cut)]


def _view_start(root: Path, env: dict[str, str]) -> str:
    """What ``view`` prints before it serves (its address, what it found), read from the running server."""
    argv = [sys.executable, "-m", "harness.cli", "view", str(root / "runs"), "--port", "0"]
    with subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline() for _ in range(2)]  # the address, then the folder and its run count
        finally:
            proc.kill()
    assert "serving at http://127.0.0.1:" in lines[0] and "run folder(s) below" in "".join(lines), lines
    return "".join(lines)


Call = Callable[[list[str]], tuple[int, str]]


def _in_processes(env: dict[str, str]) -> Call:
    """Each command line run in a process of its own, piped: (exit code, standard output and error)."""

    def call(args: list[str]) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        return done.returncode, done.stdout + done.stderr

    return call


def _in_this_process(capsys: pytest.CaptureFixture[str]) -> Call:
    """Each command line run through ``main`` here, its output captured: (exit code, standard output and error)."""
    from harness.cli import main

    def call(args: list[str]) -> tuple[int, str]:
        capsys.readouterr()
        try:
            code = main(args)
        except SystemExit as stop:  # argparse's --help and usage errors
            code = stop.code if isinstance(stop.code, int) else 2
        printed = capsys.readouterr()
        assert "Traceback" not in printed.err, (args, printed.err)
        return code, printed.out + printed.err

    return call


def _walk(root: Path, env: dict[str, str], call: Call) -> dict[str, str]:
    """Each command line -> what it printed (standard output and error), each run by ``call``."""
    out = {}

    def run(args: list[str]) -> int:
        code, out[" ".join(args)] = call(args)
        return code

    for args in [["--help"], *([command, "--help"] for command in COMMANDS), *_runs(root)]:
        run(args)
    run(_resumable(root))
    out["view (start)"] = _view_start(root, env)
    for args in _errors(root):
        assert run(args) != 0, (args, out[" ".join(args)])
    return out


def _check(printed: dict[str, str]) -> None:
    assert "right so far" in printed[next(k for k in printed if k.startswith("run") and "runs/a" in k)]
    assert "samples to run (7 already done" in printed[next(k for k in printed if "--resume" in k and "cut" in k)]
    merged = next(k for k in printed if k.startswith("merge") and "shards" in k)
    assert "merged 2 shard(s): 15 samples of 15 planned" in " ".join(printed[merged].split())
    long = {command: found for command, text in printed.items() if (found := too_long(text))}
    assert not long, "\n".join(f"{command}:\n" + "\n".join(f"  {len(line)}: {line}" for line in found)
                               for command, found in long.items())


def _env(columns: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env.update({"PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **({"COLUMNS": columns} if columns else {})})
    return env


@pytest.mark.slow  # some forty processes, runs among them: a few minutes on a loaded two-core machine
def test_every_command_prints_lines_of_at_most_80_columns_piped(tmp_path: Path) -> None:
    env = _env(None)
    _check(_walk(tmp_path, env, _in_processes(env)))


@pytest.mark.slow  # the same walk in this process: a minute on a loaded two-core machine
def test_every_command_prints_lines_of_at_most_80_columns_at_columns_80(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    env = _env("80")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.chdir(REPO)  # where the piped walk's processes run (their project settings)
    _check(_walk(tmp_path, env, _in_this_process(capsys)))


def test_the_check_sees_a_long_line_and_lets_a_lone_path_pass() -> None:
    assert too_long("x " * 41) == ["x " * 41]
    assert too_long("wrote /" + "d" * 90) == []  # a path after a short label: it cannot wrap
    assert too_long("a sentence that goes on and on " * 3 + "/a/path") != []  # prose before a path still wraps
