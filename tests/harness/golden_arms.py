"""Digests of the four original arms on the starter suite, to prove the memory-system protocol changed nothing.

``tests/fixtures/golden/starter_four_arms.json`` was written by this module
running on the code *before* the arms became memory systems (the commit
before "protocol:"), with::

    PYTHONPATH=<checkout of that commit> python tests/harness/golden_arms.py RUN_DIR OUT.json

where RUN_DIR is ``recall-eval run --arms history_only recall full_history
memory_document --no-cache`` of the starter suite on ``offline/reference``.
Per sample it holds two SHA-256 digests: ``record`` (answer, stop reason,
offered tools, transcript, model calls without latency, tool calls without
timing) and ``cache_key`` (the response-cache key of the sample's first
model call for a real model name, from the arm's messages and tool specs).
Regenerate it only for an intended change of what an arm sends.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

FOUR_ARMS = ("history_only", "recall", "full_history", "memory_document")
REAL_MODEL = "openai/gpt-4o-mini"
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "starter_four_arms.json"
STARTER = Path(__file__).resolve().parents[2] / "scenarios" / "starter"


_LATER_CALL_FIELDS = frozenset({"deployment"})


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


def setup_cache_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The response-cache key of a first model call for :data:`REAL_MODEL` with default parameters."""
    from harness.run.agent import ModelSettings
    from harness.run.cache import cache_key

    settings = ModelSettings(REAL_MODEL, seed=1, max_tokens=2048)
    return cache_key(model=REAL_MODEL, messages=messages, tools=tools, parameters=settings.cache_parameters(), epoch=0)


def old_setups(scenarios: list[Any]) -> dict[str, str]:
    """Cache keys of every scenario x arm built by the pre-protocol code (``harness.memory_systems.prompts`` + the runner's seeding)."""
    from tests.harness.arm_builders import get_arm
    from harness.scenarios import probe_policy, seed_store
    from memory_tools import Host, MemoryItemStore

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


def main(run_dir: str, out: str) -> None:
    from harness.scenarios import load_scenarios

    records = {}
    for line in (Path(run_dir) / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        records[record["sample_id"]] = record_digest(record)
    scenarios = load_scenarios([STARTER])
    setups = old_setups(scenarios)
    golden = {
        sid: {"record": digest, "cache_key": setups["|".join(sid.split("|")[:2])]} for sid, digest in sorted(records.items())
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
