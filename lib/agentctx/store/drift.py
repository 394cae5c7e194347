"""The ``drift`` table: the CLAUDE.md drift candidates of each project (what the last scan found).
Every statement on it is here; what counts as drift is ``sharing.drift``."""

from __future__ import annotations

import sqlite3

from agentctx.store.db import bump_generation, transaction


def replace(conn: sqlite3.Connection, project_id: str, candidates: list[dict], stamp: str) -> None:
    """Store the project's candidates in place of the old ones, in one transaction; bumps the store
    generation when the set changed (a cached SessionStart digest then picks the note up)."""
    with transaction(conn):
        before = {(r[0], r[1]) for r in conn.execute("SELECT record_id, kind FROM drift WHERE project_id = ?",
                                                     (project_id,))}
        conn.execute("DELETE FROM drift WHERE project_id = ?", (project_id,))
        conn.executemany(
            "INSERT OR REPLACE INTO drift (record_id, project_id, score, kind, detail, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(c["record_id"], project_id, c["score"], c["kind"], c["detail"], stamp) for c in candidates],
        )
        if before != {(c["record_id"], c["kind"]) for c in candidates}:
            bump_generation(conn)


def stored(conn: sqlite3.Connection, project_id: str) -> list[dict]:
    """The stored candidates, best first."""
    rows = conn.execute("SELECT record_id, project_id, score, kind, detail, updated_at FROM drift "
                        "WHERE project_id = ? ORDER BY score DESC, record_id", (project_id,)).fetchall()
    return [dict(r) for r in rows]


def counts(conn: sqlite3.Connection, project_id: str) -> dict[str, int]:
    """{kind: candidates} of the project (one indexed query)."""
    return {r[0]: r[1] for r in conn.execute("SELECT kind, COUNT(*) FROM drift WHERE project_id = ? GROUP BY kind",
                                             (project_id,))}


def forget(conn: sqlite3.Connection, record_id: str) -> int:
    """Drop a record's candidates (inside the caller's transaction); how many rows went."""
    return conn.execute("DELETE FROM drift WHERE record_id = ?", (record_id,)).rowcount
