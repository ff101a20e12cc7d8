"""How a model is called: one client per process, in-process for the offline models, through litellm otherwise.

:class:`ModelClient` applies the run's concurrency limit, rate limits, cost budget, retries, timeout and
response cache to each call, and returns a :class:`Completion` with tokens and cost that are never
worse than counted: a provider's missing or impossible usage is replaced by our own count, and said so.
litellm is imported on the first call that needs it (importing it takes seconds).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

from harness.records import sendable
from harness.run.cache import CachedResponse, ResponseCache, cache_key
from harness.run.direct import direct_completion, is_direct
from harness.run.responses import checked_usage, is_malformed_response, lenient_message, raw_response
from harness.run.retry import RetryPolicy, call_with_retries

DEFAULT_MAX_TOOL_ROUNDS = 4


@dataclass(frozen=True)
class ModelSettings:
    """Everything about the model request that is the same for every call of a sample.

    Attributes:
        model: litellm model string, e.g. ``openai/gpt-4o-mini`` or ``offline/reference``.
        temperature: Sampling temperature.
        timeout_s: Limit of one model call (one try).
        seed: Sample seed, sent with ``drop_params`` so providers without seeds ignore it.
        api_base: Endpoint of an OpenAI-compatible server, if any.
        max_tokens: Limit of generated tokens per call (None: the provider's own); a call
            cut off by it ends with ``finish_reason`` ``length`` and its text is used as given.
        extra: Further litellm keyword arguments (part of the cache key).
    """

    model: str
    temperature: float = 0.0
    timeout_s: float = 120.0
    seed: int | None = None
    api_base: str | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def cache_parameters(self) -> dict[str, Any]:
        parameters = {"temperature": self.temperature, "seed": self.seed, "api_base": self.api_base, **self.extra}
        if self.max_tokens is not None:  # absent when unset, so entries cached without a limit still match
            parameters["max_tokens"] = self.max_tokens
        if self.model.startswith("offline/"):
            from harness.offline_model import code_revision

            # The built-in model's code is its weights: a new revision must not hit old answers.
            parameters["offline_revision"] = code_revision()
        return parameters


@dataclass
class Completion:
    """One model response in plain form (fresh or from the cache)."""

    message: dict[str, Any]
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    latency_s: float
    cost_usd: float | None
    cached: bool
    attempts: int
    #: The Router deployment that answered (``model_info.id``), None without a Router or from the cache.
    deployment: str | None = None
    #: What was wrong with the provider's response and how it was read (:mod:`harness.run.responses`), if anything.
    fault: str | None = None


_REGISTERED: list[bool] = []


def _litellm() -> Any:
    """litellm, with the offline models registered (a Router may serve them) and no help banner per failure."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    if not _REGISTERED:
        from harness.offline_model import register_offline

        register_offline()
        _REGISTERED.append(True)
    litellm.suppress_debug_info = True  # errors are recorded per sample; no help banner per failure
    return litellm


def count_tokens(model: str, *, text: str | None = None, messages: list[dict[str, Any]] | None = None) -> int:
    """litellm's token count, or chars/4 when litellm cannot count for this model.

    A text is counted without litellm where :mod:`harness.run.model_tables` knows
    litellm's tokenizer for the model (the offline models: ``cl100k_base``, in
    litellm's 1,024-character pieces) and litellm is not imported; the count is
    the same (``tests/run/test_token_counts.py``). Messages are counted by litellm.
    """
    try:
        if messages is not None:
            return int(_litellm().token_counter(model=model, messages=messages))
        found = _local_count(model, text or "") if _local_counting() else None
        if found is not None:
            return found
        return int(_litellm().token_counter(model=model, text=text or ""))
    except Exception:  # noqa: BLE001 - any tokenizer failure falls back to an estimate
        chars = len(text or "") if messages is None else sum(len(str(m.get("content") or "")) for m in messages)
        return (chars + 3) // 4


def arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _plain_message(response: Any) -> tuple[dict[str, Any], str | None]:
    choice = response.choices[0]
    msg = choice.message
    message: dict[str, Any] = {"role": "assistant", "content": msg.content}
    calls = []
    for call in getattr(msg, "tool_calls", None) or []:
        function = call.function
        calls.append(
            {
                "id": call.id or "",
                "type": "function",
                "function": {"name": function.name or "", "arguments": arguments_text(function.arguments)},
            }
        )
    if calls:
        message["tool_calls"] = calls
    return message, choice.finish_reason


def _timeout_message(settings: ModelSettings, in_flight: int | None, gate: Any) -> str:
    """A timed-out call's error, naming the settings that would have helped."""
    text = f"no response from {settings.model} within {settings.timeout_s:g} s (--timeout)"
    if in_flight is not None and in_flight > 1:
        text += (f" with {in_flight} calls in flight; a server that answers fewer at once needs a lower --max-concurrency "
                 f"(now {gate.maximum}, e.g. --max-concurrency 1) or a longer --timeout")
    elif in_flight is not None:
        text += " with only this call in flight: the server is slower than --timeout allows; give a longer --timeout"
    return text


@dataclass(frozen=True)
class _Refused:
    """A 200 response litellm refused to read; ``raw`` is its JSON when it could be recovered."""

    raw: dict[str, Any] | None


def _local_counting() -> bool:
    """Whether texts may be counted from litellm's shipped tokenizer files (:func:`harness.run.model_tables.count_function`)."""
    from harness.run.model_tables import answerable

    return answerable()


@functools.lru_cache(maxsize=2048)
def _local_count(model: str, text: str) -> int | None:
    """:func:`_local_counter`'s count of ``text``, None when litellm must count; memoized (a tool result recurs in
    every epoch, and encoding one is ~0.3 ms)."""
    count = _local_counter(model)
    return count(text) if count is not None else None


@functools.lru_cache(maxsize=64)
def _local_counter(model: str) -> Any:
    """``text -> count`` of litellm's tokenizer for ``model`` read without litellm, or None (litellm counts)."""
    from harness.run.model_tables import local_count_function

    return local_count_function(model)


@functools.lru_cache(maxsize=64)
def _limits(model: str) -> tuple[int | None, int | None]:
    """litellm's (max_input_tokens, max_output_tokens) of ``model``, None when unknown.

    The offline models have no limits in litellm's map (their price entry names none), so litellm is not asked.
    """
    from harness.offline_model import MODEL_NAMES

    if model in MODEL_NAMES:
        return None, None
    try:
        info = _litellm().get_model_info(model)
    except Exception:  # noqa: BLE001 - local and unknown models have no entry
        return None, None
    inp, out = info.get("max_input_tokens"), info.get("max_output_tokens")
    return (inp if isinstance(inp, int) and inp > 0 else None), (out if isinstance(out, int) and out > 0 else None)


def _checked_usage(prompt: Any, completion: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   settings: ModelSettings) -> tuple[int | None, int | None, str | None]:
    """The reported usage when plausible (:func:`harness.run.responses.checked_usage`), else None counts and why."""
    if prompt is None and completion is None:
        return None, None, None
    chars = sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in messages) + len(str(tools))
    max_input, max_output = _limits(settings.model)
    return checked_usage(prompt, completion, request_chars=chars, messages=len(messages), max_tokens=settings.max_tokens,
                         max_input=max_input, max_output=max_output)


