"""Tool results of the offline models are counted without litellm, to exactly litellm's ``token_counter`` count.

``ToolCallLog.result_tokens`` comes from :func:`harness.run.agent.count_tokens`,
which (litellm not imported) counts with the tiktoken encoding litellm picks
for the model, read from the files litellm ships, in litellm's 1,024-character
pieces (:func:`harness.run.model_tables.local_count_function`). These tests
compare it with litellm's own counter on many strings, generated ones
included, and check that a fresh process counts without importing litellm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

from harness.offline_model import MODEL_NAMES, register_offline  # noqa: E402
from harness.run.model_client import _local_counter  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

#: Texts like the Host's results (JSON with ids, unicode content, escapes), and edge cases of the tokenizer.
TEXTS = [
    "",
    " ",
    "\n\n\t",
    json.dumps({"results": [{"itemId": "item-1", "content": "Billing runs Postgres 15 on db-3", "matchedKeys": ["postgres"]}],
                "truncated": False, "omittedCount": 0}),
    json.dumps({"error": {"code": "invalid_arguments", "message": "terms must be a list of strings"}}),
    "Error: no tool named 'memory_write' is available in this conversation.",
    "数据库迁移 部署偏好 蓝绿部署 — naïve café, 1,234.5 ms 📦🚀 ",
    "a literal <|endoftext|> and <|im_start|> and <|fim_prefix|> inside a result",
    "x" * 5000,
    ("é中" * 700),  # multi-byte characters straddling the 1,024-character pieces
    ("word " * 205) + "tail",  # a piece boundary inside a run of spaces
    json.dumps({"item": {"content": "línea\u2028separada\u00a0nbsp\ufeffbom"}}, ensure_ascii=False),
]

_COUNTED = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
_LONG = st.lists(st.sampled_from(list("ab é中🚀 \n{}\":,") + ["<|endoftext|>", "word "]), min_size=900, max_size=2600).map("".join)


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_tool_results_are_counted_as_litellms_token_counter_counts_them(model: str) -> None:
    register_offline()
    count = _local_counter(model)
    assert count is not None, f"{model}: litellm's shipped tokenizer should count it"
    for text in TEXTS:
        assert count(text) == litellm.token_counter(model=model, text=text), text[:60]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_COUNTED)
def test_any_text_is_counted_as_litellm_counts_it(text: str) -> None:
    assert _local_counter("offline/reference")(text) == litellm.token_counter(model="offline/reference", text=text)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_LONG)
def test_texts_longer_than_one_piece_are_counted_as_litellm_counts_them(text: str) -> None:
    assert _local_counter("offline/reference")(text) == litellm.token_counter(model="offline/reference", text=text)


def test_a_fresh_process_counts_tool_results_without_importing_litellm() -> None:
    script = (
        "import json, sys\n"
        "from harness.run.agent import count_tokens\n"
        f"texts = json.loads({json.dumps(json.dumps(TEXTS))})\n"
        "print(json.dumps([[count_tokens(m, text=t) for t in texts] for m in ('offline/reference', 'offline/abstain')]))\n"
        "print('litellm' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    counts, imported = found.stdout.splitlines()[-2:]
    assert imported == "False", found.stderr[-2000:]
    assert json.loads(counts) == [[litellm.token_counter(model=m, text=t) for t in TEXTS] for m in MODEL_NAMES]
