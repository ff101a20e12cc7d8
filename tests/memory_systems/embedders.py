"""A second embedder for tests: deterministic, unlike the lexical one, and recording what it was asked to embed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_tools import Embeddings


class LengthEmbedder:
    """Text length in two dimensions: it ranks unlike the lexical embedder (short texts near short queries).

    Attributes:
        kinds: The ``kind`` of every text it embedded, in order (``query`` or ``passage``).
    """

    name = "test/length"
    prefix = "none"
    dimensions = 2
    min_similarity = 0.0

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def embed(self, texts: Sequence[str], kind: Any) -> Embeddings:
        self.kinds += [str(kind)] * len(texts)
        rows = np.array([[1.0, len(t) / 40.0] for t in texts], dtype=np.float32).reshape(len(texts), 2)
        return Embeddings(rows / np.linalg.norm(rows, axis=1, keepdims=True))
