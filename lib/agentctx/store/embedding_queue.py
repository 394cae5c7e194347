"""Which records need a vector from the current model: ``pending_embedding`` and ``embedded_model``.

A record is pending when it is current and was never embedded, was edited since (``records.revise``
sets the flag), or was embedded by another model. The consolidation pass reads the queue in
``seq`` batches and marks a batch done only for records unchanged since they were read.
"""

from __future__ import annotations

import sqlite3

from agentctx.store.query import current_sql

_PENDING = f"FROM records WHERE {current_sql()} AND (pending_embedding = 1 OR embedded_model IS NOT ?)"


def count(conn: sqlite3.Connection, model: str) -> int:
    """Current records (every project) without a vector from ``model``."""
    return conn.execute(f"SELECT COUNT(*) {_PENDING}", (model,)).fetchone()[0]


def batch(conn: sqlite3.Connection, model: str, after_seq: int, limit: int) -> list[dict]:
    """The next pending records after ``after_seq``, in ``seq`` order: what embedding needs."""
    return [dict(r) for r in conn.execute(
        f"SELECT seq, id, project_id, session_id, type, title, body, valid_from, recorded_at, updated_at {_PENDING} "
        "AND seq > ? ORDER BY seq LIMIT ?", (model, after_seq, limit))]


def mark_done(conn: sqlite3.Connection, model: str, rows: list[dict]) -> None:
    """These records now have a ``model`` vector, unless they changed since ``batch`` read them."""
    conn.executemany("UPDATE records SET pending_embedding = 0, embedded_model = ? WHERE id = ? AND updated_at IS ?",
                     [(model, r["id"], r["updated_at"]) for r in rows])


def reset(conn: sqlite3.Connection) -> None:
    """The model changed: every embedded record is pending again."""
    conn.execute("UPDATE records SET pending_embedding = 1, embedded_model = NULL WHERE embedded_model IS NOT NULL")


def current_ids(conn: sqlite3.Connection) -> set[str]:
    """Ids of every current record in every project (vectors of any other record are stale)."""
    return {r[0] for r in conn.execute(f"SELECT id FROM records WHERE {current_sql()}")}
