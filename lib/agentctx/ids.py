"""Record ids: ULIDs (26 chars, Crockford base32, sortable by creation time)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(ms: int | None = None, rand: int | None = None) -> str:
    """A ULID: 48 bits of milliseconds (default now), then 80 random bits (default os.urandom).

    Passing both makes ids reproducible (the benchmark store builder does).
    """
    if ms is None:
        ms = int(time.time() * 1000)
    if rand is None:
        rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (rand & ((1 << 80) - 1))
    chars = []
    for _ in range(LENGTH):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


LENGTH = 26


def is_full_id(text: str) -> bool:
    """True for a whole ULID (26 characters of the alphabet, any case)."""
    return len(text.strip()) == LENGTH and looks_like_id(text)


def looks_like_id(text: str) -> bool:
    """True for a full ULID or a prefix of one (at least 6 chars)."""
    upper = text.strip().upper()
    return 6 <= len(upper) <= LENGTH and all(c in _ALPHABET for c in upper)
