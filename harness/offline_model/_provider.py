"""The litellm custom provider that serves ``offline/<name>`` models.

Imported only by :func:`harness.offline_model.register`, because it imports litellm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litellm import CustomLLM, ModelResponse
from litellm.llms.custom_llm import CustomLLMError
from litellm.types.utils import Choices, Message, Usage

from harness.offline_model._reply import POLICIES, PROVIDER, OfflineReply, answer, policy_of

__all__ = ["POLICIES", "PROVIDER", "OfflineLLM", "build_response", "register_prices"]


def build_response(model: str, reply: OfflineReply, response_id: str | None = None) -> ModelResponse:
    """Wrap an offline reply in a litellm ``ModelResponse`` with its usage."""
    tool_calls = reply.message.get("tool_calls") or None
    message = Message(role="assistant", content=reply.message.get("content"), tool_calls=tool_calls)
    kwargs: dict[str, Any] = {"id": response_id} if response_id else {}
    response = ModelResponse(
        model=model,
        choices=[Choices(index=0, finish_reason=reply.finish_reason, message=message)],
        usage=Usage(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                    total_tokens=reply.prompt_tokens + reply.completion_tokens),
        **kwargs,
    )
    # The offline models are free: stating the cost lets litellm's logging skip
    # its own price calculation ("use cost if already calculated" in
    # Logging.response_cost_calculator): 2.3 -> 1.9 ms CPU per offline call
    # (2,000 acompletion calls, concurrency 64). Real providers are untouched.
    # It does not skip litellm's zero-cost diagnostic: a stated cost of 0 is
    # exactly what it checks, so it still looks the price up (twice per call,
    # ~0.29 ms) and, no rate being above 0 (register_prices), finds nothing
    # (tests/offline_model: test_litellms_zero_cost_diagnostic_...). Only a
    # cost above 0 or a cache hit would skip it, and neither is true; a run
    # avoids it by calling the offline models in-process (harness.run.direct).
    response._hidden_params["response_cost"] = 0.0
    return response


def register_prices(model_names: tuple[str, ...]) -> None:
    """Put the offline models in litellm's cost map at price 0.

    Without an entry litellm, after every call, fails a price lookup for the
    unknown model and walks its generalisation fallbacks before giving up; an
    entry makes the cost a true 0.0 (the models are free) and skips that
    search. Only these ``offline/*`` keys are added: prices of real models
    are untouched.
    """
    import litellm

    free = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "cache_creation_input_token_cost": 0.0,
            "cache_read_input_token_cost": 0.0, "litellm_provider": PROVIDER, "mode": "chat"}  # all priced: no warning
    litellm.register_model({name: dict(free) for name in model_names if name not in litellm.model_cost})


class OfflineLLM(CustomLLM):
    """litellm handler for ``offline/reference`` (the lexical baseline) and ``offline/abstain``."""

    def completion(  # noqa: PLR0913 - litellm's CustomLLM signature
        self,
        model: str,
        messages: list,
        api_base: str | None = None,
        custom_prompt_dict: dict | None = None,
        model_response: ModelResponse | None = None,
        print_verbose: Callable | None = None,
        encoding: Any = None,
        api_key: str | None = None,
        logging_obj: Any = None,
        optional_params: dict | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        """Answer one chat request with the named offline policy (``tools`` come in ``optional_params``)."""
        name = model.removeprefix(f"{PROVIDER}/")
        if policy_of(name) is None:
            known = ", ".join(f"{PROVIDER}/{n}" for n in sorted(POLICIES))
            message = f"unknown offline model {PROVIDER + '/' + name!r}; known models: {known}"
            raise CustomLLMError(status_code=400, message=message)
        params = optional_params or {}
        if params.get("stream"):
            raise CustomLLMError(status_code=400, message="offline models do not stream; call without stream=True")
        reply = answer(name, messages, params.get("tools"), params.get("response_format") or kwargs.get("response_format"))
        return build_response(f"{PROVIDER}/{name}", reply, getattr(model_response, "id", None))

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        """Async twin of :meth:`completion` (the policy is pure and fast, so it runs inline)."""
        return self.completion(model, messages, *args, **kwargs)
