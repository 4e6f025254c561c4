"""The running, unlocked tray app holds the store key for programs an assistant launches.

Where no OS keyring exists the store key is guarded by a passphrase, which the person types once,
in the tray app. The stdio MCP server that Claude Desktop starts, and the browser's native host,
cannot ask anyone for it, and writing the passphrase into a client's settings file would leave it
lying in plain text. So, as ssh-agent does, the tray app answers on a local socket that only its
user can open, and a launched program that finds no keyring entry and no ``TALLEI_PASSPHRASE``
asks it for the key.

The socket is a Unix domain socket, mode 0600, in a folder of the user's own with mode 0700 (the
user's runtime folder). The server also checks the peer's user id where the OS tells it
(``SO_PEERCRED`` on Linux), and a client refuses a socket or folder that another user could open.
One socket per data folder (its name is a hash of the folder), so two stores never answer for
each other. The protocol is one JSON line each way::

    → {"op": "key", "data_dir": "/home/ana/.local/share/tallei-desktop"}
    ← {"status": "unlocked", "key": "<64 hex digits>"}   or   {"status": "locked"}

Windows has no Unix domain sockets that ``socket`` offers everywhere and always has a keyring
(Credential Manager), so there the agent is not started and :func:`fetch_key` says the store is
locked; a passphrase store on Windows needs ``TALLEI_PASSPHRASE`` for launched programs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tallei_desktop.core import KEY_FILE_NAME, KeyUnavailable, StoreKey, StoreLocked

if TYPE_CHECKING:
    from tallei_desktop.config import Settings

__all__ = [
    "LOCKED_MESSAGE",
    "NOT_RUNNING_MESSAGE",
    "KeyAgent",
    "agent_available",
    "connect_note",
    "fetch_key",
    "socket_path",
]

log = logging.getLogger(__name__)

#: What a launched program answers while the app runs but has not been unlocked yet.
LOCKED_MESSAGE: Final = "Tallei is locked: open the Tallei app and unlock it, then try again."
#: What a launched program answers when no app holds the key.
NOT_RUNNING_MESSAGE: Final = (
    "Tallei is locked: open the Tallei app and unlock it, then try again (the app is not running)."
)

_MAX_LINE: Final = 4_096
_TIMEOUT_S: Final = 5.0
#: sun_path holds 108 bytes on Linux and 104 on macOS, the terminating zero included.
_MAX_SOCKET_PATH: Final = 103


def agent_available() -> bool:
    """Whether this OS offers the agent (Unix domain sockets)."""
    return hasattr(socket, "AF_UNIX") and sys.platform != "win32"


def socket_path(runtime_dir: Path, data_dir: Path) -> Path:
    """The agent's socket for ``data_dir``, inside ``runtime_dir``."""
    digest = hashlib.sha256(str(Path(data_dir).expanduser().resolve()).encode()).hexdigest()[:16]
    return Path(runtime_dir) / f"agent-{digest}.sock"


def connect_note(settings: Settings) -> str | None:
    """What an assistant connected now will need to reach a passphrase-guarded store, or None.

    A store whose key is in the OS keyring needs nothing. One guarded by a passphrase is reached
    through the running app, and the person should know that before the assistant first fails.
    """
    if not (settings.data_dir / KEY_FILE_NAME).exists():
        return None
    if not agent_available():
        return (
            "Your memories are guarded by a passphrase, and on this system an assistant can only open "
            "them with TALLEI_PASSPHRASE set in its environment."
        )
    return (
        "Your memories are guarded by a passphrase, which is not written into the assistant's settings: "
        "the assistant reaches them while the Tallei app is running and unlocked."
    )


