"""Is each ``--model`` a name litellm can call? Checked before the run spends anything.

A model string whose provider litellm does not know (``ofline/reference``,
``gpt4o-mini``) can never answer: the run stops before it starts (exit 2)
with the closest names litellm or the offline model know. A known provider
with a name missing from litellm's model map (``openai/gpt-4o-mni``) may
still be right (a local server serves any name), so it is only a warning with
the closest known name. ``--resume`` keeps a run's models, so a typo is
fixed by a new run, never by resuming.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["model_name_problems"]


def _known_names() -> list[str]:
    """Every model litellm's price map knows, as ``provider/name``, and the offline models."""
    import litellm

    from harness.offline_model import MODEL_NAMES

    names = set(MODEL_NAMES)
    for key, info in litellm.model_cost.items():
        provider = info.get("litellm_provider") if isinstance(info, dict) else None
        names.add(key if "/" in key or not provider else f"{provider}/{key}")
    return sorted(names)


def _advice(model: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(model, known, n=3, cutoff=0.75)
    return f"did you mean {' or '.join(close)}?" if close else "litellm model strings are PROVIDER/NAME, e.g. openai/gpt-4o-mini"


def model_name_problems(models: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` about the model strings: errors for a provider litellm does not know, warnings
    for a name its model map lacks when a close one exists."""
    from harness.offline_model import MODEL_NAMES, register_offline

    if all(model in MODEL_NAMES for model in models):
        return [], []  # the built-in models are known by name: no litellm import for an offline run
    register_offline()  # first: it keeps litellm to its local price map (no fetch at import)
    import litellm

    known = _known_names()
    known_set = set(known)
    errors, warnings = [], []
    quiet = litellm.suppress_debug_info
    litellm.suppress_debug_info = True  # no "Provider List" banner on standard output
    try:
        for model in models:
            try:
                litellm.get_llm_provider(model)
            except Exception:  # noqa: BLE001 - litellm raises its own BadRequestError for an unknown provider
                errors.append(f"--model {model}: litellm knows no provider for it; {_advice(model, known)} "
                              "(a new run: --resume keeps a run's models)")
                continue
            bare = model.split("/", 1)[1] if "/" in model else model
            if model not in known_set and bare not in known_set:
                close = difflib.get_close_matches(model, known, n=3, cutoff=0.9)
                if close:
                    warnings.append(f"--model {model} is not in litellm's model map; did you mean "
                                    f"{' or '.join(close)}? (a local or proxied server may serve any name)")
    finally:
        litellm.suppress_debug_info = quiet
    return errors, warnings
