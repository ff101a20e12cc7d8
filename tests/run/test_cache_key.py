"""The response-cache key covers everything that shapes a response.

Each field is checked on :func:`harness.run.cache.cache_key` and end to end: a
:class:`ModelClient` with a cache must call the provider again when the tool
specs or the temperature change, and only then.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.run import model_client as agent
from harness.run.agent import ModelClient, ModelSettings
from harness.run.cache import DEFAULT_CACHE_DIR, ResponseCache, cache_key

MESSAGES = [{"role": "user", "content": "Which port?"}]
SEARCH_SPEC = {"type": "function", "function": {"name": "memory_search", "parameters": {"type": "object"}}}
GET_SPEC = {"type": "function", "function": {"name": "memory_get", "parameters": {"type": "object"}}}
BASE: dict[str, Any] = {"model": "m", "messages": MESSAGES, "tools": [SEARCH_SPEC],
                        "parameters": {"temperature": 0.0, "seed": 1}, "epoch": 0}


def _key(**overrides: Any) -> str:
    return cache_key(**{**BASE, **overrides})


@pytest.mark.parametrize("overrides", [
    {"model": "m2"},
    {"messages": [{"role": "user", "content": "Which port?!"}]},
    {"tools": []},
    {"tools": [SEARCH_SPEC, GET_SPEC]},
    {"tools": [{**SEARCH_SPEC, "function": {**SEARCH_SPEC["function"], "description": "changed"}}]},
    {"parameters": {"temperature": 0.7, "seed": 1}},
    {"parameters": {"temperature": 0.0, "seed": 2}},
    {"parameters": {"temperature": 0.0}},
    {"epoch": 1},
], ids=["model", "messages", "no-tools", "more-tools", "tool-description", "temperature", "seed",
        "parameter-dropped", "epoch"])
def test_every_request_field_changes_the_cache_key(overrides: dict[str, Any]) -> None:
    """Bug: a field (the tool specs, the temperature, ...) left out of the hashed payload."""
    assert _key(**overrides) != _key()


def test_the_cache_key_of_a_request_is_the_same_in_every_release() -> None:
    """Bug: a renamed payload field or other JSON settings silently invalidate every user's cache (and re-bill it)."""
    assert cache_key(model="m", messages=[], tools=[], parameters={}, epoch=0).startswith("5e9e3222")
    pinned = cache_key(model="m", messages=[{"role": "user", "content": "咖啡?"}], tools=[{"type": "function"}],
                       parameters={"temperature": 0.5, "seed": 3}, epoch=2)
    assert pinned == "7061ba0a325d1cdde1e2272ef2042d48cd500e8c12c057e88c430971120a9d4d"


def test_the_cache_key_is_stable_for_the_same_request() -> None:
    """Bug: a nondeterministic key (unsorted dict keys, a timestamp) would make every rerun a miss."""
    reordered = {"parameters": {"seed": 1, "temperature": 0.0}}
    assert _key() == _key(**reordered) == cache_key(**BASE)
    assert len(_key()) == 64 and int(_key(), 16) >= 0


@pytest.mark.parametrize("changed", [{"temperature": 0.7}, {"seed": 8}, {"api_base": "http://127.0.0.1:9"},
                                     {"extra": {"top_p": 0.5}}])
def test_model_settings_put_every_sampling_parameter_in_the_cache_parameters(changed: dict[str, Any]) -> None:
    """Bug: the temperature (or seed, endpoint, extra litellm argument) dropped from ``cache_parameters``."""
    base = ModelSettings("openai/m", temperature=0.0, seed=7)
    assert ModelSettings(**{"model": "openai/m", "temperature": 0.0, "seed": 7, **changed}).cache_parameters() \
        != base.cache_parameters()


class _FakeLitellm:
    """Stands in for litellm: counts calls and answers with the request's temperature."""

    def __init__(self) -> None:
        self.calls = 0

    async def acompletion(self, **kwargs: Any) -> Any:
        self.calls += 1
        message = SimpleNamespace(content=f"t={kwargs['temperature']} n={self.calls}", tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")],
                               usage=SimpleNamespace(prompt_tokens=5, completion_tokens=2),
                               _hidden_params={"response_cost": 0.0})


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> _FakeLitellm:
    fake = _FakeLitellm()
    monkeypatch.setattr(agent, "_litellm", lambda: fake)
    return fake


def _complete(client: ModelClient, tools: list[dict[str, Any]], settings: ModelSettings) -> Any:
    return asyncio.run(client.complete(list(MESSAGES), tools, settings, epoch=0))


def test_changed_tool_specs_miss_the_cache(tmp_path: Path, fake_litellm: _FakeLitellm) -> None:
    """Bug: the tool specs dropped from the cache key: an arm with other tools replayed another arm's answer."""
    client = ModelClient(ResponseCache(tmp_path))
    settings = ModelSettings("openai/m")
    first = _complete(client, [SEARCH_SPEC], settings)
    again = _complete(client, [SEARCH_SPEC], settings)
    assert (first.cached, again.cached, again.message) == (False, True, first.message)
    other = _complete(client, [SEARCH_SPEC, GET_SPEC], settings)
    none = _complete(client, [], settings)
    assert (other.cached, none.cached) == (False, False) and fake_litellm.calls == 3


def test_a_changed_temperature_misses_the_cache(tmp_path: Path, fake_litellm: _FakeLitellm) -> None:
    """Bug: the temperature dropped from the cache key: a hotter run replayed the cold run's answers."""
    client = ModelClient(ResponseCache(tmp_path))
    cold = _complete(client, [], ModelSettings("openai/m", temperature=0.0))
    hot = _complete(client, [], ModelSettings("openai/m", temperature=1.0))
    assert hot.cached is False and hot.message["content"].startswith("t=1.0")
    assert _complete(client, [], ModelSettings("openai/m", temperature=0.0)).message == cold.message
    assert fake_litellm.calls == 2


def test_the_default_cache_folder_is_ignored_by_git() -> None:
    """Bug: a renamed default folder would put cached answers (possibly private transcripts) under version control."""
    root = Path(__file__).resolve().parents[2]
    ignored = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert DEFAULT_CACHE_DIR == ".recall-eval-cache" and f"{DEFAULT_CACHE_DIR}/" in ignored


def test_a_new_cache_is_enabled_and_shards_by_the_first_two_hex_characters(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache.enabled is True and cache.directory == tmp_path
    assert cache.path("abcdef") == tmp_path / "ab" / "abcdef.json"


def test_a_parameter_json_cannot_encode_is_keyed_by_its_text() -> None:
    """Bug: an extra litellm argument that is not plain JSON (a path, a model class) crashed the key."""
    assert _key(parameters={"api_base": Path("/srv/a")}) == _key(parameters={"api_base": "/srv/a"})
    assert _key(parameters={"api_base": Path("/srv/a")}) != _key(parameters={"api_base": Path("/srv/b")})
