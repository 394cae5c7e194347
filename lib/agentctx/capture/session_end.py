"""SessionEnd: close the session, refresh the digest cache, flush extraction and start consolidation detached."""

from __future__ import annotations

import os

from agentctx import project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection import digest
from agentctx.logs import log
from agentctx.store import db, sessions

# The consolidation pass (ADR-012) is lib/agentctx_consolidate.py run by uv (its PEP 723
# dependencies bring model2vec, numpy, apsw and sqlite-vec), detached, like the extraction worker.


def on_session_end(event: HookEvent) -> dict | None:
    """SessionEnd hook: close the session, drop its dedup state, refresh the digest cache,
    start consolidation in the background (when it exists)."""
    sid = event.session_id
    reason = event.reason or None
    proj = project.detect(event.cwd)
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        with db.transaction(conn):
            sessions.end(conn, sid, reason)
        digest.current(conn, proj)
    finally:
        conn.close()
    flush_extraction(sid, event.transcript_path, event.cwd)
    start_consolidation(proj.id, sid, proj.root)
    return None


def flush_extraction(sid: str, transcript_path: str, workdir: str) -> None:
    """Extract the session's tail now (detached) instead of after the worker's idle wait."""
    if not transcript_path or not os.path.isfile(transcript_path):
        return
    from agentctx.capture.stop import start_worker

    try:
        start_worker(sid, transcript_path, workdir, final=True)
    except OSError as exc:
        log("SessionEnd", f"final extraction not started: {exc}")


def consolidation_command(project_id: str, sid: str, workdir: str | None = None) -> list[str] | None:
    """The argv of the consolidation pass (None when uv or the script cannot be found)."""
    from agentctx.spawn import uv_script

    args = ["--project-id", project_id, "--session-id", sid] + (["--cwd", workdir] if workdir else [])
    return uv_script("agentctx_consolidate.py", args, nice=True)


def start_consolidation(project_id: str, sid: str, workdir: str | None = None) -> int | None:
    """Start consolidation detached (never waited for); its pid, or None when it cannot start."""
    argv = consolidation_command(project_id, sid, workdir)
    if argv is None:
        log("SessionEnd", "consolidation not started: uv not found")
        return None
    from agentctx.spawn import detached

    try:
        return detached(argv, cwd=workdir if workdir and os.path.isdir(workdir) else None)
    except OSError as exc:
        log("SessionEnd", f"consolidation not started: {exc}")
        return None
