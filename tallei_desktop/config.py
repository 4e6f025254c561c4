"""Settings: built-in defaults < ``config.toml`` < ``TALLEI_*`` environment variables < flags.

This is the only module that reads ``os.environ``. Nothing happens at import time: call
:func:`load_settings` from the entry point and pass the result down.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tallei_desktop.core.errors import InvalidInput

__all__ = ["Settings", "default_config_path", "load_settings"]

APP_NAME = "tallei-desktop"


def _platform_dirs() -> Any:
    import platformdirs

    return platformdirs.PlatformDirs(APP_NAME, appauthor=False)


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path
    log_dir: Path
    model_dir: Path | None = None
    model_name: str = "sentence-transformers/all-MiniLM-L6-v2"
    model_cache_dir: Path | None = None
    allow_model_download: bool = True
    passphrase: str | None = None
    short_term_days: int = 60
    preference_budget: int = 1_500
    long_term_budget: int = 4_800
    short_term_budget: int = 1_700
    http_host: str = "127.0.0.1"
    http_port: int = 8765
    export_passphrase: str | None = None  # encrypts exports; else passphrase; else asked on a terminal
    backup_keep: int = 7

    @property
    def db_path(self) -> Path:
        return self.data_dir / "tallei.db"

    def __repr__(self) -> str:  # never print a passphrase
        shown = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _SECRETS}
        secrets = ", ".join(f"{name}={'set' if getattr(self, name) else 'unset'}" for name in _SECRETS)
        return f"Settings({shown}, {secrets})"


_SECRETS = ("passphrase", "export_passphrase")

_ENV: dict[str, str] = {
    "TALLEI_DATA_DIR": "data_dir",
    "TALLEI_LOG_DIR": "log_dir",
    "TALLEI_MODEL_DIR": "model_dir",
    "TALLEI_MODEL_NAME": "model_name",
    "TALLEI_MODEL_CACHE_DIR": "model_cache_dir",
    "TALLEI_ALLOW_MODEL_DOWNLOAD": "allow_model_download",
    "TALLEI_PASSPHRASE": "passphrase",
    "TALLEI_SHORT_TERM_DAYS": "short_term_days",
    "TALLEI_HTTP_HOST": "http_host",
    "TALLEI_HTTP_PORT": "http_port",
    "TALLEI_EXPORT_PASSPHRASE": "export_passphrase",
    "TALLEI_BACKUP_KEEP": "backup_keep",
}

_PATHS = {"data_dir", "log_dir", "model_dir", "model_cache_dir"}
_INTS = {
    "short_term_days",
    "preference_budget",
    "long_term_budget",
    "short_term_budget",
    "http_port",
    "backup_keep",
}
_BOOLS = {"allow_model_download"}


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if "TALLEI_CONFIG" in env:
        return Path(env["TALLEI_CONFIG"]).expanduser()
    return Path(_platform_dirs().user_config_dir) / "config.toml"


def _coerce(name: str, value: object, origin: str) -> object:
    if name in _PATHS:
        if not isinstance(value, str) or not value:
            raise InvalidInput(f"{origin}: {name} must be a folder path.")
        return Path(value).expanduser()
    if name in _INTS:
        try:
            number = int(str(value))
        except ValueError:
            raise InvalidInput(f"{origin}: {name} must be a whole number, not {value!r}.") from None
        if number <= 0 or (name == "http_port" and number > 65535):
            raise InvalidInput(f"{origin}: {name} is out of range ({number}).")
        return number
    if name in _BOOLS:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off"}:
            return False
        raise InvalidInput(f"{origin}: {name} must be true or false, not {value!r}.")
    if not isinstance(value, str):
        raise InvalidInput(f"{origin}: {name} must be text.")
    return value


def load_settings(
    *,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Settings:
    """Merge defaults, the TOML file, the environment and explicit overrides (flags), in that order."""
    env = os.environ if environ is None else environ
    dirs = _platform_dirs()
    values: dict[str, object] = {
        "data_dir": Path(dirs.user_data_dir),
        "log_dir": Path(dirs.user_log_dir),
    }
    known = {f.name for f in fields(Settings)}

    path = config_path or default_config_path(env)
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InvalidInput(f"Cannot read the settings file {path}: {exc}. Fix or remove it.") from None
        for key, value in table.items():
            if key not in known or key in _SECRETS:
                raise InvalidInput(f"{path}: unknown setting {key!r}.")
            values[key] = _coerce(key, value, str(path))

    for var, name in _ENV.items():
        raw = env.get(var)
        if raw:
            values[name] = _coerce(name, raw, var)

    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = _coerce(name, str(value) if isinstance(value, Path) else value, f"--{name}")

    settings = Settings(**values)  # type: ignore[arg-type]
    if settings.model_cache_dir is None:
        settings = replace(settings, model_cache_dir=Path(dirs.user_cache_dir) / "models")
    return settings
