"""A new passphrase has at least eight characters; a key file made under a shorter one still opens."""

from __future__ import annotations

from pathlib import Path

import keyring.backend
import pytest
from keyring.backends import null

from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.core.keys import KEY_FILE_NAME, MIN_PASSPHRASE_LENGTH, KeyMethod, SecretStore

LONG = "a passphrase long enough"


def _no_keyring() -> keyring.backend.KeyringBackend:
    backend: keyring.backend.KeyringBackend = null.Keyring()  # type: ignore[no-untyped-call]
    return backend


def test_creating_a_key_under_a_short_passphrase_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    assert MIN_PASSPHRASE_LENGTH == 8
    with pytest.raises(InvalidInput, match="at least 8 characters"):
        SecretStore(tmp_path, backend=_no_keyring()).create_store_key(KeyMethod.PASSPHRASE, "x" * 7)
    assert not (tmp_path / KEY_FILE_NAME).exists()
    created = SecretStore(tmp_path, backend=_no_keyring()).create_store_key(KeyMethod.PASSPHRASE, "x" * 8)
    assert len(created.key) == 32


def test_changing_to_a_short_passphrase_is_refused_and_the_old_one_still_opens(tmp_path: Path) -> None:
    store = SecretStore(tmp_path, backend=_no_keyring())
    created = store.create_store_key(KeyMethod.PASSPHRASE, LONG)
    with pytest.raises(InvalidInput, match="too short"):
        store.change_passphrase(LONG, "short")
    reopened = SecretStore(tmp_path, passphrase=LONG, backend=_no_keyring())
    assert reopened.store_key(create=False).key == created.key


def test_a_key_file_made_under_a_short_passphrase_still_opens_and_can_be_lengthened(tmp_path: Path) -> None:
    # Made before the minimum existed: as the environment's passphrase does on first open.
    old = SecretStore(tmp_path, passphrase="abc", backend=_no_keyring()).store_key(create=True)
    again = SecretStore(tmp_path, passphrase="abc", backend=_no_keyring())
    assert again.store_key(create=False).key == old.key
    again.change_passphrase("abc", LONG)
    assert (
        SecretStore(tmp_path, passphrase=LONG, backend=_no_keyring()).store_key(create=False).key == old.key
    )
