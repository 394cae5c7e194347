"""Model spending: one ``spend`` row per run that called a model (extraction, rollup), dated by UTC day,
and the spending cap checked against it: one rule for extraction, rollup, SessionStart and ``agentctx status``.

Every statement on ``spend`` is here. Two limits in USD at Haiku 4.5 prices (the ``daily_cap_usd`` and
``session_cap_usd`` settings: plugin option or ``agentctx config --daily-cap/--session-cap``): all model calls of one UTC day across projects, and
those made for one session. Before a run that would call a model, :func:`paused` says why not when a limit
is reached; the run then does what needs no model (extraction falls back to the developer's explicit
statements, rollup waits for a later pass). What each run cost is added with :func:`record`. A run already
under way finishes: a cap is checked between runs, so it can be overshot by at most one run (an extraction
is ~$0.001-0.02, a rollup pass at most ~$0.2). Stdlib only (SessionStart).
"""

from __future__ import annotations

import sqlite3

from agentctx import clock, settings

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


# ---------------------------------------------------------------------------------------------
# The cap


def caps() -> tuple[float, float]:
    """(daily cap, session cap) in USD."""
    current = settings.load()
    return float(current["daily_cap_usd"]), float(current["session_cap_usd"])


def status(conn: sqlite3.Connection, session_id: str | None = None) -> dict:
    """Spend against the caps: today (UTC) and, with ``session_id``, that session."""
    daily, per_session = caps()
    out = {"today_usd": round(day_total(conn), 6), "daily_cap_usd": daily, "session_cap_usd": per_session}
    if session_id:
        out["session_usd"] = round(session_total(conn, session_id), 6)
    return out


def paused(conn: sqlite3.Connection, session_id: str | None = None) -> str | None:
    """Why model calls are paused now (a cap reached), or None when they may go ahead."""
    now = status(conn, session_id)
    if now["today_usd"] >= now["daily_cap_usd"]:
        return (f"spending cap reached: ${now['today_usd']:.2f} of ${now['daily_cap_usd']:.2f} today (UTC); "
                "model calls resume tomorrow (agentctx config --daily-cap)")
    if session_id and now["session_usd"] >= now["session_cap_usd"]:
        return (f"spending cap reached: ${now['session_usd']:.2f} of ${now['session_cap_usd']:.2f} for this "
                "session (agentctx config --session-cap)")
    return None


def notice(conn: sqlite3.Connection, session_id: str | None = None) -> str | None:
    """The one line SessionStart shows when a cap is reached, else None."""
    why = paused(conn, session_id)
    return f"agentctx: {why}; extraction uses explicit statements only, rollup waits." if why else None


def record(conn: sqlite3.Connection, kind: str, usage, *, project_id: str | None, session_id: str | None) -> None:
    """Add a run's usage (``llm.Usage``) to the day's and the session's spending (nothing when it made no call)."""
    if usage is None or not usage.calls:
        return
    add(conn, kind, project_id=project_id, session_id=session_id, calls=usage.calls,
              input_tokens=usage.input_total, output_tokens=usage.output, cost_usd=usage.cost_usd)
