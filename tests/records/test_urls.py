"""A URL as written down: no userinfo, no query secret, no fragment; the secrets an error message must not show."""

from __future__ import annotations

import pytest

from harness.records.urls import REDACTED, is_redacted, redact_url, url_secrets


@pytest.mark.parametrize("url", [
    "https://sk-live-token@llm.example/v1",          # a token as the whole user part, no password
    "https://sk-live-token:@llm.example/v1",         # an empty password after it
    "https://alice:hunter22@llm.example/v1",         # user and password
])
def test_a_credential_in_the_user_part_is_dropped_with_or_without_a_password(url: str) -> None:
    assert redact_url(url) == "https://llm.example/v1"


def test_the_port_survives_the_userinfo_being_dropped() -> None:
    assert redact_url("http://tok@127.0.0.1:8443/v1") == "http://127.0.0.1:8443/v1"


def test_every_query_value_is_redacted_except_the_api_version_and_the_fragment_is_dropped() -> None:
    url = "https://h/v1?api-version=2024-06-01&Token=abc&sig=xyz&bare#frag"
    assert redact_url(url) == f"https://h/v1?api-version=2024-06-01&Token={REDACTED}&sig={REDACTED}&{REDACTED}"


def test_a_query_value_holding_equals_signs_is_redacted_whole() -> None:
    """A base64 signature ends in ``=``: the name is what comes before the first one, the rest is the secret."""
    assert redact_url("https://h/v1?sig=c2VjcmV0==&api-version=a=b") == "https://h/v1?sig=REDACTED&api-version=a=b"


def test_a_url_that_cannot_be_taken_apart_is_redacted_whole() -> None:
    assert redact_url("http://h:notaport/v1") == REDACTED
    assert redact_url(None) is None and redact_url("") == ""


def test_a_user_part_and_query_values_are_secrets_an_error_must_not_show() -> None:
    assert url_secrets("https://sk-live-token@h/v1?api-version=2024&key=abcd1234") == ["sk-live-token", "abcd1234"]
    assert url_secrets("https://alice:hunter22@h/v1") == ["hunter22", "alice"]
    assert url_secrets("https://h/v1?api-version=2024-06-01") == [] and url_secrets(None) == []
    assert url_secrets("https://h/v1?k=abcd&j=abc") == ["abcd"]  # four characters and up: shorter is no secret


def test_only_a_url_with_something_taken_out_is_redacted() -> None:
    assert is_redacted(redact_url("https://h/v1?key=abcd")) and not is_redacted(redact_url("https://h/v1"))
