"""SubagentStart: brief a subagent by its type (``injection.briefs``), fenced like every injection,
and account it to the session (``sessions.account`` with ``SubagentStart``: counted in its tokens, never
as seen by the main conversation). Nothing to say (no record) prints nothing.
"""

from __future__ import annotations

import sqlite3

from agentctx import project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection.briefs import brief
from agentctx.logs import log
from agentctx.store import db, sessions


def on_subagent_start(event: HookEvent) -> dict | None:
    """SubagentStart hook: the brief as the subagent's additionalContext, accounted to the session."""
    proj = project.detect(event.cwd)
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        dig = brief(conn, proj, event.agent_type)
        if dig is None:
            return None
        try:
            with db.transaction(conn):
                sessions.account(conn, event.session_id, proj.id, sessions.SUBAGENT_EVENT, dig.record_ids, dig.tokens)
        except sqlite3.Error as exc:  # read-only or locked store: brief anyway
            log("SubagentStart", f"accounting skipped: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": dig.text}}
