"""Opening a MemoryService without keeping anyone waiting, and finishing its pending work.

``OpeningService`` opens the store on a background thread while a transport (or a window) already
answers. Unlocking the store can take a while (a passphrase is stretched with scrypt, an OS keyring may ask
the person to unlock it), and an MCP client gives up on a server that does not answer ``initialize``
promptly. So the stdio server starts serving at once and each tool call waits for the store instead.
A store that cannot be opened becomes the answer to every tool call, which the host model can pass
on to the person, rather than a process that dies before the client can say why. A store that is
only locked (the tray app that holds its key is not running or not unlocked yet) is tried again on
the next call, so the server starts working the moment the person unlocks the app.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tallei_desktop.core import BugError, KnownError, StoreLocked

if TYPE_CHECKING:
    from tallei_desktop.core import MemoryService

__all__ = ["ModelPreload", "OpeningService", "finish_pending"]

log = logging.getLogger(__name__)


class OpeningService:
    """Runs ``open_service`` on a daemon thread; calling the object waits for its result.

    Call it from a worker thread, never from an event loop or the Qt thread: it blocks until the
    store is open.
    """

    def __init__(self, open_service: Callable[[], MemoryService]) -> None:
        self._open = open_service
        self._done = threading.Event()
        self._service: MemoryService | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tallei-open-store", daemon=True)
        self._retry = threading.Lock()

    def start(self) -> OpeningService:
        self._thread.start()
        return self

    def __call__(self) -> MemoryService:
        """The open service; raises what opening raised (a fresh copy each time, for the caller).

        After :class:`StoreLocked`, each call tries to open the store again, one caller at a time.
        """
        self._done.wait()
        if self._service is None and isinstance(self._error, StoreLocked):
            with self._retry:
                if self._service is None and isinstance(self._error, StoreLocked):
                    self._attempt()
        if self._service is not None:
            return self._service
        error = self._error
        if isinstance(error, KnownError):
            raise type(error)(*error.args)
        raise BugError("The memory store could not be opened because of an internal error; see the log file.")

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    def close(self, timeout: float = 30.0) -> None:
        """Wait for the opening to end (at most ``timeout`` seconds), then close the service if it opened."""
        if not self._done.wait(timeout):
            log.warning("The store was still opening after %.0f s; leaving it to the process exit.", timeout)
            return
        if self._service is not None:
            self._service.close()

    def _run(self) -> None:
        try:
            self._attempt()
        finally:
            self._done.set()

    def _attempt(self) -> None:
        try:
            self._service = self._open()
            self._error = None
        except StoreLocked as exc:
            log.info("The memory store is locked: %s", exc)
            self._error = exc
        except KnownError as exc:
            log.error("The memory store cannot be opened: %s", exc)
            self._error = exc
        except BaseException as exc:
            # The boundary of this thread: keep the traceback, and let every tool call say so.
            log.exception("Opening the memory store failed")
            self._error = exc


class ModelPreload:
    """Loads the embedding model on a thread of its own, when asked, so the first recall is fast.

    The stdio server asks only once it has answered its client: loading imports onnxruntime, and
    doing that while the client waits for ``initialize`` would slow the answer for nothing. The
    thread is waited for at shutdown, because a process that exits while onnxruntime is building a
    session is aborted by it.
    """

    def __init__(self, source: Callable[[], MemoryService]) -> None:
        self._source = source
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Begin loading (once; later calls do nothing)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load, name="tallei-model-load", daemon=True)
                self._thread.start()

    def wait(self, timeout: float = 30.0) -> None:
        """Wait for a load in progress to end, at most ``timeout`` seconds."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _load(self) -> None:
        try:
            load = getattr(self._source().embedder, "load", None)
            if callable(load):
                load()
        except KnownError as exc:
            # Semantic search stays off and the service says why; nothing else to do here.
            log.info("The embedding model is not loaded: %s", exc)
        except Exception:
            log.exception("Loading the embedding model failed")


def finish_pending(service: MemoryService, timeout: float) -> int:
    """Do the background work saves left behind (embedding, dedup, conflicts), for at most ``timeout`` s.

    A short-lived process never runs the background worker long enough, so a command that reads
    calls this first: otherwise a memory saved a moment ago from a shell would be missing from
    searches by meaning. Nothing is loaded (not even the model) when nothing is pending.

    Returns how many memories are still waiting when the time is up, 0 when everything is done.
    The worker keeps going until the service is closed.
    """
    if service.status().pending_embeddings == 0:
        return 0
    service.start_background()
    if service.wait_idle(timeout):
        return 0
    return service.status().pending_embeddings
