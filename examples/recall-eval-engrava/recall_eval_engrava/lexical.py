"""A deterministic offline embedder: hashed word features, L2-normalised. Lexical, not semantic.

Two texts are near exactly when they share words (after lowercasing and a
naive plural strip); "deploy" is no nearer "release" than "banana" is. It
needs no weights, no network and no randomness, so an offline run of a
vector-backed product measures its retrieval plumbing, scoping and budget,
not the quality of an embedding model. A real embedder replaces it through
the system's configuration.

Example:
    >>> vector = embed("The dev server runs on port 5173")
    >>> len(vector), round(sum(x * x for x in vector), 6)
    (1024, 1.0)
"""

from __future__ import annotations

import hashlib
import math
import re

DIMENSIONS = 1024
MODEL_NAME = f"recall-eval-lexical-hash-{DIMENSIONS}"
_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    "a an and are as at be but by do does for from had has have i in is it its me my of on or our so that the "
    "their them they this to was we were what when where which who will with you your".split()
)


def _features(text: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(text or "")]
    kept = [w for w in words if w not in _STOPWORDS] or words
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in kept]


def embed(text: str) -> list[float]:
    """The L2-normalised hashed bag of words of ``text`` (no words: one fixed unit vector).

    Counts only add, so the cosine of two texts is 0 when they share no word (bar a hash collision).
    """
    vector = [0.0] * DIMENSIONS
    for word in _features(text):
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]
