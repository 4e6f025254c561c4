"""Keyring backends for tests, handed to ``SecretStore(backend=...)`` instead of the OS keyring.

keyring registers every backend class it sees as a candidate for its own default. Both classes here
say ``viable = False`` so that defining them never changes what ``keyring.get_keyring()`` picks.
"""

from __future__ import annotations

import keyring.backend
import keyring.errors

__all__ = ["BrokenKeyring", "MemoryKeyring"]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A working keyring that keeps its passwords in a dict for the life of the instance."""

    priority = 1
    viable = False

    # keyring's own __init__ only copies KEYRING_PROPERTY_* variables from the environment, which
    # the tests must not depend on; neither class calls it.
    def __init__(self) -> None:
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[service, username] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.passwords[service, username]
        except KeyError:
            raise keyring.errors.PasswordDeleteError(f"no password for {username!r}") from None


class BrokenKeyring(keyring.backend.KeyringBackend):
    """A keyring whose every call raises ``error`` (by default, that there is no keyring).

    Unlike keyring's own ``fail.Keyring`` it is not recognisable by its type, so it proves that
    failures raised from calls are handled too. Pass ``keyring.errors.KeyringLocked(...)`` to act
    as a locked keyring.
    """

    priority = 1
    viable = False

    def __init__(self, error: keyring.errors.KeyringError | None = None) -> None:
        self.error = error or keyring.errors.NoKeyringError("no keyring backend (test)")
        self.calls = 0

    def get_password(self, service: str, username: str) -> str | None:
        self.calls += 1
        raise self.error

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls += 1
        raise self.error

    def delete_password(self, service: str, username: str) -> None:
        self.calls += 1
        raise self.error
