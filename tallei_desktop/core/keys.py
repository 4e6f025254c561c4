"""The store key and the other small secrets, kept in the OS keyring or under a passphrase.

The store is encrypted with a random 256-bit key. Where the OS offers a keyring, the key lives there
(service ``tallei-desktop``, one entry per data folder). Where it does not, a passphrase guards it:
the key is wrapped with AES-256-GCM under a key derived from the passphrase with scrypt and kept in
``tallei.key`` beside the store. A key file, once written, always wins, because the store it belongs
to was created passphrase-guarded.

Other secrets (the HTTP bearer token) live in the same place as the key.

A person creating a store may choose either place (:meth:`SecretStore.create_store_key`), and may
later change the passphrase (:meth:`SecretStore.change_passphrase`). Error messages describe the
situation only; each front-end adds its own advice (an environment variable, a dialog).

This is the only module that imports :mod:`keyring`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import enum
import json
import logging
import os
import re
import secrets as _secrets
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import keyring
import keyring.backend
import keyring.errors
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from keyring.backends import fail as _fail_keyring
from keyring.backends import null as _null_keyring

from tallei_desktop.core.errors import InvalidInput, KeyUnavailable, StoreUnavailable, WrongKey
from tallei_desktop.core.files import replace_file

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = [
    "KEYRING_SERVICE",
    "KEY_FILE_NAME",
    "MIN_PASSPHRASE_LENGTH",
    "TOKEN_SECRET",
    "KeyMethod",
    "SecretStore",
    "StoreKey",
    "random_token",
]

log = logging.getLogger(__name__)

KEYRING_SERVICE: Final = "tallei-desktop"
KEY_FILE_NAME: Final = "tallei.key"
KEY_BYTES: Final = 32
#: The name under which the HTTP bearer token is kept beside the store key.
TOKEN_SECRET: Final = "http-token"
#: The fewest characters a new passphrase may have.
MIN_PASSPHRASE_LENGTH: Final = 8

_LOCK_FILE_NAME: Final = "tallei.key.lock"
_FORMAT_VERSION: Final = 1
_SCRYPT_N: Final = 2**15
_SCRYPT_R: Final = 8
_SCRYPT_P: Final = 1
_SALT_BYTES: Final = 16
_NONCE_BYTES: Final = 12
_TAG_BYTES: Final = 16
# A key file may carry stronger parameters than today's defaults, but never ones that would make
# opening it eat more than 1 GiB of memory.
_SCRYPT_MAX_MEMORY: Final = 2**30
_SCRYPT_MAX_P: Final = 16
# Each sealed value is bound to what it is, so a wrapped secret cannot be passed off as the key.
_AAD_STORE_KEY: Final = b"tallei-desktop/store-key"
_AAD_SECRET_PREFIX: Final = b"tallei-desktop/secret/"
_STORE_KEY_NAME: Final = "store-key"
_SECRET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


class KeyMethod(enum.StrEnum):
    """Where the store key is kept."""

    KEYRING = "keyring"
    PASSPHRASE = "passphrase"


def random_token() -> str:
    """A fresh URL-safe bearer token carrying 256 bits of randomness."""
    return _secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class StoreKey:
    """The raw key that opens the store, and a description of where it came from."""

    key: bytes = field(repr=False)
    source: str

    def __post_init__(self) -> None:
        if len(self.key) != KEY_BYTES:
            raise ValueError(f"a store key is {KEY_BYTES} bytes, not {len(self.key)}")

    def hex(self) -> str:
        """The key as 64 lowercase hex digits, as SQLite3 Multiple Ciphers takes a raw key."""
        return self.key.hex()


class _KeyringDownError(Exception):
    """The keyring failed; the caller falls back to the passphrase."""


class _DamagedError(Exception):
    """The key file does not hold what this module writes; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class _Sealed:
    nonce: bytes
    wrapped: bytes


@dataclass(frozen=True, slots=True)
class _KdfParams:
    n: int
    r: int
    p: int
    salt: bytes


@dataclass(frozen=True, slots=True)
class _KeyFile:
    kdf: _KdfParams
    key: _Sealed
    secrets: Mapping[str, _Sealed]


