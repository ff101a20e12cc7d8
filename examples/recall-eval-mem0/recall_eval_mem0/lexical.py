"""The offline embedder: recall-eval's own lexical one (``memory_tools.lexical_embedding``). Lexical, not semantic.

Hashed words and character trigrams, L2-normalised, no weights, no network, no
randomness: the very function the built-in ``recall_vector`` arm ranks with,
so every vector-backed system of an offline run embeds alike and what differs
between them is retrieval plumbing, scoping and budget, not the embedder. A
real embedder replaces it through the system's configuration.

Example:
    >>> vector = embed("The dev server runs on port 5173")
    >>> len(vector), round(sum(x * x for x in vector), 6)
    (1024, 1.0)
"""

from __future__ import annotations

from memory_tools import LEXICAL_DIM, LEXICAL_MODEL, lexical_embedding

DIMENSIONS = LEXICAL_DIM
MODEL_NAME = f"recall-eval-{LEXICAL_MODEL}-{LEXICAL_DIM}"
embed = lexical_embedding
