"""Salvage: copy every row a damaged store still holds into a sound one.

Each table is read in rowid order; when a read hits a damaged page the scan skips ahead (1, 2, 4, ...
rowids) until it reads again, so one bad page costs only the rows on it. Rows go in with ``INSERT OR
IGNORE`` on their natural keys (record ids, session ids, ...), never their rowids, so a salvage into a
store that already holds some of them (a quarantined copy merged back) adds only what is missing. The
full-text index fills itself through the records triggers.
"""

from __future__ import annotations

import sqlite3

# Tables holding data, in an order that keeps references sensible; derived tables are rebuilt, not copied.
TABLES = ("projects", "records", "records_archive", "nodes", "edges", "record_entities", "sessions",
          "injections", "anchors", "drift", "team_sync")
SKIPPED_COLUMNS = {"seq"}  # rowids are the destination's own
BATCH = 500
MAX_SKIP = 1 << 40


def open_damaged(path: str) -> sqlite3.Connection:
    """A read-only connection to a damaged store (``immutable``: no locks, no WAL recovery writes)."""
    base = "file:" + path.replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(base + "?mode=ro&immutable=1", uri=True, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def _scan(src: sqlite3.Connection, table: str, cols: list[str], report: dict) -> list[tuple]:
    """Every readable row of ``table`` (``cols``), stepping around damaged pages."""
    select = f"SELECT rowid, {', '.join(cols)} FROM \"{table}\" WHERE rowid > ? ORDER BY rowid LIMIT ?"

    def read(after: int, limit: int) -> list | None:
        try:
            return src.execute(select, (after, limit)).fetchall()
        except sqlite3.DatabaseError:
            return None

    rows: list[tuple] = []
    after = -(1 << 62)
    while True:
        batch = read(after, BATCH)
        if batch is None:  # somewhere in the next BATCH rows: go one row at a time up to the damage
            one = read(after, 1)
            if one:
                rows.append(tuple(one[0])[1:])
                after = one[0][0]
                continue
            if one is not None:
                break
            report["damaged_reads"] += 1
            after = _past_damage(read, after)
            if after is None:
                break
            continue
        if not batch:
            break
        rows.extend(tuple(r)[1:] for r in batch)
        after = batch[-1][0]
    return rows


def _past_damage(read, bad: int) -> int | None:
    """The smallest position after ``bad`` from which reading works again (probe 1, 2, 4, ... ahead, then
    bisect back), so only the rows on damaged pages are lost; None when nothing after it reads."""
    step = 1
    good = None
    while step <= MAX_SKIP:
        if read(bad + step, 1) is not None:
            good = bad + step
            break
        step *= 2
    if good is None:
        return None
    lo = bad + step // 2 if step > 1 else bad
    while good - lo > 1:
        mid = (lo + good) // 2
        if read(mid, 1) is None:
            lo = mid
        else:
            good = mid
    return good


def salvage(src_path: str, dest: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Copy what ``src_path`` still holds into ``dest``; {table: {"read", "added", "damaged_reads"}}.

    Raises sqlite3.DatabaseError when not even the schema of ``src_path`` can be read.
    """
    src = open_damaged(src_path)
    try:
        present = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out: dict[str, dict[str, int]] = {}
        for table in TABLES:
            if table not in present:
                continue
            try:
                src_cols = set(_columns(src, table))
            except sqlite3.DatabaseError:
                out[table] = {"read": 0, "added": 0, "damaged_reads": 1}
                continue
            cols = [c for c in _columns(dest, table) if c in src_cols and c not in SKIPPED_COLUMNS]
            report = {"read": 0, "added": 0, "damaged_reads": 0}
            rows = _scan(src, table, cols, report)
            report["read"] = len(rows)
            sql = f"INSERT OR IGNORE INTO \"{table}\" ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            dest.execute("BEGIN IMMEDIATE")
            try:
                for row in rows:
                    report["added"] += dest.execute(sql, row).rowcount
                dest.execute("COMMIT")
            except BaseException:
                if dest.in_transaction:
                    dest.execute("ROLLBACK")
                raise
            out[table] = report
        return out
    finally:
        src.close()
