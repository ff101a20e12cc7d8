"""Secret redaction shared by every stage that writes user text: the memory file's writes, imported transcripts, runs.

One list of secret patterns (API keys of the common providers, tokens, JWTs,
private key blocks, credentials in URLs and ``Authorization`` headers,
``password = ...`` assignments) as the floor, then every secret type of the
``detect-secrets`` package (:mod:`harness.secret_detectors`), on by default
wherever real user data is written, plus the patterns a user adds (``--redact
REGEX`` on ``recall-eval import transcripts`` and ``run``). A match becomes
``[REDACTED]``; a group named ``keep`` (the label of an assignment) is kept, so
``OPENAI_API_KEY=sk-...`` reads ``OPENAI_API_KEY=[REDACTED]``.

A ``--redact`` pattern is often the secret itself (``--redact hunter2``), so
none is ever written to disk: ``_suite.json`` and ``run.json`` record each by
its digest (:func:`pattern_digest`), and a later ``run --resume`` or
``report`` of the run is given the same ``--redact`` again (:func:`recorded_patterns`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.secret_detectors import replace_spans, secret_spans

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
        (r"\bhf_[A-Za-z0-9]{30,}", False),  # Hugging Face
        (r"\bnpm_[A-Za-z0-9]{36}\b|\bpypi-[A-Za-z0-9_\-]{50,}", False),  # npm, PyPI
        (r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+", False),  # Slack webhook
        (r"https://(?:[a-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+", False),  # Discord webhook
        # An Authorization header's credentials, of any scheme and length (Basic dXNlcjpw... is short)
        (r"(?P<keep>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token|digest|negotiate|apikey)\s+)?+)"
         r"(?!\[REDACTED\])[^\s\"',;]+", True),
        (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", False),  # Slack
        (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", False),  # AWS access key id
        (r"\bAIza[0-9A-Za-z_\-]{35}", False),  # Google API key
        (r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", False),  # JWT
        (r"(?P<keep>\bBearer\s+)[A-Za-z0-9._~+/\-]{12,}=*", True),
        (r"(?P<keep>://[^/\s:@]+:)[^@\s/]+(?=@)", False),  # credentials in a URL
        (
            r"(?P<keep>\b[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passwd|password|pwd|access[_\-]?key|"
            r"client[_\-]?secret|auth)[A-Za-z0-9_.\-]*[\"']?\s*(?:[:=]|\bis\b)\s*[\"']?)(?!\[REDACTED\]|(?:basic|bearer|token|digest|negotiate|apikey)\s)[^\s\"',;]{6,}",
            True,
        ),
    )
)


class RedactionError(ValueError):
    """A ``--redact`` pattern that is not a regular expression; the message names it and why."""


def _sub(pattern: re.Pattern[str], text: str) -> tuple[str, int]:
    return pattern.subn(lambda m: (m.groupdict().get("keep") or "") + REDACTED, text)


def _detected(text: str) -> tuple[str, int]:
    """``text`` with what detect-secrets finds replaced (after the floor's own patterns)."""
    spans = secret_spans(text)
    return (replace_spans(text, spans, REDACTED), len(spans)) if spans else (text, 0)


def redact_secrets(text: str) -> str:
    """``text`` with every API key, token, password assignment and private key block replaced by ``[REDACTED]``.

    Example:
        >>> redact_secrets("deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstu and port 5174")
        'deploy with OPENAI_API_KEY=[REDACTED] and port 5174'
    """
    for pattern in SECRET_PATTERNS:
        text = _sub(pattern, text)[0]
    return _detected(text)[0]


def contains_secret(text: str) -> bool:
    """True when ``text`` holds something :func:`redact_secrets` removes (redaction is idempotent)."""
    return redact_secrets(text) != text


@dataclass(frozen=True)
class Redactor:
    """The default secret patterns plus a user's ``--redact`` patterns, applied in that order.

    Attributes:
        extra: The user's patterns as given (never written: ``run.json`` and ``_suite.json`` hold :attr:`digests`).
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
        remember_patterns(extra)
        return cls(tuple(extra), SECRET_PATTERNS + tuple(compiled))

    @property
    def digests(self) -> list[str]:
        """What is written of :attr:`extra`: each pattern's :func:`pattern_digest`."""
        return [pattern_digest(p) for p in self.extra]

    def redact(self, text: str) -> tuple[str, int]:
        """``text`` redacted (the floor, detect-secrets, then ``--redact``), and how many matches were replaced."""
        total = 0
        floor = len(SECRET_PATTERNS)
        for index, pattern in enumerate(self.patterns):
            if index == floor:  # detect-secrets after the floor, before the user's own
                text, n = _detected(text)
                total += n
            text, n = _sub(pattern, text)
            total += n
        if len(self.patterns) == floor:
            text, n = _detected(text)
            total += n
        return text, total


#: The ``--redact`` patterns this process was given, by digest: how a report or resume finds them again.
_GIVEN: dict[str, str] = {}
DIGEST_PREFIX = "sha256:"


def pattern_digest(pattern: str) -> str:
    """``sha256:`` and the first 16 hex digits of the pattern's SHA-256: enough to recognise it, never to read it.

    Example:
        >>> pattern_digest("hunter2")
        'sha256:f52fbd32b2b3b86f'
    """
    return DIGEST_PREFIX + hashlib.sha256(pattern.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def remember_patterns(patterns: Iterable[str]) -> None:
    """Let :func:`recorded_patterns` find ``patterns`` (a ``--redact`` given to this process) by their digests."""
    _GIVEN.update((pattern_digest(p), p) for p in patterns)


def recorded_patterns(recorded: Sequence[str]) -> tuple[str, ...]:
    """The patterns behind ``run.json``'s recorded ``--redact`` digests (a run before digests recorded the patterns).

    Raises:
        RedactionError: a digest names no pattern given to this process; the message says to give ``--redact`` again.
    """
    missing = [r for r in recorded if r.startswith(DIGEST_PREFIX) and r not in _GIVEN]
    if missing:
        raise RedactionError(f"the run was redacted with {len(recorded)} --redact pattern(s), recorded only by digest "
                             f"({', '.join(missing)}) so the secret is never on disk; give the same --redact again")
    return tuple(_GIVEN.get(r, r) for r in recorded)
