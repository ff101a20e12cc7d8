"""Hostile scenario files: YAML aliases and deep nesting meet a one-line error, never a traceback or a memory blow-up.

Each test runs the real ``recall-eval`` command in a child process, so what is
checked is what a user sees: the exit code, one ``file:line: ...`` line naming
the fault, no traceback, and (for the billion-laughs file) the child's peak
memory as the kernel counted it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "fixtures" / "scenarios" / "good" / "valid.yaml"
_GUARD_S = 120  # a hang guard only: the refusal takes a fraction of a second


def _recall_eval(*args: str, cwd: Path) -> tuple[int, str, str, int]:
    """Run ``recall-eval ARGS`` in a child; returns exit code, stdout, stderr and the child's own peak RSS in KB.

    The child reports its own ``VmHWM`` (the high-water mark of its address space, which starts afresh at
    exec) into a file. ``ru_maxrss`` from ``wait4`` is not used: Linux carries the parent's peak across
    fork and exec into it, so inside a large pytest process it measured pytest, not the child.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out_path, err_path, peak_path = cwd / ".stdout", cwd / ".stderr", cwd / ".peak"
    wrapper = ("import atexit, re, sys\n"
               "def _peak():\n"
               "    status = open('/proc/self/status').read()\n"
               f"    open({str(peak_path)!r}, 'w').write(re.search(r'VmHWM:\\s+(\\d+)', status).group(1))\n"
               "atexit.register(_peak)\n"
               "from harness.cli import main\n"
               "sys.exit(main(sys.argv[1:]))\n")
    with out_path.open("w") as out, err_path.open("w") as err:
        child = subprocess.Popen([sys.executable, "-c", wrapper, *args], cwd=cwd, env=env, stdout=out, stderr=err)
    started = time.monotonic()
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > _GUARD_S:
            child.kill()
            os.wait4(child.pid, 0)
            pytest.fail(f"recall-eval {' '.join(args)} still running after {_GUARD_S} s")
        time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    del usage
    return child.returncode, out_path.read_text(), err_path.read_text(), int(peak_path.read_text())


def _billion_laughs(levels: int = 9) -> str:
    lines = ['lol0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_validate_refuses_a_recursive_alias_in_one_line(tmp_path: Path) -> None:
    """A recursive YAML alias (``a: &a [*a]``) gets one ``file:line`` error naming the alias, no RecursionError traceback."""
    (tmp_path / "recursive.yaml").write_text("a: &a [*a]\n", encoding="utf-8")
    code, out, err, _ = _recall_eval("validate", "recursive.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    first, summary = out.strip().splitlines()
    assert first.startswith("recursive.yaml:1: YAML alias *a (anchor &a on line 1) refused: it sits inside its own anchor")
    assert summary == "1 files, 0 scenarios, 1 errors, 0 warnings"


def test_validate_refuses_billion_laughs_with_little_memory(tmp_path: Path) -> None:
    """A nine-level billion-laughs file is refused at its first alias before expansion, in one line and a small, bounded memory."""
    (tmp_path / "laughs.yaml").write_text(_billion_laughs(9), encoding="utf-8")
    code, out, err, peak_kb = _recall_eval("validate", "laughs.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    assert out.splitlines()[0].startswith("laughs.yaml:2: YAML alias *a0 (anchor &a0 on line 1) refused")
    assert peak_kb < 300 * 1024  # the interpreter and its imports; expanding 10^9 strings would take tens of GB


@pytest.mark.parametrize("command", ["list", "run"])
def test_list_and_run_print_the_alias_refusal_without_a_traceback(tmp_path: Path, command: str) -> None:
    """``list`` and ``run`` on a suite holding an alias print the one-line refusal and exit non-zero instead of a traceback."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "valid.yaml").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    (suite / "laughs.yaml").write_text(_billion_laughs(9), encoding="utf-8")
    if command == "list":
        args = ["list", "suite"]
    else:
        args = ["run", "--scenarios", "suite", "--model", "offline/reference", "--out", "run", "--no-progress", "--no-cache"]
    code, out, err, _ = _recall_eval(*args, cwd=tmp_path)
    assert code != 0 and "Traceback" not in out + err, err
    assert "suite/laughs.yaml:2: YAML alias *a0 (anchor &a0 on line 1) refused" in err


def test_alias_in_a_defaults_file_is_refused(tmp_path: Path) -> None:
    """An alias in a ``_defaults.yaml`` is refused there, once, even though every scenario below reads that file."""
    (tmp_path / "_defaults.yaml").write_text("tags: &t [a]\nprobe: {history: *t}\n", encoding="utf-8")
    for name in ("one.yaml", "two.yaml"):
        (tmp_path / name).write_text(GOOD.read_text(encoding="utf-8").replace("id: fx-", f"id: {name[:3]}-"), encoding="utf-8")
    code, out, err, _ = _recall_eval("validate", ".", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    lines = out.strip().splitlines()
    assert lines[0].startswith("_defaults.yaml:2: YAML alias *t (anchor &t on line 1) refused")
    assert lines[1:] == ["2 files, 0 scenarios, 1 errors, 0 warnings"]  # no scenario loads on broken defaults


def test_deeply_nested_file_is_refused_without_a_traceback(tmp_path: Path) -> None:
    """A file nested 990 levels deep (under libyaml's own limit) gets a one-line error, not a RecursionError traceback."""
    (tmp_path / "deep.yaml").write_text("a: " + "[" * 990 + "]" * 990 + "\n", encoding="utf-8")
    code, out, err, _ = _recall_eval("validate", "deep.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    assert out.splitlines()[0].startswith("deep.yaml:1: nested more than 32 levels deep")


def test_a_broken_file_outside_the_filter_does_not_stop_a_filtered_list_but_fails_validate(tmp_path: Path) -> None:
    """A suite holding a schema-broken file and an unparseable one still lists (and runs) the probe a filter selects; ``validate`` reports both."""
    from tests.scenarios.conversation_factories import write_conversation

    suite = tmp_path / "suite"
    write_conversation(suite, probes=3)
    (suite / "broken.yaml").write_text(GOOD.read_text(encoding="utf-8").replace("kind: context", "kind: contxt", 1), encoding="utf-8")
    (suite / "syntax.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    code, out, err, _ = _recall_eval("list", "suite", "--id", "conv-1/q2", cwd=tmp_path)
    assert code == 0 and "Traceback" not in out + err, err
    assert "conv-1/q2" in out and out.strip().endswith("1 scenario")
    code, out, err, _ = _recall_eval("validate", "suite", cwd=tmp_path)
    assert code == 1 and "suite/broken.yaml:" in out and "suite/syntax.yaml:" in out
