"""The scenario-file limits in this process: their defaults, their environment settings and a bad setting's message.

The fault tests (``tests/fault/test_oversized_scenarios.py``) hold real ``recall-eval`` processes to these limits;
these tests hold :mod:`harness.scenarios.limits` itself, at its own layer.
"""

from __future__ import annotations

import pytest

from harness.scenarios.limits import (
    MAX_FILE_MB_ENV,
    MAX_ITEMS_ENV,
    MAX_YAML_MB_ENV,
    LimitSettingError,
    max_file_bytes,
    max_items,
    max_yaml_chars,
)

MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in (MAX_FILE_MB_ENV, MAX_YAML_MB_ENV, MAX_ITEMS_ENV):
        monkeypatch.delenv(env, raising=False)


@pytest.mark.parametrize("unset", [None, "", "   "])
def test_without_a_setting_each_limit_is_its_default(unset: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if unset is not None:
        for env in (MAX_FILE_MB_ENV, MAX_YAML_MB_ENV, MAX_ITEMS_ENV):
            monkeypatch.setenv(env, unset)
    assert (max_file_bytes(), max_yaml_chars(), max_items()) == (64 * MIB, 8 * MIB, 25_000)


def test_a_setting_in_mib_is_converted_to_bytes_and_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_FILE_MB_ENV, " 0.5 ")
    monkeypatch.setenv(MAX_YAML_MB_ENV, "3")
    assert max_file_bytes() == MIB // 2 and max_yaml_chars() == 3 * MIB


def test_an_item_limit_setting_is_a_whole_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_ITEMS_ENV, "50.9")
    assert max_items() == 50


@pytest.mark.parametrize("raw", ["lots", "0", "-3", "nan", "inf", "1e400"])
def test_a_setting_that_is_not_a_positive_finite_number_is_refused_naming_it_and_the_default(
        raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_FILE_MB_ENV, raw)
    with pytest.raises(LimitSettingError) as caught:
        max_file_bytes()
    assert str(caught.value) == f"{MAX_FILE_MB_ENV}={raw!r}: not a positive number (default 64)"
    monkeypatch.setenv(MAX_ITEMS_ENV, raw)
    with pytest.raises(LimitSettingError, match=r"^RECALL_EVAL_MAX_ITEMS=.*\(default 25000\)$"):
        max_items()
    monkeypatch.setenv(MAX_YAML_MB_ENV, raw)
    with pytest.raises(LimitSettingError, match=r"^RECALL_EVAL_MAX_YAML_MB=.*\(default 8\)$"):
        max_yaml_chars()
