"""The built-in offline models answered in-process give what litellm's custom-provider path gives, call for call.

A run of ``offline/*`` without a Router never imports litellm
(:mod:`harness.run.direct`); these tests keep the litellm path honest: every
model call of a run of the smoke suite in every built-in arm (and of the
starter suite in the recall arm) is made again through
``litellm.acompletion`` and the custom provider, and the two completions
must be equal in everything but latency.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

import harness.run.model_client as agent_mod  # noqa: E402
from harness.offline_model import register_offline  # noqa: E402
from harness.run.agent import ModelClient, ModelSettings  # noqa: E402
from harness.run.direct import direct_completion, is_direct, needs_litellm  # noqa: E402
from tests.golden.digests import BUILT_IN_ARMS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _requests_of_a_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suite: str, arms: tuple[str, ...],
                       model: str = "offline/reference") -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Every (messages, tools) a run of ``suite`` in ``arms`` sent to ``model``, as the agent loop sent them."""
    from harness.cli import main

    seen: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    real = agent_mod.ModelClient.complete

    async def recording(self: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings,
                        *, epoch: int) -> Any:
        seen.append(([dict(m) for m in messages], list(tools)))
        return await real(self, messages, tools, settings, epoch=epoch)

    monkeypatch.setattr(agent_mod.ModelClient, "complete", recording)
    code = main(["run", "--scenarios", str(REPO / suite), "--arms", *arms, "--model", model, "--no-cache", "--no-progress",
                 "--out", str(tmp_path / "run")])
    monkeypatch.undo()
    assert code in (0, 1) and seen
    return seen


def _completions_both_ways(requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], model: str,
                           monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    settings = ModelSettings(model, seed=7)
    client = ModelClient()

    async def all_of() -> list[Any]:
        return [await client.complete(m, t, settings, epoch=0) for m, t in requests]

    direct = asyncio.run(all_of())
    register_offline()
    monkeypatch.setattr(agent_mod, "is_direct", lambda *args, **kwargs: False)
    through_litellm = asyncio.run(all_of())
    return direct, through_litellm


def _comparable(completion: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(completion).items() if k != "latency_s"}


