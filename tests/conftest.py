"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import pytest

from tallei_desktop.config import APP_NAME, load_settings
from tallei_desktop.core import KnownError

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The model prepared beside the repository (a development machine, CI).
SHARED_MODEL_DIR = REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
#: The Hugging Face repository fastembed downloads sentence-transformers/all-MiniLM-L6-v2 from.
_HF_REPO = "Qdrant/all-MiniLM-L6-v2-onnx"


def program_model_cache() -> Path:
    """The folder the program itself downloads models into (its settings' ``model_cache_dir``)."""
    try:
        cache = load_settings().model_cache_dir
    except KnownError:  # a broken settings file is the program's problem to report, not the tests'
        cache = None
    return cache or Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / "models"


def _in_cache(cache: Path) -> Path | None:
    """The model folder inside a fastembed cache: the newest Hugging Face snapshot, or the older layout."""
    snapshots = sorted(
        (p.parent for p in cache.glob(f"models--{_HF_REPO.replace('/', '--')}/snapshots/*/model.onnx")),
        key=lambda folder: folder.stat().st_mtime,
        reverse=True,
    )
    if snapshots:
        return snapshots[0]
    legacy = cache / f"fast-{_HF_REPO.split('/')[-1].removesuffix('-onnx')}"
    return legacy if (legacy / "model.onnx").is_file() else None


def find_model_dir(explicit: str | None, shared: Path, cache: Path) -> Path:
    """The folder holding the real all-MiniLM-L6-v2 as ONNX for the tests.

    ``explicit`` (TALLEI_TEST_MODEL_DIR) wins and must hold the model; otherwise the model prepared
    in ``shared`` beside the repository; otherwise the copy fastembed downloaded into the program's
    model ``cache``. Raises :class:`LookupError` with one message naming every place looked in.
    """
    if explicit:
        folder = Path(explicit)
        if (folder / "model.onnx").is_file():
            return folder
        raise LookupError(
            f"The embedding model is missing: TALLEI_TEST_MODEL_DIR is {folder}, which holds no model.onnx."
        )
    if (shared / "model.onnx").is_file():
        return shared
    downloaded = _in_cache(cache)
    if downloaded is not None:
        return downloaded
    raise LookupError(
        f"The embedding model is missing: it is neither in {shared} nor in the program's model cache {cache}. "
        "Run `tallei-desktop doctor` once with internet access to download it into the cache, or set "
        "TALLEI_TEST_MODEL_DIR to a folder holding sentence-transformers/all-MiniLM-L6-v2 as ONNX."
    )


def _model_dir_or_error() -> Path | str:
    try:
        return find_model_dir(
            os.environ.get("TALLEI_TEST_MODEL_DIR"), SHARED_MODEL_DIR, program_model_cache()
        )
    except LookupError as exc:
        return str(exc)


_FOUND = _model_dir_or_error()
#: The real embedding model, for helpers outside fixtures; the ``model_dir`` fixture says why when it is absent.
MODEL_DIR = _FOUND if isinstance(_FOUND, Path) else SHARED_MODEL_DIR


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The folder holding sentence-transformers/all-MiniLM-L6-v2 as ONNX; fails loudly if absent."""
    if isinstance(_FOUND, str):
        pytest.fail(_FOUND)
    return _FOUND
