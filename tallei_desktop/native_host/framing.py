"""The browser's framing: each message is its length as a native-endian 32-bit unsigned integer, then UTF-8 JSON.

Reading copes with short reads (a pipe hands over whatever has arrived), ends cleanly when input
ends, even in the middle of a message, and refuses a message over :data:`MAX_MESSAGE` without
holding it: its bytes are read and dropped so the next message starts where it should.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["MAX_MESSAGE", "Frame", "FrameReader", "Oversized", "encode_frame", "write_frame"]

#: The largest message either side sends: the browser's limit for a host's reply, ours for a request.
MAX_MESSAGE: Final = 1024 * 1024

_HEADER: Final = struct.Struct("=I")
_CHUNK: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Frame:
    """One message's bytes, as sent."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Oversized:
    """A message longer than :data:`MAX_MESSAGE`, read and dropped."""

    length: int


class FrameReader:
    """The messages on a file descriptor, one at a time; ``None`` once input has ended."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._ended = False

    def next(self) -> Frame | Oversized | None:
        header = self._take(_HEADER.size)
        if header is None:
            return None
        (length,) = _HEADER.unpack(header)
        if length > MAX_MESSAGE:
            return Oversized(length) if self._skip(length) else None
        data = self._take(length)
        return None if data is None else Frame(data)

    def _fill(self) -> bool:
        if self._ended:
            return False
        chunk = os.read(self._fd, _CHUNK)
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def _take(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not self._fill():
                return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _skip(self, size: int) -> bool:
        left = size
        while True:
            dropped = min(left, len(self._buffer))
            del self._buffer[:dropped]
            left -= dropped
            if left == 0:
                return True
            if not self._fill():
                return False


def encode_frame(message: dict[str, Any]) -> bytes:
    """``message`` as JSON behind its length (the caller keeps it within :data:`MAX_MESSAGE`)."""
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(data)) + data


def write_frame(fd: int, frame: bytes) -> None:
    """Write all of ``frame`` to ``fd`` (a pipe may take it in parts)."""
    view = memoryview(frame)
    while view:
        written = os.write(fd, view)
        view = view[written:]
