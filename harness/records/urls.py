"""URLs as they may be written down: with no credential in them.

An ``--api-base`` (or ``--judge-api-base``) may carry a secret: ``user:pass@``
userinfo, or a token in the query string (``?api-key=...``, ``?token=...``,
``?sig=...``, or any other name: a query value is a secret until shown
otherwise). Every writer of a URL (``run.json``, ``summary.json``, the report
pages, terminal lines) writes :func:`redact_url` of it: the userinfo dropped,
every query value but a few known-harmless ones (``api-version``) replaced by
``REDACTED``, the fragment dropped. The request itself still goes to the URL
as given; ``--resume`` asks for ``--api-base`` again when the recorded one
was redacted (:func:`is_redacted`).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

REDACTED = "REDACTED"
#: Query parameters whose values are settings, not secrets (Azure OpenAI's API version).
HARMLESS_QUERY = frozenset({"api-version", "api_version", "version"})


def redact_url(url: str | None) -> str | None:
    """``url`` without credentials.

    Example:
        >>> redact_url("https://me:pw@llm.example/v1?api-version=2024-06-01&token=abc#x")
        'https://llm.example/v1?api-version=2024-06-01&token=REDACTED'
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # not a URL we can take apart: nothing of it is safe to show
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = (parts.hostname or "") + (f":{port}" if port else "")
    query = "&".join(_redacted_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=""))


def _redacted_pair(pair: str) -> str:
    """``name=value`` with the value redacted unless the name is harmless; a bare ``token`` (no ``=``) wholly."""
    name, sep, value = pair.partition("=")
    if not sep:
        return REDACTED
    return f"{name}={value}" if unquote(name).lower() in HARMLESS_QUERY else f"{name}={REDACTED}"


def is_redacted(url: str | None) -> bool:
    """True when ``url`` (as recorded) had credentials taken out, so it cannot be called again as is."""
    return bool(url) and REDACTED in str(url)


def url_secrets(url: str | None) -> list[str]:
    """The credential parts of ``url`` (password, user, query values): what error messages must never show."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [parts.password or "", parts.username or ""]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in HARMLESS_QUERY]
    return [s for s in found if len(s) >= 4]
