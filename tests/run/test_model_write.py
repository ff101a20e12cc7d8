"""A system that writes with its own model calls (``ModelWrite``, e.g. mem0's extraction): the run's model, counted."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from harness.memory_systems import MemoryInstance, ModelWrite, ToolExecution
from harness.run.agent import ModelClient, ModelSettings
from harness.run.retry import RetryPolicy
from harness.run.sample import run_write_phase
from tests.memory_systems.prompt_factories import make_scenario
from tests.run.scripted_model import install_scripted


class _Extract(ModelWrite):
    def __init__(self, session: Any, fail: bool = False) -> None:
        self.session, self.fail = session, fail

    def run(self, model: Any) -> list[ToolExecution]:
        if self.fail:
            raise RuntimeError("the system's own bug")
        first = model.complete([{"role": "user", "content": f"extract {self.session.id}"}], response_format={"type": "json_object"})
        second = model.complete([{"role": "user", "content": f"decide {first}"}])
        return [ToolExecution("system.add", '{"n":1}', "ok", f'{{"saved":"{second}"}}', storage_read=True)]


class _Instance(MemoryInstance):
    def __init__(self, scenario: Any, fail: bool = False) -> None:
        super().__init__(scenario)
        self.fail = fail

    def begin_write(self, session: Any) -> ModelWrite:
        return _Extract(session, self.fail)


def _write(instance: MemoryInstance, retries: int = 0) -> Any:
    client = ModelClient(retry=RetryPolicy(retries=retries, base_delay_s=0.0))
    return asyncio.run(run_write_phase(instance, instance.scenario, client=client, settings=ModelSettings(model="scripted/w"), epoch=0))


def test_a_systems_own_write_calls_the_run_model_and_each_call_is_a_write_phase_call() -> None:
    seen: list[str] = []

    def script(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        seen.append(messages[-1]["content"])
        return {"content": f"reply {len(seen)}", "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}}

    scripted = install_scripted(script)
    scenario = make_scenario()
    result = _write(_Instance(scenario))
    assert result.error is None
    sessions = result.log.sessions
    assert [s.session_id for s in sessions] == [s.id for s in sorted(scenario.sessions, key=lambda s: s.started_at)]
    assert all([c.round for c in s.model_calls] == [0, 1] and {c.prompt_tokens for c in s.model_calls} == {40} for s in sessions)
    assert all(s.stop_reason == "final_answer" and [t.name for t in s.tool_calls] == ["system.add"] for s in sessions)
    assert sessions[0].tool_calls[0].result_text == '{"saved":"reply 2"}' and sessions[0].tool_calls[0].result_chars == 19
    assert seen[1] == "decide reply 1" and scripted.calls == 2 * len(sessions)
    assert "response_format" not in scripted.last_kwargs.get("optional_params", {})  # the second call asked for none


def test_a_model_failure_in_a_systems_own_write_ends_the_sample_as_an_error() -> None:
    install_scripted(lambda messages, tools: ValueError("provider down"))
    result = _write(_Instance(make_scenario()))
    assert result.error is not None and result.error.message.startswith("write phase, session ")
    assert "provider down" in result.error.message
    assert len(result.log.sessions) == 1 and result.log.sessions[0].stop_reason == "error"


def test_a_systems_own_write_that_fails_by_itself_propagates_for_an_error_sample() -> None:
    install_scripted(lambda messages, tools: {"content": "never asked"})
    with pytest.raises(RuntimeError, match="the system's own bug"):
        _write(_Instance(make_scenario(), fail=True))


def test_concurrent_system_writes_never_starve_the_executor_their_own_model_calls_need() -> None:
    """More concurrent writes than the loop's default executor has threads, each call needing that executor.

    litellm runs a synchronous provider in the loop's default executor; writes run there too would hold every
    thread while waiting for calls that need one (the offline mem0_infer run stalled at 8 samples on 6 threads).
    """
    import concurrent.futures

    class _Client(ModelClient):
        async def complete(self, *args: Any, **kwargs: Any) -> Any:
            await asyncio.get_running_loop().run_in_executor(None, lambda: None)  # as a synchronous provider behind litellm
            return await super().complete(*args, **kwargs)

    install_scripted(lambda messages, tools: {"content": "ok"})
    from harness.run.sample import run_model_write

    scenario = make_scenario()
    session = scenario.sessions[0]

    async def main() -> list[Any]:
        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        writes = [
            run_model_write(
                _Extract(session),
                session,
                client=_Client(retry=RetryPolicy(retries=0)),
                settings=ModelSettings(model="scripted/w"),
                epoch=0,
            )
            for _ in range(6)
        ]
        return await asyncio.wait_for(asyncio.gather(*writes), timeout=30)

    done = asyncio.run(main())
    assert len(done) == 6 and all(error is None for _, error in done)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_process_forked_after_a_write_runs_its_own_writes() -> None:
    """Bug this guards: the write threads' pool inherited by a forked child without its threads, so the child's
    first system write waited forever (mutmut forks one process per mutant from the one that ran the tests: every
    mutant reaching a Dream Mode or top-K judge test "timed out"). The child is stopped by an alarm if it hangs."""
    install_scripted(lambda messages, tools: {"content": "ok"})
    assert _write(_Instance(make_scenario())).error is None  # the pool's threads now run in this process
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's result is its exit code
        signal.alarm(60)
        try:
            os._exit(0 if _write(_Instance(make_scenario())).error is None else 1)
        except BaseException:  # noqa: BLE001 - any failure is the child's exit code, never a second pytest
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # -14 (SIGALRM): the child hung
