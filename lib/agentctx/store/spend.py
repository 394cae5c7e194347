"""Model spending: one ``spend`` row per run that called a model (extraction, rollup), dated by UTC day.

Every statement on ``spend`` is here. The caps (``agentctx.spending``) are checked against
:func:`day_total` and :func:`session_total` before a run starts.
"""

from __future__ import annotations

import sqlite3

from agentctx import clock

KINDS = ("extraction", "rollup")


def add(conn: sqlite3.Connection, kind: str, *, project_id: str | None, session_id: str | None, calls: int,
        input_tokens: int, output_tokens: int, cost_usd: float, stamp: str | None = None) -> None:
    """Record one run's calls, tokens and cost (inside the caller's transaction, or on its own)."""
    if kind not in KINDS:
        raise ValueError(f"unknown spending kind {kind!r}")
    stamp = stamp or clock.now()
    conn.execute(
        "INSERT INTO spend (day, at, project_id, session_id, kind, calls, input_tokens, output_tokens, cost_usd) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (stamp[:10], stamp, project_id, session_id, kind, int(calls), int(input_tokens), int(output_tokens),
         float(cost_usd)),
    )


def day_total(conn: sqlite3.Connection, day: str | None = None) -> float:
    """USD spent on model calls on ``day`` (default today, UTC), all projects."""
    day = day or clock.now()[:10]
    return conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM spend WHERE day = ?", (day,)).fetchone()[0]


def session_total(conn: sqlite3.Connection, session_id: str) -> float:
    """USD spent on model calls for one session."""
    return conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM spend WHERE session_id = ?",
                        (session_id,)).fetchone()[0]


def by_day(conn: sqlite3.Connection, days: int = 7) -> list[dict]:
    """The last ``days`` days with spending, newest first: {day, calls, input_tokens, output_tokens, cost_usd}."""
    return [dict(r) for r in conn.execute(
        "SELECT day, SUM(calls) AS calls, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "
        "ROUND(SUM(cost_usd), 6) AS cost_usd FROM spend GROUP BY day ORDER BY day DESC LIMIT ?", (days,))]
