"""A real ``tallei-desktop native-host`` process, spoken to as a browser does: framed JSON over its pipes."""

from __future__ import annotations

import json
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest

from tallei_desktop.app.browsers import CHROMIUM_ORIGIN

__all__ = ["ORIGIN", "TIMEOUT_S", "NativeHost", "frame"]

ORIGIN = CHROMIUM_ORIGIN
TIMEOUT_S = 60.0


def frame(data: bytes) -> bytes:
    return struct.pack("=I", len(data)) + data


class NativeHost:
    """``python -m tallei_desktop native-host <origin>`` (or ``command``), its stderr going to ``stderr_path``."""

    def __init__(
        self,
        env: dict[str, str],
        stderr_path: Path,
        *,
        command: Sequence[str] | None = None,
        caller: Sequence[str] = (ORIGIN,),
    ) -> None:
        self._stderr_path = stderr_path
        self._stderr = stderr_path.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            list(command)
            if command is not None
            else [sys.executable, "-m", "tallei_desktop", "native-host", *caller],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        while True:
            header = stdout.read(4)
            if len(header) < 4:
                self._replies.put(None)
                return
            (length,) = struct.unpack("=I", header)
            self._replies.put(json.loads(stdout.read(length).decode("utf-8")))

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> int:
        """Send ``message`` with a fresh id (unless it has one); return the id."""
        self._next_id += 1
        message = {"id": self._next_id, **message}
        self.write(frame(json.dumps(message).encode("utf-8")))
        return self._next_id

    def reply(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        try:
            got = self._replies.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no reply within {timeout:.0f} s; stderr:\n{self.stderr_tail()}")
        if got is None:
            pytest.fail(f"the host closed its output; stderr:\n{self.stderr_tail()}")
        return got

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return its reply, checking the id came back."""
        request_id = self.send(message)
        got = self.reply()
        assert got["id"] == request_id, got
        return got

    def output_ended(self, timeout: float = TIMEOUT_S) -> bool:
        try:
            return self._replies.get(timeout=timeout) is None
        except queue.Empty:
            return False

    def finish(self, timeout: float = TIMEOUT_S) -> int:
        """Close stdin, as a browser does when the port closes, and wait for the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)
            pytest.fail(f"the host did not stop within {timeout:.0f} s of its input ending")

    def stderr_tail(self, chars: int = 3000) -> str:
        self._stderr.flush()
        return self._stderr_path.read_text(encoding="utf-8", errors="replace")[-chars:]

    def __enter__(self) -> NativeHost:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT_S)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self._stderr.close()
