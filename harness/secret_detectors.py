"""The secret types of ``detect-secrets`` (Yelp's scanner), used as a library on any text.

Its regex plugins know many more credentials than a hand list (Slack webhooks,
Azure storage keys, Discord, SendGrid, Telegram and Twilio tokens, npm and PyPI
tokens, IBM and SoftLayer keys ...) and are kept up to date by their maintainers;
:mod:`harness.redaction` applies them after its own patterns (the floor, which
also knows Hugging Face tokens and ``Authorization`` headers).

Left out, because a conversation is prose rather than code:

- ``IPPublicDetector``: a public IP address is a fact of the conversation, not a credential;
- ``KeywordDetector`` and the two high-entropy detectors: they are not regex
  plugins, and would take every commit hash, UUID and ``password: see the wiki``
  for a secret (the floor's assignment pattern covers ``password = ...``).

The plugins' own ``analyze_string`` yields a capture group (``ghp`` for a
GitHub token), so the spans here are the matches: the last group of six
characters or more when a pattern captures the secret, else the whole match,
without the whitespace or quotes some patterns take around it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import cast

LEFT_OUT = frozenset({"IPPublicDetector"})
_EDGE = " \t\r\n\"'=:"


@lru_cache(maxsize=1)
def detector_patterns() -> tuple[re.Pattern[str], ...]:
    """Every pattern of every detect-secrets regex plugin but :data:`LEFT_OUT`, in the plugins' order."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
    # ``denylist`` is a class attribute on every regex plugin (declared as a property on the base class)
    return tuple(pattern for plugin in plugins
                 if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in LEFT_OUT
                 for pattern in cast("Iterable[re.Pattern[str]]", plugin.denylist))


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    groups = [g for g in range(1, (match.re.groups or 0) + 1) if len(match.group(g) or "") >= 6]
    start, end = match.span(groups[-1]) if groups else match.span()
    text = match.string
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    return start, end


def secret_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every secret the plugins find in ``text``, merged where they overlap, in order."""
    spans = sorted(span for pattern in detector_patterns() for match in pattern.finditer(text)
                   if (span := _secret_span(match))[1] > span[0])
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def replace_spans(text: str, spans: list[tuple[int, int]], marker: str) -> str:
    """``text`` with each of the ordered, disjoint ``spans`` replaced by ``marker``."""
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], marker]
        last = end
    return "".join(out) + text[last:]
