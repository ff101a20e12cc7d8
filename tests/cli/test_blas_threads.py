"""The CLI runs numpy's BLAS on one thread unless the user chose a count."""

import os
import subprocess
import sys

from harness import cli


def test_blas_threads_default_to_one_when_the_user_set_none():
    environ: dict[str, str] = {}
    cli.single_threaded_blas(environ)
    assert environ == {name: "1" for name in cli.BLAS_THREAD_VARIABLES}


def test_a_blas_thread_count_the_user_set_is_kept():
    environ = {"OPENBLAS_NUM_THREADS": "4"}
    cli.single_threaded_blas(environ)
    assert environ["OPENBLAS_NUM_THREADS"] == "4" and environ["MKL_NUM_THREADS"] == "1"


def test_a_command_sets_the_blas_threads_before_it_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in cli.BLAS_THREAD_VARIABLES}
    code = ("import os; from harness.cli import main; main(['schema', '--out', 'schema.json']); "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "1", out.stderr
