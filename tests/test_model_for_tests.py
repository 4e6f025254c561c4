"""Where the tests find the real model: given, beside the repository, or in the program's download cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import find_model_dir


def model_at(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"onnx")
    return folder


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    return tmp_path / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "models"


def test_the_model_beside_the_repository_comes_first(shared: Path, cache: Path) -> None:
    model_at(shared)
    model_at(cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "abc123")

    assert find_model_dir(None, shared, cache) == shared


def test_without_it_the_download_in_the_programs_cache_is_used(shared: Path, cache: Path) -> None:
    snapshot = model_at(cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "abc123")

    assert find_model_dir(None, shared, cache) == snapshot


def test_the_newest_snapshot_wins(shared: Path, cache: Path) -> None:
    old = model_at(cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "old")
    new = model_at(cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "new")
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000, 2_000_000))

    assert find_model_dir(None, shared, cache) == new


def test_the_older_cache_layout_is_found_too(shared: Path, cache: Path) -> None:
    legacy = model_at(cache / "fast-all-MiniLM-L6-v2")

    assert find_model_dir(None, shared, cache) == legacy


def test_a_snapshot_without_the_model_file_does_not_count(shared: Path, cache: Path) -> None:
    (cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "partial").mkdir(parents=True)

    with pytest.raises(LookupError):
        find_model_dir(None, shared, cache)


def test_an_explicit_folder_wins_over_both(tmp_path: Path, shared: Path, cache: Path) -> None:
    model_at(shared)
    given = model_at(tmp_path / "given")

    assert find_model_dir(str(given), shared, cache) == given


def test_an_explicit_folder_without_the_model_is_an_error_naming_it(
    tmp_path: Path, shared: Path, cache: Path
) -> None:
    model_at(shared)

    with pytest.raises(LookupError, match="TALLEI_TEST_MODEL_DIR") as raised:
        find_model_dir(str(tmp_path / "empty"), shared, cache)
    assert str(tmp_path / "empty") in str(raised.value)


def test_neither_place_gives_one_message_naming_both(shared: Path, cache: Path) -> None:
    with pytest.raises(LookupError) as raised:
        find_model_dir(None, shared, cache)

    message = str(raised.value)
    assert "\n" not in message
    assert str(shared) in message and str(cache) in message
    assert "TALLEI_TEST_MODEL_DIR" in message
