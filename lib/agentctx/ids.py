"""Record ids: ULIDs (26 chars, Crockford base32, sortable by creation time)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id() -> str:
    """A fresh ULID: 48 bits of milliseconds, then 80 random bits."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def looks_like_id(text: str) -> bool:
    """True for a full ULID or a prefix of one (at least 6 chars)."""
    upper = text.strip().upper()
    return 6 <= len(upper) <= 26 and all(c in _ALPHABET for c in upper)
