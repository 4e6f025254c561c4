"""Train the memory-type model and write the weights the package ships.

    python bench/train_types.py [--model-dir DIR] [--out bench/results/train_types.json] [--no-write]

Trains on tests/core/data/classify_train.tsv plus the set the rules were tuned on
(classify_labelled.tsv): a multinomial logistic regression over hashed n-grams (the save-time head)
and one over the MiniLM sentence embedding (the background head), both by full-batch gradient
descent with fixed settings, so the same data always gives the same weights. Hyper-parameters
(L2 strength, the embedding head's share in the combined score) are chosen by 5-fold
cross-validation on the training data only. Prints the cross-validated accuracy and, for
information only, the accuracy on the held-out set (classify_heldout.tsv, never trained or tuned
on) of: the rules alone, the n-gram head, the embedding head and the combination. Writes
tallei_desktop/core/data/type_model.npz unless --no-write.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from common import resolve_model_dir, revision, say, write_report  # noqa: E402

from tallei_desktop.core.classify import rule_type  # noqa: E402
from tallei_desktop.core.embeddings import FastEmbedEmbedder  # noqa: E402
from tallei_desktop.core.models import MemoryType  # noqa: E402
from tallei_desktop.core.type_model import (  # noqa: E402
    BUCKETS,
    FEATURE_VERSION,
    TYPES,
    WEIGHTS_FILE,
    TypeModel,
    features,
)

DATA = REPO_ROOT / "tests" / "core" / "data"
TRAIN_SETS = (DATA / "classify_train.tsv", DATA / "classify_labelled.tsv")
HELDOUT_SET = DATA / "classify_heldout.tsv"
WEIGHTS = REPO_ROOT / "tallei_desktop" / "core" / "data" / WEIGHTS_FILE
DEFAULT_OUT = BENCH_DIR / "results" / "train_types.json"
SEED = 20261130
FOLDS = 5
TEXT_L2 = (2e-5, 1e-4)
EMBEDDING_L2 = (1e-5, 1e-4, 1e-3)
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
STEPS = 200
LEARNING_RATE = 0.05

Matrix = npt.NDArray[np.float32]


def load(path: Path) -> list[tuple[MemoryType, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            label, _, sentence = line.partition("\t")
            rows.append((MemoryType(label), sentence))
    return rows


class Sparse:
    """Rows of hashed features in CSR form (indices, values, row of each entry)."""

    def __init__(self, texts: Sequence[str]) -> None:
        parts = [features(t) for t in texts]
        self.n = len(texts)
        self.indices = np.concatenate([i for i, _ in parts]) if parts else np.zeros(0, np.int64)
        self.values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0, np.float32)
        self.rows = np.repeat(np.arange(self.n), [len(i) for i, _ in parts])
        self.width = BUCKETS
        self._starts()

    def _starts(self) -> None:
        # Every row has at least one feature (the sets hold no wordless sentence), so reduceat's
        # segments are exactly the rows.
        self.starts = np.flatnonzero(np.r_[True, np.diff(self.rows) != 0])
        if len(self.starts) != self.n:
            raise SystemExit("a training sentence has no words")
        # The same entries ordered by feature, so the gradient is a segmented sum too.
        self.by_feature = np.argsort(self.indices, kind="stable")
        ordered = self.indices[self.by_feature]
        self.feature_starts = np.flatnonzero(np.r_[True, np.diff(ordered) != 0])
        self.features_used = ordered[self.feature_starts]

    def take(self, keep: npt.NDArray[np.int64]) -> Sparse:
        out = Sparse.__new__(Sparse)
        mask = np.isin(self.rows, keep)
        renumber = np.full(self.n, -1, dtype=np.int64)
        renumber[keep] = np.arange(len(keep))
        out.n = len(keep)
        out.indices = self.indices[mask]
        out.values = self.values[mask]
        out.rows = renumber[self.rows[mask]]
        out.width = self.width
        out._starts()
        return out

    def compact(self) -> tuple[Sparse, npt.NDArray[np.int64]]:
        """The same rows over only the features they use (renumbered), and those features."""
        used, inverse = np.unique(self.indices, return_inverse=True)
        out = Sparse.__new__(Sparse)
        out.n, out.values, out.rows, out.width = self.n, self.values, self.rows, len(used)
        out.indices = inverse.astype(np.int64)
        out._starts()
        return out, used

    def dot(self, weights: Matrix) -> Matrix:
        products = weights[self.indices] * self.values[:, None]
        out: Matrix = np.add.reduceat(products, self.starts, axis=0)
        return out

    def gradient(self, residual: Matrix) -> Matrix:
        contributions = (residual[self.rows] * self.values[:, None])[self.by_feature]
        out = np.zeros((self.width, len(TYPES)), dtype=np.float32)
        out[self.features_used] = np.add.reduceat(contributions, self.feature_starts, axis=0)
        return out


def _softmax(logits: Matrix) -> Matrix:
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    out: Matrix = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


def _fit(
    n_features: int,
    dot: Any,
    gradient: Any,
    labels: npt.NDArray[np.int64],
    l2: float,
) -> tuple[Matrix, Matrix]:
    """Softmax regression by full-batch Adam from zero weights: deterministic for the same data."""
    k = len(TYPES)
    weights = np.zeros((n_features, k), dtype=np.float32)
    bias = np.zeros(k, dtype=np.float32)
    onehot = np.eye(k, dtype=np.float32)[labels]
    m_w, v_w = np.zeros_like(weights), np.zeros_like(weights)
    m_b, v_b = np.zeros_like(bias), np.zeros_like(bias)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for step in range(1, STEPS + 1):
        residual = (_softmax(dot(weights) + bias) - onehot) / len(labels)
        g_w = gradient(residual) + l2 * weights
        g_b = residual.sum(axis=0)
        m_w = beta1 * m_w + (1 - beta1) * g_w
        v_w = beta2 * v_w + (1 - beta2) * g_w * g_w
        m_b = beta1 * m_b + (1 - beta1) * g_b
        v_b = beta2 * v_b + (1 - beta2) * g_b * g_b
        scale = LEARNING_RATE * np.sqrt(1 - beta2**step) / (1 - beta1**step)
        weights -= scale * m_w / (np.sqrt(v_w) + eps)
        bias -= scale * m_b / (np.sqrt(v_b) + eps)
    return weights, bias


def fit_text(x: Sparse, labels: npt.NDArray[np.int64], l2: float) -> tuple[Matrix, Matrix]:
    # Features no training sentence has keep weight zero, so only the used ones are fitted.
    small, used = x.compact()
    weights, bias = _fit(small.width, small.dot, small.gradient, labels, l2)
    full = np.zeros((BUCKETS, len(TYPES)), dtype=np.float32)
    full[used] = weights
    return full, bias


def fit_embedding(x: Matrix, labels: npt.NDArray[np.int64], l2: float) -> tuple[Matrix, Matrix]:
    return _fit(x.shape[1], lambda w: x @ w, lambda r: x.T @ r, labels, l2)


def _log_softmax(logits: Matrix) -> Matrix:
    shifted = logits - logits.max(axis=1, keepdims=True)
    out: Matrix = (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))).astype(np.float32)
    return out


def folds(labels: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
    """Stratified folds from a fixed-seed shuffle."""
    rng = np.random.default_rng(SEED)
    out: list[list[int]] = [[] for _ in range(FOLDS)]
    for k in range(len(TYPES)):
        members = rng.permutation(np.flatnonzero(labels == k))
        for i, m in enumerate(members):
            out[i % FOLDS].append(int(m))
    return [np.array(sorted(f), dtype=np.int64) for f in out]


def accuracy(predicted: npt.NDArray[np.int64], labels: npt.NDArray[np.int64]) -> float:
    return round(float((predicted == labels).mean()), 4)


RULE_SHARES = (0.0, 0.25, 0.5, 1.0, 2.0)


def cross_validate(
    x: Sparse, e: Matrix, labels: npt.NDArray[np.int64], rules: npt.NDArray[np.int64]
) -> dict[str, Any]:
    """Out-of-fold log-probabilities for every setting, and the accuracy of each."""
    text_oof = {l2: np.zeros((len(labels), len(TYPES)), np.float32) for l2 in TEXT_L2}
    emb_oof = {l2: np.zeros((len(labels), len(TYPES)), np.float32) for l2 in EMBEDDING_L2}
    for i, test in enumerate(folds(labels)):
        train = np.setdiff1d(np.arange(len(labels)), test)
        say(f"fold {i + 1}/{FOLDS}")
        xt, xs = x.take(train), x.take(test)
        for l2 in TEXT_L2:
            w, b = fit_text(xt, labels[train], l2)
            text_oof[l2][test] = _log_softmax(xs.dot(w) + b)
        for l2 in EMBEDDING_L2:
            w, b = fit_embedding(e[train], labels[train], l2)
            emb_oof[l2][test] = _log_softmax(e[test] @ w + b)
    text_acc = {l2: accuracy(s.argmax(1), labels) for l2, s in text_oof.items()}
    emb_acc = {l2: accuracy(s.argmax(1), labels) for l2, s in emb_oof.items()}
    best_text = max(TEXT_L2, key=lambda l2: (text_acc[l2], -l2))
    best_emb = max(EMBEDDING_L2, key=lambda l2: (emb_acc[l2], -l2))
    combined = {
        share: accuracy((text_oof[best_text] + share * emb_oof[best_emb]).argmax(1), labels)
        for share in SHARES
    }
    best_share = max(SHARES, key=lambda s: (combined[s], -s))
    combined_oof = (text_oof[best_text] + best_share * emb_oof[best_emb]).argmax(1)
    # The rules as one more signal: their type, as a one-hot vote added to the n-gram head's scores.
    votes = np.eye(len(TYPES), dtype=np.float32)[rules]
    with_rules = {
        r: {
            "text": accuracy((text_oof[best_text] + r * votes).argmax(1), labels),
            "combined": accuracy(
                (text_oof[best_text] + best_share * emb_oof[best_emb] + r * votes).argmax(1), labels
            ),
        }
        for r in RULE_SHARES
    }
    return {
        "rule_vote_accuracy": {str(r): v for r, v in with_rules.items()},
        "misclassified": [
            {
                "expected": TYPES[int(y)].value,
                "text": TYPES[int(t)].value,
                "combined": TYPES[int(c)].value,
                "i": i,
            }
            for i, (y, t, c) in enumerate(
                zip(labels, text_oof[best_text].argmax(1), combined_oof, strict=True)
            )
            if t != y or c != y
        ],
        "text_l2": best_text,
        "embedding_l2": best_emb,
        "embedding_share": best_share,
        "text_accuracy_by_l2": {str(k): v for k, v in text_acc.items()},
        "embedding_accuracy_by_l2": {str(k): v for k, v in emb_acc.items()},
        "combined_accuracy_by_share": {str(k): v for k, v in combined.items()},
        "text": text_acc[best_text],
        "embedding": emb_acc[best_emb],
        "combined": combined[best_share],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-write", action="store_true", help="measure only; leave the weights file alone")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rows = [r for path in TRAIN_SETS for r in load(path)]
    heldout = load(HELDOUT_SET)
    index = {t: i for i, t in enumerate(TYPES)}
    labels = np.array([index[t] for t, _ in rows], dtype=np.int64)
    held_labels = np.array([index[t] for t, _ in heldout], dtype=np.int64)
    texts = [s for _, s in rows]
    held_texts = [s for _, s in heldout]
    say(f"{len(rows)} training sentences, {len(heldout)} held out")
    embedder = FastEmbedEmbedder(model_dir=resolve_model_dir(args.model_dir), allow_download=False)
    embedder.load()
    e = np.asarray(embedder.embed(texts), dtype=np.float32)
    e_held = np.asarray(embedder.embed(held_texts), dtype=np.float32)
    x = Sparse(texts)
    rules = np.array([index[rule_type(s)] for s in texts], dtype=np.int64)
    cv = cross_validate(x, e, labels, rules)
    rules_cv = accuracy(rules, labels)
    for miss in cv["misclassified"]:
        miss["sentence"] = texts[miss.pop("i")]
    say(
        f"cross-validated: rules {rules_cv} text {cv['text']} embedding {cv['embedding']} combined {cv['combined']}"
    )

    text_w, text_b = fit_text(x, labels, cv["text_l2"])
    emb_w, emb_b = fit_embedding(e, labels, cv["embedding_l2"])
    # The shipped weights are float16: half the file, and the scores move by far less than a decision.
    model = TypeModel(
        text_weights=text_w.astype(np.float16).astype(np.float32),
        text_bias=text_b,
        embedding_weights=emb_w.astype(np.float16).astype(np.float32),
        embedding_bias=emb_b,
        embedding_share=float(cv["embedding_share"]),
        embedding_model=embedder.name,
    )
    held = {
        "rules": accuracy(np.array([index[rule_type(s)] for s in held_texts]), held_labels),
        "text": accuracy(np.array([int(np.argmax(model.text_scores(s))) for s in held_texts]), held_labels),
        "embedding": accuracy(
            np.array([int(np.argmax(model.embedding_scores(v))) for v in e_held]), held_labels
        ),
        "combined": accuracy(
            np.array(
                [int(np.argmax(model.combined_scores(s, v))) for s, v in zip(held_texts, e_held, strict=True)]
            ),
            held_labels,
        ),
    }
    say(f"held-out: {held}")
    if not args.no_write:
        WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            WEIGHTS,
            feature_version=np.int64(FEATURE_VERSION),
            types=np.array([t.value for t in TYPES]),
            text_weights=text_w.astype(np.float16),
            text_bias=text_b,
            embedding_weights=emb_w.astype(np.float16),
            embedding_bias=emb_b,
            embedding_share=np.float32(cv["embedding_share"]),
            embedding_model=np.array(embedder.name),
        )
        say(f"wrote {WEIGHTS.relative_to(REPO_ROOT)} ({WEIGHTS.stat().st_size:,} bytes)")
    report = {
        "revision": revision(),
        "training_sentences": len(rows),
        "heldout_sentences": len(heldout),
        "seed": SEED,
        "folds": FOLDS,
        "cross_validated": {"rules": rules_cv, **cv},
        "heldout": held,
        "run_s": round(time.perf_counter() - t0, 1),
    }
    table = "\n".join(
        [
            f"{'':10} {'rules':>7} {'n-gram':>7} {'embed':>7} {'both':>7}",
            f"{'5-fold CV':10} {rules_cv:7.3f} {cv['text']:7.3f} {cv['embedding']:7.3f} {cv['combined']:7.3f}",
            f"{'held-out':10} {held['rules']:7.3f} {held['text']:7.3f} {held['embedding']:7.3f} {held['combined']:7.3f}",
        ]
    )
    return write_report(report, args.out, table)


if __name__ == "__main__":
    raise SystemExit(main())
