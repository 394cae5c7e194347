"""Session rows, per-session dedup state and the token accounting of every injection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from agentctx import clock

# Dedup rows of sessions that never reached SessionEnd are dropped after this long.
STALE_INJECTION_DAYS = 3


def start(conn: sqlite3.Connection, session_id: str, project_id: str, cwd: str, source: str) -> None:
    """Create or refresh the session row. After compaction or /clear the model has lost
    what was injected earlier, so the session's dedup state is reset."""
    stamp = clock.now()
    conn.execute(
        "INSERT INTO sessions (session_id, project_id, cwd, source, started_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(session_id) DO UPDATE SET project_id = excluded.project_id, cwd = excluded.cwd, "
        "source = excluded.source, ended_at = NULL",
        (session_id, project_id, cwd, source, stamp),
    )
    if source in ("compact", "clear"):
        conn.execute("DELETE FROM injections WHERE session_id = ?", (session_id,))


def injected_ids(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Records already injected in this session."""
    return {r[0] for r in conn.execute("SELECT record_id FROM injections WHERE session_id = ?", (session_id,))}


def account(
    conn: sqlite3.Connection, session_id: str, project_id: str, event: str,
    record_ids: Iterable[str], tokens: int,
) -> None:
    """Record one injection: dedup rows, the session's token total, access counts."""
    stamp = clock.now()
    record_ids = list(record_ids)
    conn.execute(
        "INSERT INTO sessions (session_id, project_id, started_at) VALUES (?, ?, ?) "
        "ON CONFLICT(session_id) DO NOTHING",
        (session_id, project_id, stamp),
    )
    conn.execute(
        "UPDATE sessions SET tokens_injected = tokens_injected + ?, injections = injections + 1 "
        "WHERE session_id = ?",
        (tokens, session_id),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO injections (session_id, record_id, injected_at, tokens, event) "
        "VALUES (?, ?, ?, ?, ?)",
        [(session_id, rid, stamp, 0, event) for rid in record_ids],
    )
    conn.executemany(
        "UPDATE records SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
        [(stamp, rid) for rid in record_ids],
    )


def end(conn: sqlite3.Connection, session_id: str, reason: str | None) -> None:
    """Mark the session ended and clean up dedup state (its own and any stale)."""
    stamp = clock.now()
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE session_id = ?", (stamp, reason, session_id)
    )
    conn.execute("DELETE FROM injections WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM injections WHERE injected_at < ?", (clock.days_before(stamp, STALE_INJECTION_DAYS),))
