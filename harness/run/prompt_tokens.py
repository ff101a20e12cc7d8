"""How the plan counts a prompt's tokens: as the model's usage will report them.

A real model's prompt is counted with litellm's token counter (each distinct
text once, plus OpenAI's chat framing), where :mod:`harness.run.model_tables`
can, from the files litellm ships without importing it. An offline model
(``offline/*``) has no tokenizer: it reports a character estimate
(:func:`harness.offline_model.prompt_tokens`), and the plan counts with that
same function, so its input tokens are the usage the run records for each
first call. Tokenizing the pasted histories of a LongMemEval S run with
cl100k was about 60 s of CPU before its first sample, to predict numbers the
offline model never reports.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: Chat framing per message, and for the reply, in OpenAI's token counting.
_PER_MESSAGE, _PER_REPLY = 3, 3

#: Texts up to this many characters are remembered as themselves by the counter; longer ones by their digest.
_KEPT_TEXT = 256


class LitellmCounter:
    """litellm's token counter for one model, each distinct text counted once.

    Where :mod:`harness.run.model_tables` knows the tiktoken encoding litellm would
    pick, texts are counted with it directly and litellm is never imported
    (its import is most of a plan's time); otherwise litellm counts.
    """

    def __init__(self, model: str) -> None:
        self._model = model
        self._seen: dict[str | bytes, int] = {}
        self._litellm_count: Any = None
        self._count = self._counting_function()

    def _counting_function(self) -> Any:
        """The function a text is counted with, selected once instead of on every call."""
        from harness.run.model_tables import count_function

        local = count_function(self._model)
        if local is None:
            return self._litellm_function()

        def count(text: str) -> int:
            found = local(text)
            return found if found is not None else self._litellm_function()(text)  # a text litellm samples

        return count

    def _litellm_function(self) -> Any:
        """litellm's ``token_counter(text=...)`` function for the model.

        Selecting the tokenizer is most of a ``token_counter`` call (6,000 prompts: ~2 s of it);
        the function is litellm's own, so the counts are the same. An older or newer litellm
        without it: ``token_counter`` per text.
        """
        if self._litellm_count is None:
            litellm = _litellm()
            try:
                from litellm.litellm_core_utils.token_counter import _get_count_function

                self._litellm_count = _get_count_function(self._model, None)
            except Exception:  # noqa: BLE001 - not this litellm's layout
                self._litellm_count = lambda text: litellm.token_counter(model=self._model, text=text)
        return self._litellm_count

    def text(self, text: str) -> int:
        # A long text is remembered by its digest, not kept: every pasted history of a LongMemEval S suite held
        # here was ~450 MB by the end of the plan. (BLAKE2b of 0.5 MB is ~1 ms; counting it, ~100 ms.)
        key: str | bytes = text if len(text) <= _KEPT_TEXT else hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        count = self._seen.get(key)
        if count is None:
            try:
                count = int(self._count(text))
            except Exception:  # noqa: BLE001 - a model litellm cannot count: the chars/4 estimate
                count = (len(text) + 3) // 4
            self._seen[key] = count
        return count

    def messages(self, messages: list[dict[str, Any]]) -> int:
        total = _PER_REPLY
        for message in messages:
            content = message.get("content")
            total += _PER_MESSAGE + self.text(message["role"]) + (self.text(content) if isinstance(content, str) and content else 0)
        return total

    def tools(self, tools: list[dict[str, Any]]) -> int:
        """The tokens of the tool specs sent with a prompt (their compact JSON, as litellm counts them)."""
        return self.text(json.dumps(tools, separators=(",", ":")))


class OfflineCounter:
    """An offline model's prompt tokens, counted as it reports them in its usage (no tokenizer)."""

    def messages(self, messages: list[dict[str, Any]]) -> int:
        from harness.offline_model import prompt_tokens

        return prompt_tokens(messages, None)

    def tools(self, tools: list[dict[str, Any]]) -> int:
        from harness.offline_model import prompt_tokens

        return prompt_tokens([], tools)


def counter_for(model: str) -> LitellmCounter | OfflineCounter:
    """The counter of ``model``'s prompts: the offline model's own estimate for ``offline/*``, else litellm's tokenizer."""
    from harness.offline_model import MODEL_NAMES

    return OfflineCounter() if model in MODEL_NAMES else LitellmCounter(model)


def _litellm() -> Any:
    """litellm, imported with the shipped price map (never fetched) and ``offline/*`` priced at 0."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from harness.offline_model import register_offline

    register_offline()
    return litellm
