"""Golden digests: proof that a change meant to keep behaviour (a refactor, a move) changed no output.

Two files, each written by this module running on the code *before* the change:

``tests/fixtures/golden/outputs.json`` holds the SHA-256 of every file a run
folder ends with (``results.jsonl``, ``run.json``, ``summary.json``,
``scores.jsonl``, ``metrics.csv``, ``junit.xml``, ``index.html``) for two
runs on ``offline/reference``: the starter suite in the four original arms and
the smoke suite in every built-in arm, two epochs each. The runs are made in a
child process under the deterministic clock of ``tests/golden/clock`` (every
latency and timestamp is the same on every machine), one sample at a time,
and the run folder's and the checkout's paths are replaced by placeholders
before hashing, so the digests are byte-for-byte on any machine. Written
with::

    PYTHONPATH=<checkout of the code before> python tests/golden/digests.py outputs tests/fixtures/golden/outputs.json

(it was written at the commit before the layout of one package per stage).
Regenerate it for an intended change of what a run writes, and say so in the
commit (issue 42 did: the probe as its own message changed the starter run's
answers, and scores.jsonl and metrics.csv gained the session-retrieval figures
of both populations; issue 44 did: scores.jsonl rows hold each sample's whole scores, schema_version 2, so
summary.json's scores_sha256 changed with it; issue 50 part 6 did: scores.jsonl rows record apart_gates,
schema_version 3 (both runs' scores and summary), and issue 49's starter audit made 4 abstain scenarios
answerable and widened one check (the starter run's scenario hashes, scores, tables and pages)).
The runs import the ``harness`` on the child's path: run
the test with ``PYTHONPATH`` set to the checkout under test when another
checkout is installed in the virtualenv, or it digests that one.

``tests/fixtures/golden/starter_four_arms.json`` was written by this module
running on the code *before* the arms became memory systems (the commit
before "protocol:"), with::

    PYTHONPATH=<checkout of that commit> python tests/golden/digests.py records RUN_DIR OUT.json

where RUN_DIR is ``recall-eval run --arms history_only recall full_history
memory_document --no-cache`` of the starter suite on ``offline/reference``.
Per sample it holds two SHA-256 digests: ``record`` (answer, stop reason,
offered tools, transcript, model calls without latency, tool calls without
timing) and ``cache_key`` (the response-cache key of the sample's first
model call for a real model name, from the arm's messages and tool specs).
Regenerate it only for an intended change of what an arm sends. The 16
samples of the four ``forget-*`` scenarios were added later by ``records``
on the code that added them (the arms unchanged), beside the 240 before.
Issue 42 regenerated it on purpose: an arm no longer joins two messages of
one role in a row (the probe stays its own message), which changed the 68
samples whose messages hold such a run, and only those.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FOUR_ARMS = ("history_only", "recall", "full_history", "memory_document")
BUILT_IN_ARMS = (*FOUR_ARMS, "recall_fts", "recall_extracted", "named_memory", "named_memory_cold", "memory_document_extracted")
REAL_MODEL = "openai/gpt-4o-mini"
REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "golden" / "starter_four_arms.json"
OUTPUTS_GOLDEN = REPO / "tests" / "fixtures" / "golden" / "outputs.json"
STARTER = REPO / "scenarios" / "starter"
CLOCK = Path(__file__).resolve().parent / "clock"
OUTPUT_FILES = ("results.jsonl", "run.json", "summary.json", "scores.jsonl", "metrics.csv", "junit.xml", "index.html")
#: The golden runs: name -> (suite folder below the checkout, arms).
GOLDEN_RUNS = {"starter_four_arms": ("scenarios/starter", FOUR_ARMS), "smoke_built_in_arms": ("scenarios/smoke", BUILT_IN_ARMS)}


_LATER_CALL_FIELDS = frozenset({"deployment", "provider_fault"})


def record_digest(record: dict[str, Any]) -> str:
    """SHA-256 of what a sample produced, timings left out."""
    keep = {
        "status": record["status"],
        "error": record["error"],
        "final_answer": record["final_answer"],
        "stop_reason": record["stop_reason"],
        "tools_offered": record["tools_offered"],
        "messages": record["messages"],
        # fields added to the call log after the golden file (None when unused, e.g. a Router's deployment) are left out
        "model_calls": [{k: v for k, v in c.items() if k != "latency_s" and not (k in _LATER_CALL_FIELDS and v is None)}
                        for c in record["model_calls"]],
        "tool_calls": [{k: v for k, v in c.items() if k != "elapsed_s"} for c in record["tool_calls"]],
    }
    return hashlib.sha256(json.dumps(keep, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def file_digests(run_dir: Path, repo: Path) -> dict[str, str]:
    """SHA-256 of each output file of ``run_dir``, its own and the checkout's paths replaced by placeholders."""
    digests = {}
    for name in OUTPUT_FILES:
        data = (run_dir / name).read_bytes()
        data = data.replace(str(run_dir.parent).encode(), b"<runs>").replace(str(repo).encode(), b"<repo>")
        digests[name] = hashlib.sha256(data).hexdigest()
    return digests


