"""The engine's public API: everything the front-ends (CLI, MCP server, GUI, app) may use.

Front-ends import from ``tallei_desktop.core`` only, never from its inner modules; a test checks it.

The errors and the models are plain Python and load with the package. The rest (the service, the
store, embeddings, keys) pulls in numpy, apsw, cryptography or keyring, so each of those names is
imported on first use: ``from tallei_desktop.core import KnownError`` must stay cheap, because a
starting ``tallei-desktop mcp`` answers its client before any of them is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tallei_desktop.core.errors import (
    BugError,
    InvalidInput,
    KeyUnavailable,
    KnownError,
    ModelUnavailable,
    NotFound,
    StoreBusy,
    StoreDamaged,
    StoreLocked,
    StoreUnavailable,
    TalleiError,
    WrongKey,
)
from tallei_desktop.core.files import replace_file, sync_folder
from tallei_desktop.core.models import (
    APP_PLATFORM,
    CHOSEN_RESOLUTIONS,
    MAX_CONTENT_BYTES,
    Bucket,
    ChangeBatch,
    ChangeEvent,
    Confidence,
    Conflict,
    ConflictResolution,
    ConflictStatus,
    EventKind,
    Memory,
    MemoryFilter,
    MemoryHistory,
    MemoryPage,
    MemoryStatus,
    MemoryType,
    PlatformUsage,
    Provenance,
    RecallItem,
    RecallMode,
    RecallResult,
    SaveResult,
    SearchHit,
    SortKey,
    StoreStatus,
    bucket_for,
    confidence_for,
)

if TYPE_CHECKING:
    from tallei_desktop.core.backups import (
        BackupInfo,
        RestoreResult,
        backups_dir,
        list_backups,
        newest_backup,
        restore_backup,
    )
    from tallei_desktop.core.classify import classify as classify_text
    from tallei_desktop.core.embeddings import (
        DEFAULT_MODEL,
        DIM,
        Embedder,
        FastEmbedEmbedder,
        FloatArray,
        ModelState,
        ModelStatus,
        NullEmbedder,
    )
    from tallei_desktop.core.exports import (
        ImportReport,
        decode_export,
        encode_export,
        is_encrypted,
        write_new_file,
    )
    from tallei_desktop.core.keys import (
        KEY_FILE_NAME,
        KEYRING_SERVICE,
        MIN_PASSPHRASE_LENGTH,
        TOKEN_SECRET,
        KeyMethod,
        SecretStore,
        StoreKey,
        random_token,
    )
    from tallei_desktop.core.recall import Budgets, estimate_tokens, items_cost
    from tallei_desktop.core.service import Clock, MemoryService
    from tallei_desktop.core.store.database import Database
    from tallei_desktop.core.validate import MAX_QUERY_CHARS

__all__ = [
    "APP_PLATFORM",
    "CHOSEN_RESOLUTIONS",
    "DEFAULT_MODEL",
    "DIM",
    "KEYRING_SERVICE",
    "KEY_FILE_NAME",
    "MAX_CONTENT_BYTES",
    "MAX_QUERY_CHARS",
    "MIN_PASSPHRASE_LENGTH",
    "TOKEN_SECRET",
    "BackupInfo",
    "Bucket",
    "Budgets",
    "BugError",
    "ChangeBatch",
    "ChangeEvent",
    "Clock",
    "Confidence",
    "Conflict",
    "ConflictResolution",
    "ConflictStatus",
    "Database",
    "Embedder",
    "EventKind",
    "FastEmbedEmbedder",
    "FloatArray",
    "ImportReport",
    "InvalidInput",
    "KeyMethod",
    "KeyUnavailable",
    "KnownError",
    "Memory",
    "MemoryFilter",
    "MemoryHistory",
    "MemoryPage",
    "MemoryService",
    "MemoryStatus",
    "MemoryType",
    "ModelState",
    "ModelStatus",
    "ModelUnavailable",
    "NotFound",
    "NullEmbedder",
    "PlatformUsage",
    "Provenance",
    "RecallItem",
    "RecallMode",
    "RecallResult",
    "RestoreResult",
    "SaveResult",
    "SearchHit",
    "SecretStore",
    "SortKey",
    "StoreBusy",
    "StoreDamaged",
    "StoreKey",
    "StoreLocked",
    "StoreStatus",
    "StoreUnavailable",
    "TalleiError",
    "WrongKey",
    "backups_dir",
    "bucket_for",
    "classify_text",
    "confidence_for",
    "decode_export",
    "encode_export",
    "estimate_tokens",
    "is_encrypted",
    "items_cost",
    "list_backups",
    "newest_backup",
    "random_token",
    "replace_file",
    "restore_backup",
    "sync_folder",
    "write_new_file",
]

#: The names loaded on first use, and the inner module each comes from.
_LAZY: dict[str, str] = {
    "DEFAULT_MODEL": "embeddings",
    "DIM": "embeddings",
    "Embedder": "embeddings",
    "FastEmbedEmbedder": "embeddings",
    "FloatArray": "embeddings",
    "ModelState": "embeddings",
    "ModelStatus": "embeddings",
    "NullEmbedder": "embeddings",
    "KEYRING_SERVICE": "keys",
    "KEY_FILE_NAME": "keys",
    "MIN_PASSPHRASE_LENGTH": "keys",
    "TOKEN_SECRET": "keys",
    "KeyMethod": "keys",
    "SecretStore": "keys",
    "StoreKey": "keys",
    "random_token": "keys",
    "Budgets": "recall",
    "estimate_tokens": "recall",
    "classify_text": "classify",
    "MAX_QUERY_CHARS": "validate",
    "items_cost": "recall",
    "Clock": "service",
    "MemoryService": "service",
    "Database": "store.database",
    "BackupInfo": "backups",
    "RestoreResult": "backups",
    "backups_dir": "backups",
    "list_backups": "backups",
    "newest_backup": "backups",
    "restore_backup": "backups",
    "ImportReport": "exports",
    "decode_export": "exports",
    "encode_export": "exports",
    "is_encrypted": "exports",
    "write_new_file": "exports",
}


#: Exported names that differ from the inner module's.
_INNER_NAMES = {"classify_text": "classify"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # A name the package also holds as a submodule is exported under another one: once that
    # submodule is imported, Python sets the package attribute to it, hiding the function.
    value = getattr(importlib.import_module(f"{__name__}.{module}"), _INNER_NAMES.get(name, name))
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
