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
    """The next pending records after ``after_seq``, in ``seq`` order."""
    return [dict(r) for r in conn.execute(
        f"SELECT seq, id, project_id, session_id, title, body, updated_at {_PENDING} AND seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit))]


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


def write(conn: sqlite3.Connection, rows: list[tuple[int, str, str, str | None]],
          contexts: list[tuple[int, str, str | None]] = ()) -> int:
    """In one transaction: (seq, terms, context, updated_at as read) rows, and (seq, context, updated_at)
    rows for neighbours whose context alone changed. A record edited since it was read keeps its flag
    (it is done again next time). ``terms`` is never NULL here ("" for none): NULL is how the index
    triggers tell their own clearing apart. How many records were written."""
    done = 0
    with transaction(conn):
        for seq, terms, context, updated_at in rows:
            cur = conn.execute("UPDATE records SET terms = ?, context = ?, expand_pending = 0 "
                               "WHERE seq = ? AND updated_at IS ?", (terms or "", context, seq, updated_at))
            done += cur.rowcount
        for seq, context, updated_at in contexts:
            conn.execute("UPDATE records SET context = ? WHERE seq = ? AND updated_at IS ? AND expand_pending = 0",
                         (context, seq, updated_at))
    return done


def compact_index(conn: sqlite3.Connection) -> None:
    """Merge the full-text index's segments into one (FTS5 ``optimize``): a pass that rewrote the terms of
    many records leaves one small segment per update, and every search would read them all (at 100k
    records a prompt took a third longer until this ran; it takes about a second)."""
    with transaction(conn):
        conn.execute("INSERT INTO records_fts(records_fts) VALUES ('optimize')")
