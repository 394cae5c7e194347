"""The ``projects`` table: every project this store has seen (id, name, root folder, remote, first
and last seen). Every statement on it is here; how a project is identified is ``agentctx.project``."""

from __future__ import annotations

import sqlite3

from agentctx import clock
from agentctx.project import Project


def register(conn: sqlite3.Connection, project: Project) -> None:
    """Insert or refresh the project's row (name, root, remote, last seen)."""
    stamp = clock.now()
    conn.execute(
        "INSERT INTO projects (id, name, root, remote, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET name = excluded.name, root = excluded.root, "
        "remote = excluded.remote, last_seen = excluded.last_seen",
        (project.id, project.name, project.root, project.remote, stamp, stamp),
    )


def root(conn: sqlite3.Connection, project_id: str) -> str | None:
    """The folder the project was last seen in, or None when unknown."""
    row = conn.execute("SELECT root FROM projects WHERE id = ?", (project_id,)).fetchone()
    return row[0] if row is not None and row[0] else None


def every(conn: sqlite3.Connection) -> list[dict]:
    """Every known project: {id, name, root, remote}, by name."""
    return [dict(r) for r in conn.execute("SELECT id, name, root, remote FROM projects ORDER BY name, id")]
