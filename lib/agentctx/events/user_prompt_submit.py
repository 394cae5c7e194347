"""UserPromptSubmit: inject the records relevant to this prompt that the session has not seen yet
(``injection.turn`` selects them) and account them; trivial prompts cost no store access (checked once,
here, before the store is opened)."""

from __future__ import annotations

import sqlite3

from agentctx import project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection import turn
from agentctx.logs import log
from agentctx.store import db, search, sessions


def on_user_prompt_submit(event: HookEvent) -> dict | None:
    """UserPromptSubmit hook: records relevant to the prompt, new to the session (``injection.turn``)."""
    prompt = event.prompt
    if search.is_trivial(prompt):
        return None
    sid = event.session_id
    proj = project.detect(event.cwd)
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        text, ids, tokens = turn.select_for(conn, proj.id, sid, prompt)
        if not text:
            return None
        try:
            with db.transaction(conn):
                sessions.account(conn, sid, proj.id, "UserPromptSubmit", ids, tokens)
        except sqlite3.Error as exc:
            log("UserPromptSubmit", f"accounting skipped: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}

