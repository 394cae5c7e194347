"""Store-wide summaries: every project with its record, session and drift counts (the dashboard)."""

from __future__ import annotations

import sqlite3

from agentctx.store import sessions
from agentctx.store.query import current_sql


def projects(conn: sqlite3.Connection) -> list[dict]:
    """Every project with its current and total record counts, sessions and drift candidates,
    most recently seen first."""
    sessions.settle(conn)  # starts still waiting in files (store.starts) count, and their projects
    rows = conn.execute(
        f"""
        SELECT p.id, p.name, p.root, p.remote, p.first_seen, p.last_seen,
          (SELECT COUNT(*) FROM records r WHERE r.project_id = p.id AND {current_sql('r')}) AS current_records,
          (SELECT COUNT(*) FROM records r WHERE r.project_id = p.id) AS all_records,
          (SELECT COUNT(*) FROM sessions s WHERE s.project_id = p.id) AS sessions,
          (SELECT COUNT(*) FROM drift d WHERE d.project_id = p.id) AS drift
        FROM projects p ORDER BY p.last_seen DESC, p.name
        """
    ).fetchall()
    return [dict(r) for r in rows]
