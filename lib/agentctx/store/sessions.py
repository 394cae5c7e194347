"""Session rows, per-session dedup state and the token accounting of every injection.

Every statement on ``sessions`` and ``injections`` is here; a session row is created in one
place (:func:`ensure`), whichever hook or worker meets the session first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from agentctx import clock, jsonfast
from agentctx.project import Project
from agentctx.store import projects, records, starts
from agentctx.store.db import is_read_only, transaction

# Dedup rows of sessions that never reached SessionEnd are dropped after this long.
STALE_INJECTION_DAYS = 3


def settle(conn: sqlite3.Connection, session_id: str | None = None) -> int:
    """Fold the SessionStarts waiting in files (``starts``: SessionStart does not write the store) into it:
    this session's, or every session's. Every function here that reads or creates a session row calls it
    first, so UserPromptSubmit's dedup sees what SessionStart injected. The number folded; a store that
    cannot take them (read-only, locked) leaves them waiting, and the caller goes on."""
    if is_read_only(conn):
        return 0
    taken = starts.take(session_id)
    if not taken:
        return 0
    try:
        if conn.in_transaction:  # inside the caller's transaction: a savepoint, committed with it
            conn.execute("SAVEPOINT settle")
            try:
                _fold(conn, taken)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK TO settle")
                    conn.execute("RELEASE settle")
                raise
            conn.execute("RELEASE settle")
        else:
            with transaction(conn):
                _fold(conn, taken)
    except sqlite3.Error:
        starts.release(taken)
        return 0
    starts.done(taken)
    return len(taken)


def _fold(conn: sqlite3.Connection, taken: list[tuple[str, dict]]) -> None:
    for _, entry in taken:
        sid, p = entry["session_id"], entry["project"]
        proj = Project(p["id"], p["name"], p["root"], p.get("remote") if isinstance(p.get("remote"), str) else None)
        at = entry.get("at")
        stamp = clock.at(float(at)) if isinstance(at, (int, float)) else None  # when the session started
        projects.register(conn, proj)
        _start(conn, sid, proj.id, proj.root, entry["source"], stamp)
        follow(conn, sid, proj.id, entry["cwd"])
        account(conn, sid, proj.id, "SessionStart", [r for r in entry["record_ids"] if isinstance(r, str)],
                entry["tokens"])


def ensure(conn: sqlite3.Connection, session_id: str, project_id: str, cwd: str | None = None, *,
           source: str | None = None, refresh: bool = False, stamp: str | None = None) -> None:
    """Create the session row if it is new. With ``refresh`` (SessionStart) an existing row takes
    this project, folder and source and is open again."""
    settle(conn, session_id)
    conflict = ("DO UPDATE SET project_id = excluded.project_id, cwd = excluded.cwd, source = excluded.source, "
                "ended_at = NULL") if refresh else "DO NOTHING"
    conn.execute(
        "INSERT INTO sessions (session_id, project_id, cwd, source, started_at) VALUES (?, ?, ?, ?, ?) "
        f"ON CONFLICT(session_id) {conflict}",
        (session_id, project_id, cwd, source, stamp or clock.now()),
    )


def start(conn: sqlite3.Connection, session_id: str, project_id: str, cwd: str, source: str) -> None:
    """Create or refresh the session row. After compaction or /clear the model has lost
    what was injected earlier, so the session's dedup state is reset."""
    _start(conn, session_id, project_id, cwd, source)


def _start(conn: sqlite3.Connection, session_id: str, project_id: str, cwd: str, source: str,
           stamp: str | None = None) -> None:
    ensure(conn, session_id, project_id, cwd, source=source, refresh=True, stamp=stamp)
    if source in ("compact", "clear"):
        conn.execute("DELETE FROM injections WHERE session_id = ?", (session_id,))


def get(conn: sqlite3.Connection, session_id: str) -> dict | None:
    """The session's row, or None."""
    settle(conn, session_id)
    row = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return dict(row) if row else None


