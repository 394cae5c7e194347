"""The ``team_sync`` table: which version of a project's team file (``.agentctx/context.md``) this
store last synced (its sha256 and when). Every statement on it is here; the file's format and the
import/export are ``sharing.teamsync``."""

from __future__ import annotations

import sqlite3


def remember(conn: sqlite3.Connection, project_id: str, path: str, sha256: str, stamp: str) -> None:
    """Record the synced version of the project's team file."""
    conn.execute("INSERT OR REPLACE INTO team_sync (project_id, path, sha256, synced_at) VALUES (?, ?, ?, ?)",
                 (project_id, path, sha256, stamp))


def synced_sha256(conn: sqlite3.Connection, project_id: str) -> str | None:
    """The sha256 of the version last synced, or None."""
    row = conn.execute("SELECT sha256 FROM team_sync WHERE project_id = ?", (project_id,)).fetchone()
    return row[0] if row is not None else None


def synced_at(conn: sqlite3.Connection, project_id: str) -> str | None:
    """When the team file was last synced (wall-clock, compared with its mtime), or None."""
    row = conn.execute("SELECT synced_at FROM team_sync WHERE project_id = ?", (project_id,)).fetchone()
    return row[0] if row is not None else None


def touch(conn: sqlite3.Connection, project_id: str, stamp: str) -> None:
    """The file was checked and is unchanged: move its synced time on."""
    conn.execute("UPDATE team_sync SET synced_at = ? WHERE project_id = ?", (stamp, project_id))
