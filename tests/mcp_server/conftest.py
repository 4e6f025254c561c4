"""Fixtures for the MCP server: real encrypted stores, in-memory sessions, real server processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any, TextIO

import anyio
import httpx2
import keyring.backends.null
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, Implementation, TextContent

from tallei_desktop.config import Settings, load_settings
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.core.recall import Budgets
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.factory import build_service
from tallei_desktop.mcp_server.server import TalleiServer, build_server
from tests.support.fake_embedder import HashEmbedder

KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)
PASSPHRASE = "correct horse battery staple"
#: How long a test waits for a process or a condition before it fails.
TIMEOUT_S = 60.0


@pytest.fixture
def anyio_backend() -> str:
    # uvicorn, and so the HTTP endpoint, runs on asyncio only.
    return "asyncio"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    """A service on a real encrypted store, with the hashing embedder and a running worker."""
    svc = MemoryService(
        Database(tmp_path / "tallei.db", KEY, key_source="test key"), HashEmbedder(), budgets=BUDGETS
    )
    svc.start_background(poll_s=0.2)
    yield svc
    svc.close()


@pytest.fixture
def server(service: MemoryService) -> TalleiServer:
    return build_server(service)


@asynccontextmanager
async def session(
    server: MCPServer, *, client_name: str = "claude-ai", mode: str = "legacy"
) -> AsyncIterator[Client]:
    """An in-memory client session; ``legacy`` mode goes through the initialize handshake."""
    async with Client(
        server, mode=mode, client_info=Implementation(name=client_name, version="1.0")
    ) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


async def eventually(check: Callable[[], Awaitable[bool]], *, what: str, timeout: float = TIMEOUT_S) -> None:
    """Wait until ``check()`` holds, polling; fail with ``what`` after ``timeout`` seconds."""
    with anyio.move_on_after(timeout):
        while not await check():
            await anyio.sleep(0.05)
        return
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


# -- real processes ----------------------------------------------------------------------------------


@pytest.fixture
def process_env(tmp_path: Path, model_dir: Path) -> dict[str, str]:
    """Environment for Tallei processes: a passphrase-guarded store in tmp_path, the real model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_LOG_DIR=str(tmp_path / "logs"),
        TALLEI_PASSPHRASE=PASSPHRASE,
        TALLEI_MODEL_DIR=str(model_dir),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        # Never the person's own keyring: the key goes into a passphrase-guarded file.
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


def settings_for(env: dict[str, str]) -> Settings:
    return load_settings(environ=env, config_path=Path(env["TALLEI_CONFIG"]))


@contextmanager
def open_store(env: dict[str, str]) -> Iterator[MemoryService]:
    """The store the processes use, opened in this process without a worker or a model load."""
    settings = settings_for(env)
    no_keyring = keyring.backends.null.Keyring()  # type: ignore[no-untyped-call]
    secrets = SecretStore(settings.data_dir, passphrase=settings.passphrase, backend=no_keyring)
    svc = build_service(settings, secrets=secrets, background=False, preload_model=False)
    try:
        yield svc
    finally:
        svc.close()


def logs_of(env: dict[str, str], *extra: Path, lines: int = 40) -> str:
    """The end of a run's log file and of any other files given, to explain a failed assertion."""
    parts = []
    for path in (Path(env["TALLEI_LOG_DIR"]) / "mcp.log", Path(env["TALLEI_LOG_DIR"]) / "serve.log", *extra):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(parts)


def tallei_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tallei_desktop", *args]


@asynccontextmanager
async def stdio_session(
    env: dict[str, str], errlog: TextIO, *, client_name: str = "claude-ai"
) -> AsyncIterator[Client]:
    """``tallei-desktop mcp`` as a subprocess, driven by the SDK's stdio client."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "tallei_desktop", "mcp"], env=env)
    transport = stdio_client(params, errlog=errlog)
    async with Client(
        transport, mode="legacy", client_info=Implementation(name=client_name, version="1.0")
    ) as client:
        yield client


@asynccontextmanager
async def http_session(url: str, token: str, *, client_name: str = "openai-mcp") -> AsyncIterator[Client]:
    """A Streamable HTTP session with the SDK's client, carrying the bearer token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            client_info=Implementation(name=client_name, version="1.0"),
        ) as client,
    ):
        yield client


def read_line(stream: IO[str], timeout: float = TIMEOUT_S) -> str:
    """The next line of a child's output, failing the test instead of hanging."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not box:
        pytest.fail(f"no output line within {timeout:.0f} s")
    return box[0]


def run_token(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        tallei_command("token", *args), env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@contextmanager
def serve_process(
    env: dict[str, str], stderr: IO[str], *args: str
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``tallei-desktop serve`` on a free port; yields the process and its MCP URL."""
    proc = subprocess.Popen(
        tallei_command("serve", "--port", "0", *args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = read_line(proc.stdout)
        assert line.startswith("Serving MCP at http://127.0.0.1:"), line
        yield proc, line.split()[-1]
    finally:
        stop_process(proc)


def stop_process(proc: subprocess.Popen[str], timeout: float = TIMEOUT_S) -> int:
    """SIGTERM, wait, and close the pipes to the process (an open one is a ResourceWarning, so an error)."""
    try:
        if proc.poll() is None:
            proc.terminate()
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
            pytest.fail(f"the process {proc.args!r} did not stop within {timeout:.0f} s of SIGTERM")
    finally:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
