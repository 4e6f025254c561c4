"""``tallei-desktop native-host``: check who started it, open the store, answer framed messages until input ends.

A browser starts the host with the caller on the command line: Chromium-family browsers pass the
extension's origin (``chrome-extension://<id>/``, on Windows followed by ``--parent-window=…``),
Firefox the manifest's path and the extension's id. Anything else is refused before the store is
touched. Standard output carries the protocol alone: file descriptor 1 is pointed at stderr for
the session, and replies go to a private copy of it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tallei_desktop.app.browsers import CHROMIUM_ORIGIN, FIREFOX_EXTENSION_ID
from tallei_desktop.app.logs import log_to_file
from tallei_desktop.app.paths import windowed_executable
from tallei_desktop.config import Settings
from tallei_desktop.native_host.dispatch import Dispatcher, error_reply, fit
from tallei_desktop.native_host.framing import MAX_MESSAGE, Frame, FrameReader, encode_frame, write_frame

if TYPE_CHECKING:
    from tallei_desktop.core import MemoryService

__all__ = ["allowed_caller", "app_command", "run_native_host", "start_app"]

log = logging.getLogger(__name__)


def allowed_caller(caller: Sequence[str]) -> str | None:
    """Our extension's origin or id when the browser's arguments name it, else None."""
    for arg in caller:
        if arg in (CHROMIUM_ORIGIN, FIREFOX_EXTENSION_ID):
            return arg
    return None


def app_command() -> list[str]:
    """How to start the tray app: the bundle's windowed executable, or this Python from source."""
    windowed = windowed_executable()
    if windowed is not None:
        return [str(windowed)]
    return [sys.executable, "-m", "tallei_desktop", "gui"]


def start_app() -> bool:
    """Start the tray app detached from this host (it outlives it); the app is single-instance."""
    kwargs: dict[str, object] = {}
    if os.name == "nt":
        # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP, named by value: the constants exist on Windows only.
        kwargs["creationflags"] = 0x00000008 | 0x00000200
    else:
        kwargs["start_new_session"] = True
    try:
        # Never our stdout: that is the browser's pipe.
        subprocess.Popen(
            app_command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            **kwargs,  # type: ignore[call-overload]
        )
    except OSError as exc:
        log.warning("Cannot start the Tallei app: %s", exc)
        return False
    return True


def run_native_host(settings: Settings, caller: Sequence[str]) -> int:
    """Serve one browser extension over stdin/stdout; 0 when input ends, 2 for a caller that is not ours."""
    log_to_file(settings, "native-host.log")
    who = allowed_caller(caller)
    if who is None:
        shown = " ".join(caller)[:200] or "nothing"
        log.info("refused a native-messaging start by %s", shown)
        print(
            f"tallei-desktop native-host: refused: started by {shown}, not by Tallei's browser extension "
            f"({CHROMIUM_ORIGIN} or {FIREFOX_EXTENSION_ID}).",
            file=sys.stderr,
            flush=True,
        )
        return 2
    log.info("native host started by %s (%s)", who, " ".join(caller)[:300])

    replies = os.dup(1)
    os.dup2(2, 1)  # a stray print would corrupt a message: it goes to stderr instead
    sys.stdout = sys.stderr

    from tallei_desktop.app.opening import ModelPreload, OpeningService

    def open_service() -> MemoryService:
        # numpy first, as soon as the thread starts: a "classify" message on the reading thread
        # imports the type model (numpy) too, and two threads importing numpy's modules at the same
        # moment can find it half-initialised.
        import numpy  # noqa: F401

        from tallei_desktop.factory import build_service

        # The browser cannot ask anyone for a passphrase: the running app holds the key.
        return build_service(settings, preload_model=False, use_agent=True)

    opening = OpeningService(open_service).start()
    preload = ModelPreload(opening)
    dispatcher = Dispatcher(opening, start_app=start_app, after_first=preload.start)
    reader = FrameReader(0)
    try:
        while (frame := reader.next()) is not None:
            if isinstance(frame, Frame):
                reply = dispatcher.handle_bytes(frame.data)
            else:
                log.warning("dropped a message of %d bytes", frame.length)
                reply = error_reply(
                    None,
                    "invalid",
                    f"The message is {frame.length:,} bytes; the limit is {MAX_MESSAGE:,}. It was ignored.",
                )
            write_frame(replies, encode_frame(fit(reply)))
        log.info("input ended; stopping")
    except BrokenPipeError:
        log.info("the browser closed the connection; stopping")
    finally:
        preload.wait()
        opening.close()
    return 0
