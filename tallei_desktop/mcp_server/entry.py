"""The MCP commands the CLI dispatches to: ``mcp`` (stdio), ``serve`` (HTTP) and ``token``.

The SDK and the store are imported inside each command, so ``token`` stays light and ``mcp`` can
answer its client before the heavier parts are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING

from tallei_desktop.app.logs import log_to_file
from tallei_desktop.config import Settings
from tallei_desktop.core import InvalidInput

if TYPE_CHECKING:
    from tallei_desktop.core import MemoryService
    from tallei_desktop.mcp_server.http_endpoint import HttpEndpoint

__all__ = ["run_http", "run_stdio", "show_token"]

log = logging.getLogger(__name__)


def run_stdio(settings: Settings) -> int:
    """Serve MCP over stdin/stdout until the client closes stdin or sends SIGTERM."""
    log_to_file(settings, "mcp.log")
    from tallei_desktop.app.opening import ModelPreload, OpeningService

    def open_service() -> MemoryService:
        from tallei_desktop.factory import build_service

        # A launched server cannot ask anyone for a passphrase: the running app holds the key.
        return build_service(settings, preload_model=False, use_agent=True)

    # The store opens while the SDK loads and the client's initialize is answered; the model loads
    # once that answer is out.
    opening = OpeningService(open_service).start()
    preload = ModelPreload(opening)
    try:
        import anyio

        from tallei_desktop.mcp_server.server import build_server
        from tallei_desktop.mcp_server.stdio import serve_stdio

        anyio.run(lambda: serve_stdio(build_server(opening), after_first_message=preload.start))
    finally:
        # Saves are committed before they are acknowledged; embeddings still pending are finished
        # by the next process that opens the store.
        preload.wait()
        opening.close()
    return 0


def run_http(settings: Settings, *, host: str | None, port: int | None) -> int:
    """Serve MCP over Streamable HTTP on loopback until SIGTERM or Ctrl+C."""
    from tallei_desktop.app.opening import ModelPreload
    from tallei_desktop.core import TOKEN_SECRET, random_token
    from tallei_desktop.factory import build_secrets, build_service
    from tallei_desktop.mcp_server.http_endpoint import HttpEndpoint, loopback_address
    from tallei_desktop.mcp_server.server import build_server

    log_to_file(settings, "serve.log")
    host = settings.http_host if host is None else host
    port = settings.http_port if port is None else port
    if not 0 <= port <= 65535:
        raise InvalidInput(f"The port must be between 0 and 65535, not {port}.")
    loopback_address(host)
    secrets = build_secrets(settings)
    service = build_service(settings, secrets=secrets, preload_model=False)
    preload = ModelPreload(lambda: service)
    try:
        token = secrets.secret(TOKEN_SECRET, factory=random_token)
        endpoint = HttpEndpoint(build_server(service), token=token, host=host, port=port)
        preload.start()
        asyncio.run(_serve_until_stopped(endpoint))
    finally:
        preload.wait()
        service.close()
    return 0


async def _serve_until_stopped(endpoint: HttpEndpoint) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        # Windows loops cannot watch signals; Ctrl+C then arrives as KeyboardInterrupt instead.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    await endpoint.start()
    try:
        print(f"Serving MCP at {endpoint.url}", flush=True)
        print(
            "Clients need the bearer token that `tallei-desktop token` prints.", file=sys.stderr, flush=True
        )
        await stop.wait()
    finally:
        await endpoint.stop()


def show_token(settings: Settings, *, rotate: bool) -> int:
    """Print the HTTP bearer token, creating it on first use; ``rotate`` replaces it first."""
    from tallei_desktop.core import TOKEN_SECRET, random_token
    from tallei_desktop.factory import build_secrets

    secrets = build_secrets(settings)
    # Under a passphrase the token is kept in the key file, which exists once the store key does.
    secrets.store_key(create=not settings.db_path.exists())
    if rotate:
        token = random_token()
        secrets.replace_secret(TOKEN_SECRET, token)
        print(token)
        print(
            "The old token no longer works. Restart `tallei-desktop serve` (or the tray app) and give clients "
            "the new one.",
            file=sys.stderr,
        )
    else:
        print(secrets.secret(TOKEN_SECRET, factory=random_token))
    return 0
