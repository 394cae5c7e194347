"""Damage a store the way a bad disk or a killed copy does: overwrite chosen pages of the file with garbage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

FTS_PAGES = ("records_fts_data", "records_fts_idx", "records_fts_docsize", "records_fts_config")


def _geometry(db: Path) -> tuple[int, dict[str, int]]:
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = {r[0]: r[1] for r in conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0")}
    finally:
        conn.close()
    return size, roots


def _overwrite(db: Path, pages: list[int], size: int) -> None:
    with open(db, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\xde\xad\xbe\xef" * (size // 4))


def damage_tables(db: Path, names: tuple[str, ...] = FTS_PAGES) -> None:
    """Overwrite the root page of each named table (the FTS index's shadow tables by default)."""
    size, roots = _geometry(db)
    _overwrite(db, [roots[n] for n in names], size)


def last_leaf(db: Path, table: str) -> int:
    """The page number of the right-most leaf of ``table``'s b-tree (read from the file's own pages)."""
    size, roots = _geometry(db)
    page = roots[table]
    raw = db.read_bytes()
    while True:
        start = (page - 1) * size
        header = start + (100 if page == 1 else 0)
        kind = raw[header]
        if kind == 0x0D:  # table leaf
            return page
        assert kind == 0x05, f"page {page} is not a table b-tree page ({kind:#x})"
        page = int.from_bytes(raw[header + 8:header + 12], "big")  # the right-most child


def damage_leaf(db: Path, table: str) -> int:
    """Overwrite ``table``'s last leaf page; the page number."""
    size, _ = _geometry(db)
    page = last_leaf(db, table)
    _overwrite(db, [page], size)
    return page


def fts_rows(db: Path, kind: str, seed: int = 0) -> int:
    """Replace rows of the FTS index's ``records_fts_data`` with random bytes of the same length (the file's
    pages stay well-formed: ``PRAGMA integrity_check`` passes). ``kind``: ``averages`` (row 1, FTS5's
    running totals), ``structure`` (row 10, the segment list) or ``leaves`` (the segment leaves, ids above
    10). The rows replaced."""
    import random

    rnd = random.Random(seed)
    conn = sqlite3.connect(db)
    try:
        where = {"averages": "id = 1", "structure": "id = 10", "leaves": "id > 10"}[kind]
        rows = conn.execute(f"SELECT id, length(block) FROM records_fts_data WHERE {where}").fetchall()
        for rid, size in rows:
            block = bytearray(rnd.randbytes(size))
            if kind == "averages":
                block[-1] |= 0x80  # random, but never a well-formed record (its last varint runs off the end)
            conn.execute("UPDATE records_fts_data SET block = ? WHERE id = ?", (bytes(block), rid))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return len(rows)
