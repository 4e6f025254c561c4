"""The Streamable HTTP endpoint: loopback only, bearer token, DNS-rebinding protection, body limit."""

from __future__ import annotations

import json
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest

from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.core.service import MemoryService
from tallei_desktop.mcp_server.http_endpoint import EndpointUnavailable, HttpEndpoint
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import (
    http_session,
    logs_of,
    open_store,
    run_token,
    serve_process,
    stop_process,
    structured,
    tallei_command,
    text_of,
)

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token-for-tests"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
SAVE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "save_memory", "arguments": {"content": "Sneaked in without a token"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@asynccontextmanager
async def running(server: TalleiServer, **options: object) -> AsyncIterator[HttpEndpoint]:
    endpoint = HttpEndpoint(server, token=TOKEN, port=0, **options)  # type: ignore[arg-type]
    await endpoint.start()
    try:
        yield endpoint
    finally:
        await endpoint.stop()


async def post(url: str, body: object, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, content=json.dumps(body).encode(), headers={**MCP_HEADERS, **headers})


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def nothing_stored(service: MemoryService) -> bool:
    return sum(service.status().counts.values()) == 0


# -- in this process, inside the test's event loop --------------------------------------------------


async def test_save_and_recall_through_the_sdk_client(server: TalleiServer) -> None:
    async with running(server) as endpoint, http_session(endpoint.url, TOKEN) as client:
        saved = structured(await client.call_tool("save_memory", {"content": "I prefer metric units"}))
        recall = await client.call_tool("recall_memories", {"query": "units"})
    assert saved["platform"] == "chatgpt"
    assert "I prefer metric units" in text_of(recall)
    assert endpoint.url == f"http://127.0.0.1:{endpoint.port}/mcp"


@pytest.mark.parametrize(
    "headers",
    [{}, bearer("wrong"), {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}, bearer(TOKEN + "x")],
    ids=["missing", "wrong", "no-scheme", "basic", "longer"],
)
async def test_a_missing_or_wrong_token_gets_401_and_reaches_nothing(
    server: TalleiServer, service: MemoryService, headers: dict[str, str]
) -> None:
    async with running(server) as endpoint:
        for body in (INITIALIZE, SAVE):
            answer = await post(endpoint.url, body, **headers)
            assert answer.status_code == 401
            assert answer.json()["error"] == "invalid_token"
            assert answer.headers["www-authenticate"].startswith("Bearer")
    assert nothing_stored(service)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:1"},
        {"Origin": "null"},
        {"Host": "evil.example"},
        {"Host": "rebound.example:{port}"},
        {"Host": "127.0.0.1:1"},
    ],
    ids=[
        "foreign-origin",
        "other-port-origin",
        "null-origin",
        "foreign-host",
        "rebound-host",
        "other-port-host",
    ],
)
async def test_a_foreign_host_or_origin_gets_403_even_with_the_token(
    server: TalleiServer, service: MemoryService, headers: dict[str, str]
) -> None:
    async with running(server) as endpoint:
        filled = {k: v.format(port=endpoint.port) for k, v in headers.items()}
        answer = await post(endpoint.url, SAVE, **bearer(), **filled)
        missing_token = await post(endpoint.url, SAVE, **filled)
    assert answer.status_code == missing_token.status_code == 403
    assert answer.json()["error"] == "forbidden"
    assert nothing_stored(service)


async def test_loopback_names_with_the_right_port_are_accepted(server: TalleiServer) -> None:
    async with running(server) as endpoint:
        for host in ("127.0.0.1", "localhost", "[::1]"):
            answer = await post(
                endpoint.url,
                INITIALIZE,
                **bearer(),
                Host=f"{host}:{endpoint.port}",
                Origin=f"http://{host}:{endpoint.port}",
            )
            assert answer.status_code == 200, (host, answer.text)


async def test_an_oversized_body_gets_413_and_reaches_nothing(
    server: TalleiServer, service: MemoryService
) -> None:
    async with running(server, max_body_bytes=64 * 1024) as endpoint:
        huge = {**SAVE, "params": {"name": "save_memory", "arguments": {"content": "x" * 100_000}}}
        answer = await post(endpoint.url, huge, **bearer())
        async with httpx2.AsyncClient(timeout=30) as http:

            async def stream() -> AsyncIterator[bytes]:
                for _ in range(100):
                    yield b" " * 1024

            chunked = await http.post(endpoint.url, content=stream(), headers={**MCP_HEADERS, **bearer()})
    assert answer.status_code == chunked.status_code == 413
    assert nothing_stored(service)


