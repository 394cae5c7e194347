"""Draw the plugin icon (.claude-plugin/icon.png, 512x512) with the standard library only.

A dark tile with three stacked record cards; the top one struck through (superseded).
Run: python3 scripts/make_icon.py
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIZE = 512
BG, CARD, ACCENT, STRIKE = (22, 27, 34), (235, 240, 245), (88, 166, 255), (248, 81, 73)


def pixel(x: int, y: int) -> tuple[int, int, int]:
    for i, top in enumerate((110, 220, 330)):
        left, right, bottom = 96 + i * 20, 416 - i * 20, top + 78
        if left <= x < right and top <= y < bottom:
            if left <= x < left + 14:
                return ACCENT
            if i == 0 and top + 36 <= y < top + 44:
                return STRIKE
            return CARD
    return BG


def png(width: int, height: int) -> bytes:
    raw = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / ".claude-plugin" / "icon.png"
    target.write_bytes(png(SIZE, SIZE))
    print(target)
