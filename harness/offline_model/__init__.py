"""The built-in offline model: a deterministic *lexical baseline agent*, not an LLM.

``offline/reference`` is served through litellm's custom-provider mechanism, so
``litellm.acompletion(model="offline/reference", messages=..., tools=...)``
works with no network and no API key. It is the default model of
``recall-eval run`` and the model double of the tests. A run calls it
in-process through :func:`answer` (the function the provider wraps) without
importing litellm, unless a Router serves it (``harness.run.direct``).

It decides only from the request, like any model: the messages and the tool
specs. It never reads scenario files, expectations, item roles or anything
else on disk, and it uses no randomness and no clock: the same request always
gets the same reply.

What it does (one turn = everything after the last user message):

1. Takes the last user message as the question and extracts terms: content
   words (stopwords and filler removed), code identifiers whole and split,
   adjacent content-word pairs, CJK runs and their two-character windows,
   naive singular/stem variants; at most 32.
2. If ``memory_search`` is offered and not yet called this turn, calls it with
   those terms, ``match: "prefix"`` and ``limit: 10`` (only the properties the
   offered schema declares; latin terms under 3 characters are dropped, or
   the call switches to ``exact`` when those are the only salient ones). An
   error result gets one corrected retry (8 shorter terms, without the
   parameter the error names) unless it is a policy denial.
3. Scores the returned items by overlap of question terms with content and
   matched keys. When the best is convincing (it hits a salient, non-generic
   question term; two when the question has three or more), calls
   ``memory_get`` on it once if offered, then answers ``"From my notes:
   <content>"``. Among same-topic near-ties it takes the newest
   ``observedAt`` (later facts supersede); a second item is added only when
   it covers other question terms on other keys. The ``## `` entries of a
   ``<memory_document>`` section in the system prompt (the
   ``memory_document`` arm) count as items the same way.
4. Otherwise it answers from the visible conversation before the question
   (system prompt excluded): the best-overlapping statement, preferring the
   user's and the latest. A user statement that overlaps strictly more than
   the best item wins over the item (the current conversation is newer).
   A speaker name opening line after line (``Caroline: ...``, how the
   harness shows turns with a speaker) is not part of the statement: it only
   ranks statements convincing on their own words, and the answer names the
   speaker (``Earlier Caroline said: "..."``).
5. With nothing convincing it abstains with :data:`ABSTAIN_ANSWER`, which
   always contains "I don't know".

It never calls a tool that is not offered, never invents an item id (it only
gets ids a search returned) and answers after :data:`MAX_TOOL_ROUNDS` tool
rounds.

What it cannot do: paraphrase or synonyms ("deploy" will not find
"release"), reasoning across facts, dates or arithmetic, following stored
preferences when writing (it only quotes them), telling a stale value from a
current one except by ``observedAt`` or conversation order, or negation. It
is a floor for real models and a deterministic double for the harness, not an
estimate of what an LLM would score.

Other model names: ``offline/abstain`` always abstains (a selective-prediction
floor). Usage is a cheap estimate (characters / 4); sampling parameters
(temperature, seed) are accepted and ignored; streaming is not supported.

Example:
    >>> from harness.offline_model import register
    >>> register()
    >>> import litellm
    >>> r = litellm.completion(model="offline/reference",
    ...                        messages=[{"role": "user", "content": "What is my dog called?"}])
    >>> "I don't know" in r.choices[0].message.content
    True
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from harness.offline_model._policy import ABSTAIN_ANSWER, MAX_TOOL_ROUNDS, respond
from harness.offline_model._reply import PROVIDER, OfflineReply, answer, prompt_tokens

MODEL_NAMES = ("offline/reference", "offline/abstain")

__all__ = ["ABSTAIN_ANSWER", "MAX_TOOL_ROUNDS", "MODEL_NAMES", "PROVIDER", "OfflineReply", "answer", "code_revision", "prompt_tokens",
           "register", "register_offline", "respond"]


@functools.cache
def code_revision() -> str:
    """A short hash of this package's source: the offline model's "weights".

    The response cache keys offline answers by it, so a changed agent policy
    never serves answers the old code gave.
    """
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def register() -> None:
    """Make ``offline/*`` models callable through litellm (idempotent).

    Sets ``LITELLM_LOCAL_MODEL_COST_MAP`` (if unset) before importing litellm,
    then adds the handler to ``litellm.custom_provider_map`` unless an
    ``offline`` provider is already there; other providers are kept.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from harness.offline_model._provider import OfflineLLM

    current = list(getattr(litellm, "custom_provider_map", None) or [])
    if any(entry.get("provider") == PROVIDER for entry in current if isinstance(entry, dict)):
        return
    current.append({"provider": PROVIDER, "custom_handler": OfflineLLM()})
    litellm.custom_provider_map = current


def register_offline() -> None:
    """Make ``offline/*`` callable and priced at 0 in litellm (idempotent; also run in every worker)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # _provider imports litellm: no remote cost-map fetch
    from harness.offline_model._provider import register_prices

    register()
    register_prices(MODEL_NAMES)
