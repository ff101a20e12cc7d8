"""``recall-eval run --plan`` on a 6,000-sample suite, in a fresh process; print the figures.

Usage: python benchmarks/plan_bench.py [--scenarios 2000] [--model openai/gpt-4o-mini]
Target: < 5 s from process start to the printed plan, litellm's import included.

The suite is 2,000 generated scenario files x the three default arms. Printed: the
wall time of the whole command, its CPU time (user + system of the child: what the
command itself costs on a shared machine), and the import of litellm alone in another
fresh process, for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.score.scoring_factories import make_scenario  # noqa: E402


def write_suite(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        data = make_scenario(f"bench-{index:05d}").model_dump(mode="json", exclude_none=True)
        data["probe"]["message"] = f"{data['probe']['message']} (variant {index})"
        (folder / f"bench-{index:05d}.yaml").write_text(json.dumps(data), encoding="utf-8")
    return folder


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", type=int, default=2000)
    parser.add_argument("--model", default="openai/gpt-4o-mini")
    args = parser.parse_args()
    suite = write_suite(Path(tempfile.mkdtemp()) / "suite", args.scenarios)
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    exe = Path(sys.executable).with_name("recall-eval")
    cpu0, t0 = _child_cpu(), time.perf_counter()
    out = subprocess.run([str(exe), "run", "--plan", "--scenarios", str(suite), "--model", args.model, "--no-progress"],
                         capture_output=True, text=True, env=env, cwd=REPO, check=True).stdout
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    cpu1, t1 = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", "import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'; import litellm"],
                   check=True, env=env)
    import_wall, import_cpu = time.perf_counter() - t1, _child_cpu() - cpu1
    print(f"load average {os.getloadavg()[0]:.1f} (2 shared cores)")
    print(out.splitlines()[0])
    print(f"recall-eval run --plan, {args.scenarios} scenarios x 3 arms: wall {wall:.2f} s, CPU {cpu:.2f} s  [target < 5 s]")
    print(f"  of which litellm's import alone (fresh process): wall {import_wall:.2f} s, CPU {import_cpu:.2f} s")


if __name__ == "__main__":
    main()
