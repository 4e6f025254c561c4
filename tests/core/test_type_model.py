"""The trained type model: deterministic features, the shipped weights, and the background refine.

A type inferred at save time may be refined once the embedding exists, in the same transaction as its
bucket change and a ``memory_retyped`` event, before dedup, supersede and conflicts look at it. A type
the caller gave (``save(type=...)``, an edit) is never touched.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from tallei_desktop.core.classify import classify
from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.models import Bucket, EventKind, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.type_model import (
    BUCKETS,
    FEATURE_VERSION,
    TYPES,
    WEIGHTS_FILE,
    TypeModel,
    features,
    load_model,
    model_from_arrays,
)
from tests.core.conftest import BUDGETS, KEY, Clock
from tests.support.fake_embedder import HashEmbedder

SENTENCES = [
    "I prefer tabs over spaces.",
    "We decided to move the API to Go.",
    "Had lunch with Maria yesterday",
    "The deploy crashed on Friday.",
    "Lesson learned: always test the restore.",
    "maybe look into uv later",
    "My sister lives in Toronto.",
    "",
    "   ",
    "!!!",
    "Ünïcödé “quotes” — and ‘apostrophes’ don’t matter",
]


def _service(path: Path, embedder: object, clock: Clock, model: TypeModel | None = None) -> MemoryService:
    db = Database(path, KEY, key_source="test key")
    return MemoryService(db, embedder, budgets=BUDGETS, clock=clock, type_model=model)  # type: ignore[arg-type]


def _leaning(towards: MemoryType, embedder_name: str) -> TypeModel:
    """A model whose text head knows nothing and whose embedding head always says ``towards``."""
    k = len(TYPES)
    bias = np.zeros(k, dtype=np.float32)
    bias[TYPES.index(towards)] = 10.0
    return TypeModel(
        text_weights=np.zeros((BUCKETS, k), dtype=np.float32),
        text_bias=np.zeros(k, dtype=np.float32),
        embedding_weights=np.zeros((384, k), dtype=np.float32),
        embedding_bias=bias,
        embedding_share=1.0,
        embedding_model=embedder_name,
    )


def _retyped(service: MemoryService) -> list[tuple[str | None, str]]:
    return [
        (e.memory_id, e.detail) for e in service.changes_since(0).events if e.kind is EventKind.MEMORY_RETYPED
    ]


def test_features_are_sorted_unique_unit_length_and_stable() -> None:
    for text in SENTENCES:
        index, values = features(text)
        again = features(text)
        assert np.array_equal(index, again[0]) and np.array_equal(values, again[1])
        assert np.all(np.diff(index) > 0)
        assert np.all((index >= 0) & (index < BUCKETS))
        if index.size:
            assert abs(float(np.linalg.norm(values)) - 1.0) < 1e-5
    assert features("")[0].size == 0 and features("  !! ")[0].size == 0


def test_classify_is_deterministic_across_processes() -> None:
    here = [classify(s).value for s in SENTENCES]
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from tallei_desktop.core.classify import classify;"
        "print(','.join(classify(s).value for s in sys.argv[2:]))"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", script, root, *SENTENCES],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    # Another process has another str hash seed: the features must not depend on it.
    assert done.stdout.strip().split(",") == here
    assert [classify(s).value for s in reversed(SENTENCES)] == list(reversed(here))


def test_text_without_words_is_a_fact() -> None:
    assert classify("") is MemoryType.FACT
    assert classify(" \n\t") is MemoryType.FACT
    assert classify("?!…") is MemoryType.FACT


def test_shipped_weights_load_from_the_package() -> None:
    source = resources.files("tallei_desktop.core").joinpath("data", WEIGHTS_FILE)
    assert source.is_file(), "the weights file must be package data"
    model = load_model()
    assert model is load_model(), "read once per process"
    assert model.text_weights.shape == (BUCKETS, len(TYPES))
    assert model.embedding_weights.shape == (384, len(TYPES))
    assert model.fits("sentence-transformers/all-MiniLM-L6-v2")
    assert not model.fits("hash-embedder")
    assert np.all(np.isfinite(model.text_weights)) and np.all(np.isfinite(model.embedding_weights))


def test_the_package_declares_the_weights_for_wheels_and_the_bundle() -> None:
    root = Path(__file__).resolve().parents[2]
    assert f"data/{WEIGHTS_FILE}" in (root / "pyproject.toml").read_text(encoding="utf-8")
    assert "tallei_desktop" in (root / "packaging" / "tallei-desktop.spec").read_text(encoding="utf-8")
    spec = (root / "packaging" / "tallei-desktop.spec").read_text(encoding="utf-8")
    assert WEIGHTS_FILE in spec or 'collect_data_files("tallei_desktop")' in spec


def test_weights_for_other_features_are_refused() -> None:
    source = resources.files("tallei_desktop.core").joinpath("data", WEIGHTS_FILE)
    with source.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    assert model_from_arrays(arrays).embedding_share == load_model().embedding_share
    with pytest.raises(ValueError, match="features"):
        model_from_arrays({**arrays, "feature_version": np.int64(FEATURE_VERSION + 1)})
    with pytest.raises(ValueError, match="types"):
        model_from_arrays({**arrays, "types": np.array([t.value for t in reversed(TYPES)])})


def test_an_inferred_type_is_refined_with_its_bucket_and_an_event(tmp_path: Path, clock: Clock) -> None:
    embedder = HashEmbedder()
    service = _service(tmp_path / "t.db", embedder, clock, _leaning(MemoryType.EVENT, embedder.name))
    try:
        saved = service.save("My sister lives in Toronto.")
        assert saved.type is MemoryType.FACT  # the save-time text model
        service.drain()
        m = service.get(saved.id)
        assert (m.type, m.bucket) == (MemoryType.EVENT, Bucket.SHORT_TERM)
        assert _retyped(service) == [(saved.id, "event")]
        # Refined once: later rounds leave it alone.
        service.drain()
        assert _retyped(service) == [(saved.id, "event")]
    finally:
        service.close()


def test_a_given_type_is_never_refined(tmp_path: Path, clock: Clock) -> None:
    embedder = HashEmbedder()
    service = _service(tmp_path / "t.db", embedder, clock, _leaning(MemoryType.EVENT, embedder.name))
    try:
        given = service.save("My sister lives in Toronto.", type="fact")
        edited = service.save("My brother lives in Lyon.")
        service.update(edited.id, type="decision")  # the person's choice, before the worker ran
        service.drain()
        assert service.get(given.id).type is MemoryType.FACT
        assert service.get(edited.id).type is MemoryType.DECISION
        assert [d for _, d in _retyped(service)] == ["decision"]  # only the edit's own event
    finally:
        service.close()


def test_no_refine_from_another_embedding_model(tmp_path: Path, clock: Clock) -> None:
    service = _service(tmp_path / "t.db", HashEmbedder(), clock, _leaning(MemoryType.EVENT, "another-model"))
    try:
        saved = service.save("My sister lives in Toronto.")
        service.drain()
        assert service.get(saved.id).type is MemoryType.FACT
        assert _retyped(service) == []
    finally:
        service.close()


def test_refine_happens_before_dedup_compares_types(tmp_path: Path, clock: Clock) -> None:
    embedder = HashEmbedder()
    service = _service(tmp_path / "t.db", embedder, clock, _leaning(MemoryType.EVENT, embedder.name))
    try:
        first = service.save("My sister lives in Toronto with her two kids.", type="event")
        # One word more: a near-duplicate, but a fact at save time, so only the refined type lets dedup see it.
        second = service.save("My sister lives in Toronto with her two kids now.")
        assert second.type is MemoryType.FACT
        service.drain()
        assert _retyped(service) == [(second.id, "event")]
        assert service.get(second.id).status.value == "merged", "refined to event, then folded into the first"
        assert service.get(first.id).reference_count == 2
    finally:
        service.close()


def test_store_round_trip_with_the_real_model(
    tmp_path: Path, clock: Clock, real_embedder: FastEmbedEmbedder
) -> None:
    texts = [
        "I prefer window seats on long flights.",
        "We decided to host the docs on our own server.",
        "The backup job failed silently all week.",
        "Flew back from Oslo on Tuesday night.",
        "Takeaway: write the migration's rollback first.",
        "Maybe try the Georgian bakery on Elm Street.",
        "Her brother teaches chemistry in Leeds.",
    ]
    path = tmp_path / "round.db"
    service = _service(path, real_embedder, clock)
    model = load_model()
    try:
        ids = [service.save(t).id for t in texts]
        explicit = service.save("Flew to Rome on Monday.", type="lesson").id
        service.drain()
    finally:
        service.close()
    reopened = _service(path, real_embedder, clock)
    try:
        vectors = real_embedder.embed(texts)
        for mid, text, vector in zip(ids, texts, vectors, strict=True):
            m = reopened.get(mid)
            assert m.type is model.classify_combined(text, vector), text
            assert m.bucket is Bucket.SHORT_TERM or m.type not in (MemoryType.EVENT, MemoryType.NOTE)
        retyped = dict(_retyped(reopened))
        for mid, text in zip(ids, texts, strict=True):
            assert (mid in retyped) is (classify(text) is not reopened.get(mid).type), text
        assert reopened.get(explicit).type is MemoryType.LESSON
        assert explicit not in retyped
    finally:
        reopened.close()


def test_the_store_records_whether_a_type_was_inferred(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "flags.db"
    service = _service(path, HashEmbedder(unavailable="no model in this test"), clock)
    try:
        inferred = service.save("We moved the standup to ten.").id
        given = service.save("The standup is at ten.", type="fact").id
        chosen = service.save("The retro is on Fridays.").id
        service.update(chosen, type="event")
        service.drain()
    finally:
        service.close()
    db = Database(path, KEY, key_source="test key")
    try:
        with db.read() as conn:
            flags = dict(conn.execute("SELECT id, type_inferred FROM memories").fetchall())
    finally:
        db.close()
    assert flags == {inferred: 1, given: 0, chosen: 0}
