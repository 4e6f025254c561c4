"""One tray app per person and data folder: a second launch brings the first window forward.

A :class:`QLockFile` in the data folder says who runs; the holder listens on a :class:`QLocalServer`
whose name is derived from that folder. A lock left by a process that crashed is stale (its process
is gone) and is taken over. ``tallei-desktop mcp`` never comes here.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

__all__ = ["SingleInstance"]

log = logging.getLogger(__name__)

_LOCK_NAME = "tallei-gui.lock"
_SHOW = b"show\n"
_CONNECT_MS = 2000


def server_name(data_dir: Path) -> str:
    digest = hashlib.sha256(str(data_dir.expanduser().resolve()).encode()).hexdigest()[:16]
    return f"tallei-desktop-{digest}"


class SingleInstance(QObject):
    """Call :meth:`acquire` first; if it returns False, another instance runs and was asked to show."""

    #: Another launch asked this instance to bring its window forward.
    activated = Signal()

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._data_dir = data_dir
        self._name = server_name(data_dir)
        self._lock: QLockFile | None = None
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        """Take the lock and listen (True), or tell the running instance to show itself (False)."""
        self._data_dir.mkdir(parents=True, exist_ok=True)
        lock = QLockFile(str(self._data_dir / _LOCK_NAME))
        # Never stale by age: only when its process is gone, which QLockFile checks by itself.
        lock.setStaleLockTime(0)
        if not lock.tryLock(0):
            self._ask_running_instance()
            return False
        self._lock = lock
        # A crashed holder may have left its socket behind; the lock says it is ours now.
        QLocalServer.removeServer(self._name)
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self._name):
            log.warning("Cannot listen for other launches (%s): %s", self._name, server.errorString())
        server.newConnection.connect(self._on_connection)
        self._server = server
        return True

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None

    def _ask_running_instance(self) -> None:
        socket = QLocalSocket()
        socket.connectToServer(self._name)
        if not socket.waitForConnected(_CONNECT_MS):
            log.warning("Tallei is already running but did not answer: %s", socket.errorString())
            return
        socket.write(QByteArray(_SHOW))
        socket.flush()
        socket.waitForBytesWritten(_CONNECT_MS)
        socket.disconnectFromServer()

    def _on_connection(self) -> None:
        server = self._server
        if server is None:
            return
        while (socket := server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(_SHOW.strip()):
            self.activated.emit()
