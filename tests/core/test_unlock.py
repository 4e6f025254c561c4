"""Unlocking by a person: choosing where the key lives, typing the passphrase, changing it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring.backend
import pytest
from keyring.backends import null

from tallei_desktop.core import keys as keys_module
from tallei_desktop.core.errors import InvalidInput, KeyUnavailable, StoreUnavailable, WrongKey
from tallei_desktop.core.keys import KEY_FILE_NAME, KeyMethod, SecretStore, random_token
from tests.support.keyring_backend import BrokenKeyring, MemoryKeyring

OLD = "first passphrase, typed by hand"
NEW = "second passphrase, chosen later"


def _null_keyring() -> keyring.backend.KeyringBackend:
    """The backend keyring falls back on when the machine has none (as on this test machine)."""
    backend: keyring.backend.KeyringBackend = null.Keyring()  # type: ignore[no-untyped-call]
    return backend


@pytest.fixture(params=["memory-keyring", "no-keyring"])
def backend(request: pytest.FixtureRequest) -> keyring.backend.KeyringBackend:
    return MemoryKeyring() if request.param == "memory-keyring" else _null_keyring()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "tallei.key.lock"}


def test_keyring_availability_is_reported_for_each_kind_of_backend(tmp_path: Path) -> None:
    assert SecretStore(tmp_path, backend=MemoryKeyring()).keyring_available() is True
    assert SecretStore(tmp_path, backend=_null_keyring()).keyring_available() is False
    assert SecretStore(tmp_path, backend=BrokenKeyring()).keyring_available() is False


def test_a_new_folder_has_no_key_method(tmp_path: Path, backend: keyring.backend.KeyringBackend) -> None:
    assert SecretStore(tmp_path, backend=backend).key_method() is None
    assert list(tmp_path.iterdir()) == []


def test_creating_the_key_in_the_keyring_is_found_by_a_new_instance(tmp_path: Path) -> None:
    backend = MemoryKeyring()

    created = SecretStore(tmp_path, backend=backend).create_store_key(KeyMethod.KEYRING)

    again = SecretStore(tmp_path, backend=backend)
    assert again.key_method() is KeyMethod.KEYRING
    assert again.store_key(create=False).key == created.key
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_choosing_the_keyring_where_there_is_none_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, backend=_null_keyring())

    with pytest.raises(KeyUnavailable, match="cannot be kept in the OS keyring: no OS keyring is available"):
        store.create_store_key(KeyMethod.KEYRING)

    assert _files(tmp_path) == {}
    assert store.key_method() is None


def test_choosing_a_passphrase_writes_a_key_file_even_beside_a_working_keyring(
    tmp_path: Path, backend: keyring.backend.KeyringBackend
) -> None:
    created = SecretStore(tmp_path, backend=backend).create_store_key(KeyMethod.PASSPHRASE, OLD)

    opened = SecretStore(tmp_path, backend=backend).with_passphrase(OLD)
    assert opened.key_method() is KeyMethod.PASSPHRASE
    assert opened.store_key(create=False).key == created.key
    assert "passphrase" in created.source
    if isinstance(backend, MemoryKeyring):
        assert backend.passwords == {}


@pytest.mark.parametrize(
    ("method", "passphrase", "message"),
    [
        (KeyMethod.PASSPHRASE, None, "needs a passphrase that is not empty"),
        (KeyMethod.PASSPHRASE, "", "needs a passphrase that is not empty"),
        (KeyMethod.KEYRING, OLD, "takes no passphrase"),
    ],
)
def test_a_passphrase_that_does_not_fit_the_method_is_refused(
    tmp_path: Path, method: KeyMethod, passphrase: str | None, message: str
) -> None:
    backend = MemoryKeyring()

    with pytest.raises(InvalidInput, match=message):
        SecretStore(tmp_path, backend=backend).create_store_key(method, passphrase)

    assert _files(tmp_path) == {}
    assert backend.passwords == {}


@pytest.mark.parametrize("first", list(KeyMethod))
def test_a_second_key_is_never_created_over_the_first(tmp_path: Path, first: KeyMethod) -> None:
    backend = MemoryKeyring()
    SecretStore(tmp_path, backend=backend).create_store_key(
        first, OLD if first is KeyMethod.PASSPHRASE else None
    )
    files, passwords = _files(tmp_path), dict(backend.passwords)

    for method in KeyMethod:
        with pytest.raises(InvalidInput, match="already exists"):
            SecretStore(tmp_path, backend=backend).create_store_key(
                method, NEW if method is KeyMethod.PASSPHRASE else None
            )

    assert _files(tmp_path) == files
    assert backend.passwords == passwords


def test_a_wrong_typed_passphrase_changes_nothing_and_the_right_one_still_opens(
    tmp_path: Path, backend: keyring.backend.KeyringBackend
) -> None:
    created = SecretStore(tmp_path, backend=backend).create_store_key(KeyMethod.PASSPHRASE, OLD)
    locked = SecretStore(tmp_path, backend=backend)
    before = _files(tmp_path)

    for attempt in ("wrong", "also wrong", OLD.upper()):
        with pytest.raises(WrongKey, match="does not open the key file of the store at"):
            locked.with_passphrase(attempt).store_key()
        assert _files(tmp_path) == before

    assert locked.with_passphrase(OLD).store_key().key == created.key


def test_changing_the_passphrase_keeps_the_key_and_every_secret(
    tmp_path: Path, backend: keyring.backend.KeyringBackend
) -> None:
    store = SecretStore(tmp_path, backend=backend)
    created = store.create_store_key(KeyMethod.PASSPHRASE, OLD)
    token = store.secret("http-token", factory=random_token)
    other = store.secret("other-secret", factory=lambda: "kept as well")
    old_salt = json.loads((tmp_path / KEY_FILE_NAME).read_text())["salt"]

    store.change_passphrase(OLD, NEW)

    reopened = SecretStore(tmp_path, passphrase=NEW, backend=backend)
    assert reopened.store_key(create=False).key == created.key
    assert reopened.secret("http-token", factory=lambda: "not this") == token
    assert reopened.secret("other-secret", factory=lambda: "not this") == other
    assert json.loads((tmp_path / KEY_FILE_NAME).read_text())["salt"] != old_salt
    with pytest.raises(WrongKey):
        SecretStore(tmp_path, passphrase=OLD, backend=backend).store_key(create=False)
    # The instance that changed it goes on working under the new passphrase.
    assert store.secret("http-token", factory=lambda: "not this") == token
    assert _files(tmp_path).keys() == {KEY_FILE_NAME}


def test_changing_with_a_wrong_old_passphrase_is_wrong_key_and_changes_nothing(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, backend=_null_keyring())
    store.create_store_key(KeyMethod.PASSPHRASE, OLD)
    before = _files(tmp_path)

    with pytest.raises(WrongKey):
        store.change_passphrase("not the old one", NEW)

    assert _files(tmp_path) == before
    assert SecretStore(tmp_path, passphrase=OLD, backend=_null_keyring()).store_key(create=False)


def test_changing_to_an_empty_passphrase_or_without_a_key_file_is_refused(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    in_keyring = SecretStore(tmp_path / "keyring", backend=backend)
    in_keyring.create_store_key(KeyMethod.KEYRING)
    guarded = SecretStore(tmp_path / "file", backend=backend)
    guarded.create_store_key(KeyMethod.PASSPHRASE, OLD)
    before = _files(tmp_path / "file")

    with pytest.raises(InvalidInput, match="not guarded by a passphrase"):
        in_keyring.change_passphrase(OLD, NEW)
    with pytest.raises(InvalidInput, match="new passphrase is empty"):
        guarded.change_passphrase(OLD, "")

    assert _files(tmp_path / "file") == before
    assert not (tmp_path / "keyring" / KEY_FILE_NAME).exists()


def test_a_failed_write_keeps_the_old_key_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SecretStore(tmp_path, backend=_null_keyring())
    store.create_store_key(KeyMethod.PASSPHRASE, OLD)
    store.secret("http-token", factory=random_token)
    before = _files(tmp_path)

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(keys_module.os, "fsync", disk_full)
    with pytest.raises(StoreUnavailable, match="No space left on device"):
        store.change_passphrase(OLD, NEW)
    monkeypatch.setattr(keys_module.os, "fsync", os.fsync)

    assert _files(tmp_path) == before
    assert SecretStore(tmp_path, passphrase=OLD, backend=_null_keyring()).store_key(create=False)


def test_with_passphrase_keeps_the_folder_and_keyring_and_normalises_the_text(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    composed, decomposed = "caf\u00e9 au lait", "cafe\u0301 au lait"
    created = SecretStore(tmp_path, backend=backend).create_store_key(KeyMethod.PASSPHRASE, composed)

    other = SecretStore(tmp_path, backend=backend).with_passphrase(decomposed)

    assert other.store_key(create=False).key == created.key
    assert other.source == f"passphrase (key file {(tmp_path / KEY_FILE_NAME).resolve()})"
