"""The Embedder port: the real all-MiniLM-L6-v2 model, the null embedder and the test fake."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tallei_desktop.core.embeddings import (
    DEFAULT_MODEL,
    DIM,
    Embedder,
    FastEmbedEmbedder,
    ModelState,
    NullEmbedder,
    cosine,
)
from tallei_desktop.core.errors import KnownError, ModelUnavailable
from tests.conftest import REPO_ROOT
from tests.support.fake_embedder import HashEmbedder

PARAPHRASE = ("I prefer dark mode in my editor", "The user likes a dark theme in the IDE")
UNRELATED = ("I prefer dark mode in my editor", "The deploy crashed on Friday night")


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> FastEmbedEmbedder:
    """One loaded real model shared by the read-only tests of this module."""
    loaded = FastEmbedEmbedder(model_dir=model_dir)
    loaded.load()
    return loaded


class _Spy:
    """Counts how many fastembed models get constructed and what was asked of them."""

    def __init__(self) -> None:
        self.constructed = 0
        self.kwargs: list[dict[str, Any]] = []
        self.states_seen: list[ModelState] = []
        self.watched: FastEmbedEmbedder | None = None


@pytest.fixture
def fastembed_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    """Wrap fastembed.TextEmbedding so a test can count real model constructions."""
    import fastembed

    spy = _Spy()
    real = fastembed.TextEmbedding

    class CountingTextEmbedding(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            spy.constructed += 1
            spy.kwargs.append(kwargs)
            if spy.watched is not None:
                spy.states_seen.append(spy.watched.state)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(fastembed, "TextEmbedding", CountingTextEmbedding)
    yield spy


def _one_plain_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and ". " not in message


def _broken_model_folder(model_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "broken-model"
    folder.mkdir()
    for name in (
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
    ):
        shutil.copy(model_dir / name, folder / name)
    (folder / "model.onnx").write_bytes(b"this is not an onnx file")
    return folder


def test_importing_the_module_does_not_import_fastembed() -> None:
    code = "import tallei_desktop.core.embeddings, sys; assert 'fastembed' not in sys.modules"
    result = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_construction_does_no_work(tmp_path: Path) -> None:
    lazy = FastEmbedEmbedder(model_dir=tmp_path / "does-not-exist")

    assert lazy.state is ModelState.NOT_LOADED
    assert lazy.name == DEFAULT_MODEL
    assert lazy.dim == DIM
    assert lazy.state is ModelState.NOT_LOADED
    assert "not been loaded" in lazy.detail


def test_real_model_loads_from_folder_and_becomes_ready(model_dir: Path, fastembed_spy: _Spy) -> None:
    fresh = FastEmbedEmbedder(model_dir=model_dir, threads=1)
    fastembed_spy.watched = fresh
    states = [fresh.state]

    fresh.load()

    states.extend([*fastembed_spy.states_seen, fresh.state])
    assert states == [ModelState.NOT_LOADED, ModelState.LOADING, ModelState.READY]
    assert fresh.dim == 384
    assert str(model_dir) in fresh.detail
    assert _one_plain_sentence(fresh.detail)
    assert isinstance(fresh, Embedder)


def test_load_from_a_folder_never_downloads(model_dir: Path, fastembed_spy: _Spy) -> None:
    FastEmbedEmbedder(model_dir=model_dir, allow_download=True).load()

    assert fastembed_spy.kwargs[0]["local_files_only"] is True
    assert fastembed_spy.kwargs[0]["specific_model_path"] == str(model_dir)


def test_embed_returns_normalised_float32_rows(embedder: FastEmbedEmbedder) -> None:
    texts = ["I prefer tabs", "We decided to use Postgres", "", "ünïcödé and emoji 🎉"]

    matrix = embedder.embed(texts)

    assert matrix.dtype == np.float32
    assert matrix.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_embedding_no_texts_gives_an_empty_matrix(embedder: FastEmbedEmbedder) -> None:
    matrix = embedder.embed([])

    assert matrix.shape == (0, 384)
    assert matrix.dtype == np.float32


def test_embed_query_is_the_same_vector_as_a_row(embedder: FastEmbedEmbedder) -> None:
    query = embedder.embed_query("Call me Sam")

    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(query, embedder.embed(["Call me Sam"])[0], atol=1e-5)


def test_embed_rejects_a_bare_string(embedder: FastEmbedEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("one text, not a list")


def test_paraphrase_is_closer_than_unrelated_text(embedder: FastEmbedEmbedder) -> None:
    a, b = embedder.embed(PARAPHRASE)
    c, d = embedder.embed(UNRELATED)

    assert cosine(a, b) > cosine(c, d) + 0.2


def test_batches_give_the_same_vectors_as_one_by_one(model_dir: Path) -> None:
    small_batches = FastEmbedEmbedder(model_dir=model_dir, batch_size=3)
    texts = [
        "short",
        "A somewhat longer sentence about preferring dark mode in every editor.",
        "Call me Sam",
        "The deploy crashed on Friday because the migration locked the users table.",
        "x",
        "We decided to use Postgres for the database",
        "I take my coffee with milk",
        "A long note about the migration. " * 80,
        "Another long note, this one about editors and themes. " * 60,
    ]

    together = small_batches.embed(texts)
    alone = np.stack([small_batches.embed_query(text) for text in texts])

    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_very_long_text_is_truncated_not_rejected(embedder: FastEmbedEmbedder) -> None:
    long_text = "I prefer dark mode. " * 2000

    vector = embedder.embed_query(long_text)

    assert vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_only_the_first_256_tokens_count(embedder: FastEmbedEmbedder) -> None:
    # Each "wordN" is several tokens, so the opening alone is well past 256 tokens and the
    # tail would still fall inside a 512-token window.
    opening = " ".join(f"word{i}" for i in range(150))
    tail = " ".join(f"other{i}" for i in range(60))

    just_opening, with_tail = embedder.embed([opening, f"{opening} {tail}"])

    np.testing.assert_allclose(just_opening, with_tail, atol=1e-6)


def test_concurrent_loads_load_the_model_once(model_dir: Path, fastembed_spy: _Spy) -> None:
    shared = FastEmbedEmbedder(model_dir=model_dir)
    start = threading.Barrier(8)

    def load_and_embed() -> tuple[int, ...]:
        start.wait(timeout=60)
        shared.load()
        return shared.embed_query("hello").shape

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(load_and_embed) for _ in range(8)]
        shapes = [future.result(timeout=60) for future in futures]

    assert shapes == [(384,)] * 8
    assert fastembed_spy.constructed == 1
    assert shared.state is ModelState.READY


def test_embed_loads_the_model_on_first_use(model_dir: Path) -> None:
    lazy = FastEmbedEmbedder(model_dir=model_dir)

    vector = lazy.embed_query("I prefer dark mode")

    assert lazy.state is ModelState.READY
    assert vector.shape == (384,)


def test_missing_folder_is_unavailable_with_a_plain_message(tmp_path: Path) -> None:
    missing = tmp_path / "no-model-here"
    absent = FastEmbedEmbedder(model_dir=missing)

    with pytest.raises(ModelUnavailable) as caught:
        absent.load()

    message = str(caught.value)
    assert isinstance(caught.value, KnownError)
    assert str(missing) in message
    assert "choose a" in message and "TALLEI_" not in message
    assert _one_plain_sentence(message)
    assert absent.state is ModelState.UNAVAILABLE
    assert absent.detail == message


def test_failed_load_fails_fast_afterwards_without_retrying(
    model_dir: Path, tmp_path: Path, fastembed_spy: _Spy
) -> None:
    broken = FastEmbedEmbedder(model_dir=_broken_model_folder(model_dir, tmp_path))

    with pytest.raises(ModelUnavailable) as first:
        broken.load()
    with pytest.raises(ModelUnavailable) as second:
        broken.load()
    with pytest.raises(ModelUnavailable):
        broken.embed(["still no model"])

    assert fastembed_spy.constructed == 1
    assert str(second.value) == str(first.value) == broken.detail
    assert "broken-model" in broken.detail
    assert _one_plain_sentence(broken.detail)
    assert broken.state is ModelState.UNAVAILABLE


def test_without_folder_or_download_the_model_is_unavailable_and_logged_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offline = FastEmbedEmbedder(cache_dir=tmp_path / "empty-cache", allow_download=False)

    with caplog.at_level(logging.INFO), pytest.raises(ModelUnavailable) as caught:
        offline.load()

    message = str(caught.value)
    assert "downloading it is turned off" in message
    assert "choose a local folder" in message and "TALLEI_" not in message
    assert offline.state is ModelState.UNAVAILABLE
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.getMessage(), r.exc_info) for r in warnings] == [(message, None)]


def test_failed_download_says_so_and_how_to_work_offline_in_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import fastembed

    class Unreachable(fastembed.TextEmbedding):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            # What fastembed raises once every download attempt has failed.
            raise ValueError(f"Could not load model {DEFAULT_MODEL} from any source.")

    monkeypatch.setattr(fastembed, "TextEmbedding", Unreachable)
    downloading = FastEmbedEmbedder(cache_dir=tmp_path / "cache", allow_download=True)

    with caplog.at_level(logging.INFO), pytest.raises(ModelUnavailable) as caught:
        downloading.load()

    message = str(caught.value)
    assert "could not be downloaded" in message
    assert "choose a" in message and "TALLEI_" not in message
    assert _one_plain_sentence(message)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.getMessage(), r.exc_info) for r in warnings] == [(message, None)]
    assert downloading.status.state is ModelState.UNAVAILABLE


def test_unknown_model_name_is_unavailable(model_dir: Path) -> None:
    unknown = FastEmbedEmbedder("nobody/no-such-model", model_dir=model_dir)

    with pytest.raises(ModelUnavailable, match="nobody/no-such-model"):
        unknown.load()


def test_preload_in_background_loads_the_model(model_dir: Path) -> None:
    background = FastEmbedEmbedder(model_dir=model_dir)

    thread = background.preload_in_background()
    thread.join(timeout=60)

    assert thread.daemon
    assert background.state is ModelState.READY


def test_preload_in_background_records_failure_instead_of_raising(tmp_path: Path) -> None:
    absent = FastEmbedEmbedder(model_dir=tmp_path / "missing")

    thread = absent.preload_in_background()
    thread.join(timeout=60)

    assert not thread.is_alive()
    assert absent.state is ModelState.UNAVAILABLE
    assert "missing" in absent.detail


def test_null_embedder_says_semantic_search_is_off() -> None:
    null = NullEmbedder()

    assert isinstance(null, Embedder)
    assert null.state is ModelState.UNAVAILABLE
    assert null.dim == DIM
    assert null.detail == "Semantic search is off: no embedding model is configured."
    with pytest.raises(ModelUnavailable, match="Semantic search is off"):
        null.embed(["anything"])
    with pytest.raises(ModelUnavailable):
        null.embed_query("anything")


def test_cosine_of_unit_vectors() -> None:
    x = np.array([1.0, 0.0], dtype=np.float32)
    y = np.array([0.0, 1.0], dtype=np.float32)

    assert cosine(x, x) == pytest.approx(1.0)
    assert cosine(x, y) == pytest.approx(0.0)
    assert cosine(x, -x) == pytest.approx(-1.0)


def test_hash_embedder_is_deterministic_and_normalised() -> None:
    first, second = HashEmbedder(), HashEmbedder()

    a = first.embed(["I prefer dark mode", ""])
    b = second.embed(["I prefer dark mode", ""])

    assert isinstance(first, Embedder)
    assert a.dtype == np.float32
    assert a.shape == (2, DIM)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)


def test_hash_embedder_puts_texts_sharing_words_closer() -> None:
    fake = HashEmbedder()

    dark, dark_too, deploy = fake.embed(
        ["I prefer dark mode", "I like dark mode", "The deploy crashed on Friday"]
    )

    assert cosine(dark, dark_too) > cosine(dark, deploy) + 0.2


def test_hash_embedder_counts_work_and_can_be_unavailable() -> None:
    fake = HashEmbedder(unavailable="No model in this test.")

    states = [fake.state]
    with pytest.raises(ModelUnavailable, match=r"No model in this test\."):
        fake.embed(["x"])
    assert fake.texts_embedded == 0

    fake.make_available()
    fake.embed(["a", "b", "c"])
    fake.embed_query("d")

    states.append(fake.state)
    assert states == [ModelState.UNAVAILABLE, ModelState.READY]
    assert (fake.texts_embedded, fake.calls) == (4, 2)
    fake.reset_counts()
    assert fake.texts_embedded == 0


def test_hash_embedder_gate_holds_embeds_until_opened() -> None:
    fake = HashEmbedder(gated=True)
    done = threading.Event()

    def embed_then_signal() -> None:
        fake.embed(["held"])
        done.set()

    worker = threading.Thread(target=embed_then_signal)
    worker.start()

    assert not done.wait(0.05)
    assert fake.texts_embedded == 0
    fake.open_gate()
    assert done.wait(10)
    worker.join(timeout=10)
    assert fake.texts_embedded == 1
