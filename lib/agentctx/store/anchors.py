"""The ``anchors`` table: one anchor state per session (what PreCompact keeps from compaction).

Every statement on ``anchors`` is here; what an anchor holds and how two are merged is
``capture.handover``. Each part column holds a JSON list of ``{"key", "text"}`` items.
"""

from __future__ import annotations

import json
import sqlite3

PARTS = ("intent", "changes", "decisions", "next_steps")


def get(conn: sqlite3.Connection, sid: str) -> dict | None:
    """The stored anchor of a session: its parts as lists of valid items, plus project, version and
    ``updated_at``; None when the session has none."""
    row = conn.execute("SELECT * FROM anchors WHERE session_id = ?", (sid,)).fetchone()
    if not row:
        return None
    out: dict = {"session_id": sid, "project_id": row["project_id"], "version": row["version"],
                 "updated_at": row["updated_at"]}
    for part in PARTS:
        try:
            items = json.loads(row[part] or "[]")
        except ValueError:
            items = []
        items = items if isinstance(items, list) else []
        out[part] = [i for i in items if isinstance(i, dict) and isinstance(i.get("key"), str)
                     and isinstance(i.get("text"), str)]
    return out


def put(conn: sqlite3.Connection, sid: str, project_id: str, parts: dict, version: int, stamp: str) -> None:
    """Store a session's anchor (inside the caller's transaction), replacing the one it had."""
    conn.execute(
        "INSERT INTO anchors (session_id, project_id, intent, changes, decisions, next_steps, version, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET project_id = excluded.project_id, "
        "intent = excluded.intent, changes = excluded.changes, decisions = excluded.decisions, "
        "next_steps = excluded.next_steps, version = excluded.version, updated_at = excluded.updated_at",
        (sid, project_id, *(json.dumps(parts[p], ensure_ascii=False) for p in PARTS), version, stamp),
    )
