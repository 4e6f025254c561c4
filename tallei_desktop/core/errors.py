"""One exception tree for the whole program.

::

    TalleiError
    ├── KnownError            the environment's fault or the caller's: show it and carry on
    │   ├── InvalidInput      bad arguments (empty text, unknown type, over-long content …)
    │   ├── NotFound          an id that names no memory or conflict
    │   ├── KeyUnavailable    no key: keyring empty/locked and no passphrase given
    │   │   └── StoreLocked   the key is held by the Tallei app, which is not running or not unlocked
    │   ├── WrongKey          the key or passphrase does not open this store
    │   ├── StoreBusy         another process held the write lock for too long
    │   ├── StoreUnavailable  the file cannot be opened or written (disk full, permissions …)
    │   │   └── StoreDamaged  the file fails the cipher's page check; names the newest backup
    │   └── ModelUnavailable  the embedding model cannot be loaded
    └── BugError              our mistake: log the traceback, report it

Messages say what failed, why, and what to do, in one or two plain sentences.
"""

from __future__ import annotations

__all__ = [
    "BugError",
    "InvalidInput",
    "KeyUnavailable",
    "KnownError",
    "ModelUnavailable",
    "NotFound",
    "StoreBusy",
    "StoreDamaged",
    "StoreLocked",
    "StoreUnavailable",
    "TalleiError",
    "WrongKey",
]


class TalleiError(Exception):
    """Root of every error Tallei raises on purpose."""


class KnownError(TalleiError):
    """An expected failure with a message meant for the person or the host model."""


class InvalidInput(KnownError):
    """The caller passed something the store will not accept; nothing was changed."""


class NotFound(KnownError):
    """The id names no memory (or conflict) in this store."""


class KeyUnavailable(KnownError):
    """The store key cannot be obtained from any source."""


class StoreLocked(KeyUnavailable):
    """The store key is guarded by a passphrase and the app that holds it is not running or locked.

    Unlike other missing keys, this one may be there a moment later: ask again on the next call.
    """


class WrongKey(KnownError):
    """The key or passphrase that was found does not decrypt the store."""


class StoreBusy(KnownError):
    """Another process kept the store locked for longer than the busy timeout."""


class StoreUnavailable(KnownError):
    """The store file cannot be opened, read or written."""


class StoreDamaged(StoreUnavailable):
    """The store file is damaged (a page fails authentication); restoring a backup is the way back."""


class ModelUnavailable(KnownError):
    """The embedding model could not be loaded; semantic search is off."""


class BugError(TalleiError):
    """An internal invariant was broken. Always a bug in Tallei."""