class SecretStore:
    """Where the store key and other small secrets (the HTTP bearer token) live.

    One instance serves one data folder. ``backend`` replaces the process's default keyring (tests
    pass an in-memory one); the global keyring is never changed. ``passphrase`` guards the key when
    no keyring is usable; an empty passphrase counts as none. Creating a key or a secret takes a
    lock file in the data folder, so processes starting together agree on one key.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        passphrase: str | None = None,
        backend: keyring.backend.KeyringBackend | None = None,
    ) -> None:
        self._data_dir = Path(data_dir).expanduser().resolve()
        self._key_file = self._data_dir / KEY_FILE_NAME
        self._passphrase = _normalised(passphrase) if passphrase else None
        self._backend = backend
        # Why the keyring is not used, once known; ``_keyring_refused`` tells a keyring that exists
        # but failed (locked, its service gone) from one that is simply absent.
        self._keyring_problem: str | None = None
        self._keyring_refused = False
        self._kek: tuple[_KdfParams, bytes] | None = None
        self._store_key: StoreKey | None = None

    @property
    def source(self) -> str:
        """Which source holds the key, in words; may read the keyring once to see that it works."""
        if self._key_file_exists():
            return self._file_source
        backend = self._usable_keyring()
        if backend is not None:
            try:
                self._keyring_get(backend, self._username(_STORE_KEY_NAME))
            except _KeyringDownError:
                pass
            else:
                return _keyring_source(backend)
        if self._passphrase:
            return self._file_source
        return "none (no OS keyring is available and no passphrase was given)"

    def store_key(self, *, create: bool = True) -> StoreKey:
        """Return the store key, creating and persisting one when none exists and ``create`` is set.

        Pass ``create=False`` when a database already exists: a fresh key could never open it.
        Raises :class:`KeyUnavailable` when no source holds the key (or none can take a new one),
        :class:`WrongKey` when the passphrase does not unlock the key file, and
        :class:`StoreUnavailable` when the key file or keyring entry cannot be read or is damaged.
        """
        if self._store_key is None:
            self._store_key = self._find_or_create_key(create=create)
        return self._store_key

    def secret(self, name: str, *, factory: Callable[[], str]) -> str:
        """Return the secret ``name``; if there is none yet, store ``factory()`` and return it.

        ``name`` is lowercase letters, digits and dashes, such as ``"http-token"``; anything else
        is a ``ValueError``. The secret lives where the store key lives. Under a passphrase it is
        kept in the key file, so the store key must exist first (see :meth:`store_key`). Raises as
        :meth:`store_key`.
        """
        _check_name(name)
        if not self._key_file_exists():
            backend = self._usable_keyring()
            if backend is not None:
                try:
                    return self._keyring_secret(backend, name, factory)
                except _KeyringDownError:
                    pass
        return self._file_secret(name, factory, replace=False)

    def replace_secret(self, name: str, value: str) -> None:
        """Store ``value`` as the secret ``name``, replacing any earlier value.

        Raises as :meth:`secret`.
        """
        _check_name(name)
        if not self._key_file_exists():
            backend = self._usable_keyring()
            if backend is not None:
                try:
                    self._keyring_set(backend, self._username(name), value)
                except _KeyringDownError:
                    pass
                else:
                    return
        self._file_secret(name, lambda: value, replace=True)

    def keyring_available(self) -> bool:
        """Whether an OS keyring is usable here: present, and answering a read without failing."""
        backend = self._usable_keyring()
        if backend is None:
            return False
        try:
            self._keyring_get(backend, self._username(_STORE_KEY_NAME))
        except _KeyringDownError:
            return False
        return True

    def key_method(self) -> KeyMethod | None:
        """Where the store key is kept today, or ``None`` when no key exists yet.

        A key file means ``PASSPHRASE`` (it always wins). Otherwise ``KEYRING`` when the keyring
        holds a key for this data folder. ``None`` also when a keyring that might hold the key
        cannot be read (locked, its service gone). Raises :class:`StoreUnavailable` when the data
        folder cannot be examined.
        """
        if self._key_file_exists():
            return KeyMethod.PASSPHRASE
        backend = self._usable_keyring()
        if backend is None:
            return None
        try:
            found = self._keyring_get(backend, self._username(_STORE_KEY_NAME))
        except _KeyringDownError:
            return None
        return KeyMethod.KEYRING if found is not None else None

    def create_store_key(self, method: KeyMethod, passphrase: str | None = None) -> StoreKey:
        """Create and keep a fresh store key where ``method`` says, and return it.

        ``KEYRING`` takes no passphrase; ``PASSPHRASE`` needs a non-empty one, which this instance
        then uses for its secrets too. Raises :class:`InvalidInput` when a key already exists for
        this data folder or the passphrase does not fit the method or is shorter than
        :data:`MIN_PASSPHRASE_LENGTH`, :class:`KeyUnavailable` when
        ``KEYRING`` is asked for and no keyring is usable, and :class:`StoreUnavailable` when the
        key cannot be written. Nothing is written when it raises.
        """
        method = KeyMethod(method)
        if method is KeyMethod.KEYRING and passphrase is not None:
            raise InvalidInput("A store key kept in the OS keyring takes no passphrase.")
        if method is KeyMethod.PASSPHRASE and not passphrase:
            raise InvalidInput("A store key guarded by a passphrase needs a passphrase that is not empty.")
        if method is KeyMethod.PASSPHRASE:
            _require_long_enough(passphrase or "")
        with self._creation_lock():
            if self.key_method() is not None:
                raise InvalidInput(f"A store key already exists for {self._data_dir}; it was left as it is.")
            if method is KeyMethod.KEYRING:
                return self._create_keyring_key()
            self._passphrase = _normalised(passphrase or "")
            self._kek = None
            self._store_key = self._write_new_key_file()
            return self._store_key

    def change_passphrase(self, old: str, new: str) -> None:
        """Guard the store key with ``new`` instead of ``old``, keeping every secret in the key file.

        The key file is replaced in one step: until the new file is durably written, the old
        one stays in place. Raises :class:`WrongKey` when ``old`` does not open the key file,
        :class:`InvalidInput` when the key is not kept under a passphrase or ``new`` is shorter than
        :data:`MIN_PASSPHRASE_LENGTH`, and
        :class:`StoreUnavailable` when the key file is damaged or cannot be written. Nothing is
        changed when it raises.
        """
        if not new:
            raise InvalidInput("The new passphrase is empty; a passphrase that is not empty is needed.")
        _require_long_enough(new)
        if not self._key_file_exists():
            raise InvalidInput(
                f"The store key of {self._data_dir} is not guarded by a passphrase, so there is no "
                "passphrase to change."
            )
        old_passphrase = _normalised(old)
        with self._creation_lock():
            key_file = self._read_key_file()
            old_kek = _derive(key_file.kdf, old_passphrase)
            try:
                key = _open(old_kek, key_file.key, _AAD_STORE_KEY)
            except InvalidTag:
                raise self._wrong_passphrase() from None
            if len(key) != KEY_BYTES:
                raise self._damaged(f"the wrapped key is {len(key)} bytes, not {KEY_BYTES}")
            plain: dict[str, bytes] = {}
            for name, sealed in key_file.secrets.items():
                try:
                    plain[name] = _open(old_kek, sealed, _secret_aad(name))
                except InvalidTag:
                    raise self._damaged(f"the secret '{name}' does not decrypt") from None
            params = _KdfParams(key_file.kdf.n, key_file.kdf.r, key_file.kdf.p, os.urandom(_SALT_BYTES))
            new_passphrase = _normalised(new)
            new_kek = _derive(params, new_passphrase)
            secrets = {name: _seal(new_kek, value, _secret_aad(name)) for name, value in plain.items()}
            self._write_key_file(_KeyFile(params, _seal(new_kek, key, _AAD_STORE_KEY), secrets))
            self._passphrase = new_passphrase
            self._kek = (params, new_kek)
            log.info("Changed the passphrase that guards %s", self._key_file)

    def with_passphrase(self, passphrase: str) -> SecretStore:
        """A new ``SecretStore`` for the same data folder and keyring, using ``passphrase``.

        Nothing is checked or written here: a wrong passphrase shows as :class:`WrongKey` from
        :meth:`store_key`, and the caller may simply try another.
        """
        return SecretStore(self._data_dir, passphrase=passphrase, backend=self._backend)

    @property
    def _file_source(self) -> str:
        return f"passphrase (key file {self._key_file})"

    def _username(self, name: str) -> str:
        return f"{name}:{self._data_dir}"

    def _find_or_create_key(self, *, create: bool) -> StoreKey:
        if self._key_file_exists():
            return self._key_from_file()
        backend = self._usable_keyring()
        if backend is not None:
            try:
                return self._key_from_keyring(backend, create=create)
            except _KeyringDownError:
                pass
        self._require_passphrase()
        if not create:
            raise KeyUnavailable(
                f"No store key was found: there is no key file {self._key_file} and "
                f"{self._keyring_state()}. Unlock the keyring that holds the key, or restore "
                "the key file from a backup, then try again."
            )
        return self._create_key_file()

    def _key_from_keyring(self, backend: keyring.backend.KeyringBackend, *, create: bool) -> StoreKey:
        username = self._username(_STORE_KEY_NAME)
        value = self._keyring_get(backend, username)
        if value is None:
            if not create:
                raise KeyUnavailable(
                    f"The OS keyring ({backend.name}) holds no store key for {self._data_dir}, so "
                    "the existing store cannot be opened. Unlock or restore the keyring that holds "
                    "its key, then try again."
                )
            with self._creation_lock():
                # Another process may have created the key while this one waited for the lock.
                value = self._keyring_get(backend, username)
                if value is None:
                    value = self._set_new_keyring_key(backend, username)
        try:
            key = bytes.fromhex(value)
        except ValueError:
            key = b""
        if len(key) != KEY_BYTES:
            raise StoreUnavailable(
                f"The store key kept in the OS keyring ({backend.name}) for {self._data_dir} is "
                "damaged; Tallei left it untouched. Restore the keyring entry from a backup."
            )
        return StoreKey(key, _keyring_source(backend))

    def _set_new_keyring_key(self, backend: keyring.backend.KeyringBackend, username: str) -> str:
        value = os.urandom(KEY_BYTES).hex()
        self._keyring_set(backend, username, value)
        log.info("Created a new store key in the OS keyring (%s)", backend.name)
        return value

    def _create_keyring_key(self) -> StoreKey:
        """Under the creation lock, with no key anywhere: keep a fresh key in the keyring."""
        backend = self._usable_keyring()
        if backend is None:
            raise KeyUnavailable(f"The store key cannot be kept in the OS keyring: {self._keyring_state()}.")
        try:
            value = self._set_new_keyring_key(backend, self._username(_STORE_KEY_NAME))
        except _KeyringDownError:
            raise KeyUnavailable(
                f"The store key cannot be kept in the OS keyring: {self._keyring_state()}."
            ) from None
        self._store_key = StoreKey(bytes.fromhex(value), _keyring_source(backend))
        return self._store_key

    def _keyring_secret(
        self, backend: keyring.backend.KeyringBackend, name: str, factory: Callable[[], str]
    ) -> str:
        username = self._username(name)
        value = self._keyring_get(backend, username)
        if value is None:
            with self._creation_lock():
                value = self._keyring_get(backend, username)
                if value is None:
                    value = factory()
                    self._keyring_set(backend, username, value)
        return value

    def _usable_keyring(self) -> keyring.backend.KeyringBackend | None:
        """The keyring backend to use, or ``None`` when it is known not to work."""
        if self._keyring_problem is not None:
            return None
        backend = self._backend if self._backend is not None else keyring.get_keyring()
        # These two are what keyring picks when it found nothing: one raises, the other forgets.
        if isinstance(backend, (_fail_keyring.Keyring, _null_keyring.Keyring)):
            self._keyring_problem = f"no OS keyring is available ({backend.name})"
            log.debug("No usable keyring backend: %s", backend)
            return None
        return backend

    def _keyring_get(self, backend: keyring.backend.KeyringBackend, username: str) -> str | None:
        try:
            return backend.get_password(KEYRING_SERVICE, username)
        except keyring.errors.KeyringError as exc:
            self._keyring_failed(backend, exc)
            raise _KeyringDownError from exc

    def _keyring_set(self, backend: keyring.backend.KeyringBackend, username: str, value: str) -> None:
        try:
            backend.set_password(KEYRING_SERVICE, username, value)
        except keyring.errors.KeyringError as exc:
            self._keyring_failed(backend, exc)
            raise _KeyringDownError from exc

    def _keyring_failed(self, backend: keyring.backend.KeyringBackend, exc: Exception) -> None:
        if isinstance(exc, keyring.errors.NoKeyringError):
            self._keyring_problem = f"no OS keyring is available ({backend.name})"
            log.debug("No usable keyring backend: %s", exc)
        else:
            # A keyring that exists but refuses (locked, its service gone) is worth telling about:
            # the person may expect the key to be there.
            self._keyring_problem = f"the OS keyring ({backend.name}) failed: {str(exc).rstrip('.!')}"
            self._keyring_refused = True
            log.warning("The OS keyring (%s) cannot be used, falling back: %s", backend.name, exc)

    def _keyring_state(self) -> str:
        return self._keyring_problem or "the OS keyring holds no key"

    def _require_passphrase(self) -> str:
        if self._passphrase:
            return self._passphrase
        if self._key_file_exists():
            raise KeyUnavailable(
                f"The store key is guarded by a passphrase (key file {self._key_file}) and no "
                "passphrase was given."
            )
        if self._keyring_refused:
            raise KeyUnavailable(
                f"The store key cannot be reached: {self._keyring_problem}, and no passphrase was "
                "given. Unlock the keyring, then try again."
            )
        raise KeyUnavailable("No OS keyring is available on this machine and no passphrase was given.")

    def _key_from_file(self) -> StoreKey:
        key_file = self._read_key_file()
        return StoreKey(self._unwrap_store_key(key_file), self._file_source)

    def _create_key_file(self) -> StoreKey:
        with self._creation_lock():
            if self._key_file_exists():
                return self._key_from_file()
            return self._write_new_key_file()

    def _write_new_key_file(self) -> StoreKey:
        """Under the creation lock, with no key file: write one guarding a fresh key."""
        params = _KdfParams(_SCRYPT_N, _SCRYPT_R, _SCRYPT_P, os.urandom(_SALT_BYTES))
        key = os.urandom(KEY_BYTES)
        sealed = _seal(self._derive_kek(params), key, _AAD_STORE_KEY)
        self._write_key_file(_KeyFile(params, sealed, {}))
        log.info("Created a new passphrase-guarded store key in %s", self._key_file)
        return StoreKey(key, self._file_source)

    def _file_secret(self, name: str, factory: Callable[[], str], *, replace: bool) -> str:
        """Return the key file's secret ``name``; store ``factory()`` if absent or ``replace``."""
        self._require_passphrase()
        if not self._key_file_exists():
            raise KeyUnavailable(
                f"The secret '{name}' is kept beside the store key, and there is no key file "
                f"{self._key_file} yet. Open the store once so its key is created, then try again."
            )
        if not replace:
            found = self._open_secret(self._read_key_file(), name)
            if found is not None:
                return found
        with self._creation_lock():
            key_file = self._read_key_file()
            if replace:
                # Proves the passphrase: a secret sealed under the wrong one could never be read.
                self._unwrap_store_key(key_file)
            else:
                found = self._open_secret(key_file, name)
                if found is not None:
                    return found
            value = factory()
            kek = self._derive_kek(key_file.kdf)
            sealed = _seal(kek, value.encode("utf-8"), _secret_aad(name))
            secrets = {**key_file.secrets, name: sealed}
            self._write_key_file(_KeyFile(key_file.kdf, key_file.key, secrets))
        return value

    def _open_secret(self, key_file: _KeyFile, name: str) -> str | None:
        # Unwrapping the store key first proves the passphrase, so a failure below means damage.
        self._unwrap_store_key(key_file)
        sealed = key_file.secrets.get(name)
        if sealed is None:
            return None
        kek = self._derive_kek(key_file.kdf)
        try:
            plain = _open(kek, sealed, _secret_aad(name))
            return plain.decode("utf-8")
        except (InvalidTag, UnicodeDecodeError):
            raise self._damaged(f"the secret '{name}' does not decrypt") from None

    def _unwrap_store_key(self, key_file: _KeyFile) -> bytes:
        kek = self._derive_kek(key_file.kdf)
        try:
            key = _open(kek, key_file.key, _AAD_STORE_KEY)
        except InvalidTag:
            raise self._wrong_passphrase() from None
        if len(key) != KEY_BYTES:
            raise self._damaged(f"the wrapped key is {len(key)} bytes, not {KEY_BYTES}")
        return key

    def _wrong_passphrase(self) -> WrongKey:
        return WrongKey(f"The passphrase does not open the key file of the store at {self._data_dir}.")

    def _derive_kek(self, params: _KdfParams) -> bytes:
        # scrypt costs about a tenth of a second by design; do it once per instance.
        if self._kek is not None and self._kek[0] == params:
            return self._kek[1]
        kek = _derive(params, self._require_passphrase())
        self._kek = (params, kek)
        return kek

    def _key_file_exists(self) -> bool:
        try:
            self._key_file.stat()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot check for the key file {self._key_file}: {exc.strerror or exc}. "
                "Check the permissions of the data folder."
            ) from exc
        return True

    def _read_key_file(self) -> _KeyFile:
        try:
            raw = self._key_file.read_bytes()
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot read the key file {self._key_file}: {exc.strerror or exc}. Check its permissions."
            ) from exc
        try:
            return _parse_key_file(raw)
        except _DamagedError as exc:
            raise self._damaged(str(exc)) from None

    def _damaged(self, detail: str) -> StoreUnavailable:
        return StoreUnavailable(
            f"The key file {self._key_file} is damaged ({detail}); Tallei left it untouched. "
            "Restore it from a backup, then try again."
        )

    def _write_key_file(self, key_file: _KeyFile) -> None:
        """Replace the key file in one step: a crash leaves the old file or the new, never half.

        Losing the key loses the store, so the rename itself is made durable too.
        """
        try:
            replace_file(self._key_file, _dump_key_file(key_file), mode=0o600)
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot write the key file {self._key_file}: {exc.strerror or exc}. "
                "Check free disk space and the permissions of the data folder."
            ) from exc

    @contextlib.contextmanager
    def _creation_lock(self) -> Iterator[None]:
        """Hold a lock across processes while checking for, then creating, a key or a secret."""
        lock_path = self._data_dir / _LOCK_FILE_NAME
        try:
            self._data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot create the lock file {lock_path}: {exc.strerror or exc}. "
                "Check the permissions of the data folder."
            ) from exc
        try:
            try:
                if sys.platform == "win32":
                    # Waits about ten seconds, then gives up with an OSError.
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                else:
                    fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                raise StoreUnavailable(
                    f"Cannot lock {lock_path}: {exc.strerror or exc}. Another Tallei process may "
                    "be stuck; close it, then try again."
                ) from exc
            try:
                yield
            finally:
                if sys.platform == "win32":
                    # Windows asks for an explicit unlock before close; POSIX drops it on close.
                    os.lseek(fd, 0, os.SEEK_SET)
                    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        finally:
            os.close(fd)


