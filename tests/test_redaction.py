"""Secret redaction (:mod:`harness.redaction`, :mod:`harness.secret_detectors`): our patterns as the floor, every
detect-secrets regex type on top, ``--redact`` patterns recorded only by digest."""

from __future__ import annotations

import pytest

from harness import redaction
from harness.redaction import (
    REDACTED,
    RedactionError,
    Redactor,
    pattern_digest,
    recorded_patterns,
    redact_secrets,
)
from harness.secret_detectors import secret_spans

#: Credentials only detect-secrets knows (none of the floor's patterns matches them).
DETECTED_ONLY = {
    "sendgrid": "SG." + "a1B2c3D4e5F6g7H8i9J0kL" + "." + "m" * 43,
    "azure storage": "AccountKey=" + "A1b2" * 22,
    "telegram bot": "123456789:" + "AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-bs",
    "discord bot": "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "square oauth": "sq0csp-" + "0123456789abcdefghijABCDEFGHIJ_-0123456789a",
}
#: What the floor itself must catch (it did not before: the issue's three).
FLOOR = {
    "basic auth, short": "Authorization: Basic dXNlcjpodW50ZXIyc2VjcmV0",
    "basic auth, 4 characters": "authorization: basic YTpi",
    "hugging face": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "slack webhook": "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
}


@pytest.mark.parametrize("name", DETECTED_ONLY)
def test_detect_secrets_types_beyond_the_floor_are_redacted(name: str) -> None:
    secret = DETECTED_ONLY[name]
    text = f"the key is {secret} for prod"
    assert redact_secrets(text) == f"the key is {REDACTED} for prod"
    assert Redactor.build().redact(text) == (f"the key is {REDACTED} for prod", 1)


@pytest.mark.parametrize("name", FLOOR)
def test_the_floor_catches_basic_credentials_hugging_face_tokens_and_slack_webhooks(name: str) -> None:
    secret = FLOOR[name]
    redacted = redact_secrets(f"use {secret} today")
    assert secret.split()[-1] not in redacted and REDACTED in redacted and redacted.endswith(" today")


def test_prose_ids_addresses_and_hashes_are_kept() -> None:
    """No entropy or IP detector: a commit hash, a UUID, a public IP and 'Basic settings' stay."""
    text = ("Basic settings: commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f, id 123e4567-e89b-12d3-a456-426614174000, "
            "host 8.8.8.8, port 5433.")
    assert redact_secrets(text) == text and secret_spans(text) == []


def test_a_password_label_is_kept_and_redaction_is_counted_once() -> None:
    assert Redactor.build().redact("Authorization: Bearer abcdefghijklmnop1234") == (f"Authorization: Bearer {REDACTED}", 1)
    assert Redactor.build().redact("the authorization: pending review") == (f"the authorization: {REDACTED} review", 1)


def test_redact_patterns_are_recorded_by_digest_and_found_again_only_when_given(monkeypatch) -> None:
    """The digest is ``sha256:`` and 16 hex digits of the pattern; a digest this process was not given is an error
    saying to give ``--redact`` again; a run before digests (the pattern itself) still works."""
    monkeypatch.setattr(redaction, "_GIVEN", {})  # a process's memory of --redact: fresh, whatever ran before
    digest = pattern_digest("Unseen-Secret-Value-991")
    assert digest.startswith("sha256:") and len(digest) == 7 + 16 and "Unseen" not in digest
    with pytest.raises(RedactionError, match="give the same --redact again"):
        recorded_patterns([digest])
    redactor = Redactor.build(["Unseen-Secret-Value-991"])
    assert redactor.digests == [digest] and recorded_patterns([digest]) == ("Unseen-Secret-Value-991",)
    assert recorded_patterns([r"\+1 555 \d{4}"]) == (r"\+1 555 \d{4}",)


def test_with_a_user_pattern_a_private_key_block_is_still_redacted_whole() -> None:
    """detect-secrets runs after the floor, also when ``--redact`` patterns follow it.

    Bug planted: detect-secrets run first (before the floor's private-key pattern): it redacts only the BEGIN line's
    words and the floor no longer sees a whole block, so the key's body stays in the text.
    """
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----"
    text = f"deploy key:\n{key}\nend"
    assert Redactor.build(["zz-never-zz"]).redact(text) == (f"deploy key:\n{REDACTED}\nend", 1)
    assert Redactor.build().redact(text) == (f"deploy key:\n{REDACTED}\nend", 1)


def test_each_layer_counts_what_it_replaced_with_user_patterns_given() -> None:
    """The count adds the floor's, detect-secrets' and the user's matches (bug planted: one layer's count kept)."""
    text = f"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstu and {DETECTED_ONLY['telegram bot']} for ACME-7731 ok"
    redacted, count = Redactor.build([r"ACME-\d{4}"]).redact(text)
    assert redacted == f"OPENAI_API_KEY={REDACTED} and {REDACTED} for {REDACTED} ok"
    assert count == 3


def test_a_pattern_that_matches_the_empty_string_is_refused_whatever_else_it_matches() -> None:
    """``a*`` matches nothing of ``XXXX`` but does match ""; ``X+`` matches ``XXXX`` and is a fine pattern."""
    with pytest.raises(RedactionError, match=r"--redact 'a\*': matches the empty string; give a pattern"):
        Redactor.build(["a*"])
    assert Redactor.build(["X+"]).redact("id XXXX") == (f"id {REDACTED}", 1)


def test_a_pattern_from_undecodable_command_line_bytes_has_a_digest() -> None:
    """Linux hands Python argv bytes that are not UTF-8 as lone surrogates; a --redact of them is still recorded."""
    digest = pattern_digest("pass\udcff")
    assert digest.startswith("sha256:") and len(digest) == 23
    assert digest != pattern_digest("pass\udcfe") != pattern_digest("pass")


def test_the_missing_digests_are_listed_one_by_one(monkeypatch) -> None:
    monkeypatch.setattr(redaction, "_GIVEN", {})
    first, second = pattern_digest("one-secret"), pattern_digest("two-secret")
    with pytest.raises(RedactionError, match=rf"recorded only by digest \({first}, {second}\) so the secret"):
        recorded_patterns([first, second])


def test_contains_secret_says_whether_redaction_would_change_the_text() -> None:
    assert redaction.contains_secret("token: ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert not redaction.contains_secret("the deploy runs at 09:00 on port 5433")
