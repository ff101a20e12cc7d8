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
