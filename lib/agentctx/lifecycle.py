"""Session lifecycle hooks beyond injection: SessionEnd (and, later, Stop / PreCompact)."""

from __future__ import annotations

from . import db, digest, project, sessions
from .hookio import HOOK_BUSY_MS, cwd, field, session_id


def on_session_end(payload: dict) -> dict | None:
    """SessionEnd hook: close the session, drop its dedup state, refresh the digest cache."""
    sid = session_id(payload)
    reason = field(payload, "reason") or None
    proj = project.detect(cwd(payload))
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        with db.transaction(conn):
            sessions.end(conn, sid, reason)
        digest.current(conn, proj)
    finally:
        conn.close()
    return None
