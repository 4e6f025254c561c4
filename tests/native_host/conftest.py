"""Fixtures for the native host: a passphrase-guarded store in tmp_path, the real model, a real host process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.native_host.host import NativeHost

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def host_env(tmp_path: Path, model_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_LOG_DIR=str(tmp_path / "logs"),
        TALLEI_PASSPHRASE=PASSPHRASE,
        TALLEI_MODEL_DIR=str(model_dir),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        # Never the person's own keyring: the key goes into a passphrase-guarded file.
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


@pytest.fixture
def host(host_env: dict[str, str], tmp_path: Path) -> Iterator[NativeHost]:
    with NativeHost(host_env, tmp_path / "host-stderr.log") as running:
        yield running
