"""Secret redaction shared by every stage that writes user text: the memory file's writes, imported transcripts, runs.

One list of secret patterns (API keys of the common providers, tokens, JWTs,
private key blocks, credentials in URLs, ``password = ...`` assignments), on by
default wherever real user data is written, plus the patterns a user adds
(``--redact REGEX`` on ``recall-eval import transcripts`` and ``run``). A match
becomes ``[REDACTED]``; a group named ``keep`` (the label of an assignment) is
kept, so ``OPENAI_API_KEY=sk-...`` reads ``OPENAI_API_KEY=[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

REDACTED = "[REDACTED]"

# Each pattern matches one secret; a group named ``keep`` is kept (the label of an assignment).
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    for pattern, ignore_case in (
        (r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", False),
        (r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}", False),  # OpenAI, Anthropic
        (r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", False),  # Stripe
        (r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}", False),  # GitHub
        (r"\bglpat-[A-Za-z0-9_\-]{20,}", False),  # GitLab
        (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", False),  # Slack
        (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", False),  # AWS access key id
        (r"\bAIza[0-9A-Za-z_\-]{35}", False),  # Google API key
        (r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", False),  # JWT
        (r"(?P<keep>\bBearer\s+)[A-Za-z0-9._~+/\-]{12,}=*", True),
        (r"(?P<keep>://[^/\s:@]+:)[^@\s/]+(?=@)", False),  # credentials in a URL
        (
            r"(?P<keep>\b[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passwd|password|pwd|access[_\-]?key|"
            r"client[_\-]?secret|auth)[A-Za-z0-9_.\-]*[\"']?\s*(?:[:=]|\bis\b)\s*[\"']?)[^\s\"',;]{6,}",
            True,
        ),
    )
)


class RedactionError(ValueError):
    """A ``--redact`` pattern that is not a regular expression; the message names it and why."""


def _sub(pattern: re.Pattern[str], text: str) -> tuple[str, int]:
    return pattern.subn(lambda m: (m.groupdict().get("keep") or "") + REDACTED, text)


def redact_secrets(text: str) -> str:
    """``text`` with every API key, token, password assignment and private key block replaced by ``[REDACTED]``.

    Example:
        >>> redact_secrets("deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstu and port 5174")
        'deploy with OPENAI_API_KEY=[REDACTED] and port 5174'
    """
    for pattern in SECRET_PATTERNS:
        text = _sub(pattern, text)[0]
    return text


def contains_secret(text: str) -> bool:
    """True when ``text`` holds something :func:`redact_secrets` removes (redaction is idempotent)."""
    return redact_secrets(text) != text


@dataclass(frozen=True)
class Redactor:
    """The default secret patterns plus a user's ``--redact`` patterns, applied in that order.

    Attributes:
        extra: The user's patterns as given (recorded in ``run.json`` and ``_suite.json``; never a value they hid).
        patterns: Every pattern applied.
    """

    extra: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]

    @classmethod
    def build(cls, extra: Sequence[str] = ()) -> Redactor:
        """The redactor of ``--redact`` patterns ``extra`` (Python ``re`` syntax).

        Raises:
            RedactionError: a pattern does not compile, or matches the empty string (it would redact nothing
                while seeming to redact everything).
        """
        compiled = []
        for text in extra:
            try:
                pattern = re.compile(text)
            except re.error as exc:
                raise RedactionError(f"--redact {text!r}: not a regular expression ({exc})") from None
            if pattern.fullmatch(""):
                raise RedactionError(f"--redact {text!r}: matches the empty string; give a pattern of what to hide")
            compiled.append(pattern)
        return cls(tuple(extra), SECRET_PATTERNS + tuple(compiled))

    def redact(self, text: str) -> tuple[str, int]:
        """``text`` redacted, and how many matches were replaced."""
        total = 0
        for pattern in self.patterns:
            text, n = _sub(pattern, text)
            total += n
        return text, total
