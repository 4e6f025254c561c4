"""Settings: built-in defaults < ``config.toml`` < ``TALLEI_*`` environment variables < flags.

This is the only module that reads ``os.environ``. Nothing happens at import time: call
:func:`load_settings` from the entry point and pass the result down.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tallei_desktop.core.errors import InvalidInput, KnownError
from tallei_desktop.core.files import replace_file

__all__ = ["Settings", "default_config_path", "dump_toml", "has_display", "load_settings", "save_settings"]

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
    start_at_login: bool = False
    notify_conflicts: bool = True
    export_passphrase: str | None = None  # encrypts exports; else passphrase; else asked on a terminal
    backup_keep: int = 7
    #: Where the running app's key-holder socket lives: a folder only this user can open.
    runtime_dir: Path | None = None

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
    "TALLEI_START_AT_LOGIN": "start_at_login",
    "TALLEI_NOTIFY_CONFLICTS": "notify_conflicts",
    "TALLEI_EXPORT_PASSPHRASE": "export_passphrase",
    "TALLEI_BACKUP_KEEP": "backup_keep",
    "TALLEI_RUNTIME_DIR": "runtime_dir",
}

_PATHS = {"data_dir", "log_dir", "model_dir", "model_cache_dir", "runtime_dir"}
_INTS = {
    "short_term_days",
    "preference_budget",
    "long_term_budget",
    "short_term_budget",
    "http_port",
    "backup_keep",
}
_BOOLS = {"allow_model_download", "start_at_login", "notify_conflicts"}


def has_display(environ: Mapping[str, str] | None = None, *, platform: str | None = None) -> bool:
    """Whether a desktop can show windows: on Linux and the BSDs, an X11 or Wayland display is set."""
    env = os.environ if environ is None else environ
    system = platform or sys.platform
    if system.startswith(("win", "darwin")):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


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
    if settings.runtime_dir is None:
        settings = replace(settings, runtime_dir=_runtime_dir(env, dirs))
    return _with_bundled_model(settings)


def _runtime_dir(env: Mapping[str, str], dirs: Any) -> Path:
    """The per-user runtime folder: XDG_RUNTIME_DIR on Linux; elsewhere, or without one, a private folder."""
    if sys.platform.startswith("linux") and env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / APP_NAME
    if sys.platform == "darwin":
        return Path(dirs.user_runtime_dir)
    if sys.platform == "win32":
        return Path(dirs.user_runtime_dir)
    # No runtime folder: a folder of the user's own under the temporary folder, made private on use.
    import tempfile

    return Path(tempfile.gettempdir()) / f"{APP_NAME}-{os.getuid()}"


def _with_bundled_model(settings: Settings) -> Settings:
    """Use the model built into an offline bundle when no folder was chosen and it is the one asked for."""
    from tallei_desktop.app.paths import bundled_model_dir

    default_name = next(f.default for f in fields(Settings) if f.name == "model_name")
    if settings.model_dir is not None or settings.model_name != default_name:
        return settings
    bundled = bundled_model_dir()
    return settings if bundled is None else replace(settings, model_dir=bundled)


def save_settings(changes: Mapping[str, object], *, config_path: Path | None = None) -> Path:
    """Write ``changes`` into the settings file and return its path; change nothing on bad input.

    Each value is checked as :func:`load_settings` checks it (``InvalidInput`` names the first bad
    one); ``None`` removes the setting so its default applies again. The passphrase is never
    written. Every other entry already in the file, known or not, keeps its value and order;
    comments are not kept. The file is replaced in one step (a temporary file in the same folder,
    flushed to disk, then renamed) and is readable by its owner only. Raises ``KnownError`` when
    the folder or file cannot be written.
    """
    path = config_path or default_config_path()
    known = {f.name for f in fields(Settings)}
    updates: dict[str, object] = {}
    for name, value in changes.items():
        if name in _SECRETS:
            raise InvalidInput("A passphrase is never written to the settings file.")
        if name not in known:
            raise InvalidInput(f"Unknown setting {name!r}.")
        if value is None:
            updates[name] = None
            continue
        coerced = _coerce(name, str(value) if isinstance(value, Path) else value, str(path))
        updates[name] = str(coerced) if isinstance(coerced, Path) else coerced

    table: dict[str, Any] = {}
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InvalidInput(f"Cannot read the settings file {path}: {exc}. Fix or remove it.") from None
    for name, value in updates.items():
        if value is None:
            table.pop(name, None)
        else:
            table[name] = value
    _write_atomically(path, dump_toml(table).encode("utf-8"))
    return path


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_file(path, data, mode=0o600)
    except OSError as exc:
        raise KnownError(
            f"Cannot write the settings file {path}: {exc.strerror or exc}. "
            "Check free disk space and the permissions of its folder."
        ) from exc


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def dump_toml(table: Mapping[str, object]) -> str:
    """A TOML document holding ``table``'s flat entries, in order, that ``tomllib`` reads back equal.

    Values may be text, whole numbers, floats, booleans, or lists of these. Nested tables and
    dates are not needed by the settings file: they raise ``InvalidInput``.
    """
    return "".join(f"{_toml_key(key)} = {_toml_value(key, value)}\n" for key, value in table.items())


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_value(key: str, value: object) -> str:
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(key, item) for item in value) + "]"
    raise InvalidInput(f"The setting {key!r} holds a {type(value).__name__}, which Tallei cannot write.")
