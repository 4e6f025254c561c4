"""Run core work off the Qt thread: an op, then its success or failure callback on the Qt thread.

The store, the model and the network block; the Qt thread must not. :meth:`Ops.run` hands a
function to a small pool of worker threads and delivers its result (or its error) back through a
queued signal, so callbacks always run on the thread that owns the widgets. A
:class:`~tallei_desktop.core.errors.KnownError` becomes a plain message (the ``message`` signal);
anything else is our bug: logged with its traceback and reported as such.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal

from tallei_desktop.core import KnownError

__all__ = ["Ops"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Two threads: a slow recall (the model may still be loading) must not hold up the listing.
_WORKERS = 2


class Ops(QObject):
    """The background-op helper every window shares; build one per application."""

    #: A sentence for the person: what failed and what to do.
    message = Signal(str)
    #: Emitted on the Qt thread whenever the count of running ops drops to zero.
    idle = Signal()
    _finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="tallei-op")
        self._running = 0
        self._lock = threading.Lock()
        self._closed = False
        # Queued even from the Qt thread: a future already done when its callback is added calls it
        # at once, and the answer must still wait for the event loop, after run() has returned.
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> int:
        with self._lock:
            return self._running

    def run(
        self,
        op: Callable[[], T],
        on_success: Callable[[T], None] | None = None,
        on_failure: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run ``op`` on a worker thread; then ``on_success(result)`` or ``on_failure(error)`` here.

        Without ``on_failure`` a :class:`KnownError` is shown through :attr:`message`.
        """
        if self._closed:
            return
        with self._lock:
            self._running += 1
        future = self._pool.submit(op)
        future.add_done_callback(lambda f: self._finished.emit((f, on_success, on_failure)))

    def _deliver(
        self, packed: tuple[Future[Any], Callable[[Any], None] | None, Callable[[Exception], None] | None]
    ) -> None:
        future, on_success, on_failure = packed
        with self._lock:
            self._running -= 1
            now_idle = self._running == 0
        try:
            if future.cancelled() or self._closed:
                return
            error = future.exception()
            if error is None:
                if on_success is not None:
                    on_success(future.result())
            elif not isinstance(error, Exception):
                raise error
            elif on_failure is not None:
                on_failure(error)
            else:
                self.report(error)
        finally:
            if now_idle:
                self.idle.emit()

    def report(self, error: Exception) -> None:
        """Show a known error as a message; log anything else with its traceback."""
        if isinstance(error, KnownError):
            self.message.emit(str(error))
        else:
            log.error("A background operation failed", exc_info=error)
            self.message.emit(
                f"Something went wrong inside Tallei ({type(error).__name__}); the log has the details."
            )

    def shutdown(self) -> None:
        """Finish the ops already running (their callbacks are dropped) and accept no more."""
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
