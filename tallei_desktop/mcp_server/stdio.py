"""The stdio transport: serve one MCP client over stdin and stdout until stdin ends or a signal arrives.

The SDK's ``stdio_server`` keeps stdout for the protocol alone (it points file descriptor 1 at
stderr while serving, so stray prints cannot corrupt a message). Its own stdin reader blocks in a
worker thread that nothing can interrupt, which would keep a process told to stop (SIGTERM, as
clients send before they kill) alive until the client happens to write again. So stdin is read here
by a daemon thread instead, and a signal ends the session the same way the end of stdin does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

if TYPE_CHECKING:
    from tallei_desktop.mcp_server.server import TalleiServer

__all__ = ["serve_stdio"]

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def serve_stdio(
    server: TalleiServer, *, after_first_message: Callable[[], None] | None = None, stdin_fd: int = 0
) -> None:
    """Serve ``server`` over stdin/stdout; return on end of input, SIGTERM or SIGINT.

    ``after_first_message`` is called once, as soon as the first message (normally ``initialize``)
    has been handled: the place to start slow work that should not delay the client's handshake.
    """
    if after_first_message is not None:
        server.middleware.append(_OnceAfterFirst(after_first_message))
    lines = _StdinLines(stdin_fd)
    lines.start()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, tg.cancel_scope)
        # The SDK only iterates over what it is given as stdin, one line per message.
        await server.run_stdio_lines(cast("anyio.AsyncFile[str]", lines))
        log.info("stdin ended; stopping")
        tg.cancel_scope.cancel()


class _OnceAfterFirst:
    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback: Callable[[], None] | None = callback

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        finally:
            callback, self._callback = self._callback, None
            if callback is not None:
                callback()


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    try:
        with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
            async for signum in signals:
                log.info("Received %s; stopping", signal.Signals(signum).name)
                scope.cancel()
                return
    except NotImplementedError:  # event loops on Windows cannot watch signals
        await anyio.sleep_forever()


class _StdinLines:
    """The non-empty lines of a file descriptor, as an async iterator fed by a daemon thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._send, self._receive = anyio.create_memory_object_stream[str](0)

    def start(self) -> None:
        """Start reading; call from the event loop that will iterate."""
        token = anyio.lowlevel.current_token()
        thread = threading.Thread(target=self._pump, args=(token,), name="tallei-stdin", daemon=True)
        thread.start()

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def _pump(self, token: anyio.lowlevel.EventLoopToken) -> None:
        # os.read rather than sys.stdin: a daemon thread blocked inside a buffered reader holds its
        # lock, and the interpreter aborts when it cannot take that lock at exit.
        buffer = bytearray()
        try:
            while chunk := os.read(self._fd, _CHUNK):
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    self._deliver(line, token)
            self._deliver(bytes(buffer), token)
        except Exception as exc:
            # The boundary of this thread. Once the session has ended nobody receives any more.
            log.debug("stopped reading stdin: %r", exc)
        finally:
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(self._send.close, token=token)

    def _deliver(self, line: bytes, token: anyio.lowlevel.EventLoopToken) -> None:
        if line.strip():
            anyio.from_thread.run(self._send.send, line.decode("utf-8", errors="replace"), token=token)
