"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The real embedding model: TALLEI_TEST_MODEL_DIR, else ../shared/models/… beside the repository.
MODEL_DIR = Path(
    os.environ.get("TALLEI_TEST_MODEL_DIR")
    or REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
)


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The folder holding sentence-transformers/all-MiniLM-L6-v2 as ONNX; fails loudly if absent."""
    if not (MODEL_DIR / "model.onnx").is_file():
        pytest.fail(
            f"The embedding model is missing: expected it at {MODEL_DIR}. "
            "Set TALLEI_TEST_MODEL_DIR to a folder holding sentence-transformers/all-MiniLM-L6-v2 as ONNX."
        )
    return MODEL_DIR
