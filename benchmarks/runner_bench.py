"""Runner overhead and concurrency efficiency, printed as figures.

Usage: ``python benchmarks/runner_bench.py [--suite scenarios/starter] [--calls 2000] [--concurrency 64] [--workers
2] [--loop asyncio|uvloop] [--skip-overhead]``

1. Per-sample overhead with a zero-latency model (a custom litellm provider
   that answers at once; in the recall arm it makes one memory_search first),
   run one sample at a time so the shares add up: total per sample, litellm's
   share (time inside ``litellm.acompletion`` minus the provider's own time)
   and ours (seeding, Host, token counting, records, writing), with the parts
   of ours that are measured separately.
2. Concurrency efficiency: a provider that sleeps 100 ms per call, N calls
   (one per sample, history_only arm) at concurrency C, against the ideal
   ``N x 0.1 / C`` seconds: in one process, then with ``--workers W`` worker
   processes (cold: starting the forkserver that imports litellm; warm: it
   is running), then bare litellm in one loop (the single-loop floor), with
   the load average (the machine may be shared). CPU per call counts the
   workers' CPU too; "first record" is when the first sample was written
   (start-up: forkserver, worker setup, litellm's first calls).

The bench provider states its cost (0.0) on each response, as the offline
provider does, so litellm skips its own price calculation; ``--unpriced``
measures a custom provider that does not (litellm then searches its cost map
for ``bench/sleep`` after every call and fails).

``--loop uvloop`` makes every event loop (this process, the workers, the
floors) a uvloop, if it is installed. Measured 2026-11-30 on 2 shared cores
(load 1.7-2.2), 3 alternating runs each, ratios to the ideal: 1 process
asyncio 1.67/1.47/1.46, uvloop 1.46/1.59/1.60; 2 warm workers asyncio
1.39/1.41/1.54, uvloop 1.46/1.52/1.61; CPU per call 2.2-2.4 ms either way.
No gain beyond the noise: under cProfile, asyncio's own functions (call_soon,
handles, tasks; the epoll wait excluded) take ~0.27 of the loop thread's
~3.8 ms per call (profiler-inflated), so uvloop can save a few percent at
most; the rest is litellm's Python code (including ``completion()``, which
``acompletion`` runs in the default thread pool on every call), untouched.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import multiprocessing
import multiprocessing.util
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from litellm import CustomLLM, ModelResponse  # noqa: E402

import harness.run.agent as agent_mod  # noqa: E402
import harness.run.model_client as model_client_mod  # noqa: E402
import harness.run.runner as runner_mod  # noqa: E402
import harness.scenarios as scenarios_mod  # noqa: E402
from harness.cli import build_parser  # noqa: E402
from harness.run.options import resolve_options  # noqa: E402
from harness.run.progress import RunProgress  # noqa: E402

TIMERS: dict[str, float] = {}
STATE_COST = os.environ.get("RUNNER_BENCH_UNPRICED") != "1"  # an environment variable: the workers read it too
LOOP = os.environ.get("RUNNER_BENCH_LOOP", "asyncio")  # likewise: "uvloop" makes every loop here and in the workers a uvloop


def _add(name: str, seconds: float) -> None:
    TIMERS[name] = TIMERS.get(name, 0.0) + seconds


class BenchLLM(CustomLLM):
    """``bench/instant`` answers at once; ``bench/sleep`` sleeps 100 ms first."""

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        started = time.perf_counter()
        if model == "sleep":
            await asyncio.sleep(0.1)
        tools = kwargs.get("optional_params", {}).get("tools")
        if tools and messages[-1]["role"] != "tool":
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "memory_search", "arguments": '{"terms": ["port", "version"]}'},
                    }
                ],
            }
        else:
            message = {"role": "assistant", "content": "The answer is 42."}
        response = ModelResponse(
            choices=[{"message": message, "finish_reason": "stop"}],
            usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        )
        if STATE_COST:
            response._hidden_params["response_cost"] = 0.0
        _add("provider", time.perf_counter() - (started + (0.1 if model == "sleep" else 0.0)))
        return response


def _instrument() -> None:
    """Wrap the functions whose time we report."""
    original_acompletion = litellm.acompletion

    async def timed_acompletion(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original_acompletion(*args, **kwargs)
        finally:
            _add("inside_acompletion", time.perf_counter() - started)

    litellm.acompletion = timed_acompletion

    def wrap(module: Any, name: str, label: str) -> None:
        original = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                _add(label, time.perf_counter() - started)

        setattr(module, name, timed)

    wrap(scenarios_mod, "seed_store", "seeding")
    wrap(agent_mod, "count_tokens", "token_counting")
    wrap(model_client_mod, "count_tokens", "token_counting")  # the client counts prompts it reserves budget for
    wrap(agent_mod, "_execute_call", "host_calls")
    wrap(runner_mod, "append_record", "record_writing")


def _cpu_file(parent_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"runner_bench_cpu_{parent_pid}.txt"


def _install_bench() -> None:
    """Register the ``bench/*`` provider (here and, as ``worker_setup``, in every worker process).

    In a worker it also arranges for the worker's CPU time to be appended to
    a file the parent reads (the workers are not the parent's children).
    """
    if LOOP == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())  # asyncio.run then makes uvloop loops
    if not any(entry.get("provider") == "bench" for entry in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "bench", "custom_handler": BenchLLM()}]
    parent = multiprocessing.parent_process()
    if parent is not None:
        started = time.process_time()

        def report() -> None:
            with _cpu_file(parent.pid).open("a", encoding="utf-8") as out:
                out.write(f"{time.process_time() - started}\n")

        multiprocessing.util.Finalize(None, report, exitpriority=100)


class _FirstWrite:
    """A results handle that remembers when the first record was written."""

    def __init__(self, handle: Any) -> None:
        self._handle, self.first = handle, None

    def write(self, text: str) -> int:
        if self.first is None:
            self.first = time.perf_counter()
        return self._handle.write(text)

    def flush(self) -> None:
        self._handle.flush()


def _context(suite: str, model: str, arms: list[str], epochs: int, concurrency: int, out: Path, workers: int = 1) -> tuple[list[Any], Any]:
    args = build_parser().parse_args(
        [
            "run",
            "--scenarios",
            suite,
            "--model",
            model,
            "--arms",
            *arms,
            "--epochs",
            str(epochs),
            "--max-concurrency",
            str(concurrency),
            "--no-cache",
            "--retries",
            "0",
            "--out",
            str(out),
            "--no-progress",
            "--workers",
            str(workers),
        ]
    )
    options, scenarios, hashes, _ = resolve_options(args)
    specs = runner_mod.plan_samples(scenarios, options.arms, options.models, options.epochs, options.seed)
    return specs, (options, scenarios, hashes)


def _execute(specs: list[Any], ctx: Any, out: Path) -> float:
    return _execute_timed(specs, ctx, out)[0]


def _execute_timed(specs: list[Any], ctx: Any, out: Path) -> tuple[float, float, float]:
    """Run ``specs``; returns wall seconds, CPU seconds (this process and any workers) and seconds to the first record."""
    options, scenarios, hashes = ctx
    out.mkdir(parents=True, exist_ok=True)
    _cpu_file(os.getpid()).unlink(missing_ok=True)
    with (out / "results.jsonl").open("a", encoding="utf-8") as raw:
        handle = _FirstWrite(raw)
        cpu_started, started = time.process_time(), time.perf_counter()
        progress = RunProgress(len(specs), live=False, stream=io.StringIO())
        status, _ = runner_mod.run_specs(specs, options, scenarios, hashes, handle, progress, worker_setup=_install_bench)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    cpu_file = _cpu_file(os.getpid())
    if cpu_file.exists():
        cpu += sum(float(line) for line in cpu_file.read_text(encoding="utf-8").split())
        cpu_file.unlink()
    assert status == "complete", status
    assert sum(1 for _ in (out / "results.jsonl").open(encoding="utf-8")) >= len(specs)
    return elapsed, cpu, (handle.first or started) - started


def overhead(suite: str, epochs: int, tmp: Path) -> None:
    specs, ctx = _context(suite, "bench/instant", ["history_only", "recall", "full_history"], 1, 1, tmp / "warm")
    _execute(specs[:6], ctx, tmp / "warm")  # warm imports and litellm's first-call setup
    specs, ctx = _context(suite, "bench/instant", ["history_only", "recall", "full_history"], epochs, 1, tmp / "overhead")
    TIMERS.clear()
    elapsed = _execute(specs, ctx, tmp / "overhead")
    n = len(specs)
    ms = lambda seconds: f"{seconds / n * 1000:7.3f} ms"  # noqa: E731
    litellm_share = TIMERS["inside_acompletion"] - TIMERS.get("provider", 0.0)
    ours = elapsed - TIMERS["inside_acompletion"]
    print(f"(1) per-sample overhead, zero-latency model, {n} samples (3 arms), concurrency 1")
    print(f"    total per sample              {ms(elapsed)}")
    print(f"    litellm share                 {ms(litellm_share)}   (inside acompletion minus provider)")
    print(f"    provider's own time           {ms(TIMERS.get('provider', 0.0))}")
    print(f"    ours                          {ms(ours)}")
    for label in ("seeding", "host_calls", "token_counting", "record_writing"):
        print(f"      of which {label:<18}{ms(TIMERS.get(label, 0.0))}")


def concurrency(suite: str, calls: int, limit: int, workers: int, tmp: Path) -> None:
    specs, ctx = _context(suite, "bench/sleep", ["history_only"], 1, limit, tmp / "warm2")
    epochs = -(-calls // len(specs))
    ideal = calls * 0.1 / limit
    print(f"(2) concurrency: {calls} calls of 100 ms at concurrency {limit}; ideal {ideal:.3f} s (target ratio <= 1.20)")
    specs, ctx = _context(suite, "bench/sleep", ["history_only"], epochs, limit, tmp / "conc")
    specs = specs[:calls]
    elapsed, cpu, first = _execute_timed(specs, ctx, tmp / "conc")
    print(f"    1 process:  {elapsed:.3f} s, ratio {elapsed / ideal:.2f}; CPU {cpu / calls * 1000:.2f} ms per call "
          f"(one loop's budget {ideal / calls * 1000:.2f} ms); first record {first:.2f} s")
    if workers > 1:
        for label in ("cold", "warm"):  # cold: includes starting the forkserver (one litellm import)
            specs, ctx = _context(suite, "bench/sleep", ["history_only"], epochs, limit, tmp / f"conc-{label}", workers)
            specs = specs[:calls]
            elapsed, cpu, first = _execute_timed(specs, ctx, tmp / f"conc-{label}")
            print(f"    {workers} workers ({label} start): {elapsed:.3f} s, ratio {elapsed / ideal:.2f}; CPU "
                  f"{cpu / calls * 1000:.2f} ms per call (all processes); first record {first:.2f} s")
    bare, bare_cpu = _bare_litellm(ctx, calls, limit)
    print(f"    floor: bare litellm.acompletion in one loop, no harness: {bare:.3f} s, ratio {bare / ideal:.2f}, "
          f"CPU {bare_cpu / calls * 1000:.2f} ms per call")
    if workers > 1:
        bare, bare_cpu = _bare_in_processes(ctx, calls, limit, workers)
        print(f"    floor: bare litellm in {workers} warm processes ({limit // workers} each), no harness: "
              f"{bare:.3f} s, ratio {bare / ideal:.2f}, CPU {bare_cpu / calls * 1000:.2f} ms per call")
    print(f"    load average (1, 5, 15 min) on {os.cpu_count()} cores: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _bare_litellm(ctx: Any, calls: int, limit: int) -> tuple[float, float]:
    """The same calls straight through litellm (no arms, Host, records): the floor we cannot beat."""
    scenario = ctx[1][0]
    from harness.memory_systems.prompts import build_history_only

    messages = build_history_only(scenario).messages

    async def run() -> None:
        semaphore = asyncio.Semaphore(limit)

        async def one() -> None:
            async with semaphore:
                await litellm.acompletion(model="bench/sleep", messages=messages, temperature=0.0, timeout=120.0, drop_params=True, seed=1)

        await asyncio.gather(*(one() for _ in range(calls)))

    cpu_started, started = time.process_time(), time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - started, time.process_time() - cpu_started


async def _bare_loop(messages: list[dict[str, Any]], calls: int, limit: int) -> None:
    semaphore = asyncio.Semaphore(limit)

    async def one() -> None:
        async with semaphore:
            await litellm.acompletion(model="bench/sleep", messages=messages, temperature=0.0, timeout=120.0, drop_params=True, seed=1)

    await asyncio.gather(*(one() for _ in range(calls)))


def _bare_process(messages: list[dict[str, Any]], calls: int, limit: int, go: Any, out: Any) -> None:
    """One process of the multi-process floor: warm up, wait for ``go``, run, report its CPU."""
    _install_bench()
    asyncio.run(_bare_loop(messages, limit, limit))  # litellm's first calls
    go.wait()
    cpu_started = time.process_time()
    asyncio.run(_bare_loop(messages, calls, limit))
    out.put(time.process_time() - cpu_started)


def _bare_in_processes(ctx: Any, calls: int, limit: int, workers: int) -> tuple[float, float]:
    """The same calls straight through litellm in ``workers`` warm processes at once: the floor of ``--workers``."""
    from harness.memory_systems.prompts import build_history_only
    from harness.run.workers import _context as worker_context

    messages = build_history_only(ctx[1][0]).messages
    mp = worker_context()
    go, out = mp.Event(), mp.Queue()
    processes = [mp.Process(target=_bare_process, args=(messages, calls // workers, limit // workers, go, out)) for _ in range(workers)]
    for process in processes:
        process.start()
    time.sleep(3.0)  # warm-up done (a few hundred ms) well before this
    started = time.perf_counter()
    go.set()
    cpu = sum(out.get() for _ in processes)
    elapsed = time.perf_counter() - started
    for process in processes:
        process.join()
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="scenarios/starter")
    parser.add_argument("--epochs", type=int, default=4, help="epochs for the overhead part")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the second measurement of part 2")
    parser.add_argument("--unpriced", action="store_true", help="the bench provider does not state its cost (litellm prices each call itself)")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio", help="event loop implementation, here and in the workers")
    parser.add_argument("--skip-overhead", action="store_true", help="run part 2 only")
    args = parser.parse_args()
    if args.loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        parser.error("--loop uvloop: the uvloop package is not installed (pip install uvloop)")
    os.environ["RUNNER_BENCH_LOOP"] = args.loop  # before the forkserver starts: its workers inherit it
    global LOOP
    LOOP = args.loop
    if args.unpriced:
        os.environ["RUNNER_BENCH_UNPRICED"] = "1"  # before the forkserver starts: its workers inherit it
        global STATE_COST
        STATE_COST = False
    print(f"bench provider {'does not state' if args.unpriced else 'states'} its cost (see --unpriced); event loop: {args.loop}")
    _install_bench()
    _instrument()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_overhead:
            overhead(args.suite, args.epochs, Path(tmp))
        concurrency(args.suite, args.calls, args.concurrency, args.workers, Path(tmp))


if __name__ == "__main__":
    main()
