"""The Streamable HTTP transport: MCP on a loopback port, behind a bearer token.

:class:`HttpEndpoint` is started and stopped from an asyncio event loop that already runs (the tray
app's, or the one ``tallei-desktop serve`` makes). Every request passes, in order:

1. the DNS-rebinding check: a ``Host`` or ``Origin`` header naming anything but this loopback
   address and port gets 403 (a web page whose own name resolves to 127.0.0.1 sends its own name);
2. the bearer token, compared in constant time: missing or wrong gets 401;
3. the SDK's body limit (413) and its own transport checks, before any JSON is parsed.

A request refused at any step never reaches a tool, so nothing reaches the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import socket
import sys
from collections.abc import Iterator
from types import TracebackType

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tallei_desktop.core import InvalidInput, KnownError

__all__ = ["MAX_BODY_BYTES", "MCP_PATH", "EndpointUnavailable", "HttpEndpoint", "loopback_address"]

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
#: Largest request body accepted; a memory is at most 32 KiB, so this leaves room for any call.
MAX_BODY_BYTES = 1024 * 1024
#: How long stopping waits for open responses (such as event streams) before cutting them.
_GRACE_S = 2


class EndpointUnavailable(KnownError):
    """The HTTP endpoint cannot listen where it was asked to."""


def loopback_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return ipaddress.IPv4Address("127.0.0.1")
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise InvalidInput(
            f"Tallei serves MCP on this computer's loopback address only, so that no other machine can reach "
            f"your memories; {host[:80]!r} is not one. Use 127.0.0.1, ::1 or localhost."
        )
    return address


def _authority(address: ipaddress.IPv4Address | ipaddress.IPv6Address | str, port: int) -> str:
    text = str(address)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


def _listen(address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, advice: str) -> socket.socket:
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform == "win32":
            # On Windows SO_REUSEADDR would let another program take over the port.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)  # type: ignore[attr-defined,unused-ignore]
        else:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((str(address), port))
    except OSError as exc:
        sock.close()
        raise EndpointUnavailable(
            f"Cannot listen on {_authority(address, port)}: {exc.strerror or exc}. Another program (perhaps "
            f"another Tallei) may be using the port; stop it, or {advice}."
        ) from None
    return sock


class _Guard:
    """The outermost ASGI layer: the rebinding check (403), then the bearer token (401)."""

    def __init__(self, app: ASGIApp, *, token: str, security: TransportSecuritySettings) -> None:
        self._app = app
        self._token = token.encode()
        self._headers_check = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        if await self._headers_check.validate_request(Request(scope), is_post=False) is not None:
            refusal = JSONResponse(
                {
                    "error": "forbidden",
                    "error_description": "This endpoint only answers requests addressed to it on this computer; "
                    "the Host or Origin header names another site.",
                },
                status_code=403,
            )
            await refusal(scope, receive, send)
            return
        if not self._authorized(Headers(scope=scope).get("authorization")):
            refusal = JSONResponse(
                {
                    "error": "invalid_token",
                    "error_description": "A valid bearer token is required; `tallei-desktop token` prints it.",
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="tallei"'},
            )
            await refusal(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _authorized(self, header: str | None) -> bool:
        if header is None:
            return False
        scheme, _, credential = header.strip().partition(" ")
        # Headers arrive as latin-1 text, so this gives back the bytes that were sent.
        presented = credential.strip().encode("latin-1", errors="replace")
        return scheme.lower() == "bearer" and hmac.compare_digest(presented, self._token)


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that leaves signals to its host and says when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The event loop belongs to the tray app or the serve command, which handle signals themselves.
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


class HttpEndpoint:
    """The MCP server on ``http://<loopback>:<port>/mcp``, started and stopped inside a running loop.

    ``port=0`` picks a free port; :attr:`url` and :attr:`port` tell which once started. The server's
    tools run their service calls on worker threads, so the loop stays free while they work.
    """

    def __init__(
        self,
        server: MCPServer,
        *,
        token: str,
        host: str = "127.0.0.1",
        port: int = 8765,
        max_body_bytes: int = MAX_BODY_BYTES,
        port_advice: str = "choose another port with --port or TALLEI_HTTP_PORT",
    ) -> None:
        if not token:
            raise InvalidInput("The HTTP endpoint needs a bearer token.")
        self._server = server
        self._token = token
        self._address = loopback_address(host)
        self._port = port
        self._max_body = max_body_bytes
        self._port_advice = port_advice  # how the person running this picks another port
        self._uvicorn: _Uvicorn | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def token(self) -> str:
        return self._token

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://{_authority(self._address, self._port)}{MCP_PATH}"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Listen and serve; returns once the port accepts connections.

        Raises :class:`EndpointUnavailable` when the port cannot be had.
        """
        if self._task is not None:
            raise RuntimeError("The HTTP endpoint is already started.")
        sock = _listen(self._address, self._port, self._port_advice)
        self._port = sock.getsockname()[1]
        here = [_authority(a, self._port) for a in ("127.0.0.1", "localhost", "::1")]
        here.append(_authority(self._address, self._port))
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=sorted(set(here)),
            allowed_origins=sorted({f"http://{h}" for h in here}),
        )
        app = self._server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            max_request_body_size=self._max_body,
            transport_security=security,
            host=str(self._address),
        )
        config = uvicorn.Config(
            _Guard(app, token=self._token, security=security),
            lifespan="on",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            ws="none",
            timeout_graceful_shutdown=_GRACE_S,
        )
        server = _Uvicorn(config)
        self._uvicorn = server
        task = asyncio.create_task(self._serve(server, sock), name="tallei-http")
        self._task = task
        listening = asyncio.create_task(server.listening.wait())
        try:
            await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            listening.cancel()
        if task.done():
            self._task = None
            task.result()
            raise EndpointUnavailable(
                f"The HTTP endpoint on {self.url} stopped as soon as it started; see the log."
            )
        log.info("Serving MCP over HTTP at %s", self.url)

    async def stop(self) -> None:
        """Stop listening, let open responses finish for a moment, then end every session."""
        task, server = self._task, self._uvicorn
        self._task = self._uvicorn = None
        if task is None or server is None:
            return
        server.should_exit = True
        try:
            await task
        except Exception:
            log.exception("The HTTP endpoint failed while it ran")
        log.info("Stopped the HTTP endpoint")

    async def __aenter__(self) -> HttpEndpoint:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def _serve(self, server: _Uvicorn, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit:
            # uvicorn exits the process when its startup fails; here that would take the host app down.
            raise EndpointUnavailable(
                f"The HTTP endpoint on {self.url} could not start; see the log for why."
            ) from None
        finally:
            sock.close()
