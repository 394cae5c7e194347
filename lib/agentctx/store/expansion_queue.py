"""Which current records need their retrieval expansion (``terms``, ``context``) worked out, and the
neighbours it is worked out from.

A record is pending (``expand_pending``) when it is new, when its text was edited, or when a record of
its session changed or went (the triggers of migration m009 set the flag and clear what was derived
from the old text). The consolidation pass (``consolidation.expand``) reads the queue in ``seq``
batches and writes a record's expansion only if the record did not change since it was read.
"""

from __future__ import annotations

import sqlite3

from agentctx.store.db import transaction
from agentctx.store.query import current_sql

_PENDING = f"FROM records WHERE {current_sql()} AND expand_pending = 1"


def count(conn: sqlite3.Connection) -> int:
    """Current records (every project) whose expansion is to be (re)done."""
    return conn.execute(f"SELECT COUNT(*) {_PENDING}").fetchone()[0]


def batch(conn: sqlite3.Connection, after_seq: int, limit: int) -> list[dict]:
    """The next pending records after ``after_seq``, in ``seq`` order; ``has_terms`` is 1 for a record whose
    ``terms`` are still there (only its session changed: its context alone is to be redone)."""
    return [dict(r) for r in conn.execute(
        "SELECT seq, id, project_id, session_id, title, body, updated_at, terms IS NOT NULL AS has_terms "
        f"{_PENDING} AND seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))]


def _side(conn: sqlite3.Connection, rec: dict, before: bool) -> dict | None:
    op, order = ("<", "DESC") if before else (">", "ASC")
    row = conn.execute(
        f"SELECT seq, id, type, title, body, updated_at, expand_pending FROM records WHERE session_id = ? "
        f"AND project_id = ? AND seq {op} ? ORDER BY seq {order} LIMIT 1",
        (rec["session_id"], rec["project_id"], rec["seq"])).fetchone()
    return dict(row) if row else None


def neighbours(conn: sqlite3.Connection, rec: dict) -> tuple[dict | None, dict | None]:
    """The records just before and just after ``rec`` in its session (any status), or None."""
    if not rec.get("session_id"):
        return None, None
    return _side(conn, rec, True), _side(conn, rec, False)


_NEIGHBOUR_COLUMNS = "seq, id, type, title, body, updated_at, expand_pending"
_CHUNK = 300  # records per statement (3 parameters each)


def neighbours_of(conn: sqlite3.Connection, recs: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """``neighbours`` of each record, in order, in a few statements instead of two per record: the
    neighbours' ``seq`` first (each record's session and project as given), then their rows."""
    sides: dict[int, tuple[int | None, int | None]] = {}
    keyed = [r for r in recs if r.get("session_id")]
    side = ("(SELECT r.seq FROM records r WHERE r.session_id = b.sid AND r.project_id = b.pid "
            "AND r.seq {op} b.seq ORDER BY r.seq {order} LIMIT 1)")
    for start in range(0, len(keyed), _CHUNK):
        part = keyed[start:start + _CHUNK]
        values = ", ".join("(?, ?, ?)" for _ in part)
        params = [x for r in part for x in (r["seq"], r["session_id"], r["project_id"])]
        for seq, before, after in conn.execute(
                f"WITH b(seq, sid, pid) AS (VALUES {values}) SELECT b.seq, {side.format(op='<', order='DESC')}, "
                f"{side.format(op='>', order='ASC')} FROM b", params):
            sides[seq] = (before, after)
    wanted = sorted({s for pair in sides.values() for s in pair if s is not None})
    rows: dict[int, dict] = {}
    for start in range(0, len(wanted), 900):
        part = wanted[start:start + 900]
        for row in conn.execute(f"SELECT {_NEIGHBOUR_COLUMNS} FROM records WHERE seq IN ({','.join('?' * len(part))})",
                                part):
            rows[row[0]] = dict(row)
    out = []
    for rec in recs:
        before, after = sides.get(rec["seq"], (None, None)) if rec.get("session_id") else (None, None)
        out.append((rows.get(before) if before is not None else None, rows.get(after) if after is not None else None))
    return out


def write(conn: sqlite3.Connection, rows: list[tuple[int, str | None, str, str | None]],
          contexts: list[tuple[int, str, str | None]] = ()) -> int:
    """In one transaction: (seq, terms, context, updated_at as read) rows, and (seq, context, updated_at)
    rows for neighbours whose context alone changed. A record edited since it was read keeps its flag
    (it is done again next time). ``terms`` None means the record's terms stand (only its session
    changed) and only its context is written, if its terms were not cleared meanwhile; otherwise
    ``terms`` is never NULL here ("" for none): NULL is how the index triggers tell their own clearing
    apart. How many records were written."""
    full = [(terms or "", context, seq, updated_at) for seq, terms, context, updated_at in rows if terms is not None]
    ctx_only = [(context, seq, updated_at) for seq, terms, context, updated_at in rows if terms is None]
    done = 0
    with transaction(conn):
        if full:
            done += conn.executemany("UPDATE records SET terms = ?, context = ?, expand_pending = 0 "
                                     "WHERE seq = ? AND updated_at IS ?", full).rowcount
        if ctx_only:
            done += conn.executemany("UPDATE records SET context = ?, expand_pending = 0 WHERE seq = ? "
                                     "AND updated_at IS ? AND terms IS NOT NULL", ctx_only).rowcount
        if contexts:
            conn.executemany("UPDATE records SET context = ? WHERE seq = ? AND updated_at IS ? AND expand_pending = 0",
                             list(contexts))
    return done


MERGE_PAGES = 100  # pages of the full-text index merged per transaction (tens of ms: hooks wait at most that)


def compact_index(conn: sqlite3.Connection) -> int:
    """Merge the full-text index's segments into one, as FTS5 ``optimize`` does, but in short
    transactions: a pass that rewrote the terms of many records leaves one small segment per update,
    and every search would read them all (at 100k records a prompt took a third longer until this ran).
    ``optimize`` does it in one transaction of about a second at 100k records, holding the write lock
    that long; FTS5's incremental ``merge`` (negative first: every segment to one level, then positive
    until a call does no work) gives the same index, MERGE_PAGES at a time. How many transactions."""
    pages, calls = -MERGE_PAGES, 0
    while True:
        with transaction(conn):
            before = conn.total_changes
            conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('merge', ?)", (pages,))
            worked = conn.total_changes - before >= 2
        calls += 1
        pages = MERGE_PAGES
        if not worked:
            return calls