@pytest.mark.parametrize(("suite", "arms"), [("scenarios/smoke", BUILT_IN_ARMS), ("scenarios/starter", ("recall",))])
def test_every_offline_call_of_a_run_answers_the_same_in_process_and_through_litellms_custom_provider(
        suite: str, arms: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    requests = _requests_of_a_run(monkeypatch, tmp_path, suite, arms)
    assert any(t for _, t in requests) and any(m[-1]["role"] == "tool" for m, _ in requests)  # tool rounds are compared too
    direct, through_litellm = _completions_both_ways(requests, "offline/reference", monkeypatch)
    assert [_comparable(c) for c in direct] == [_comparable(c) for c in through_litellm]
    assert all(c.cost_usd == 0.0 and c.prompt_tokens and c.completion_tokens for c in direct)


def test_offline_abstain_answers_the_same_in_process_and_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    requests = [([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is my dog called?"}], [])]
    direct, through_litellm = _completions_both_ways(requests, "offline/abstain", monkeypatch)
    assert [_comparable(c) for c in direct] == [_comparable(c) for c in through_litellm]
    assert "I don't know" in direct[0].message["content"]


def test_only_the_built_in_offline_models_without_a_router_or_extra_arguments_are_answered_in_process() -> None:
    assert is_direct("offline/reference") and is_direct("offline/abstain")
    assert not is_direct("offline/nonexistent")  # litellm's custom provider reports the unknown name, as before
    assert not is_direct("openai/gpt-4o-mini") and not is_direct("scripted/x")
    assert not is_direct("offline/reference", router=object())
    assert not is_direct("offline/reference", extra={"stream": True})  # the provider refuses streaming, through litellm
    assert not needs_litellm(["offline/reference", "offline/abstain"])
    assert needs_litellm(["offline/reference", "openai/gpt-4o-mini"]) and needs_litellm(["offline/reference"], "router.yaml")


def test_an_unknown_offline_name_still_fails_through_litellm_with_its_message() -> None:
    client = ModelClient()
    messages = [{"role": "user", "content": "hello"}]

    async def one() -> Any:
        return await client.complete(messages, [], ModelSettings("offline/nonexistent"), epoch=0)

    register_offline()
    with pytest.raises(Exception) as caught:
        asyncio.run(one())
    assert "unknown offline model 'offline/nonexistent'" in str(caught.value)


def test_direct_completion_ignores_litellms_request_arguments_like_the_provider() -> None:
    messages = [{"role": "user", "content": "What is my dog called?"}]
    plain = asyncio.run(direct_completion(model="offline/reference", messages=messages))
    loaded = asyncio.run(direct_completion(model="offline/reference", messages=messages, temperature=0.7, seed=3, timeout=1.0,
                                           max_tokens=5, api_base="http://localhost:1", drop_params=True, max_retries=0))
    assert plain == loaded


def test_an_offline_run_never_imports_litellm(tmp_path: Path) -> None:
    """The whole ``run`` command of the offline model, in a fresh process: litellm stays out of ``sys.modules``."""
    script = (
        "import sys\n"
        "from harness.cli import main\n"
        f"code = main(['run', '--scenarios', {str(REPO / 'scenarios/smoke')!r}, '--arms', 'history_only', 'recall', '--epochs', '1',"
        f" '--no-cache', '--no-progress', '--out', {str(tmp_path / 'run')!r}])\n"
        "print('litellm' in sys.modules, code)\n"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert found.stdout.split()[-2:] in (["False", "0"], ["False", "1"]), found.stderr[-2000:]



def test_worker_processes_preload_litellm_only_for_a_run_that_calls_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--workers``: the forkserver imports litellm ahead for a run of a model litellm serves, not for an offline run."""
    import multiprocessing
    from types import SimpleNamespace

    from harness.run import workers

    preloads: list[list[str]] = []
    context = multiprocessing.get_context("forkserver")
    monkeypatch.setattr(type(context), "set_forkserver_preload", lambda self, names: preloads.append(list(names)))
    offline = SimpleNamespace(models=["offline/reference"], router_config=None)
    real = SimpleNamespace(models=["offline/reference", "openai/gpt-4o-mini"], router_config=None)
    workers._context(workers._needs_litellm(offline))
    workers._context(workers._needs_litellm(real))
    assert "litellm" not in preloads[0] and "harness.run.runner" in preloads[0]
    assert "litellm" in preloads[1] and "harness.offline_model._provider" in preloads[1]


def test_the_offline_models_token_limits_are_litellms_without_asking_it() -> None:
    """The usage check's limits of an offline model are (None, None) without litellm: what litellm's map says of them."""
    from harness.offline_model import MODEL_NAMES

    register_offline()
    for model in MODEL_NAMES:
        try:
            info = litellm.get_model_info(model)
            theirs = (info.get("max_input_tokens"), info.get("max_output_tokens"))
        except Exception:  # noqa: BLE001 - no entry: no limits either
            theirs = (None, None)
        assert agent_mod._limits(model) == theirs == (None, None)


def test_an_offline_run_with_an_offline_judge_still_judges_through_litellm(tmp_path: Path) -> None:
    """The judge is always called through litellm: an offline run with ``--judge-model offline/reference`` registers
    the offline provider there (a fresh process, where nothing else did)."""
    run_dir = tmp_path / "run"
    found = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--scenarios", str(REPO / "scenarios/starter"), "--filter",
                            "abs-01*", "--arms", "recall", "--judge-model", "offline/reference", "--no-cache", "--no-progress",
                            "--out", str(run_dir)], capture_output=True, text=True, cwd=REPO, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "report not built" not in found.stderr and "JudgeError" not in found.stderr, found.stderr[-2000:]
    assert found.returncode in (0, 1) and (run_dir / "index.html").is_file(), found.stderr[-2000:]
