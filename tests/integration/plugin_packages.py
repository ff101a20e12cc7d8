"""Installing the example plug-ins (``examples/``) for tests, and small naive variants of them written on the fly."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def install(package: str, target: Path) -> Path:
    """``examples/<package>`` built and installed (not editable, no dependencies) into ``target``; returns it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
         str(EXAMPLES / package)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return target


def write_distribution(target: Path, name: str, module: str, source: str, entry_points: dict[str, str]) -> Path:
    """A minimal installed distribution in ``target`` (module plus dist-info with entry points), no build step."""
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{module}.py").write_text(source, encoding="utf-8")
    info = target / f"{name.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n", encoding="utf-8")
    lines = "".join(f"{arm} = {value}\n" for arm, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[recall_eval.memory_systems]\n{lines}", encoding="utf-8")
    return target


@contextlib.contextmanager
def on_path(*sites: Path) -> Iterator[None]:
    """Plug-ins installed in ``sites`` visible to this process's registry for the block (then forgotten again)."""
    from harness.memory_systems.registry import plugin_arms

    added = [str(site) for site in sites]
    sys.path[:0] = added
    plugin_arms.cache_clear()
    try:
        yield
    finally:
        for site in added:
            sys.path.remove(site)
        plugin_arms.cache_clear()


def child_env(*sites: Path) -> dict[str, str]:
    """The environment of a ``recall-eval`` child process that sees the plug-ins in ``sites``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(str(site) for site in sites)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def records(run_dir: Path) -> dict[tuple[str, str], dict]:
    """``(scenario id, arm) -> record`` of a finished run."""
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {(r["scenario_id"], r["arm"]): r for r in rows}


def differs_under_two_embedders(arm: str, scenario: object, act: Callable[[Any], object]) -> list[str]:
    """``act(instance)`` on a fresh sample of ``arm`` opened with the lexical embedder, then with a length-based one;
    asserts the two results differ and each sample counted its embedder's calls; returns the kinds
    (``query``/``passage``) the second embedder was asked for, in order."""
    from harness.memory_systems import open_instance, resolve_arm, sample_embedding_usage
    from harness.scenarios import DEFAULT_RETRIEVAL_BUDGET
    from memory_tools import LexicalEmbedder
    from tests.memory_systems.embedders import LengthEmbedder

    length = LengthEmbedder()
    results, usage = [], []
    for embedder in (LexicalEmbedder(), length):
        instance = open_instance(resolve_arm(arm), scenario, DEFAULT_RETRIEVAL_BUDGET, embedder)  # type: ignore[arg-type]
        try:
            results.append(act(instance))
            found = sample_embedding_usage(instance)
            usage.append((found.model, found.calls > 0))
        finally:
            instance.close()
    assert results[0] != results[1], results
    assert usage == [("lexical", True), ("test/length", True)]
    return length.kinds