class KeyAgent:
    """The tray app's side: answers for one data folder; locked until :meth:`unlock` is called.

    :meth:`start` binds the socket (refusing to replace one a live agent answers on) and serves on
    a daemon thread; :meth:`stop` closes and removes it. Safe to call from any thread.
    """

    def __init__(self, runtime_dir: Path, data_dir: Path) -> None:
        self._runtime_dir = Path(runtime_dir)
        self._data_dir = Path(data_dir).expanduser().resolve()
        self.path = socket_path(self._runtime_dir, self._data_dir)
        self._key: StoreKey | None = None
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> KeyAgent:
        """Bind and serve. Raises :class:`KeyUnavailable` when the socket cannot be made private."""
        _private_folder(self._runtime_dir)
        if len(os.fsencode(self.path)) > _MAX_SOCKET_PATH:
            raise KeyUnavailable(f"The key-holder socket path {self.path} is too long for this system.")
        if self.path.exists() or self.path.is_symlink():
            if _answers(self.path):
                raise KeyUnavailable(f"Another Tallei app already holds the key at {self.path}.")
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        sock.listen(8)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="tallei-key-agent", daemon=True)
        self._thread.start()
        log.info("Holding the store key for launched programs at %s", self.path)
        return self

    def unlock(self, key: StoreKey) -> None:
        with self._lock:
            self._key = key

    def lock(self) -> None:
        with self._lock:
            self._key = None

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        if self._thread is not None:
            self._thread.join(2.0)

    def _serve(self) -> None:
        while True:
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed by stop()
            with conn:
                try:
                    self._answer(conn)
                except (OSError, ValueError) as exc:
                    log.debug("A key request went unanswered: %s", exc)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(_TIMEOUT_S)
        if not _same_user(conn):
            log.warning("Refused a key request from another user")
            return
        request = json.loads(_read_line(conn))
        if not isinstance(request, dict) or request.get("op") != "key":
            _send(conn, {"status": "error", "message": "unknown request"})
            return
        asked = Path(str(request.get("data_dir", ""))).expanduser().resolve()
        with self._lock:
            key = self._key
        if asked != self._data_dir:
            _send(conn, {"status": "other-store"})
        elif key is None:
            _send(conn, {"status": "locked"})
        else:
            _send(conn, {"status": "unlocked", "key": key.hex()})


def fetch_key(runtime_dir: Path, data_dir: Path, *, timeout: float = _TIMEOUT_S) -> StoreKey:
    """Ask the running app for the store key of ``data_dir``.

    Raises :class:`StoreLocked` when no app answers or it is still locked (the caller may simply
    try again later), and :class:`KeyUnavailable` when the socket or its folder could be opened by
    another user, in which case it is not used at all.
    """
    path = socket_path(Path(runtime_dir), Path(data_dir))
    if not agent_available():
        raise StoreLocked(NOT_RUNNING_MESSAGE)
    try:
        _check_private(path)
    except FileNotFoundError:
        raise StoreLocked(NOT_RUNNING_MESSAGE) from None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with sock:
            sock.connect(str(path))
            _send(sock, {"op": "key", "data_dir": str(Path(data_dir).expanduser().resolve())})
            answer = json.loads(_read_line(sock))
    except (ConnectionRefusedError, FileNotFoundError):
        raise StoreLocked(NOT_RUNNING_MESSAGE) from None
    except (OSError, ValueError) as exc:
        log.warning("The Tallei app did not answer for the key: %s", exc)
        raise StoreLocked(NOT_RUNNING_MESSAGE) from None
    status = answer.get("status") if isinstance(answer, dict) else None
    if status == "unlocked":
        try:
            return StoreKey(bytes.fromhex(str(answer["key"])), f"the Tallei app ({path})")
        except (KeyError, ValueError):
            raise KeyUnavailable(f"The Tallei app gave a damaged key at {path}.") from None
    if status == "locked":
        raise StoreLocked(LOCKED_MESSAGE)
    raise StoreLocked(NOT_RUNNING_MESSAGE)


def _private_folder(folder: Path) -> None:
    """Make ``folder`` (mode 0700, ours) or refuse one another user could reach."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise KeyUnavailable(
            f"The folder {folder} is not a folder of this user's own; the key is not offered there."
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def _check_private(path: Path) -> None:
    """Refuse a socket, or its folder, that is not this user's alone (raises FileNotFoundError if absent)."""
    info = path.lstat()
    folder = path.parent.lstat()
    uid = os.getuid()
    problems = []
    if not stat.S_ISSOCK(info.st_mode):
        problems.append("it is not a socket")
    if info.st_uid != uid or folder.st_uid != uid:
        problems.append("it belongs to another user")
    if stat.S_IMODE(info.st_mode) & 0o077:
        problems.append(f"its mode is {stat.S_IMODE(info.st_mode):04o}, not 0600")
    if stat.S_IMODE(folder.st_mode) & 0o077:
        problems.append(f"its folder's mode is {stat.S_IMODE(folder.st_mode):04o}, not 0700")
    if problems:
        raise KeyUnavailable(
            f"Tallei refused to ask for the key at {path}: {'; '.join(problems)}, so other users could "
            "reach it. Quit the Tallei app, remove that file, and start the app again."
        )


def _same_user(conn: socket.socket) -> bool:
    """The peer's user id matches ours, where the OS tells it; elsewhere the folder's mode guards."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True
    raw = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return bool(uid == os.getuid())


def _answers(path: Path) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(1.0)
    try:
        with sock:
            sock.connect(str(path))
    except OSError:
        return False
    return True


def _send(conn: socket.socket, message: dict[str, object]) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(_MAX_LINE)
        if not chunk:
            break
        data += chunk
        if len(data) > _MAX_LINE:
            raise ValueError("the message is too long")
    return data.decode()