def _keyring_source(backend: keyring.backend.KeyringBackend) -> str:
    return f"OS keyring ({backend.name})"


def _check_name(name: str) -> None:
    if name == _STORE_KEY_NAME or _SECRET_NAME.fullmatch(name) is None:
        raise ValueError(f"not a usable secret name: {name!r}")


def _secret_aad(name: str) -> bytes:
    return _AAD_SECRET_PREFIX + name.encode("ascii")


def _derive(params: _KdfParams, passphrase: str) -> bytes:
    kdf = Scrypt(salt=params.salt, length=KEY_BYTES, n=params.n, r=params.r, p=params.p)
    return kdf.derive(passphrase.encode("utf-8"))


def _require_long_enough(passphrase: str) -> None:
    # Only new passphrases are held to it: a key file made under a shorter one still opens.
    if len(_normalised(passphrase)) < MIN_PASSPHRASE_LENGTH:
        raise InvalidInput(
            f"The passphrase is too short: use at least {MIN_PASSPHRASE_LENGTH} characters; "
            "a few words you will remember are best."
        )


def _normalised(passphrase: str) -> str:
    # The same passphrase typed on another system must derive the same key.
    return unicodedata.normalize("NFC", passphrase)


def _seal(kek: bytes, plain: bytes, aad: bytes) -> _Sealed:
    nonce = os.urandom(_NONCE_BYTES)
    return _Sealed(nonce, AESGCM(kek).encrypt(nonce, plain, aad))


