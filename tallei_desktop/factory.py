"""Builds the one MemoryService a process uses, from Settings. Called by the CLI and the GUI."""

from __future__ import annotations

import logging
from typing import Literal

from tallei_desktop.config import Settings
from tallei_desktop.core import (
    Budgets,
    Database,
    Embedder,
    FastEmbedEmbedder,
    KeyMethod,
    KeyUnavailable,
    MemoryService,
    SecretStore,
    StoreKey,
    StoreLocked,
    WrongKey,
    backups_dir,
)

__all__ = ["build_embedder", "build_secrets", "build_service", "store_key", "unlock_need"]

log = logging.getLogger(__name__)


def build_secrets(settings: Settings) -> SecretStore:
    return SecretStore(settings.data_dir, passphrase=settings.passphrase)


def unlock_need(
    settings: Settings, *, secrets: SecretStore | None = None
) -> Literal["ready", "passphrase", "create"]:
    """What opening the store needs from the person before :func:`build_service` can succeed.

    - ``"ready"``: the key is at hand (in the OS keyring, or opened by the passphrase in
      ``settings``).
    - ``"passphrase"``: the key is guarded by a passphrase and none that opens it was given;
      ask for one and pass it as ``build_service(..., passphrase=...)``.
    - ``"create"``: there is no store and no key yet; let the person choose where the key is
      kept, then call ``secrets.create_store_key(...)`` and pass those secrets to
      ``build_service``.

    Raises :class:`KeyUnavailable` when a store exists but its key cannot be found (a locked or
    emptied keyring), and :class:`StoreUnavailable` when the key file cannot be read.
    """
    secrets = secrets or build_secrets(settings)
    method = secrets.key_method()
    if method is None:
        if settings.db_path.exists():
            # Raises, naming what is missing: a fresh key could never open the existing store.
            secrets.store_key(create=False)
            return "ready"
        return "create"
    if method is KeyMethod.KEYRING:
        return "ready"
    try:
        secrets.store_key(create=False)
    except (KeyUnavailable, WrongKey):  # no passphrase given, or not the right one
        return "passphrase"
    return "ready"


def build_embedder(settings: Settings) -> FastEmbedEmbedder:
    return FastEmbedEmbedder(
        settings.model_name,
        model_dir=settings.model_dir,
        cache_dir=settings.model_cache_dir,
        allow_download=settings.allow_model_download,
    )


def build_service(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    secrets: SecretStore | None = None,
    background: bool = True,
    preload_model: bool = True,
    passphrase: str | None = None,
    use_agent: bool = False,
) -> MemoryService:
    """Unlock and open the store, and (by default) start the background worker and model load.

    ``passphrase``, when given, is tried instead of the one in ``settings`` (a person typed it);
    a wrong one raises :class:`WrongKey` and changes nothing, so the caller may ask again. An
    existing store is never given a fresh key: if its key cannot be found, this fails with
    :class:`KeyUnavailable` instead of creating a key that could not open it anyway.

    ``use_agent`` is for programs launched by an assistant (see :func:`store_key`): on a
    passphrase store with no passphrase given, the key comes from the running tray app, and
    :class:`StoreLocked` says when it is not running or still locked.
    """
    secrets = secrets or build_secrets(settings)
    if passphrase is not None:
        secrets = secrets.with_passphrase(passphrase)
    exists = settings.db_path.exists()
    key = store_key(settings, secrets, create=not exists, use_agent=use_agent)
    db = Database(settings.db_path, key.key, key_source=key.source)
    if embedder is None:
        real = build_embedder(settings)
        if preload_model:
            real.preload_in_background()
        embedder = real
    service = MemoryService(
        db,
        embedder,
        budgets=Budgets(
            preference=settings.preference_budget,
            long_term=settings.long_term_budget,
            short_term=settings.short_term_budget,
            short_term_days=settings.short_term_days,
        ),
    )
    if background:
        # Every long-running process offers to back up; the files decide, so it is one a day in all.
        service.configure_backups(backups_dir(settings.db_path), keep=settings.backup_keep)
        service.start_background()
    return service


def store_key(settings: Settings, secrets: SecretStore, *, create: bool, use_agent: bool) -> StoreKey:
    """The store key from the keyring or the passphrase; failing both, from the running app.

    The app is asked only when ``use_agent`` is set, the key is guarded by a passphrase and none
    was given (``TALLEI_PASSPHRASE`` wins: a person who set it meant it). Raises as
    :meth:`SecretStore.store_key`, and :class:`StoreLocked` when the app cannot give the key now.
    """
    try:
        return secrets.store_key(create=create)
    except KeyUnavailable:
        if not use_agent or settings.passphrase or secrets.key_method() is not KeyMethod.PASSPHRASE:
            raise
    from tallei_desktop.app.key_agent import NOT_RUNNING_MESSAGE, fetch_key

    if settings.runtime_dir is None:
        raise StoreLocked(NOT_RUNNING_MESSAGE)
    return fetch_key(settings.runtime_dir, settings.data_dir)
