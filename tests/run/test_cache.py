"""The on-disk response cache: keys, sharding, atomic writes, corrupt entries, bypass."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harness.run.cache import CachedResponse, ResponseCache, cache_key

MESSAGES = [{"role": "user", "content": "hi"}]


def _key(**overrides: object) -> str:
    fields = {"model": "m", "messages": MESSAGES, "tools": [], "parameters": {"temperature": 0.0}, "epoch": 0, **overrides}
    return cache_key(**fields)  # type: ignore[arg-type]


def _entry(text: str = "hello") -> CachedResponse:
    return CachedResponse(message={"role": "assistant", "content": text}, prompt_tokens=3, completion_tokens=1, finish_reason="stop", latency_s=0.5)


def test_key_ignores_dict_order_but_not_content() -> None:
    assert _key(parameters={"a": 1, "b": 2}) == _key(parameters={"b": 2, "a": 1})
    assert _key() != _key(messages=[{"role": "user", "content": "hi!"}])
    assert _key() != _key(model="other") != _key(tools=[{"type": "function"}])


def test_epochs_get_separate_keys() -> None:
    assert _key(epoch=0) != _key(epoch=1)


def test_entry_round_trips_in_a_two_char_shard(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = _key()
    cache.put(key, _entry())
    assert cache.path(key) == tmp_path / key[:2] / f"{key}.json"
    assert cache.get(key) == _entry()
    assert [p.name for p in cache.path(key).parent.iterdir()] == [f"{key}.json"]  # no temp file left


def test_corrupt_entry_is_ignored_logged_and_overwritten(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = ResponseCache(tmp_path)
    key = _key()
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text('{"message": {"role": "assis', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="harness.run.cache"):
        assert cache.get(key) is None
    assert "corrupt entry" in caplog.text
    cache.put(key, _entry("fresh"))
    assert cache.get(key).message["content"] == "fresh"


def test_disabled_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    ResponseCache(tmp_path).put(_key(), _entry())
    disabled = ResponseCache(tmp_path / "other", enabled=False)
    disabled.put(_key(), _entry())
    assert not (tmp_path / "other").exists()
    assert ResponseCache(tmp_path, enabled=False).get(_key()) is None


def test_missing_entry_is_a_miss(tmp_path: Path) -> None:
    assert ResponseCache(tmp_path).get(_key()) is None


def test_offline_model_cache_key_follows_its_code_revision(monkeypatch) -> None:
    from harness import offline_model
    from harness.run.agent import ModelSettings

    before = ModelSettings("offline/reference").cache_parameters()
    assert before["offline_revision"] == offline_model.code_revision()
    monkeypatch.setattr(offline_model, "code_revision", lambda: "another-revision")
    after = ModelSettings("offline/reference").cache_parameters()
    key = lambda params: cache_key(model="offline/reference", messages=[], tools=[], parameters=params, epoch=0)  # noqa: E731
    assert key(before) != key(after)
    assert "offline_revision" not in ModelSettings("openai/gpt-4o-mini").cache_parameters()
