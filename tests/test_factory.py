"""Building the service from settings, as the entry points do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tallei_desktop.config import load_settings
from tallei_desktop.core.errors import KeyUnavailable
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.factory import build_service
from tests.conftest import MODEL_DIR, REPO_ROOT
from tests.support.keyring_backend import MemoryKeyring

_OPEN_AND_CLOSE_AT_ONCE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tallei_desktop.config import load_settings
    from tallei_desktop.factory import build_service
    settings = load_settings(environ={{"TALLEI_DATA_DIR": {data!r}, "TALLEI_MODEL_DIR": {model!r},
                                      "TALLEI_PASSPHRASE": "pw"}}, config_path=Path({data!r}) / "none.toml")
    import time
    service = build_service(settings, background=False, preload_model=True)
    deadline = time.monotonic() + 30
    while service.embedder.state.value == "not loaded" and time.monotonic() < deadline:
        time.sleep(0.001)  # wait for the condition: the load has begun
    assert service.embedder.state.value == "loading", service.embedder.state
    service.close()
    print("closed", service.embedder.state.value)
    """
)


def test_closing_while_the_model_loads_waits_for_it_and_exits_cleanly(tmp_path: Path) -> None:
    script = _OPEN_AND_CLOSE_AT_ONCE.format(root=str(REPO_ROOT), data=str(tmp_path), model=str(MODEL_DIR))
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "closed ready", "close() must let a model load in progress settle"


def test_an_existing_store_is_never_given_a_fresh_key(tmp_path: Path) -> None:
    settings = load_settings(environ={"TALLEI_DATA_DIR": str(tmp_path)}, config_path=tmp_path / "none.toml")
    keyring = MemoryKeyring()
    service = build_service(settings, secrets=SecretStore(tmp_path, backend=keyring), preload_model=False)
    service.save("kept under the first key")
    service.close()
    with pytest.raises(KeyUnavailable):
        build_service(settings, secrets=SecretStore(tmp_path, backend=MemoryKeyring()), preload_model=False)
    reopened = build_service(settings, secrets=SecretStore(tmp_path, backend=keyring), preload_model=False)
    try:
        assert reopened.list()[0].content == "kept under the first key"
    finally:
        reopened.close()
