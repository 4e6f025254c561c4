"""The background thread that finishes saves: embed, dedup, supersede, conflicts, bumps, maintenance.

It holds no state of its own: each round asks the store what is pending, so work left behind by a
process that died is picked up by whichever process runs next.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["BackgroundWorker"]

log = logging.getLogger(__name__)


class BackgroundWorker:
    """Runs ``step`` whenever woken, and at least every ``poll_s`` seconds, until stopped.

    ``step`` returns True while it has more work queued, so a burst of saves is drained without
    waiting for the next wake-up. Exceptions are logged with their traceback and the loop goes on: a
    failing round must not stop later saves from being finished.
    """

    def __init__(self, step: Callable[[], bool], *, poll_s: float = 2.0, name: str = "tallei-worker") -> None:
        self._step = step
        self._poll_s = poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._asked = 0  # wake-ups requested
        self._served = 0  # wake-ups whose round has finished with nothing left
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> int:
        with self._cond:
            self._asked += 1
            ticket = self._asked
        self._wake.set()
        return ticket

    def wait_idle(self, timeout: float) -> bool:
        """Block until a round that started after this call found nothing left to do."""
        ticket = self.wake()
        with self._cond:
            return self._cond.wait_for(lambda: self._served >= ticket or not self.running, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._poll_s)
            self._wake.clear()
            with self._cond:
                ticket = self._asked
            while not self._stop.is_set():
                try:
                    more = self._step()
                except Exception:
                    log.exception("background round failed; retrying later")
                    time.sleep(min(self._poll_s, 1.0))
                    more = False
                if not more:
                    break
            with self._cond:
                self._served = max(self._served, ticket)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()
