"""UserPromptSubmit selection: the records worth injecting for this prompt that the session has not seen,
as many as its intent calls for (``budgets.turn_depth``: up to 3 for a narrow prompt, up to 8 shorter
entries for a broad or multi-part one), within 2,000 tokens; nothing when no record answers enough of it
(``scoring.worth_injecting``)."""

from __future__ import annotations

import sqlite3

from agentctx import budgets, render
from agentctx.scoring import RELATIVE_FLOOR, worth_injecting
from agentctx.store import search, sessions

BODY_CHARS = budgets.TURN_BODY_CHARS


def select(conn: sqlite3.Connection, project_id: str, sid: str, prompt: str) -> tuple[str, list[str], int]:
    """(context text, record ids, tokens) for a prompt; empty text when nothing qualifies (a trivial
    prompt, "ok" or "continue", never reaches the store)."""
    if search.is_trivial(prompt):
        return "", [], 0
    return select_for(conn, project_id, sid, prompt)


def select_for(conn: sqlite3.Connection, project_id: str, sid: str, prompt: str) -> tuple[str, list[str], int]:
    """:func:`select` for a prompt already known not to be trivial (the hook checks before it opens the store)."""
    most, body_chars, broad = budgets.turn_depth(prompt)
    # Judged against the best match overall, then what the session already has is left out: a record
    # injected earlier does not let weaker ones through.
    hits = worth_injecting(search.search(conn, project_id, prompt, limit=search.CANDIDATES,
                                         relative_floor=RELATIVE_FLOOR), broad=broad)
    if not hits:
        return "", [], 0
    seen = sessions.injected_ids(conn, sid)
    hits = [h for h in hits if h.record["id"] not in seen][:most]
    if not hits:
        return "", [], 0
    blocks = [render.record_block(h.record, body_chars=body_chars) for h in hits]
    cap = budgets.TURN_TOKENS - budgets.estimate_tokens(render.fence("prompt", []))
    kept, _ = budgets.fit_blocks(blocks, cap, max_chars=budgets.MAX_INJECTED_CHARS - render.FENCE_OVERHEAD)
    if not kept:
        return "", [], 0
    text = render.fence("prompt", kept)
    return text, [h.record["id"] for h in hits[: len(kept)]], budgets.estimate_tokens(text)
