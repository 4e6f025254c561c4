"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The real embedding model, laid beside the repository as ../shared/models/… .
MODEL_DIR = REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The folder holding sentence-transformers/all-MiniLM-L6-v2 as ONNX; fails loudly if absent."""
    if not (MODEL_DIR / "model.onnx").is_file():
        pytest.fail(f"The embedding model is missing: expected it at {MODEL_DIR}.")
    return MODEL_DIR
