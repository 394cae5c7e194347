"""PreCompact: write the session's anchor state (``capture.anchor``), merged into the previous one, and
its Markdown backup, before Claude Code compacts the conversation. Never blocks compaction; prints nothing."""

from __future__ import annotations

from agentctx import project, project_settings
from agentctx.capture import handover
from agentctx.hookio import HookEvent
from agentctx.store import db


def on_pre_compact(event: HookEvent) -> dict | None:
    """PreCompact hook: write the merged anchor and its backup. Never blocks, never prints."""
    proj = project.detect(event.cwd)
    if not project_settings.load(proj.root).capture:  # .agentctx/config.toml: capture off for this project
        return None
    conn = db.connect(busy_ms=handover.ANCHOR_BUSY_MS)
    try:
        fresh = handover.derive_anchor(conn, proj.id, event.session_id, event.transcript_path, event.custom_instructions)
        state = handover.update_anchor(conn, proj.id, event.session_id, fresh)
    finally:
        conn.close()
    handover.write_anchor_backup(state)
    return None