def _counted_cost(model: str, messages: list[dict[str, Any]], message: dict[str, Any],
                  prompt: int | None, completion: int | None) -> float | None:
    """The price of a call whose reported usage or cost was rejected: counted tokens at litellm's prices (None: no price)."""
    if prompt is None and completion is None:
        prompt = count_tokens(model, messages=messages)
        calls = "".join(c["function"]["name"] + c["function"]["arguments"] for c in message.get("tool_calls", []))
        completion = count_tokens(model, text=(message.get("content") or "") + calls)
    try:
        inp, out = _litellm().cost_per_token(model=model, prompt_tokens=prompt or 0, completion_tokens=completion or 0)
        cost = float(inp) + float(out)
    except Exception:  # noqa: BLE001 - no price: the cost stays unknown
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


_NO_PRICE: set[str] = set()


def _cost(model: str, response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("response_cost") is not None:
        return float(hidden["response_cost"])
    if model in _NO_PRICE:
        return None
    try:
        return float(_litellm().completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - unknown price is normal for local models
        _NO_PRICE.add(model)
        return None


class ModelClient:
    """Calls litellm with a per-try timeout, retries of transient errors and the response cache.

    Optional, each set up by :func:`harness.run.calls.model_client`: ``router`` (a ``litellm.Router``
    the calls go through; ``routes`` maps each model group to a hash of its deployments, part of
    the cache key), ``limiter`` (:class:`harness.run.ratelimit.RateLimiter`, waited on before every
    try) and ``budget`` (:class:`harness.run.budget.Budget`, reserved before every call made).
    """

    def __init__(self, cache: ResponseCache | None = None, retry: RetryPolicy | None = None, *, router: Any = None,
                 routes: dict[str, str] | None = None, limiter: Any = None, budget: Any = None, concurrency: Any = None) -> None:
        self.cache = cache or ResponseCache(".", enabled=False)
        self.retry = retry or RetryPolicy()
        self.router, self.routes, self.limiter, self.budget = router, routes or {}, limiter, budget
        #: :class:`harness.run.concurrency.AdaptiveLimit` of calls in flight (None: no limit beyond the samples').
        self.concurrency = concurrency

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings, *, epoch: int) -> Completion:
        """One completion. Raises :class:`RetryExhaustedError` when it finally fails."""
        key = ""
        if self.cache.enabled:
            parameters = settings.cache_parameters()
            if settings.model in self.routes:  # another deployment set behind the same group name is another model
                parameters["route"] = self.routes[settings.model]
            key = cache_key(model=settings.model, messages=messages, tools=tools, parameters=parameters, epoch=epoch)
        hit = self.cache.get(key) if key else None
        if hit is not None:
            return Completion(hit.message, hit.prompt_tokens, hit.completion_tokens, hit.finish_reason, hit.latency_s, hit.cost_usd, True, 0,
                              fault=hit.fault)
        kwargs: dict[str, Any] = {
            "model": settings.model,
            "messages": sendable(messages),  # lone surrogates a model sent go back as U+FFFD
            "temperature": settings.temperature,
            "timeout": settings.timeout_s,
            "drop_params": True,
            "max_retries": 0,  # the provider SDK must not retry behind our back: attempts stay honest
            **settings.extra,
        }
        if tools:
            kwargs["tools"] = tools
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        if settings.max_tokens is not None:
            kwargs["max_tokens"] = settings.max_tokens
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
        latency = 0.0
        direct = is_direct(settings.model, router=self.router, extra=settings.extra)
        if direct:
            call = direct_completion  # the built-in offline model, in-process (harness.run.direct)
        else:
            call = self.router.acompletion if self.router is not None else _litellm().acompletion
        limiter, charged = self.limiter, 0
        if limiter is not None and limiter.counts_tokens(settings.model):
            charged = count_tokens(settings.model, messages=messages) + (settings.max_tokens or 0)
        reserved = await self._reserve(settings, messages)

        async def attempt() -> Any:
            nonlocal latency
            if limiter is not None:
                await limiter.acquire(settings.model, charged)
            gate = self.concurrency
            generation = await gate.acquire() if gate is not None else 0
            in_flight = gate.in_flight if gate is not None else None
            started, timed_out = time.perf_counter(), False
            response: Any
            try:
                if direct:  # runs to its end without awaiting anything: a timeout could never interrupt it
                    response = await call(**kwargs)
                else:
                    async with asyncio.timeout(settings.timeout_s):
                        response = await call(**kwargs)
            except TimeoutError:  # asyncio's own carries no message
                timed_out = True
                raise TimeoutError(_timeout_message(settings, in_flight, gate)) from None
            except Exception as exc:
                timed_out = type(exc).__name__ in ("Timeout", "APITimeoutError")
                if not is_malformed_response(exc):
                    raise
                response = _Refused(raw_response(exc))  # a complete answer litellm cannot read: the model's, not retried
            finally:
                if gate is not None:
                    gate.release(generation, timed_out=timed_out)
            latency = time.perf_counter() - started
            return response

        try:
            response, attempts = await call_with_retries(attempt, self.retry)
        except BaseException:
            if self.budget is not None:
                self.budget.settle(settings.model, reserved, None)
            raise
        faults: list[str] = []
        if isinstance(response, _Refused):
            message, finish_reason, faults = lenient_message(response.raw)
            usage = (response.raw or {}).get("usage")
            prompt, completion = (usage.get("prompt_tokens"), usage.get("completion_tokens")) if isinstance(usage, dict) else (None, None)
            cost = None
        else:
            message, finish_reason = _plain_message(response)
            usage = getattr(response, "usage", None)
            prompt = getattr(usage, "prompt_tokens", None) if usage is not None else None
            completion = getattr(usage, "completion_tokens", None) if usage is not None else None
            cost = _cost(settings.model, response)
        if not prompt and not completion:
            prompt = completion = None
        prompt, completion, usage_fault = _checked_usage(prompt, completion, messages, tools, settings)
        if usage_fault is not None:
            faults.append(f"{usage_fault}: counted instead")
        if usage_fault is not None or (cost is not None and not (math.isfinite(cost) and cost >= 0)) or isinstance(response, _Refused):
            if usage_fault is None and cost is not None and not (math.isfinite(cost) and cost >= 0):
                faults.append(f"cost {cost!r} replaced by the counted tokens' price")
            cost = _counted_cost(settings.model, messages, message, prompt, completion)
        if limiter is not None and charged:
            limiter.settle(settings.model, charged, None if prompt is None else prompt + (completion or 0))
        if self.budget is not None:
            self.budget.settle(settings.model, reserved, cost or 0.0)
        deployment = None
        if self.router is not None:
            from harness.run.router import answered_by

            deployment = answered_by(response)
        fault = "; ".join(faults) or None
        result = Completion(message, prompt, completion, finish_reason, latency, cost, False, attempts, deployment, fault)
        if not key:
            return result
        self.cache.put(
            key,
            CachedResponse(
                message=message,
                prompt_tokens=prompt,
                completion_tokens=completion,
                finish_reason=finish_reason,
                latency_s=latency,
                cost_usd=result.cost_usd,
                fault=fault,
            ),
        )
        return result

    async def _reserve(self, settings: ModelSettings, messages: list[dict[str, Any]]) -> float:
        """Reserve the call's worst case in the budget (0 without one), waiting for calls in flight to settle; raises ``BudgetExceeded``."""
        if self.budget is None:
            return 0.0
        return float(await self.budget.reserve(settings.model, count_tokens(settings.model, messages=messages), settings.max_tokens or 0))
