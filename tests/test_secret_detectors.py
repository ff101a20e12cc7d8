"""detect-secrets' regex plugins as spans: which part of a match is the secret, and how overlapping finds merge."""

from __future__ import annotations

from harness.redaction import REDACTED, redact_secrets
from harness.secret_detectors import replace_spans, secret_spans

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # 40 characters: the AWS plugin's capture group
TWILIO_SID = "AC" + "0123456789abcdef" * 2  # Twilio's account SID pattern: AC and 32 of [a-z0-9]
TWILIO_KEY = "SK" + "fedcba9876543210" * 2


def _found(text: str) -> list[str]:
    return [text[start:end] for start, end in secret_spans(text)]


def test_a_pattern_that_captures_the_secret_gives_the_capture_not_its_label_or_quotes() -> None:
    """Bug planted: the whole match taken (``aws_secret_key = "`` and the closing quote with it), or no group read."""
    text = f'aws_secret_key = "{AWS_SECRET}" in prod'
    assert _found(text) == [AWS_SECRET]


def test_a_capture_of_exactly_six_characters_is_the_secret() -> None:
    """Six characters or more make a capture the secret: a URL's six-letter password, not ``//admin:hunter@``."""
    assert _found("clone https://admin:hunter@git.example.org/repo") == ["hunter"]


def test_the_space_or_quote_a_pattern_takes_around_a_token_is_not_part_of_the_secret() -> None:
    """Artifactory's pattern matches a leading space and a trailing quote; the span is the token alone."""
    token = "AKCp8" + "abcdefghijk"
    text = f'key: {token}" rest'
    assert _found(text) == [token]
    assert _found(f"{token} at the start") == [token]


def test_overlapping_finds_of_two_plugins_are_one_span() -> None:
    """Twilio's SID and Mailchimp's key (32 characters and ``-us12``) overlap: one span from the first start to
    the last end, so the redaction leaves no tail of either."""
    text = f"keys {TWILIO_SID}-us12 end"
    assert secret_spans(text) == [(5, 5 + len(TWILIO_SID) + 5)]
    assert redact_secrets(text) == f"keys {REDACTED} end"


def test_secrets_that_touch_are_merged_and_secrets_apart_are_kept_apart() -> None:
    touching = f"pair {TWILIO_SID}{TWILIO_KEY} end"
    assert secret_spans(touching) == [(5, 5 + 2 * len(TWILIO_SID))]
    apart = f"first {TWILIO_SID} then {TWILIO_KEY} last"
    assert _found(apart) == [TWILIO_SID, TWILIO_KEY]
    assert redact_secrets(apart) == f"first {REDACTED} then {REDACTED} last"


def test_replace_spans_keeps_every_stretch_between_the_spans() -> None:
    assert replace_spans("a XX b YY c", [(2, 4), (7, 9)], "#") == "a # b # c"
    assert replace_spans("plain", [], "#") == "plain"