def _open(kek: bytes, sealed: _Sealed, aad: bytes) -> bytes:
    return AESGCM(kek).decrypt(sealed.nonce, sealed.wrapped, aad)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _dump_key_file(key_file: _KeyFile) -> bytes:
    document = {
        "version": _FORMAT_VERSION,
        "kdf": "scrypt",
        "n": key_file.kdf.n,
        "r": key_file.kdf.r,
        "p": key_file.kdf.p,
        "salt": _b64(key_file.kdf.salt),
        "nonce": _b64(key_file.key.nonce),
        "wrapped": _b64(key_file.key.wrapped),
        "secrets": {
            name: {"nonce": _b64(sealed.nonce), "wrapped": _b64(sealed.wrapped)}
            for name, sealed in sorted(key_file.secrets.items())
        },
    }
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def _parse_key_file(raw: bytes) -> _KeyFile:
    """Parse and check a key file; raises :class:`_DamagedError` naming the first problem found."""
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _DamagedError("it is not JSON") from None
    if not isinstance(document, dict):
        raise _DamagedError("it is not a JSON object")
    if document.get("version") != _FORMAT_VERSION:
        raise _DamagedError(f"unknown version {document.get('version')!r}")
    if document.get("kdf") != "scrypt":
        raise _DamagedError(f"unknown kdf {document.get('kdf')!r}")
    n, r, p = (_field_int(document, name) for name in ("n", "r", "p"))
    too_costly = 128 * n * r > _SCRYPT_MAX_MEMORY or p > _SCRYPT_MAX_P
    if n <= 1 or n & (n - 1) or r < 1 or p < 1 or too_costly:
        raise _DamagedError(f"unusable scrypt parameters n={n}, r={r}, p={p}")
    params = _KdfParams(n, r, p, _field_bytes(document, "salt", _SALT_BYTES))
    secrets = document.get("secrets", {})
    if not isinstance(secrets, dict):
        raise _DamagedError("'secrets' is not a JSON object")
    sealed_secrets: dict[str, _Sealed] = {}
    for name, entry in secrets.items():
        if not isinstance(entry, dict) or _SECRET_NAME.fullmatch(name) is None:
            raise _DamagedError(f"the secret {name!r} is malformed")
        sealed_secrets[name] = _field_sealed(entry)
    return _KeyFile(params, _field_sealed(document), sealed_secrets)


def _field_int(document: dict[str, object], name: str) -> int:
    value = document.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _DamagedError(f"'{name}' is not an integer")
    return value


def _field_bytes(document: dict[str, object], name: str, length: int | None = None) -> bytes:
    value = document.get(name)
    if not isinstance(value, str):
        raise _DamagedError(f"'{name}' is missing")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _DamagedError(f"'{name}' is not base64") from None
    if length is not None and len(data) != length:
        raise _DamagedError(f"'{name}' is {len(data)} bytes, not {length}")
    return data


def _field_sealed(document: dict[str, object]) -> _Sealed:
    nonce = _field_bytes(document, "nonce", _NONCE_BYTES)
    wrapped = _field_bytes(document, "wrapped")
    # AES-GCM appends its tag; anything shorter was cut off.
    if len(wrapped) < _TAG_BYTES:
        raise _DamagedError("'wrapped' is truncated")
    return _Sealed(nonce, wrapped)
