"""Draw the toolbar icons (a rounded teal square with three lines) as PNGs, with no image library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

TEAL = (26, 115, 110)
WHITE = (255, 255, 255)
SAMPLES = 4  # per axis, for smooth edges


def _inside_rounded_square(x: float, y: float, radius: float) -> bool:
    cx = min(max(x, radius), 1 - radius)
    cy = min(max(y, radius), 1 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _on_line(x: float, y: float) -> bool:
    # The chip's mark: lines at 4.5/16, 8/16 and 11.5/16, the last one shorter.
    for row, end in ((4.5, 13.0), (8.0, 13.0), (11.5, 9.0)):
        if abs(y * 16 - row) <= 0.85 and 3.0 <= x * 16 <= end:
            return True
    return False


def draw(size: int) -> bytes:
    rows = []
    for py in range(size):
        row = bytearray([0])
        for px in range(size):
            square = line = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    x = (px + (sx + 0.5) / SAMPLES) / size
                    y = (py + (sy + 0.5) / SAMPLES) / size
                    if _inside_rounded_square(x, y, 0.22):
                        square += 1
                        line += _on_line(x, y)
            n = SAMPLES * SAMPLES
            alpha = square / n
            mix = line / square if square else 0.0
            rgb = [round(t * (1 - mix) + w * mix) for t, w in zip(TEAL, WHITE, strict=True)]
            row += bytes([*rgb, round(alpha * 255)])
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    folder = Path(__file__).resolve().parent / "extension" / "icons"
    folder.mkdir(exist_ok=True)
    for size in (16, 32, 48, 128):
        (folder / f"tallei-{size}.png").write_bytes(draw(size))


if __name__ == "__main__":
    main()
