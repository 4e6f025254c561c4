"""The tray app's key holder: answers its own user for its own store, refuses sockets others can reach."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tallei_desktop.app.key_agent import (
    LOCKED_MESSAGE,
    NOT_RUNNING_MESSAGE,
    KeyAgent,
    connect_note,
    fetch_key,
    socket_path,
)
from tallei_desktop.config import Settings
from tallei_desktop.core import KEY_FILE_NAME, KeyUnavailable, StoreKey, StoreLocked

KEY = StoreKey(bytes(range(32)), "test")


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    # A short path: a Unix socket's path is limited to about 100 bytes, and tmp_path is long.
    with tempfile.TemporaryDirectory(prefix="ta-") as folder:
        yield Path(folder) / "run"


@pytest.fixture
def agent(runtime_dir: Path, tmp_path: Path) -> Iterator[KeyAgent]:
    running = KeyAgent(runtime_dir, tmp_path / "data").start()
    yield running
    running.stop()


def test_a_locked_agent_says_locked_and_an_unlocked_one_gives_the_key(
    agent: KeyAgent, runtime_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(StoreLocked) as locked:
        fetch_key(runtime_dir, tmp_path / "data")
    assert str(locked.value) == LOCKED_MESSAGE
    agent.unlock(KEY)
    got = fetch_key(runtime_dir, tmp_path / "data")
    assert got.key == KEY.key
    assert "Tallei app" in got.source
    agent.lock()
    with pytest.raises(StoreLocked):
        fetch_key(runtime_dir, tmp_path / "data")


def test_the_socket_and_its_folder_are_the_users_alone(agent: KeyAgent, runtime_dir: Path) -> None:
    assert (agent.path.stat().st_mode & 0o777) == 0o600
    assert (runtime_dir.stat().st_mode & 0o777) == 0o700
    assert agent.path.stat().st_uid == os.getuid()


def test_no_app_running_is_a_locked_store_not_a_crash(runtime_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(StoreLocked) as raised:
        fetch_key(runtime_dir, tmp_path / "data")
    assert str(raised.value) == NOT_RUNNING_MESSAGE


def test_a_stopped_agent_leaves_no_socket_behind(runtime_dir: Path, tmp_path: Path) -> None:
    agent = KeyAgent(runtime_dir, tmp_path / "data").start()
    agent.unlock(KEY)
    agent.stop()
    assert not agent.path.exists()
    with pytest.raises(StoreLocked):
        fetch_key(runtime_dir, tmp_path / "data")


def test_another_store_is_never_answered_for(agent: KeyAgent, runtime_dir: Path, tmp_path: Path) -> None:
    agent.unlock(KEY)
    # Another data folder has another socket; even asked on this one, the agent does not answer for it.
    assert socket_path(runtime_dir, tmp_path / "other") != agent.path
    with pytest.raises(StoreLocked):
        fetch_key(runtime_dir, tmp_path / "other")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.connect(str(agent.path))
        raw.sendall(b'{"op": "key", "data_dir": "%s"}\n' % str(tmp_path / "other").encode())
        answer = raw.recv(4096)
    assert b"other-store" in answer
    assert KEY.hex().encode() not in answer


@pytest.mark.parametrize("mode", [0o666, 0o660, 0o604])
def test_a_socket_others_could_open_is_refused(
    agent: KeyAgent, runtime_dir: Path, tmp_path: Path, mode: int
) -> None:
    agent.unlock(KEY)
    os.chmod(agent.path, mode)
    with pytest.raises(KeyUnavailable) as raised:
        fetch_key(runtime_dir, tmp_path / "data")
    assert not isinstance(raised.value, StoreLocked)
    assert f"{mode:04o}" in str(raised.value)
    assert "refused" in str(raised.value)


def test_a_folder_others_could_enter_is_refused(agent: KeyAgent, runtime_dir: Path, tmp_path: Path) -> None:
    agent.unlock(KEY)
    os.chmod(runtime_dir, 0o755)
    with pytest.raises(KeyUnavailable, match="folder's mode is 0755"):
        fetch_key(runtime_dir, tmp_path / "data")


def test_a_file_that_is_not_a_socket_is_refused(runtime_dir: Path, tmp_path: Path) -> None:
    path = socket_path(runtime_dir, tmp_path / "data")
    runtime_dir.mkdir(mode=0o700)
    path.write_text("not a socket")
    os.chmod(path, 0o600)
    with pytest.raises(KeyUnavailable, match="not a socket"):
        fetch_key(runtime_dir, tmp_path / "data")


def test_a_stale_socket_is_replaced_but_a_live_agent_is_not(runtime_dir: Path, tmp_path: Path) -> None:
    first = KeyAgent(runtime_dir, tmp_path / "data").start()
    try:
        with pytest.raises(KeyUnavailable, match="already holds the key"):
            KeyAgent(runtime_dir, tmp_path / "data").start()
    finally:
        first.stop()
    # A socket file left by a crashed app: nobody answers on it.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(first.path))
    stale.close()
    assert first.path.exists()
    second = KeyAgent(runtime_dir, tmp_path / "data").start()
    try:
        second.unlock(KEY)
        assert fetch_key(runtime_dir, tmp_path / "data").key == KEY.key
    finally:
        second.stop()


def test_a_group_or_world_open_runtime_folder_is_made_private(runtime_dir: Path, tmp_path: Path) -> None:
    runtime_dir.mkdir(mode=0o755)
    os.chmod(runtime_dir, 0o755)
    agent = KeyAgent(runtime_dir, tmp_path / "data").start()
    try:
        assert (runtime_dir.stat().st_mode & 0o777) == 0o700
    finally:
        agent.stop()


def test_connect_says_what_a_passphrase_store_needs(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, log_dir=tmp_path / "logs")
    assert connect_note(settings) is None  # a keyring store needs nothing
    (tmp_path / KEY_FILE_NAME).write_text("{}")
    note = connect_note(settings)
    assert note is not None
    assert "running and unlocked" in note
    assert "not written" in note
