"""The rules of every single value the memory store accepts: terms, identifiers, content, times.

One module holds them so the store, the Host and the scenario validator apply
the same rules with the same messages (``../shared/design/memory-semantics.md``):

- :func:`normalize_search_term`: the one normalization of stored keys and query terms;
- :func:`normalize_identifier`: item ids, workspace keys and source ids;
- :func:`normalize_content`: item content;
- :func:`check_time`: a UTC-millisecond time.

The rules of a whole item (its keys, sources, enumerations, times together) are
:func:`memory_tools.item_validation.validate_item_input`, built on these.

Every failure is a :class:`MemoryValidationError` whose message names the field,
the value or limit at fault.

Example:
    >>> normalize_search_term("  Straße\\u3000\\u3000Ａ ")
    'straße ａ'
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata

from memory_tools.model import MemoryValidationError

MAX_TERM_CODE_POINTS = 256
MAX_IDENTIFIER_CODE_POINTS = 512
MAX_CONTENT_CODE_POINTS = 2000

# JavaScript's String.prototype.trim set (WhiteSpace + LineTerminator).
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
# Inside a term: Cc controls, zero-width characters, BOM and lone surrogates are errors.
_TERM_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200d\ufeff\ud800-\udfff]")
# What is left of the whitespace set once the forbidden characters are gone.
_WHITESPACE_RUN = re.compile("[ \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Every Unicode format character (category Cf) of Python 3.11's Unicode 14: soft hyphen, zero-width space and
#: joiners, bidi marks and isolates, word joiner, BOM, tags ... (tests/memory_tools check it against unicodedata).
FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def _fail(message: str) -> MemoryValidationError:
    return MemoryValidationError(message)


class _Invalid(Exception):
    """A rule broken by a value; the caller prefixes the field name (built only on failure)."""


def _term_parts(text: object) -> tuple[str, str]:
    """Return ``(nfc_trimmed_original, normalized)`` for a key or term (design steps 1-5)."""
    if type(text) is not str:
        if not isinstance(text, str):
            raise _Invalid(f"must be a string (got {type(text).__name__})")
        text = str(text)
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    trimmed = text.strip(_JS_WHITESPACE)
    if not trimmed:
        raise _Invalid("must not be empty or only whitespace")
    bad = _TERM_FORBIDDEN.search(trimmed)
    if bad is not None:
        raise _Invalid(
            "must not contain control, zero-width or lone surrogate characters "
            f"(found U+{ord(bad.group()):04X} at position {bad.start()} of {trimmed!r})"
        )
    if len(trimmed) > MAX_TERM_CODE_POINTS:
        raise _Invalid(f"must be at most {MAX_TERM_CODE_POINTS} code points after NFC and trimming (got {len(trimmed)})")
    return trimmed, _WHITESPACE_RUN.sub(" ", trimmed).lower()


def normalize_search_term(text: object, field: str = "term") -> str:
    """Normalize a stored key or a query term; both go through this one function.

    NFC, trim JavaScript whitespace, reject empty text, inner control/zero-width
    characters and lone surrogates, reject more than 256 code points (counted
    before collapsing and lowercasing), collapse whitespace runs to one space,
    then ``str.lower`` (no NFKC, no casefold).

    Args:
        text: The raw key or term.
        field: Name used in error messages, e.g. ``"keys[3].key"``.

    Raises:
        MemoryValidationError: The text breaks a rule; the message names ``field``.

    Example:
        >>> normalize_search_term(" 偏好 ") == normalize_search_term("偏好")
        True
    """
    try:
        return _term_parts(text)[1]
    except _Invalid as problem:
        raise _fail(f"{field} {problem}") from None


def _check_identifier(value: object) -> str:
    if type(value) is str and 0 < len(value) <= MAX_IDENTIFIER_CODE_POINTS and value.isascii():
        if value.strip(_JS_WHITESPACE) == value:  # ASCII: already NFC, no surrogates
            return value
    if not isinstance(value, str):
        raise _Invalid(f"must be a string (got {type(value).__name__})")
    if not 1 <= len(value) <= MAX_IDENTIFIER_CODE_POINTS:
        raise _Invalid(f"must hold 1..{MAX_IDENTIFIER_CODE_POINTS} code points (got {len(value)})")
    if value.strip(_JS_WHITESPACE) != value:
        raise _Invalid(f"must not start or end with whitespace (got {value!r})")
    if _SURROGATE.search(value) is not None:
        raise _Invalid(f"must not contain lone surrogates (got {value!r})")
    if not unicodedata.is_normalized("NFC", value):
        raise _Invalid(f"must already be NFC-normalized (got {value!r})")
    return str(value)


def normalize_identifier(value: object, field: str) -> str:
    """Check an identifier (item id, workspace key, source id) and return it unchanged.

    Identifiers are compared case-sensitively, so they are never rewritten:
    they must already be NFC, have no surrounding whitespace and hold 1..512 code points.

    Raises:
        MemoryValidationError: Naming ``field`` and the rule broken.
    """
    try:
        return _check_identifier(value)
    except _Invalid as problem:
        raise _fail(f"{field} {problem}") from None


def normalize_content(text: object, field: str = "content") -> str:
    """Normalize item content: NFC, controls to spaces, zero-width removed, trimmed.

    The result must be non-empty and at most 2,000 code points, measured after
    normalization.

    Raises:
        MemoryValidationError: Naming ``field`` and the rule broken.
    """
    if not isinstance(text, str):
        raise _fail(f"{field} must be a string (got {type(text).__name__})")
    if not text.isascii():
        if _SURROGATE.search(text) is not None:
            raise _fail(f"{field} must not contain lone surrogates")
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        text = _ZERO_WIDTH.sub("", text)
    if not text.isprintable():  # every _CONTROL character is unprintable: printable text has none to replace
        text = _CONTROL.sub(" ", text)
    text = text.strip(_JS_WHITESPACE)
    if not text:
        raise _fail(f"{field} must not be empty after normalization")
    if len(text) > MAX_CONTENT_CODE_POINTS:
        raise _fail(f"{field} must be at most {MAX_CONTENT_CODE_POINTS} code points after normalization (got {len(text)})")
    return text


def strip_format_characters(text: str) -> str:
    """``text`` without Unicode format characters (category Cf), which change no visible letter.

    What text matching uses on both sides (answers, canaries, expectations,
    forbidden patterns: ``harness.score.matching``), so ``North\u200bwind`` or
    ``North\u00adwind`` is ``Northwind``. Item content keeps its own, narrower
    rule (:func:`normalize_content` removes the four zero-width characters).

    Example:
        >>> strip_format_characters("North" + chr(0x200B) + "wind, sh" + chr(0xAD) + "ip")
        'Northwind, ship'
    """
    return text if text.isascii() else FORMAT_CHARACTERS.sub("", text)


def content_hash(content: str) -> str:
    """SHA-256 hex digest of the UTF-8 content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def check_time(value: object, field: str, *, optional: bool) -> int | None:
    """Check a UTC-millisecond time: a non-negative int (None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if type(value) is not int or value < 0:  # bool is not a time
        expected = "a non-negative integer (UTC milliseconds)" + (" or null" if optional else "")
        raise _fail(f"{field} must be {expected} (got {value!r})")
    return value


def wall_clock_ms() -> int:
    """The current UTC time in milliseconds."""
    return time.time_ns() // 1_000_000
