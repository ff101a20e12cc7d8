"""litellm's tokenizer and prices read without importing litellm: the same counts and prices litellm gives, or litellm asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.token_counter import _get_count_function  # noqa: E402

from harness.offline_model import register_offline
from harness.run import model_tables  # noqa: E402
from harness.run.calls import _price_of  # noqa: E402
from harness.run.plan import make_plan  # noqa: E402
from harness.run.prompt_tokens import LitellmCounter  # noqa: E402
from harness.run.samples import plan_samples  # noqa: E402
from harness.scenarios import load_scenarios  # noqa: E402
from tests.memory_systems.prompt_factories import write_small_suite  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

_TOOL_CALL = {"id": "call_1", "type": "function",
              "function": {"name": "memory_search", "arguments": json.dumps({"query": "Postgres version", "limit": 5})}}
MESSAGES = [
    {"role": "system", "content": "You are a careful assistant. Use memory_search before you answer a question about earlier work."},
    {"role": "user", "content": "Où en est la migration ? 数据库 迁移 📦 — naïve café, 1,234.5 ms\ttab\n\nnew paragraph"},
    {"role": "assistant", "content": "", "tool_calls": [_TOOL_CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": json.dumps([{"id": "it-1", "content": "Billing runs Postgres 15"}])},
    {"role": "assistant", "content": None, "tool_calls": [_TOOL_CALL]},
    {"role": "user", "content": "   "},
    {"role": "user", "content": "a literal <|endoftext|> and <|im_start|> in user text"},
    {"role": "user", "content": ("long text past one 1,024-character piece, with é and 中 on the piece edges " * 40)[:3000]},
]
TOOLS = [{"type": "function", "function": {"name": "memory_search", "description": "Search the memory store.",
                                           "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]
#: Models the shipped files answer for: o200k_base names with and without provider prefixes, and the offline test models.
LOCAL_MODELS = ["openai/gpt-4o-mini", "gpt-4o", "openai/gpt-4.1", "o3-mini", "gpt-5-mini", "azure/gpt-4o", "openrouter/openai/gpt-4o",
                "offline/reference", "offline/abstain"]
#: Models litellm must count: another tokenizer (Claude, DeepSeek, Llama), an older OpenAI name, an unknown model.
LITELLM_MODELS = ["claude-sonnet-4-5", "anthropic/claude-opus-4-6", "deepseek/deepseek-chat", "groq/llama-3.1-8b-instant",
                  "gpt-4", "openai/gpt-3.5-turbo", "my-provider/some-model", "scripted/x"]


def _texts(messages: list[dict]) -> list[str]:
    """Every string a message list holds (roles, contents, tool call names and arguments, tool call ids), and the tools."""
    found = [json.dumps(TOOLS, separators=(",", ":")), ""]
    for message in messages:
        found.extend(value for value in message.values() if isinstance(value, str))
        for call in message.get("tool_calls") or []:
            found += [call["id"], call["function"]["name"], call["function"]["arguments"], json.dumps(call)]
    return found


@pytest.mark.parametrize("model", LOCAL_MODELS)
def test_local_token_counts_equal_litellms_token_counter_on_varied_messages(model: str) -> None:
    register_offline()
    count = model_tables.local_count_function(model)
    assert count is not None, f"{model}: the shipped files should answer for it"
    for text in _texts(MESSAGES):
        assert count(text) == litellm.token_counter(model=model, text=text), (model, text[:60])


@pytest.mark.parametrize("model", LOCAL_MODELS + LITELLM_MODELS)
def test_the_plan_counts_messages_the_same_with_or_without_litellm(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's counter (local where it can be) against one that always asks litellm, message by message.

    litellm's offline mode: for a Llama model litellm would try to download a tokenizer; with no internet (as in CI)
    that retries for about 24 s and then falls back to tiktoken. Offline mode takes that fallback at once, so the
    three counters compared here are the same ones, without the wait."""
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    register_offline()
    local = LitellmCounter(model)
    monkeypatch.setattr(model_tables, "local_count_function", lambda model: None)
    asked = LitellmCounter(model)
    litellms = _get_count_function(model, None)
    for text in _texts(MESSAGES):
        assert local.text(text) == asked.text(text) == litellms(text), (model, text[:60])
    assert local.messages(MESSAGES) == asked.messages(MESSAGES)


def test_plan_framing_of_plain_messages_is_litellms_message_count() -> None:
    plain = [m for m in MESSAGES if "tool_calls" not in m and m["role"] != "tool"]
    for model in ("openai/gpt-4o-mini", "offline/reference"):
        assert LitellmCounter(model).messages(plain) == litellm.token_counter(model=model, messages=plain), model


@pytest.mark.parametrize("model", LITELLM_MODELS)
def test_models_litellm_counts_another_way_are_left_to_litellm(model: str) -> None:
    assert model_tables.encoding_name(model) is None
    assert model_tables.local_count_function(model) is None


def test_a_text_litellm_would_count_by_sampling_is_left_to_litellm() -> None:
    count = model_tables.local_count_function("gpt-4o")
    assert count is not None and count("x" * (model_tables.MAX_EXACT_CHARS + 1)) is None


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "gpt-4o", "gpt-4", "openai/gpt-4.1", "deepseek/deepseek-chat",
                                   "claude-sonnet-4-5", "offline/reference"])
def test_local_prices_equal_litellms_price_and_cost(model: str) -> None:
    register_offline()
    known, price = model_tables.price(model)
    assert known and price is not None
    assert price == _price_of(litellm, model)
    prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=12_345, completion_tokens=678)
    assert price.cost(12_345, 678) == pytest.approx(prompt_cost + completion_cost, rel=1e-12)


@pytest.mark.parametrize("model", ["openai/no-such-model-anywhere", "claude-opus-latest", "azure/gpt-mini-latest", "scripted/x"])
def test_prices_of_unlisted_or_aliased_models_are_left_to_litellm(model: str) -> None:
    assert model_tables.price(model) == (False, None)


def test_nothing_is_read_locally_once_litellm_is_imported_or_a_setting_changes_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_tables.count_function("gpt-4o") is None  # this process imported litellm: it answers
    assert model_tables.local_prices(["gpt-4o"]) is None
    monkeypatch.delitem(sys.modules, "litellm")
    assert model_tables.count_function("gpt-4o") is not None
    assert model_tables.local_prices(["gpt-4o"]) is not None
    monkeypatch.setenv("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "4096")
    assert model_tables.count_function("gpt-4o") is None and model_tables.local_prices(["gpt-4o"]) is None


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "offline/reference"])
def test_run_plan_imports_no_litellm_and_prints_the_plan_litellm_gives(tmp_path: Path, model: str) -> None:
    suite = write_small_suite(tmp_path / "suite")
    register_offline()
    scenarios = load_scenarios([suite])
    specs = plan_samples(scenarios, ["history_only", "recall", "full_history"], [model], 1, 0)
    want = make_plan(scenarios, specs, round_cap=4, max_tokens=2048).lines()  # this process: litellm counts and prices
    code = ("import sys; from harness.cli import main; code = main(sys.argv[1:]); "
            "print('litellm imported' if 'litellm' in sys.modules else 'no litellm'); sys.exit(code)")
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["COLUMNS"] = "80"  # the width Plan.lines() breaks at by default
    done = subprocess.run([sys.executable, "-c", code, "run", "--plan", "--scenarios", str(suite), "--model", model, "--no-progress"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:len(want)] == want and lines[-1] == "no litellm"
