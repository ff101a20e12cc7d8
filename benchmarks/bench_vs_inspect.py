"""recall-eval against inspect_ai on the same small offline jobs, whole processes, alternating runs.

The peer (inspect_ai, 0.3.285 unless ``--peer-version`` says otherwise) is
installed by this script in its own virtual environment (``--peer-venv``,
default ``/tmp/recall-eval-peer-venv``), never into the project's. Both sides
get the same samples: the starter suite's ``history_only`` messages (the
system prompt and the conversation before the probe, ~211 tokens), repeated
to N samples (60 = the suite once; 2,160 = 36 epochs).

- inspect_ai: ``eval()`` of a Task with one ``generate()`` and a ``match()``
  scorer per sample on ``mockllm/model``, ``max_connections`` equal to
  recall-eval's default ``--max-concurrency`` (8), its log written to a
  temporary folder, no display;
- recall-eval: ``recall-eval run --arms history_only --epochs E --no-cache
  --no-progress`` on the offline model (scores, summary and report included).

Each size runs ``--repeats`` rounds, peer then recall-eval, each a fresh
process measured with ``wait4`` (wall, user+system CPU, peak RSS). Medians
and the ratios recall-eval / inspect_ai are printed (ratio <= 1.0: recall-eval
no slower / no larger). On a shared machine wall time measures the neighbours
too; the alternation gives both sides the same neighbours on average, and CPU
time is printed beside it.

Measured 2026-12-02 on 2 cores shared by 9 agents (load average 12-14, so
wall times are inflated several-fold; the ratios are the figures to read),
medians of 3 alternating rounds: 60 samples, inspect_ai wall 25.0 s, CPU
5.85 s, peak 206 MiB; recall-eval wall 6.2 s, CPU 1.56 s, peak 109 MiB (ratios
0.25 wall, 0.27 CPU, 0.53 memory). 2,160 samples: inspect_ai wall 538 s, CPU
59.8 s, peak 345 MiB; recall-eval wall 33.3 s, CPU 3.62 s, peak 164 MiB (16x
faster, memory 0.48). The offline run no longer imports litellm (before: 60
samples 1.57x slower than inspect_ai, peak memory 1.98x, issue 26).

Usage::

    python benchmarks/bench_vs_inspect.py                      # 60 and 2,160 samples, 3 rounds each
    python benchmarks/bench_vs_inspect.py --sizes 60 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SUITE = ROOT / "scenarios" / "starter"
CONCURRENCY = 8  # recall-eval's default --max-concurrency (harness/defaults.py)

_PEER_SCRIPT = r'''
import json, sys
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import match
from inspect_ai.solver import generate

prompts, count, log_dir, connections = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
samples = []
for i in range(count):
    prompt = prompts[i % len(prompts)]
    messages = [kinds[m["role"]](content=m["content"]) for m in prompt["messages"]]
    samples.append(Sample(id=f"{prompt['id']}-{i // len(prompts)}", input=messages, target=prompt["target"]))
task = Task(dataset=MemoryDataset(samples), solver=[generate()], scorer=match())
logs = inspect_eval(task, model="mockllm/model", log_dir=log_dir, display="none", max_connections=connections)
print(logs[0].status, len(logs[0].samples or []))
'''


def ensure_peer(venv: Path, version: str) -> Path:
    """The peer's python, installing inspect_ai into its own virtual environment first if needed."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import inspect_ai; print(inspect_ai.__version__)"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == version:
        return python
    print(f"installing inspect_ai=={version} into {venv} (its own virtual environment) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"inspect_ai=={version}"], check=True)
    return python


def tokenizer_folder() -> Path:
    """The tiktoken files litellm ships (a tiktoken cache folder), found without importing litellm."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("litellm is not installed in this environment: the peer needs its tiktoken files offline")
    return Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"


def history_only_prompts() -> list[dict]:
    """The starter suite's history_only messages, as recall-eval sends them, with a target string per scenario."""
    from harness.memory_systems import resolve_arm
    from harness.scenarios import load_scenarios, probe_policy

    arm, out = resolve_arm("history_only"), []
    for scenario in load_scenarios([SUITE]):
        instance = arm.system.open(scenario, arm.write_mode)
        try:
            policy, context = probe_policy(scenario)
            setup = instance.begin_probe(policy, context).arm_setup()
        finally:
            instance.close()
        messages = [{"role": m["role"], "content": m["content"]} for m in setup.messages]
        out.append({"id": scenario.id, "messages": messages, "target": scenario.id})
    return out


def measure(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS MiB, exit code, last output line) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    output = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 2160], help="samples per job (multiples of 60)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds per size")
    parser.add_argument("--peer-venv", type=Path, default=Path(tempfile.gettempdir()) / "recall-eval-peer-venv")
    parser.add_argument("--peer-version", default="0.3.285")
    parser.add_argument("--harness", type=Path, default=ROOT, help="the recall-eval checkout to measure (e.g. /work/main: before)")
    args = parser.parse_args()
    peer = ensure_peer(args.peer_venv, args.peer_version)
    prompts = history_only_prompts()
    tokens = statistics.mean(sum(len(m["content"]) for m in p["messages"]) for p in prompts) / 4
    print(f"{len(prompts)} history_only prompts (~{tokens:.0f} tokens each by chars/4); {CONCURRENCY} in flight on both sides; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    ours_env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(args.harness))
    peer_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # inspect_ai counts with tiktoken's o200k_base, which tiktoken downloads; offline it reads the copy litellm ships.
    peer_env["TIKTOKEN_CACHE_DIR"] = str(tokenizer_folder())
    python = args.harness / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    with tempfile.TemporaryDirectory(prefix="bench-vs-inspect-") as tmp:
        work = Path(tmp)
        (work / "prompts.json").write_text(json.dumps(prompts))
        (work / "peer.py").write_text(_PEER_SCRIPT)
        for size in args.sizes:
            epochs = max(1, size // len(prompts))
            rows: dict[str, list[tuple[float, float, float]]] = {"inspect_ai": [], "recall-eval": []}
            for round_ in range(args.repeats):
                logs, out = work / f"logs-{size}-{round_}", work / f"run-{size}-{round_}"
                peer_cmd = [str(peer), str(work / "peer.py"), str(work / "prompts.json"), str(epochs * len(prompts)), str(logs),
                            str(CONCURRENCY)]
                ours_cmd = [str(python), "-m", "harness.cli", "run", "--scenarios", str(SUITE), "--arms", "history_only",
                            "--epochs", str(epochs), "--no-cache", "--no-progress", "--out", str(out)]
                for name, command, env in (("inspect_ai", peer_cmd, peer_env), ("recall-eval", ours_cmd, ours_env)):
                    wall, cpu, rss, code, last = measure(command, env, work)
                    if code not in (0, 1) or (name == "inspect_ai" and last != f"success {epochs * len(prompts)}"):
                        raise SystemExit(f"{name} failed (exit {code}): {last}")
                    rows[name].append((wall, cpu, rss))
                    print(f"  {size:>6,} samples  round {round_ + 1}  {name:12} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak {rss:6.0f} MiB",
                          flush=True)
            med = {name: [statistics.median(r[i] for r in found) for i in range(3)] for name, found in rows.items()}
            peer_m, ours_m = med["inspect_ai"], med["recall-eval"]
            print(f"{size:,} samples (medians of {args.repeats}): inspect_ai wall {peer_m[0]:.2f} s CPU {peer_m[1]:.2f} s peak "
                  f"{peer_m[2]:.0f} MiB; recall-eval wall {ours_m[0]:.2f} s CPU {ours_m[1]:.2f} s peak {ours_m[2]:.0f} MiB", flush=True)
            print(f"  ratio recall-eval / inspect_ai: wall {ours_m[0] / peer_m[0]:.2f}  CPU {ours_m[1] / peer_m[1]:.2f}  "
                  f"peak memory {ours_m[2] / peer_m[2]:.2f}   (speed-up: wall {peer_m[0] / ours_m[0]:.1f}x, CPU "
                  f"{peer_m[1] / ours_m[1]:.1f}x)", flush=True)


if __name__ == "__main__":
    main()
