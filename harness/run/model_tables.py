"""litellm's tokenizer and price of a model, read from the files litellm ships, without importing litellm.

``import litellm`` takes about 4 s, most of ``run --plan`` on a large suite,
while the plan needs only two of its facts per model: which tiktoken encoding
``litellm.token_counter`` counts the model's text with, and the model's row of
litellm's price map (a JSON file inside the litellm package). This module
answers both for the models where the answer is certain without litellm, and
says "ask litellm" (None) for every other: a model litellm counts with another
tokenizer (Claude, Llama, DeepSeek, Command R), a model it would resolve
through its lists or aliases, a price it would look up by provider rules, or a
process where litellm is already imported (its state may differ from the
shipped files, and asking it then costs nothing).

The rules follow litellm 1.110's ``_get_count_function`` / ``_price_of`` paths
(see ``tests/run/test_model_tables.py``, which compares both on many
messages and models): a model whose last ``/`` segment tiktoken maps to
``o200k_base`` (``gpt-4o-mini``, ``openai/gpt-4.1``, ``o3``) is counted with
``o200k_base``; an ``offline/*`` test model falls to litellm's default model
``gpt-3.5-turbo``, so ``cl100k_base``; a text longer than litellm's exact limit
(it then extrapolates from samples) is left to litellm. Like litellm, a text is
encoded in pieces of :data:`CHUNK_CHARS` characters and their counts added (a
few tokens more than encoding it whole).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.run.budget import Price

#: litellm's ``TOKEN_COUNTER_MAX_EXACT_CHARS`` default: longer texts it counts by sampling (left to litellm).
MAX_EXACT_CHARS = 4_000_000
#: litellm's ``TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS`` default: it encodes a text in pieces this long and adds their counts.
CHUNK_CHARS = 1024
#: Environment variables that change litellm's counting or price map: with any set, litellm answers.
_LITELLM_SETTINGS = ("TOKEN_COUNTER_MAX_EXACT_CHARS", "TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "CUSTOM_TIKTOKEN_CACHE_DIR",
                     "LITELLM_MODEL_COST_MAP_URL")
#: What makes litellm count with a HuggingFace tokenizer instead of tiktoken (``huggingface_tokenizer_kind``), widened.
_OTHER_TOKENIZER = re.compile(
    r"command-r|claude|anthropic|llama-2|llama-3|replicate|deepseek[-_.](?:chat[-_.])?v[34]|(?:^|/)deepseek-(?:chat|reasoner|flash)",
    re.IGNORECASE,
)
_PRICE_MAP = "model_prices_and_context_window_backup.json"


def _litellm_folder() -> Path | None:
    """The installed litellm package's folder (found without importing it), or None."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def answerable() -> bool:
    """Whether the shipped files say what litellm would: it is not imported yet and no setting changes its answer."""
    return ("litellm" not in sys.modules and not any(os.environ.get(name) for name in _LITELLM_SETTINGS)
            and os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").lower() == "true")


def encoding_name(model: str) -> str | None:
    """The tiktoken encoding ``litellm.token_counter(model=model, ...)`` counts with, or None when not certain."""
    if _OTHER_TOKENIZER.search(model):
        return None
    from harness.offline_model import MODEL_NAMES

    if model in MODEL_NAMES:
        return "cl100k_base"  # no OpenAI name in it: litellm counts as for its default gpt-3.5-turbo
    import tiktoken.model

    try:
        name = tiktoken.model.encoding_name_for_model(model.rsplit("/", 1)[-1])
    except KeyError:
        return None
    if name != "o200k_base":
        return None  # an older OpenAI name: litellm's lists decide between its name and gpt-3.5-turbo's
    entry = _price_rows().get(model)
    if model in _aliased() or (isinstance(entry, dict) and entry.get("litellm_provider") == "anthropic"):
        return None
    return name


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    """tiktoken's encoding ``name``, read from the copy litellm ships (as litellm's import points tiktoken to it)."""
    import tiktoken

    folder = _litellm_folder()
    tokenizers = folder / "litellm_core_utils" / "tokenizers" if folder is not None else None
    if tokenizers is None or not tokenizers.is_dir():
        return None
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tokenizers)  # what `import litellm` sets, unconditionally
    return tiktoken.get_encoding(name)


def count_function(model: str) -> Callable[[str], int | None] | None:
    """``text -> litellm.token_counter(model=model, text=text)`` without litellm, or None when litellm must count.

    The function returns None for a text longer than :data:`MAX_EXACT_CHARS`
    (litellm extrapolates those): count that one with litellm.
    """
    return local_count_function(model) if answerable() else None


def local_count_function(model: str) -> Callable[[str], int | None] | None:
    """:func:`count_function` by the shipped files alone, whatever this process did to litellm (tests compare the two)."""
    name = encoding_name(model)
    encoding = _encoding(name) if name is not None else None
    if encoding is None:
        return None

    def count(text: str) -> int | None:
        if len(text) > MAX_EXACT_CHARS:
            return None
        return sum(len(encoding.encode(text[start:start + CHUNK_CHARS], disallowed_special=()))
                   for start in range(0, len(text), CHUNK_CHARS))

    return count


@functools.lru_cache(maxsize=1)
def _price_rows() -> dict[str, Any]:
    """litellm's shipped price map, as read from its JSON ({} when there is none)."""
    folder = _litellm_folder()
    try:
        rows = json.loads((folder / _PRICE_MAP).read_bytes()) if folder is not None else {}
    except (OSError, ValueError):
        return {}
    return rows if isinstance(rows, dict) else {}


@functools.lru_cache(maxsize=1)
def _aliased() -> frozenset[str]:
    """Names litellm serves through its alias rules (rows pointing elsewhere, and the names rows list as aliases)."""
    names: set[str] = {"fallback_generalizations"}
    for key, row in _price_rows().items():
        if isinstance(row, dict) and (row.get("alias_of") is not None or row.get("aliases") is not None):
            names.add(key)
            if isinstance(row.get("aliases"), list):
                names.update(alias for alias in row["aliases"] if isinstance(alias, str))
    return frozenset(names)


def price(model: str) -> tuple[bool, Price | None]:
    """``(known, price)``: the price ``harness.run.calls.prices`` would find for ``model``; known False when litellm must say.

    litellm's lookup reads the row of the model, then of the model without its
    provider prefix; a model in neither (which litellm then resolves by its
    provider rules), or named by an alias, is left to litellm. ``offline/*``
    costs nothing (``harness.offline_model.register_offline`` prices them at 0).
    """
    from harness.offline_model import MODEL_NAMES

    if model in MODEL_NAMES:
        return True, Price(0.0, 0.0)
    rows, aliased = _price_rows(), _aliased()
    for key in (model, model.split("/", 1)[1]) if "/" in model else (model,):
        if key in aliased:
            return False, None
        row = rows.get(key)
        if row is not None:
            if not isinstance(row, dict):
                return False, None
            inp, out = row.get("input_cost_per_token"), row.get("output_cost_per_token")
            if inp is None and out is None:
                return True, None
            return True, Price(float(inp or 0.0), float(out or 0.0))
    return False, None


def local_prices(models: Iterable[str]) -> dict[str, Price | None] | None:
    """:func:`harness.run.calls.prices` of ``models`` (no Router) without litellm, or None when litellm must look one up."""
    if not answerable():
        return None
    out: dict[str, Price | None] = {}
    for model in models:
        known, found = price(model)
        if not known:
            return None
        out[model] = found
    return out