async def test_the_default_body_limit_is_one_mebibyte(server: TalleiServer) -> None:
    async with running(server) as endpoint:
        answer = await post(endpoint.url, {"padding": "x" * (1024 * 1024)}, **bearer())
    assert answer.status_code == 413


async def test_stop_closes_the_port_and_start_serves_again(server: TalleiServer) -> None:
    endpoint = HttpEndpoint(server, token=TOKEN, port=0)
    await endpoint.start()
    port = endpoint.port
    assert endpoint.running
    await endpoint.stop()
    assert not endpoint.running
    with pytest.raises(httpx2.ConnectError):
        await post(endpoint.url, INITIALIZE, **bearer())
    again = HttpEndpoint(server, token=TOKEN, port=port)
    async with again, http_session(again.url, TOKEN) as client:
        assert not (await client.call_tool("memory_status", {})).is_error


async def test_a_busy_port_is_a_plain_error(server: TalleiServer) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        endpoint = HttpEndpoint(server, token=TOKEN, port=taken.getsockname()[1])
        with pytest.raises(EndpointUnavailable, match="Another program"):
            await endpoint.start()
    assert not endpoint.running


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com", "10.0.0.1"])
def test_only_loopback_addresses_are_accepted(server: TalleiServer, host: str) -> None:
    with pytest.raises(InvalidInput, match="loopback"):
        HttpEndpoint(server, token=TOKEN, host=host)


def test_ipv6_loopback_is_accepted(server: TalleiServer) -> None:
    assert HttpEndpoint(server, token=TOKEN, host="::1", port=8765).url == "http://[::1]:8765/mcp"


# -- `tallei-desktop serve` and `tallei-desktop token` as real processes ----------------------------


@pytest.mark.slow
async def test_serve_process_guards_its_endpoint_and_serves_the_sdk_client(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    token = run_token(process_env)
    assert run_token(process_env) == token  # created once, then the same
    with (tmp_path / "stderr.log").open("w") as errlog, serve_process(process_env, errlog) as (proc, url):
        assert (await post(url, SAVE)).status_code == 401
        assert (await post(url, SAVE, **bearer("nope"))).status_code == 401
        assert (await post(url, SAVE, **bearer(token), Origin="http://evil.example")).status_code == 403
        assert (await post(url, SAVE, **bearer(token), Host="evil.example")).status_code == 403
        huge = {**SAVE, "params": {"name": "save_memory", "arguments": {"content": "x" * (2 * 1024 * 1024)}}}
        assert (await post(url, huge, **bearer(token))).status_code == 413
        async with http_session(url, token, client_name="openai-mcp") as client:
            saved = structured(await client.call_tool("save_memory", {"content": "We ship on Tuesdays"}))
            recall = await client.call_tool("recall_memories", {"query": "shipping day"})
        assert "We ship on Tuesdays" in text_of(recall)
        assert stop_process(proc) == 0, logs_of(process_env, tmp_path / "stderr.log")
    with open_store(process_env) as service:
        assert [m.id for m in service.list()] == [saved["id"]]
        assert service.get(saved["id"]).platform == "chatgpt"


@pytest.mark.slow
async def test_a_rotated_token_replaces_the_old_one(process_env: dict[str, str], tmp_path: Path) -> None:
    old = run_token(process_env)
    new = run_token(process_env, "--rotate")
    assert new != old and run_token(process_env) == new
    with (tmp_path / "stderr.log").open("w") as errlog, serve_process(process_env, errlog) as (_, url):
        assert (await post(url, INITIALIZE, **bearer(old))).status_code == 401
        assert (await post(url, INITIALIZE, **bearer(new))).status_code == 200


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no SIGTERM to send")
def test_serve_refuses_a_non_loopback_address_and_stops_on_sigterm(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    import subprocess

    refused = subprocess.run(
        tallei_command("serve", "--host", "0.0.0.0"),
        env=process_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "loopback" in refused.stderr and refused.stdout == ""
    with (tmp_path / "stderr.log").open("w") as errlog, serve_process(process_env, errlog) as (proc, _):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, logs_of(process_env, tmp_path / "stderr.log")
