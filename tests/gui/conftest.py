"""Fixtures for the tray app: a real encrypted store, the background-op helper, Tallei processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from tallei_desktop.core.recall import Budgets
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops
from tests.support.fake_embedder import HashEmbedder

# No window may reach the person's screen; set before pytest-qt creates the application.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)
PASSPHRASE = "correct horse battery staple"
TIMEOUT_S = 30.0
#: pytest-qt waits, in milliseconds.
WAIT_MS = 10_000


def open_service(path: Path) -> MemoryService:
    """A service on the encrypted store at ``path`` with the test key and the hashing embedder."""
    return MemoryService(Database(path, KEY, key_source="test key"), HashEmbedder(), budgets=BUDGETS)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tallei.db"


@pytest.fixture
def service(db_path: Path) -> Iterator[MemoryService]:
    svc = open_service(db_path)
    yield svc
    svc.close()


@pytest.fixture
def backend(service: MemoryService) -> Backend:
    return Backend(service)


@pytest.fixture
def ops(qapp: object) -> Iterator[Ops]:
    helper = Ops()
    yield helper
    helper.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def app_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a tray-app process: offscreen Qt, a passphrase store, no model, a free port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_LOG_DIR=str(tmp_path / "logs"),
        TALLEI_PASSPHRASE=PASSPHRASE,
        # No model: these tests are about the program's life, not meaning; loading one costs seconds.
        TALLEI_MODEL_DIR=str(tmp_path / "no-model"),
        TALLEI_ALLOW_MODEL_DOWNLOAD="false",
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        TALLEI_HTTP_PORT=str(free_port()),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


class AppProcess:
    """A ``tallei-desktop`` process whose stderr lines are collected as they come."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tallei_desktop", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, text: str, timeout: float = TIMEOUT_S) -> str:
        """The first stderr line containing ``text``; fails the test if none comes in time."""
        with self._changed:
            found = self._changed.wait_for(
                lambda: any(text in line for line in self.lines) or not self._reader.is_alive(), timeout
            )
            match = next((line for line in self.lines if text in line), None)
        if not found or match is None:
            pytest.fail(f"no line with {text!r} within {timeout:.0f} s; output:\n" + "\n".join(self.lines))
        return match

    def output(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def stop(self, timeout: float = TIMEOUT_S) -> int:
        """SIGTERM, then the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the app did not stop within {timeout:.0f} s of SIGTERM:\n{self.output()}")
        self.close()
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(TIMEOUT_S)
        self.close()

    def close(self) -> None:
        """Read the rest of the output and close the pipe (the process has ended)."""
        self._reader.join(TIMEOUT_S)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def start_app() -> Iterator[type[AppProcess]]:
    started: list[AppProcess] = []

    class Started(AppProcess):
        def __init__(self, env: dict[str, str], *args: str) -> None:
            super().__init__(env, *args)
            started.append(self)

    yield Started
    for app in started:
        if app.proc.poll() is None:
            app.kill()
        else:
            app.proc.wait()
            app.close()
