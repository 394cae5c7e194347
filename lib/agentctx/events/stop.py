"""Stop: start the extraction worker detached and return at once. Prints nothing.

Stop fires at the end of every assistant response. When a worker for the session is already
running, it is only told that more arrived (``flight`` pending flag), so at most one worker per
session exists. The worker is ``lib/agentctx_worker.py`` run by uv (its PEP 723 dependencies
include the ``anthropic`` SDK); the hook itself imports only the standard library.
"""

from __future__ import annotations

import os

from agentctx import flight
from agentctx.hookio import HookEvent
from agentctx.logs import log
from agentctx.spawn import uv_script


def worker_command(sid: str, transcript_path: str, workdir: str, *, final: bool = False,
                   background: bool = False) -> list[str] | None:
    """The argv of the extraction worker (None when uv cannot be found)."""
    args = ["--session-id", sid, "--transcript", transcript_path, "--cwd", workdir]
    args += (["--final"] if final else []) + (["--background"] if background else [])
    return uv_script("agentctx_worker.py", args, nice=True)


def start_worker(sid: str, transcript_path: str, workdir: str, *, final: bool = False) -> int | None:
    """Start (or nudge) the session's worker; the pid started, or None."""
    lock = flight.for_session("extract", sid)
    if lock.held():  # the running worker takes it; at the session's end it must stop waiting and extract now
        if final:
            lock.mark_final()
        else:
            lock.mark_pending()
        return None
    argv = worker_command(sid, transcript_path, workdir, final=final, background=True)
    if argv is None:
        log("Stop", "extraction not started: uv not found")
        return None
    from agentctx.spawn import detached

    return detached(argv, cwd=workdir)


def on_stop(event: HookEvent) -> None:
    """Stop hook handler: never a decision, never additionalContext, never exit 2."""
    path = event.transcript_path
    if not path or not os.path.isfile(path):
        return None
    from agentctx import project, project_settings

    if not project_settings.load(project.detect(event.cwd).root).capture:  # off for this project: no worker
        return None
    start_worker(event.session_id, path, event.cwd)
    return None
