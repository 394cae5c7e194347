"""SessionEnd: close the session, refresh the digest cache, flush extraction and start consolidation detached.

Claude Code gives all SessionEnd hooks ~1.5 s and cancels what runs longer, so ``hooks/launch.sh`` saves the
event and runs this handler in a detached process of its own: the hook itself returns in milliseconds.
A session whose SessionEnd never ran (cancelled, crashed) is closed by the next SessionStart of its project
(``close_left_open``): one indexed query there, the rest handed to the same detached handler.
"""

from __future__ import annotations

import os

from agentctx import clock, project
from agentctx.hookio import HookEvent
from agentctx.injection import digest
from agentctx.logs import log
from agentctx.store import db, sessions

DETACHED_BUSY_MS = 10_000  # the handler runs detached (nobody waits): wait for a lock rather than lose the close
LEFT_OPEN_QUIET_S = 10 * 60  # an open session whose transcript has been quiet this long is over
LEFT_OPEN_UNKNOWN_S = 24 * 3600  # ... or, with no transcript to look at, that started this long ago
LEFT_OPEN_REASON = "left open"

# The consolidation pass (ADR-012) is lib/agentctx_consolidate.py run by uv (its PEP 723
# dependencies bring model2vec, numpy, apsw and sqlite-vec), detached, like the extraction worker.


def on_session_end(event: HookEvent) -> dict | None:
    """SessionEnd hook: close the session, drop its dedup state, refresh the digest cache,
    start consolidation in the background (when it exists)."""
    sid = event.session_id
    reason = event.reason or None
    proj = project.detect(event.cwd)
    conn = db.connect(busy_ms=DETACHED_BUSY_MS)
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
    from agentctx.events.stop import start_worker

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


def close_left_open(conn, proj: project.Project, event: HookEvent) -> list[str]:
    """At SessionStart: close this project's sessions that were left open (their transcript, beside this
    session's, quiet for LEFT_OPEN_QUIET_S; with none to look at, started LEFT_OPEN_UNKNOWN_S ago) and hand
    the rest of their end (final extraction, consolidation, digest cache) to the detached SessionEnd
    handler. The ids closed."""
    rows = sessions.left_open(conn, proj.id, event.session_id)
    if not rows:
        return []
    import time

    folder = os.path.dirname(event.transcript_path) if event.transcript_path else ""
    now, stale = time.time(), {}
    for row in rows:
        path = os.path.join(folder, f"{row['session_id']}.jsonl") if folder else ""
        try:
            over = now - os.path.getmtime(path) >= LEFT_OPEN_QUIET_S
        except OSError:
            path = ""
            over = clock.age_days(row["started_at"], clock.to_datetime(clock.now())) * 86400 >= LEFT_OPEN_UNKNOWN_S
        if over:
            stale[row["session_id"]] = (path, row["cwd"] or proj.root)
    if not stale:
        return []
    with db.transaction(conn):
        closed = sessions.close(conn, stale, LEFT_OPEN_REASON)
    for sid in closed:
        path, cwd = stale[sid]
        hand_off({"session_id": sid, "cwd": cwd, "transcript_path": path, "hook_event_name": "SessionEnd",
                  "reason": LEFT_OPEN_REASON})
    return closed


def hand_off(payload: dict) -> int | None:
    """Run the SessionEnd handler for ``payload`` in a detached process (as hooks/launch.sh does); its pid."""
    import json
    import tempfile

    from agentctx.spawn import LIB_DIR, detached

    launch = os.path.join(os.path.dirname(LIB_DIR), "hooks", "launch.sh")
    fd, saved = tempfile.mkstemp(prefix="agentctx-session-end.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(payload, fh)
    try:
        return detached(["sh", "-c", 'sh "$1" session_end <"$2"; rm -f "$2"', "agentctx-session-end", launch, saved],
                        env={**os.environ, "AGENTCTX_HOOK_DETACHED": "1"})
    except OSError as exc:
        os.remove(saved)
        log("SessionStart", f"closing session {payload['session_id'][:12]} not started: {exc}")
        return None
