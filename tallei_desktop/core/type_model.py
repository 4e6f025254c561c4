"""The statistical memory-type model: hashed n-gram features, two linear heads, one weights file.

Contract:

- ``features(text)`` turns any string into a sparse, L2-normalised vector over ``BUCKETS`` hashed
  features (word uni- and bigrams, the first word, character 3- to 5-grams of each word, digit
  shapes). It is pure: no I/O, no randomness, the hash (CRC-32) is the same in every process.
- ``TypeModel`` holds the trained weights: ``text_scores`` (the n-gram head, used at save time and
  fast enough for it) and ``combined_scores`` (the n-gram head plus a head over the 384-dimension
  sentence embedding the background worker computes). Both return log-probabilities over
  ``TYPES``; the best is the type. Equal scores pick the type earlier in ``TYPES``.
- ``load_model()`` reads the weights shipped inside the package (``data/type_model.npz``) once per
  process; the file is written by ``bench/train_types.py`` from the labelled sets in tests/core/data/.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from tallei_desktop.core.models import MemoryType

__all__ = [
    "BUCKETS",
    "FEATURE_VERSION",
    "TYPES",
    "TypeModel",
    "features",
    "load_model",
    "normalise",
]

#: The order of the model's outputs (the weights file stores it and must agree).
TYPES: tuple[MemoryType, ...] = (
    MemoryType.PREFERENCE,
    MemoryType.FACT,
    MemoryType.DECISION,
    MemoryType.EVENT,
    MemoryType.NOTE,
    MemoryType.LESSON,
    MemoryType.FAILURE,
)
#: Hashed feature space; 2^16 keeps the weights file small with few harmful collisions.
BUCKETS = 1 << 16
#: Bumped whenever ``features`` changes, so weights trained on other features are refused.
FEATURE_VERSION = 1
WEIGHTS_FILE = "type_model.npz"

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

# Curly apostrophes and quotes would otherwise split "don't" and "I'd" into other words.
_PUNCT_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})
_LEADING_NOISE = re.compile(r"^[\W_]+")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_DIGITS = re.compile(r"\d")


def normalise(text: str) -> str:
    """Casefolded NFKC text with typographic quotes folded, spaces collapsed, leading bullets gone."""
    folded = unicodedata.normalize("NFKC", text).translate(_PUNCT_FOLD).casefold()
    return _LEADING_NOISE.sub("", _SPACES.sub(" ", folded).strip())


def _hash(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8")) % BUCKETS


def _tokens(text: str) -> list[str]:
    # Digits become a shape ("3 may" and "14 may" look alike; "2024-03-14" is 0000-00-00).
    return [_DIGITS.sub("0", w) for w in _WORD.findall(normalise(text))]


@lru_cache(maxsize=1 << 15)
def _word_hashes(word: str) -> tuple[int, ...]:
    # The word itself and its character 3- to 5-grams, with "<" and ">" marking its edges. Cached:
    # words repeat across memories, and hashing their n-grams is most of the cost of a sentence.
    marked = f"<{word}>"
    grams = [f"w:{word}"]
    for n in (3, 4, 5):
        grams += [f"c:{marked[i : i + n]}" for i in range(len(marked) - n + 1)]
    return tuple(_hash(g) for g in grams)


def features(text: str) -> tuple[IntArray, FloatArray]:
    """(bucket indices, weights) of ``text``'s hashed features: sorted, unique, L2 norm 1 (empty
    arrays for text without a word). A feature seen n times weighs sqrt(n) before normalising."""
    words = _tokens(text)
    if not words:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    hashes = [h for w in words for h in _word_hashes(w)]
    hashes.append(_hash(f"first:{words[0]}"))
    padded = ["<s>", *words, "</s>"]
    hashes += [_hash(f"b:{a} {b}") for a, b in pairwise(padded)]
    index, counts = np.unique(np.array(hashes, dtype=np.int64), return_counts=True)
    values = np.sqrt(counts.astype(np.float32))
    values /= np.linalg.norm(values)
    return index, values


def _log_softmax(logits: FloatArray) -> FloatArray:
    shifted = logits - logits.max()
    out: FloatArray = (shifted - np.log(np.exp(shifted).sum())).astype(np.float32)
    return out


@dataclass(frozen=True, slots=True)
class TypeModel:
    """Trained weights. ``text_weights`` is BUCKETS x 7, ``embedding_weights`` 384 x 7; the
    combined score adds ``embedding_share`` times the embedding head's log-probabilities.
    ``embedding_model`` names the model whose vectors the embedding head was trained on: vectors
    from any other model mean nothing to it (see ``fits``)."""

    text_weights: FloatArray
    text_bias: FloatArray
    embedding_weights: FloatArray
    embedding_bias: FloatArray
    embedding_share: float
    embedding_model: str

    def fits(self, embedder_name: str) -> bool:
        """Whether vectors from the embedder called ``embedder_name`` are what the head was trained on."""
        return embedder_name.casefold() == self.embedding_model.casefold()

    def text_scores(self, text: str) -> FloatArray:
        """Log-probabilities over ``TYPES`` from the words of ``text`` alone."""
        index, values = features(text)
        logits = self.text_bias + values @ self.text_weights[index]
        return _log_softmax(logits.astype(np.float32))

    def embedding_scores(self, vector: FloatArray) -> FloatArray:
        """Log-probabilities over ``TYPES`` from a sentence embedding alone."""
        logits = self.embedding_bias + vector.astype(np.float32) @ self.embedding_weights
        return _log_softmax(logits.astype(np.float32))

    def combined_scores(self, text: str, vector: FloatArray) -> FloatArray:
        """The n-gram head's log-probabilities plus ``embedding_share`` times the embedding head's."""
        return self.text_scores(text) + np.float32(self.embedding_share) * self.embedding_scores(vector)

    def classify_text(self, text: str) -> MemoryType:
        return TYPES[int(np.argmax(self.text_scores(text)))]

    def classify_combined(self, text: str, vector: FloatArray) -> MemoryType:
        return TYPES[int(np.argmax(self.combined_scores(text, vector)))]


def model_from_arrays(arrays: dict[str, npt.NDArray[np.generic]]) -> TypeModel:
    """A ``TypeModel`` from the arrays of a weights file; ``ValueError`` if they do not fit this code."""
    version = int(arrays["feature_version"])
    names = tuple(str(t) for t in arrays["types"])
    if version != FEATURE_VERSION or names != tuple(t.value for t in TYPES):
        raise ValueError(f"type model weights are for features v{version} and types {names}")
    text_weights = np.asarray(arrays["text_weights"], dtype=np.float32)
    if text_weights.shape != (BUCKETS, len(TYPES)):
        raise ValueError(f"type model text weights have shape {text_weights.shape}")
    return TypeModel(
        text_weights=text_weights,
        text_bias=np.asarray(arrays["text_bias"], dtype=np.float32),
        embedding_weights=np.asarray(arrays["embedding_weights"], dtype=np.float32),
        embedding_bias=np.asarray(arrays["embedding_bias"], dtype=np.float32),
        embedding_share=float(arrays["embedding_share"]),
        embedding_model=str(arrays["embedding_model"]),
    )


@cache
def load_model() -> TypeModel:
    """The weights shipped in the package, read on first use and kept for the process."""
    source = resources.files("tallei_desktop.core").joinpath("data", WEIGHTS_FILE)
    with source.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        return model_from_arrays({name: npz[name] for name in npz.files})
