"""SessionEnd: close the session, refresh the digest cache, flush extraction and start consolidation detached."""

from __future__ import annotations

import os

from . import db, digest, project, sessions
from .hookio import HOOK_BUSY_MS, cwd, field, log, session_id

# The consolidation pass (ADR-012) runs as ``python -m <CONSOLIDATE_MODULE> --project-id P
# --session-id S``, detached, once that module exists under one of CONSOLIDATE_PATH. Until
# then SessionEnd starts nothing.
LIB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSOLIDATE_MODULE = "agentctx.consolidate"
CONSOLIDATE_PATH = [LIB]


def on_session_end(payload: dict) -> dict | None:
    """SessionEnd hook: close the session, drop its dedup state, refresh the digest cache,
    start consolidation in the background (when it exists)."""
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
    flush_extraction(sid, field(payload, "transcript_path"), cwd(payload))
    start_consolidation(proj.id, sid)
    return None


def flush_extraction(sid: str, transcript_path: str, workdir: str) -> None:
    """Extract the session's tail now (detached) instead of after the worker's idle wait."""
    if not transcript_path or not os.path.isfile(transcript_path):
        return
    from .stophook import start_worker

    try:
        start_worker(sid, transcript_path, workdir, final=True)
    except OSError as exc:
        log("SessionEnd", f"final extraction not started: {exc}")


def consolidation_command(project_id: str, sid: str) -> tuple[list[str], dict[str, str]] | None:
    """(argv, env) of the consolidation worker, or None while no entry point exists."""
    rel = CONSOLIDATE_MODULE.replace(".", os.sep) + ".py"
    if not any(os.path.isfile(os.path.join(folder, rel)) for folder in CONSOLIDATE_PATH):
        return None
    from .spawn import python_module

    return python_module(
        CONSOLIDATE_MODULE, ["--project-id", project_id, "--session-id", sid], path=CONSOLIDATE_PATH
    )


def start_consolidation(project_id: str, sid: str) -> int | None:
    """Start consolidation detached (never waited for); its pid, or None when there is none."""
    command = consolidation_command(project_id, sid)
    if command is None:
        return None
    from .spawn import detached

    try:
        return detached(command[0], env=command[1])
    except OSError as exc:
        log("SessionEnd", f"consolidation not started: {exc}")
        return None
