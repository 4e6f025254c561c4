"""Building the service from settings, as the entry points do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from keyring.backends import null

from tallei_desktop.config import Settings, load_settings
from tallei_desktop.core.errors import KeyUnavailable, WrongKey
from tallei_desktop.core.keys import KeyMethod, SecretStore
from tallei_desktop.factory import build_service, unlock_need
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


def _settings(folder: Path, **environ: str) -> Settings:
    return load_settings(
        environ={"TALLEI_DATA_DIR": str(folder), **environ}, config_path=folder / "none.toml"
    )


def test_a_person_creates_a_passphrase_store_then_opens_it_by_typing_the_passphrase(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    no_keyring = null.Keyring()  # type: ignore[no-untyped-call]
    secrets = SecretStore(tmp_path, backend=no_keyring)
    assert unlock_need(settings, secrets=secrets) == "create"
    secrets.create_store_key(KeyMethod.PASSPHRASE, "typed at creation")
    service = build_service(settings, secrets=secrets, preload_model=False)
    service.save("kept behind a typed passphrase")
    service.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("tallei.key")}

    locked = SecretStore(tmp_path, backend=no_keyring)
    assert unlock_need(settings, secrets=locked) == "passphrase"
    assert unlock_need(_settings(tmp_path, TALLEI_PASSPHRASE="wrong"), secrets=None) == "passphrase"
    with pytest.raises(WrongKey):
        build_service(settings, secrets=locked, passphrase="wrong", preload_model=False)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("tallei.key")}
    assert after == before

    reopened = build_service(settings, secrets=locked, passphrase="typed at creation", preload_model=False)
    try:
        assert [m.content for m in reopened.list()] == ["kept behind a typed passphrase"]
    finally:
        reopened.close()
    assert unlock_need(_settings(tmp_path, TALLEI_PASSPHRASE="typed at creation"), secrets=None) == "ready"


def test_a_keyring_store_is_ready_without_asking_and_missing_its_key_is_named(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    keyring = MemoryKeyring()
    secrets = SecretStore(tmp_path, backend=keyring)
    secrets.create_store_key(KeyMethod.KEYRING)
    build_service(settings, secrets=secrets, preload_model=False).close()

    assert unlock_need(settings, secrets=SecretStore(tmp_path, backend=keyring)) == "ready"
    with pytest.raises(KeyUnavailable, match="holds no store key"):
        unlock_need(settings, secrets=SecretStore(tmp_path, backend=MemoryKeyring()))