def golden_run(repo: Path, suite: str, arms: tuple[str, ...], out: Path) -> dict[str, str]:
    """Run ``suite`` in ``arms`` with the code on this process's path, under the deterministic clock; the file digests.

    ``out`` must be a folder named ``golden-run`` (its name is the run id, written into the outputs).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CLOCK), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "120"}
    command = [sys.executable, "-m", "harness.cli", "run", "--scenarios", str(repo / suite), "--arms", *arms,
               "--epochs", "2", "--max-concurrency", "1", "--no-cache", "--no-progress", "--out", str(out)]
    # cwd outside the checkout: `python -m` puts the working folder first on the path, before PYTHONPATH
    proc = subprocess.run(command, cwd=out.parent, env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode not in (0, 1):  # 1: the offline model's verdict is fail, which is the expected answer
        raise RuntimeError(f"golden run failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return file_digests(out, repo)


def all_golden_runs(repo: Path = REPO) -> dict[str, dict[str, str]]:
    """Every run of :data:`GOLDEN_RUNS` with the code on this process's path."""
    found = {}
    for name, (suite, arms) in GOLDEN_RUNS.items():
        with tempfile.TemporaryDirectory() as tmp:
            found[name] = golden_run(repo, suite, arms, Path(tmp) / "golden-run")
    return found


def setup_cache_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The response-cache key of a first model call for :data:`REAL_MODEL` with default parameters."""
    from harness.run.agent import ModelSettings
    from harness.run.cache import cache_key

    settings = ModelSettings(REAL_MODEL, seed=1, max_tokens=2048)
    return cache_key(model=REAL_MODEL, messages=messages, tools=tools, parameters=settings.cache_parameters(), epoch=0)


def old_setups(scenarios: list[Any]) -> dict[str, str]:
    """Cache keys of every scenario x arm built by the pre-protocol code (``harness.memory_systems.prompts`` + the runner's seeding)."""
    from harness.scenarios import probe_policy, seed_store
    from memory_tools import Host, MemoryItemStore
    from tests.memory_systems.arm_builders import get_arm

    keys = {}
    for scenario in scenarios:
        for name in FOUR_ARMS:
            arm = get_arm(name)
            store = host_run = None
            if arm.uses_memory:
                store = MemoryItemStore(":memory:")
                seed_store(store, scenario)
                host_run = Host(store, probe_policy(scenario)[0]).open_run(probe_policy(scenario)[1])
            setup = arm.build(scenario, host_run)
            keys[f"{scenario.id}|{name}"] = setup_cache_key(setup.messages, setup.tools)
            if store is not None:
                store.close()
    return keys


def write_records(run_dir: str, out: str) -> None:
    from harness.records import iter_records
    from harness.scenarios import load_scenarios

    records = {}
    for read in iter_records(Path(run_dir) / "results.jsonl"):  # pasted histories resolved, as the test reads them
        record = json.loads(read.model_dump_json())
        records[record["sample_id"]] = record_digest(record)
    scenarios = load_scenarios([STARTER])
    setups = old_setups(scenarios)
    golden = {
        sid: {"record": digest, "cache_key": setups["|".join(sid.split("|")[:2])]} for sid, digest in sorted(records.items())
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "outputs":
        Path(sys.argv[2]).write_text(json.dumps(all_golden_runs(), indent=1, sort_keys=True) + "\n")
    elif sys.argv[1] == "records":
        write_records(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: digests.py outputs OUT.json | records RUN_DIR OUT.json")
