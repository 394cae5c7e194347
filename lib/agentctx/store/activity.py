"""What happened in one project during a time window (the daily log's reads: ``sharing/daylog.py``).

Windows are ``[start, end)`` in stored timestamps (UTC). Records count by when the store learned
them (``recorded_at``), files by when a session first touched them (the ``observed_in`` edge),
sessions by their start or end falling inside the window.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from agentctx.store import sessions
from agentctx.store.query import COLUMNS


def records_between(conn: sqlite3.Connection, project_id: str, start: str, end: str, types: Iterable[str], *,
                    key_prefix: str | None = None, touched: bool = False) -> list[dict]:
    """The project's records of these types recorded in the window (with ``touched``, also those
    updated or reinforced in it), current or not (archive apart), oldest first."""
    types = list(types)
    when = "(recorded_at >= ? AND recorded_at < ?)" + (" OR (updated_at >= ? AND updated_at < ?)" if touched else "")
    sql = (f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND ({when}) "
           f"AND type IN ({','.join('?' * len(types))})")
    args: list = [project_id, start, end, *((start, end) if touched else ()), *types]
    if key_prefix is not None:
        sql += " AND key LIKE ? ESCAPE '\\'"
        args.append(key_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return [dict(r) for r in conn.execute(sql + " ORDER BY recorded_at, seq", args)]


def files_between(conn: sqlite3.Connection, project_id: str, start: str, end: str, limit: int = 200) -> list[dict]:
    """Files the project's sessions wrote or edited, first touched in the window: {name, times}, most touched first."""
    return [dict(r) for r in conn.execute(
        "SELECT n.name, CAST(SUM(e.weight) AS INTEGER) AS times FROM edges e JOIN nodes n ON n.id = e.from_id "
        "WHERE e.rel_type = 'observed_in' AND n.kind = 'file' AND n.project_id = ? AND e.created_at >= ? "
        "AND e.created_at < ? GROUP BY n.name ORDER BY times DESC, n.name LIMIT ?", (project_id, start, end, limit))]


def sessions_between(conn: sqlite3.Connection, project_id: str, start: str, end: str) -> list[dict]:
    """The project's sessions active in the window (started in it, or started before and not ended
    before it), oldest first, with their metadata (JSON text) and token counts."""
    sessions.settle(conn)  # starts still waiting in files (store.starts) count
    return [dict(r) for r in conn.execute(
        "SELECT session_id, started_at, ended_at, end_reason, tokens_injected, injections, meta, "
        "extraction_cost_usd FROM sessions WHERE project_id = ? AND started_at < ? "
        "AND (ended_at IS NULL OR ended_at >= ?) ORDER BY started_at", (project_id, end, start))]
