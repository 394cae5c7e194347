"""UserPromptSubmit: up to 3 records relevant to this prompt, new to this session, ≤ 2,000 tokens."""

from __future__ import annotations

import sqlite3

from agentctx import budgets
from agentctx.injection import render
from agentctx.scoring import RELATIVE_FLOOR
from agentctx.store import search, sessions

BODY_CHARS = 1200


def select(conn: sqlite3.Connection, project_id: str, sid: str, prompt: str) -> tuple[str, list[str], int]:
    """(context text, record ids, tokens) for a prompt; empty text when nothing qualifies."""
    if search.is_trivial(prompt):
        return "", [], 0
    seen = sessions.injected_ids(conn, sid)
    hits = search.search(
        conn, project_id, prompt, limit=budgets.TURN_RECORDS, exclude=seen, relative_floor=RELATIVE_FLOOR
    )
    if not hits:
        return "", [], 0
    blocks = [render.record_block(h.record, body_chars=BODY_CHARS) for h in hits]
    cap = budgets.TURN_TOKENS - budgets.estimate_tokens(render.fence("prompt", []))
    kept, _ = budgets.fit_blocks(blocks, cap, max_chars=budgets.MAX_INJECTED_CHARS - render.FENCE_OVERHEAD)
    if not kept:
        return "", [], 0
    text = render.fence("prompt", kept)
    return text, [h.record["id"] for h in hits[: len(kept)]], budgets.estimate_tokens(text)