def meta(conn: sqlite3.Connection, session_id: str) -> dict:
    """The session's metadata (git branch, commits, PRs seen); {} when none or unreadable."""
    row = conn.execute("SELECT meta FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    try:
        value = jsonfast.loads(row["meta"]) if row and row["meta"] else {}
    except ValueError:
        value = {}
    return value if isinstance(value, dict) else {}


def set_meta(conn: sqlite3.Connection, session_id: str, value: dict) -> None:
    """Replace the session's metadata."""
    conn.execute("UPDATE sessions SET meta = ? WHERE session_id = ?", (jsonfast.dumps(value), session_id))


def save_extraction(conn: sqlite3.Connection, session_id: str, *, watermark: str | None = None, run: bool = True,
                    input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0,
                    billed: bool = False) -> None:
    """After an extraction run, in one transaction: the new watermark (if given), one more run
    (``run``), and the tokens and cost billed (``billed``)."""
    with transaction(conn):
        if watermark is not None:
            conn.execute("UPDATE sessions SET extraction_watermark = ? WHERE session_id = ?", (watermark, session_id))
        if run:
            conn.execute("UPDATE sessions SET extraction_runs = extraction_runs + 1 WHERE session_id = ?",
                         (session_id,))
        if billed:
            conn.execute(
                "UPDATE sessions SET extraction_input_tokens = extraction_input_tokens + ?, "
                "extraction_output_tokens = extraction_output_tokens + ?, "
                "extraction_cost_usd = COALESCE(extraction_cost_usd, 0) + ? WHERE session_id = ?",
                (input_tokens, output_tokens, cost_usd, session_id),
            )


# Injections into a subagent (its own context) are accounted to the session but never count as seen
# by the main conversation: its dedup ignores them, and a later injection there takes the row over.
SUBAGENT_EVENT = "SubagentStart"


def injected_ids(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Records already injected into this session's main conversation."""
    settle(conn, session_id)
    return {r[0] for r in conn.execute("SELECT record_id FROM injections WHERE session_id = ? AND event IS NOT ?",
                                       (session_id, SUBAGENT_EVENT))}


def account(
    conn: sqlite3.Connection, session_id: str, project_id: str, event: str,
    record_ids: Iterable[str], tokens: int,
) -> None:
    """Record one injection: dedup rows, the session's token total, access counts."""
    stamp = clock.now()
    record_ids = list(record_ids)
    ensure(conn, session_id, project_id, stamp=stamp)
    conn.execute(
        "UPDATE sessions SET tokens_injected = tokens_injected + ?, injections = injections + 1 "
        "WHERE session_id = ?",
        (tokens, session_id),
    )
    takeover = "DO NOTHING" if event == SUBAGENT_EVENT else (
        "DO UPDATE SET injected_at = excluded.injected_at, event = excluded.event WHERE injections.event = ?")
    conn.executemany(
        "INSERT INTO injections (session_id, record_id, injected_at, event) VALUES (?, ?, ?, ?) "
        f"ON CONFLICT(session_id, record_id) {takeover}",
        [(session_id, rid, stamp, event, *(() if event == SUBAGENT_EVENT else (SUBAGENT_EVENT,)))
         for rid in record_ids],
    )
    records.touch(conn, record_ids, stamp, project_id=project_id)


def follow(conn: sqlite3.Connection, session_id: str, project_id: str, cwd: str) -> bool:
    """The session is now in ``cwd`` (project ``project_id``): what the MCP tools answer for. True when
    that changed the session's project (False: the same project, or the same folder)."""
    ensure(conn, session_id, project_id, cwd)
    before = conn.execute("SELECT COALESCE(current_project_id, project_id) FROM sessions WHERE session_id = ?",
                          (session_id,)).fetchone()[0]
    conn.execute("UPDATE sessions SET current_cwd = ?, current_project_id = ? WHERE session_id = ? "
                 "AND current_cwd IS NOT ?", (cwd, project_id, session_id, cwd))
    return before != project_id


def current_folder(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The folder the session is in now (set by :func:`follow`), or None when unknown."""
    settle(conn, session_id)
    row = conn.execute("SELECT current_cwd FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return row[0] if row else None


def end(conn: sqlite3.Connection, session_id: str, reason: str | None) -> None:
    """Mark the session ended and clean up dedup state (its own and any stale)."""
    settle(conn, session_id)
    stamp = clock.now()
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE session_id = ?", (stamp, reason, session_id)
    )
    conn.execute("DELETE FROM injections WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM injections WHERE injected_at < ?", (clock.days_before(stamp, STALE_INJECTION_DAYS),))


def left_open(conn: sqlite3.Connection, project_id: str, except_session: str, limit: int = 5) -> list[dict]:
    """Sessions of this project never ended (their SessionEnd was cancelled or never ran), oldest first.
    Starts still waiting in files are not among them (not settled here: SessionStart asks, and a run that
    wrote the store could not seal its answer); their sessions are closed once a later process folds them."""
    return [dict(r) for r in conn.execute(
        "SELECT session_id, cwd, started_at FROM sessions WHERE project_id = ? AND ended_at IS NULL "
        "AND session_id != ? ORDER BY started_at LIMIT ?", (project_id, except_session, limit))]


def close(conn: sqlite3.Connection, session_ids: Iterable[str], reason: str) -> list[str]:
    """Mark these sessions ended (those still open); the ids this call closed."""
    stamp = clock.now()
    closed = []
    for sid in session_ids:
        if conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE session_id = ? AND ended_at IS NULL",
                        (stamp, reason, sid)).rowcount:
            closed.append(sid)
    return closed


def recent(conn: sqlite3.Connection, project_id: str, limit: int = 10) -> list[dict]:
    """The project's newest sessions: start, end, source, tokens injected, extraction cost."""
    settle(conn)
    return [dict(r) for r in conn.execute(
        "SELECT session_id, started_at, ended_at, source, tokens_injected, injections, extraction_cost_usd "
        "FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT ?", (project_id, limit))]


def timeline(conn: sqlite3.Connection, project_id: str, limit: int = 500) -> list[dict]:
    """The project's last ``limit`` sessions, oldest first: tokens injected and extraction cost."""
    settle(conn)
    rows = conn.execute(
        """
        SELECT * FROM (
          SELECT session_id, started_at, ended_at, end_reason, tokens_injected, injections,
                 extraction_cost_usd, extraction_runs, extraction_input_tokens, extraction_output_tokens
          FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT ?
        ) ORDER BY started_at
        """,
        (project_id, limit),
    ).fetchall()
    return [dict(r) for r in rows]


def totals(conn: sqlite3.Connection, project_id: str) -> dict:
    """The project's sums over all sessions: tokens injected, extraction runs, tokens and cost."""
    settle(conn)
    row = conn.execute(
        "SELECT COALESCE(SUM(tokens_injected), 0), COALESCE(SUM(extraction_runs), 0), "
        "COALESCE(SUM(extraction_input_tokens), 0), COALESCE(SUM(extraction_output_tokens), 0), "
        "COALESCE(SUM(extraction_cost_usd), 0) FROM sessions WHERE project_id = ?", (project_id,)).fetchone()
    return {"tokens_injected": row[0], "extraction_runs": row[1], "extraction_input_tokens": row[2],
            "extraction_output_tokens": row[3], "extraction_cost_usd": row[4]}
