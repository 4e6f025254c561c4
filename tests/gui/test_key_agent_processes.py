"""Assistants launched on a passphrase store unlock through the running tray app, as with ssh-agent.

Real processes throughout: the tray app (offscreen Qt), and ``tallei-desktop mcp`` driven by the
SDK's stdio client with exactly the environment ``connect`` writes: no passphrase, no keyring.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation, TextContent

from tallei_desktop.app.key_agent import LOCKED_MESSAGE, NOT_RUNNING_MESSAGE, socket_path
from tests.gui.conftest import TIMEOUT_S, AppProcess

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    # A Unix socket's path holds about 100 bytes; pytest's tmp_path can be longer than that.
    with tempfile.TemporaryDirectory(prefix="ta-") as folder:
        yield Path(folder) / "run"


@pytest.fixture
def env(app_env: dict[str, str], runtime_dir: Path) -> dict[str, str]:
    return {**app_env, "TALLEI_RUNTIME_DIR": str(runtime_dir)}


def launched_env(env: dict[str, str]) -> dict[str, str]:
    """What an assistant starts the server with: the entry ``connect`` writes carries no passphrase."""
    return {k: v for k, v in env.items() if k != "TALLEI_PASSPHRASE"}


@asynccontextmanager
async def launched_server(env: dict[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tallei_desktop", "mcp"], env=launched_env(env)
    )
    errlog = Path(env["TALLEI_LOG_DIR"]) / "server-stderr.txt"
    errlog.parent.mkdir(parents=True, exist_ok=True)
    with errlog.open("a", encoding="utf-8") as stream:
        async with Client(
            stdio_client(params, errlog=stream),
            mode="legacy",
            client_info=Implementation(name="claude-ai", version="1.0"),
        ) as client:
            yield client


async def call(client: Client, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    return bool(result.is_error), text


def create_store(env: dict[str, str], start_app: type[AppProcess]) -> None:
    """Make the passphrase-guarded store the way a person does: run the app once, then quit it."""
    app = start_app(env, "gui")
    app.wait_for("Tallei is running")
    assert app.stop() == 0


def wait_for_socket(env: dict[str, str]) -> Path:
    path = socket_path(Path(env["TALLEI_RUNTIME_DIR"]), Path(env["TALLEI_DATA_DIR"]))
    deadline = time.monotonic() + TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the app made no key-holder socket at {path}")
        time.sleep(0.05)
    return path


async def test_an_unlocked_app_opens_the_store_for_a_launched_server(
    env: dict[str, str], start_app: type[AppProcess]
) -> None:
    create_store(env, start_app)
    app = start_app(env, "gui")
    app.wait_for("Tallei is running")
    async with launched_server(env) as client:
        failed, text = await call(client, "save_memory", content="I prefer tabs over spaces")
        assert not failed, text
        failed, text = await call(client, "recall_memories", query="tabs or spaces")
        assert not failed, text
        assert "I prefer tabs over spaces" in text
    assert app.stop() == 0


async def test_with_no_app_each_call_says_so_and_the_next_call_tries_again(
    env: dict[str, str], start_app: type[AppProcess]
) -> None:
    create_store(env, start_app)
    async with launched_server(env) as client:
        for _ in range(2):  # the server keeps running and keeps answering in one line
            failed, text = await call(client, "memory_status")
            assert failed
            assert text == NOT_RUNNING_MESSAGE
        app = start_app(env, "gui")
        app.wait_for("Tallei is running")
        failed, text = await call(client, "save_memory", content="My sister lives in Lisbon")
        assert not failed, text
    assert app.stop() == 0


async def test_a_locked_app_is_named_and_unlocking_it_lets_the_next_call_through(
    env: dict[str, str], start_app: type[AppProcess]
) -> None:
    create_store(env, start_app)
    # Started without the passphrase, the app waits at its unlock dialog.
    locked = start_app(launched_env(env), "gui")
    wait_for_socket(env)
    async with launched_server(env) as client:
        failed, text = await call(client, "recall_memories", query="anything")
        assert failed
        assert text == LOCKED_MESSAGE
        assert locked.stop() == 0
        app = start_app(env, "gui")  # this time unlocked (the passphrase is given)
        app.wait_for("Tallei is running")
        failed, text = await call(client, "memory_status")
        assert not failed, text
    assert app.stop() == 0


async def test_a_socket_others_could_open_is_refused(
    env: dict[str, str], start_app: type[AppProcess]
) -> None:
    create_store(env, start_app)
    app = start_app(env, "gui")
    app.wait_for("Tallei is running")
    path = wait_for_socket(env)
    os.chmod(path, 0o666)
    async with launched_server(env) as client:
        failed, text = await call(client, "memory_status")
        assert failed
        assert "refused" in text and "0666" in text
        os.chmod(path, 0o600)
        failed, text = await call(client, "memory_status")
    # A refusal is not "locked": it is not retried until the server is started again.
    assert failed
    assert app.stop() == 0


def test_quitting_the_app_removes_its_socket(env: dict[str, str], start_app: type[AppProcess]) -> None:
    app = start_app(env, "gui")
    app.wait_for("Tallei is running")
    path = wait_for_socket(env)
    assert app.stop() == 0
    assert not path.exists()
