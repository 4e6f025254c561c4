"""A deterministic, fast stand-in for the real model at the ``Embedder`` port.

``HashEmbedder`` hashes lowercased words and their character trigrams into a fixed-width vector,
so identical texts get identical vectors, texts that share words are closer than texts that share
none, and no model file is needed. It is lexical, not semantic: paraphrases with no words in
common are not close. Tests that need meaning use the real model.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Sequence

import numpy as np

from tallei_desktop.core.embeddings import DIM, FloatArray, ModelState, ModelStatus
from tallei_desktop.core.errors import ModelUnavailable

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
#: How long a gated embed waits before it gives up, so a forgotten ``open_gate()`` fails the test.
GATE_TIMEOUT_S = 30.0


@functools.lru_cache(maxsize=65536)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """The index a feature lands on and its sign; blake2b keeps it stable across processes."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return digest % dim, 1.0 if (digest >> 63) & 1 else -1.0


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    features: list[tuple[str, float]] = []
    for word in words:
        features.append((f"w:{word}", _WORD_WEIGHT))
        padded = f" {word} "
        features.extend((f"t:{padded[i : i + 3]}", _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    # Text without a single word still gets a unit vector, as the real model gives one.
    return features or [("empty", 1.0)]


class HashEmbedder:
    """An ``Embedder`` made of hashing: deterministic, thread-safe, microseconds per text.

    - ``texts_embedded`` / ``calls`` count the work done (``reset_counts()`` zeroes them), so a
      test can prove that embedding happened, or did not.
    - ``unavailable`` (or ``make_unavailable()``) turns it into a missing model: ``state`` is
      ``UNAVAILABLE`` and every embed raises ``ModelUnavailable`` with that reason, without
      counting. ``make_available()`` turns it back.
    - ``gate``: embeds wait until it is set (see ``close_gate()`` / ``open_gate()``), so a test can
      hold the background work while it checks what happens before it.
    """

    def __init__(
        self,
        dim: int = DIM,
        *,
        name: str = "hash-embedder",
        unavailable: str | None = None,
        gated: bool = False,
    ) -> None:
        self._dim = dim
        self._name = name
        self._unavailable = unavailable
        self._lock = threading.Lock()
        self._texts_embedded = 0
        self._calls = 0
        self._gate = threading.Event()
        if not gated:
            self._gate.set()

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self._dim}, state={self.state.value!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def state(self) -> ModelState:
        return ModelState.READY if self._unavailable is None else ModelState.UNAVAILABLE

    @property
    def detail(self) -> str:
        if self._unavailable is not None:
            return self._unavailable
        return f"Semantic search uses {self._name}, a hashing embedder for tests."

    @property
    def status(self) -> ModelStatus:
        return ModelStatus(self.state, self.detail)

    @property
    def texts_embedded(self) -> int:
        """How many texts were embedded (successfully) since construction or ``reset_counts()``."""
        return self._texts_embedded

    @property
    def calls(self) -> int:
        """How many ``embed`` / ``embed_query`` calls succeeded."""
        return self._calls

    def reset_counts(self) -> None:
        with self._lock:
            self._texts_embedded = 0
            self._calls = 0

    def make_unavailable(self, reason: str = "The embedding model is unavailable in this test.") -> None:
        self._unavailable = reason

    def make_available(self) -> None:
        self._unavailable = None

    def close_gate(self) -> None:
        """Make later embeds wait until ``open_gate()``."""
        self._gate.clear()

    def open_gate(self) -> None:
        """Let waiting and later embeds run."""
        self._gate.set()

    def wait_ready(self, timeout: float) -> bool:
        return self.state is ModelState.READY

    def embed(self, texts: Sequence[str]) -> FloatArray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_query() for one text.")
        if not self._gate.wait(GATE_TIMEOUT_S):
            raise TimeoutError("HashEmbedder: the gate was never opened.")
        reason = self._unavailable
        if reason is not None:
            raise ModelUnavailable(reason)
        matrix = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                index, sign = _slot(feature, self._dim)
                matrix[row, index] += sign * weight
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        with self._lock:
            self._texts_embedded += len(texts)
            self._calls += 1
        return matrix

    def embed_query(self, text: str) -> FloatArray:
        vector: FloatArray = self.embed([text])[0]
        return vector
