"""The example plug-in (examples/recall-eval-notebook): installed fresh, found through its entry point, run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "examples" / "recall-eval-notebook"
SMOKE = REPO / "scenarios" / "smoke"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in built and installed (not editable, no dependencies) into a fresh folder of its own."""
    target = tmp_path_factory.mktemp("plugin-site")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(PLUGIN)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    assert (target / "recall_eval_notebook-0.1.0.dist-info" / "entry_points.txt").exists()
    return target


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def test_the_installed_example_plugin_is_found_through_its_entry_point(installed: Path) -> None:
    code = (
        "from harness.memory_systems import resolve_arm, all_arms\n"
        "arm = resolve_arm('notebook')\n"
        "print(arm.name, arm.write_mode, arm.system.name, arm.origin, list(all_arms())[-1])"
    )
    result = subprocess.run([sys.executable, "-c", code], env=_env(installed), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["notebook", "agent", "notebook", "recall-eval-notebook", "0.1.0", "(notebook", "=",
                                     "recall_eval_notebook:NotebookSystem)", "notebook"]


def test_without_the_plugin_installed_its_arm_is_unknown() -> None:
    code = "from harness.memory_systems import resolve_arm\nresolve_arm('notebook')"
    result = subprocess.run([sys.executable, "-c", code], env=_env(Path("/nonexistent")), capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "unknown arm 'notebook'" in result.stderr


def test_a_run_with_the_plugin_writes_then_answers_from_its_notes(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--arms", "history_only", "notebook", "--scenarios", str(SMOKE),
         "--filter", "smoke-01-changelog-format", "--out", str(out), "--no-cache", "--no-progress"],
        env=_env(installed), capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert (out / "results.jsonl").exists(), result.stderr
    records = {r["arm"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    notebook = records["notebook"]
    assert notebook["status"] == "ok" and records["history_only"]["write_phase"] is None
    writes = [c for s in notebook["write_phase"]["sessions"] for c in s["tool_calls"]]
    assert writes and all(c["name"] in ("note_save", "note_forget") for c in writes)
    assert all(json.loads(c["arguments"]) and c["result_text"] for c in writes)
    assert notebook["tools_offered"] == ["note_search"] and notebook["tool_calls"][0]["name"] == "note_search"
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["parameters"]["memory_systems"] == {"notebook": "recall-eval-notebook 0.1.0 (notebook = recall_eval_notebook:NotebookSystem)"}
    summary = json.loads((out / "summary.json").read_text())
    write_tokens = [m for m in summary["metrics"] if m["metric"] == "write_prompt_tokens" and m["category"] == "all"]
    assert {m["arm"]: m["value"] > 0 for m in write_tokens} == {"history_only": False, "notebook": True}
