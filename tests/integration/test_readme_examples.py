"""Every example command the README and ``--help`` show still works as shown.

Each ``recall-eval ...`` line of the README's shell blocks must parse with
today's flags; the ones that need no model API run (offline, or with
``--plan``, which calls no model), and a ``# plan:`` comment under a
``--plan`` example must be what that command prints. The ``--filter``
example of ``run --help`` must select scenarios of the starter suite.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from harness.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
# Placeholders the README writes where the reader puts a value of their own (the run folder to read, a prompt file).
_PLACEHOLDERS = {"RUN_DIR", "official_prompt.txt", "reports/...", "reports/20261130T062553Z", "$RUN", "$MODEL",
                 "last-good", "reports/", "reports/history.html", "$RUN/compare.html", "proxy.yaml"}


def readme_examples() -> list[tuple[int, list[str], list[str]]]:
    """``(line, argv after 'recall-eval', the '# ' comment lines right below it)`` of every README shell example."""
    text = README.read_text(encoding="utf-8")
    found = []
    for block in re.finditer(r"```(?:bash|sh|console)\n(.*?)```", text, re.S):
        first = text[:block.start()].count("\n") + 2
        lines = block.group(1).splitlines()
        for index, line in enumerate(lines):
            match = re.search(r"(?:^|\s|/)recall-eval (.*)$", line)
            if not match or line.lstrip().startswith("#"):
                continue
            command = re.sub(r"\s+#.*$", "", match.group(1).split("||")[0]).strip()
            argv = [a for a in shlex.split(command) if a != "..."]
            comments = []
            for below in lines[index + 1:]:
                if not below.startswith("# ") or "recall-eval" in below:
                    break
                comments.append(below[2:])
            found.append((first + index, argv, comments))
    return found


_EXAMPLES = readme_examples()


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refusing a flag
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_the_readme_shows_the_examples_this_test_checks() -> None:
    commands = {argv[0] for _, argv, _ in _EXAMPLES}
    assert {"run", "report", "compare", "history"} <= commands and len(_EXAMPLES) >= 12


@pytest.mark.parametrize("line, argv", [(line, argv) for line, argv, _ in _EXAMPLES], ids=lambda v: str(v) if isinstance(v, int) else None)
def test_every_readme_example_parses_with_todays_flags(line: int, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"README.md:{line}: recall-eval {shlex.join(argv)} does not parse (exit {exc.code}): "
                    f"{capsys.readouterr().err.strip()}")


def _runnable(argv: list[str]) -> bool:
    """Commands this test runs: `run` without a placeholder (a real model only with --plan added); the quick start's
    bare `run` is test_readme_output's."""
    return argv[0] == "run" and len(argv) > 1 and not any(a in _PLACEHOLDERS for a in argv) and "--shard" not in argv


def _offline(argv: list[str]) -> bool:
    models = [argv[i + 1] for i, a in enumerate(argv) if a == "--model"]
    return all(m.startswith("offline/") for m in models) and "--api-base" not in argv


@pytest.mark.parametrize("line, argv", [(line, argv) for line, argv, _ in _EXAMPLES if _runnable(argv)],
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_every_readme_run_example_runs_offline_or_plans(line: int, argv: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline example runs for real (its output folder moved into tmp); one naming a real model plans (no call)."""
    monkeypatch.chdir(REPO)  # the README's paths (scenarios/smoke) are the checkout's
    extra = ["--no-progress", "--cache-dir", str(tmp_path / "cache")]
    if _offline(argv) and "--plan" not in argv:
        extra += ["--out", str(tmp_path / "run")]
    elif "--plan" not in argv:
        extra.append("--plan")
    code, out, err = _run([*argv, *extra])
    assert code in (0, 1), f"README.md:{line}: recall-eval {shlex.join(argv)} exited {code}:\n{err[-2000:]}"
    assert "Traceback" not in err
    if "--plan" in extra or "--plan" in argv:
        assert out.startswith("plan: ") and " 0 samples," not in out.split("\n")[0]
    else:
        assert "verdict:" in out


def test_rerun_failing_runs_on_a_run_folder_as_the_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --rerun-failing RUN` (the README's third daily-loop line) on a real run of `run --limit 5`."""
    (line, argv, _), = [e for e in _EXAMPLES if "--rerun-failing" in e[1]]
    monkeypatch.chdir(REPO)
    first = tmp_path / "first"
    assert _run(["run", "--limit", "5", "--no-progress", "--out", str(first), "--cache-dir", str(tmp_path / "c")])[0] in (0, 1)
    given = [str(first) if a in _PLACEHOLDERS else a for a in argv]
    code, out, err = _run([*given, "--no-progress", "--out", str(tmp_path / "again"), "--cache-dir", str(tmp_path / "c")])
    assert code in (0, 1), f"README.md:{line}: {err[-2000:]}"
    assert "Traceback" not in err


@pytest.mark.parametrize("line, argv, comments", [e for e in _EXAMPLES if "--plan" in e[1] and e[2]],
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_a_plan_the_readme_quotes_is_what_the_command_prints(line: int, argv: list[str], comments: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out, err = _run(argv)
    assert code == 0, err
    quoted, printed = " ".join(" ".join(comments).split()), " ".join(out.split())
    assert printed.startswith(quoted), f"README.md:{line} quotes\n  {quoted}\nthe command prints\n  {printed[:len(quoted) + 40]}"


def test_the_filter_example_of_run_help_selects_scenarios(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    example = re.search(r"e\.g\. ((?:--filter \S+ )+)", text)
    assert example, "run --help shows no --filter example"
    filters = shlex.split(example.group(1))
    monkeypatch.chdir(REPO)
    code, out, err = _run(["run", "--plan", *filters])
    assert code == 0, err
    assert re.match(r"plan: [1-9][\d,]* samples", out), out[:200]
